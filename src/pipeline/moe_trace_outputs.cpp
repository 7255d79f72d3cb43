#include "ascprof/pipeline/moe_trace_outputs.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "ascprof/common/csv_writer.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/common/numbers.hpp"
#include "ascprof/model/finding.hpp"
#include "ascprof/layout/out_layout.hpp"

namespace ascprof::pipeline {

namespace fs = std::filesystem;

namespace {

double us(int64_t ns) { return static_cast<double>(ns) / 1e3; }

std::string calls_table(const std::vector<analysis::MoeRankView>& ranks) {
  std::string out = csv_header({"rank_id", "call", "file", "variant", "call_index", "status", "detail", "event_id",
                                "kernel_name", "kernel_call", "kernel_start_us", "kernel_duration_us", "span_us",
                                "span_share_of_kernel", "intervals", "cores", "unmatched_events", "unmapped_points",
                                "bad_events", "full_cores"});
  CsvRow row;
  for (const auto& v : ranks)
    for (size_t k = 0; k < v.summary->calls.size(); ++k) {
      const auto& c = v.summary->calls[k];
      row.text(v.rank_id).number(static_cast<uint64_t>(k)).text(c.file).text(c.variant).number(c.call_index);
      row.text(c.status).text(c.detail);
      if (c.kernel_row >= 0) {
        row.text(model::event_id(v.ordinal, c.kernel_row)).text(c.kernel_name);
        row.number(c.kernel_call).literal(us_text(c.kernel_start_ns)).literal(us_text(c.kernel_duration_ns));
      } else {
        row.empty().empty().empty().empty().empty();
      }
      row.number(us(c.span_ns), 3);
      if (c.kernel_duration_ns > 0) row.number(static_cast<double>(c.span_ns) / static_cast<double>(c.kernel_duration_ns), 6);
      else row.empty();
      row.number(c.intervals).number(c.cores).number(c.unmatched).number(c.unmapped).number(c.bad_events).number(c.full_cores);
      out += row.take_line();
    }
  return out;
}

std::string phases_table(const std::vector<analysis::MoeRankView>& ranks) {
  std::string out = csv_header({"evidence_id", "rank_id", "call", "label", "core_group", "role", "core_type", "extra_id",
                                "index", "count", "cores", "total_us", "union_us", "union_share_of_span", "first_start_us",
                                "max_core_us", "max_core_id", "median_core_us", "min_core_us"});
  CsvRow row;
  for (const auto& v : ranks)
    for (size_t k = 0; k < v.summary->calls.size(); ++k) {
      const auto& c = v.summary->calls[k];
      for (size_t i = 0; i < c.phases.size(); ++i) {
        const auto& p = c.phases[i];
        row.text(analysis::moe_phase_evidence_id(v.ordinal, k, i)).text(v.rank_id).number(static_cast<uint64_t>(k));
        row.text(p.label).text(p.core_group).text(p.role).number(static_cast<uint64_t>(p.core_type));
        if (p.label_level()) row.empty().empty();
        else row.number(p.extra_id).number(p.index);
        row.number(p.count).number(static_cast<uint64_t>(p.cores)).number(us(p.total_ns), 3).number(us(p.union_ns), 3);
        if (c.span_ns > 0) row.number(static_cast<double>(p.union_ns) / static_cast<double>(c.span_ns), 6);
        else row.empty();
        row.number(us(p.first_start_ns), 3).number(us(p.max_core_ns), 3).number(static_cast<uint64_t>(p.max_core_id));
        row.number(us(p.median_core_ns), 3).number(us(p.min_core_ns), 3);
        out += row.take_line();
      }
    }
  return out;
}

std::string compare_table(const std::vector<analysis::MoeRankView>& ranks) {
  struct Member {
    const analysis::MoePhaseStats* p;
    const std::string* rank;
  };
  // (call, core type, label, extra, index) -> members, in rank order
  std::map<std::tuple<size_t, uint32_t, std::string, int64_t, int64_t>, std::vector<Member>> same;
  for (const auto& v : ranks)
    for (size_t k = 0; k < v.summary->calls.size(); ++k) {
      const auto& c = v.summary->calls[k];
      if (!c.usable()) continue;
      for (const auto& p : c.phases) same[{k, p.core_type, p.label, p.extra_id, p.index}].push_back({&p, &v.rank_id});
    }
  auto order = [](std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    const int64_t med = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    return std::make_tuple(v.front(), med, v.back());
  };
  std::string out = csv_header({"call", "label", "core_group", "role", "extra_id", "index", "ranks", "max_core_us_min",
                                "max_core_us_median", "max_core_us_max", "slowest_rank", "slowest_to_median",
                                "union_us_min", "union_us_median", "union_us_max"});
  CsvRow row;
  for (const auto& [key, members] : same) {
    const auto& p0 = *members.front().p;
    std::vector<int64_t> slow, uni;
    const Member* slowest = &members.front();
    for (const auto& m : members) {
      slow.push_back(m.p->max_core_ns);
      uni.push_back(m.p->union_ns);
      if (m.p->max_core_ns > slowest->p->max_core_ns) slowest = &m;
    }
    const auto [smin, smed, smax] = order(slow);
    const auto [umin, umed, umax] = order(uni);
    row.number(static_cast<uint64_t>(std::get<0>(key))).text(p0.label).text(p0.core_group).text(p0.role);
    if (p0.label_level()) row.empty().empty();
    else row.number(p0.extra_id).number(p0.index);
    row.number(static_cast<uint64_t>(members.size())).number(us(smin), 3).number(us(smed), 3).number(us(smax), 3);
    row.text(*slowest->rank);
    if (smed > 0) row.number(static_cast<double>(smax) / static_cast<double>(smed), 6);
    else row.empty();
    row.number(us(umin), 3).number(us(umed), 3).number(us(umax), 3);
    out += row.take_line();
  }
  return out;
}

std::string bubbles_table(const std::vector<analysis::MoeRankView>& ranks) {
  std::string out = csv_header({"rank_id", "call", "container", "core_group", "core_type", "total_us", "max_core_us",
                                "max_core_id"});
  CsvRow row;
  for (const auto& v : ranks)
    for (size_t k = 0; k < v.summary->calls.size(); ++k)
      for (const auto& b : v.summary->calls[k].bubbles) {
        row.text(v.rank_id).number(static_cast<uint64_t>(k)).text(b.container).text(b.core_group);
        row.number(static_cast<uint64_t>(b.core_type)).number(us(b.total_ns), 3).number(us(b.max_core_ns), 3);
        row.number(static_cast<uint64_t>(b.max_core_id));
        out += row.take_line();
      }
  return out;
}

}  // namespace

const std::vector<std::string>& moe_trace_tables() {
  static const std::vector<std::string> t = {layout::kMoeTraceCallsCsv, layout::kMoePhaseSummaryCsv, layout::kMoePhaseCompareCsv,
                                             layout::kMoeBubbleSummaryCsv};
  return t;
}

Result<std::vector<fs::path>> write_moe_trace_outputs(const fs::path& root_out, const std::vector<analysis::MoeRankView>& ranks) {
  return write_files_atomic(root_out, moe_trace_tables(),
                            {calls_table(ranks), phases_table(ranks), compare_table(ranks), bubbles_table(ranks)});
}

}  // namespace ascprof::pipeline

// Per-call statistics of in-kernel MoE traces and their attachment to kernel rows (moe_trace.hpp).
#include "ascprof/analysis/moe_trace.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <unordered_map>
#include <tuple>

namespace ascprof::analysis {

namespace {

using Span = std::pair<int64_t, int64_t>;

// Length of the union of `spans` (sorted here).
int64_t union_length(std::vector<Span>& spans) {
  std::sort(spans.begin(), spans.end());
  int64_t total = 0, cur_s = 0, cur_e = 0;
  bool open = false;
  for (const auto& [s, e] : spans) {
    if (!open || s > cur_e) {
      if (open) total += cur_e - cur_s;
      cur_s = s;
      cur_e = e;
      open = true;
    } else {
      cur_e = std::max(cur_e, e);
    }
  }
  if (open) total += cur_e - cur_s;
  return total;
}

// Accumulates one phase row: intervals and per-core sums.
struct PhaseAcc {
  uint64_t count = 0;
  int64_t total = 0, first_start = INT64_MAX;
  std::vector<Span> spans;
  std::map<uint32_t, int64_t> per_core;
  void add(const model::MoePhaseInterval& iv) {
    ++count;
    total += iv.end_ns - iv.start_ns;
    first_start = std::min(first_start, iv.start_ns);
    spans.emplace_back(iv.start_ns, iv.end_ns);
    per_core[iv.core_id] += iv.end_ns - iv.start_ns;
  }
};

MoePhaseStats finish(PhaseAcc& acc) {
  MoePhaseStats p;
  p.count = acc.count;
  p.total_ns = acc.total;
  p.union_ns = union_length(acc.spans);
  p.first_start_ns = acc.first_start;
  p.cores = static_cast<uint32_t>(acc.per_core.size());
  std::vector<int64_t> sums;
  for (const auto& [core, ns] : acc.per_core) {
    sums.push_back(ns);
    if (ns > p.max_core_ns || sums.size() == 1) {
      p.max_core_ns = ns;
      p.max_core_id = core;
    }
  }
  std::sort(sums.begin(), sums.end());
  p.min_core_ns = sums.front();
  p.median_core_ns = sums.size() % 2 ? sums[sums.size() / 2] : (sums[sums.size() / 2 - 1] + sums[sums.size() / 2]) / 2;
  return p;
}

void phases_and_bubbles(const model::MoeTraceCall& t, const StringPool& pool, const knowledge::MoeTraceRules& rules,
                        MoeCallSummary& out) {
  // (core_type, label) -> label row; (core_type, label, extra, index) -> instance row
  std::map<std::pair<uint32_t, uint32_t>, PhaseAcc> labels;
  std::map<std::tuple<uint32_t, uint32_t, int64_t, int64_t>, PhaseAcc> instances;
  // (core_type, container label) -> per-core bubble sums
  std::map<std::pair<uint32_t, uint32_t>, std::map<uint32_t, int64_t>> bubbles;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  std::vector<Span> inside;
  std::unordered_map<uint32_t, bool> container;
  for (size_t i = 0; i < t.intervals.size(); ++i) {
    const auto& iv = t.intervals[i];
    lo = std::min(lo, iv.start_ns);
    hi = std::max(hi, iv.end_ns);
    labels[{iv.core_type, iv.label}].add(iv);
    instances[{iv.core_type, iv.label, iv.extra_id, iv.index}].add(iv);
    auto [role, fresh] = container.emplace(iv.label, false);  // the rules once per label, not per interval
    if (fresh) role->second = rules.role_of(pool.view(iv.label)) == knowledge::MoeRole::kContainer;
    if (!role->second) continue;
    // intervals are sorted by core, start, longest first: what starts inside this one follows it
    inside.clear();
    for (size_t j = i + 1; j < t.intervals.size(); ++j) {
      const auto& c = t.intervals[j];
      if (c.core_type != iv.core_type || c.core_id != iv.core_id || c.start_ns >= iv.end_ns) break;
      inside.emplace_back(c.start_ns, std::min(c.end_ns, iv.end_ns));
    }
    bubbles[{iv.core_type, iv.label}][iv.core_id] += (iv.end_ns - iv.start_ns) - union_length(inside);
  }
  out.span_ns = t.intervals.empty() ? 0 : hi - lo;
  // instances per label: a label with one instance gets no instance rows
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> instance_count;
  for (const auto& [key, acc] : instances) ++instance_count[{std::get<0>(key), std::get<1>(key)}];
  auto fill = [&](MoePhaseStats p, uint32_t core_type, uint32_t label) {
    p.label = std::string(pool.view(label));
    p.core_type = core_type;
    p.core_group = std::string(rules.core_group(core_type));
    p.role = std::string(knowledge::moe_role_name(rules.role_of(p.label)));
    return p;
  };
  for (auto& [key, acc] : labels) out.phases.push_back(fill(finish(acc), key.first, key.second));
  for (auto& [key, acc] : instances) {
    const auto [type, label, extra, index] = key;
    if (instance_count[{type, label}] < 2) continue;
    MoePhaseStats p = fill(finish(acc), type, label);
    p.extra_id = extra;
    p.index = index;
    out.phases.push_back(std::move(p));
  }
  // readable order: core group, then when the label first ran, its label row before its instances
  std::map<std::pair<uint32_t, std::string>, int64_t> first;  // label's first start per core type
  for (const auto& p : out.phases)
    if (p.label_level()) first[{p.core_type, p.label}] = p.first_start_ns;
  auto order_key = [&first](const MoePhaseStats& p) {
    return std::make_tuple(p.core_type, first.at({p.core_type, p.label}), std::cref(p.label), !p.label_level(), p.index,
                           p.extra_id);
  };
  std::sort(out.phases.begin(), out.phases.end(),
            [&order_key](const MoePhaseStats& a, const MoePhaseStats& b) { return order_key(a) < order_key(b); });
  for (const auto& [key, per_core] : bubbles) {
    MoeBubble b;
    b.container = std::string(pool.view(key.second));
    b.core_type = key.first;
    b.core_group = std::string(rules.core_group(key.first));
    for (const auto& [core, ns] : per_core) {
      b.total_ns += ns;
      if (ns > b.max_core_ns || b.max_core_ns == 0) {
        b.max_core_ns = ns;
        b.max_core_id = core;
      }
    }
    out.bubbles.push_back(std::move(b));
  }
}

std::string us(int64_t ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f us", static_cast<double>(ns) / 1e3);
  return buf;
}

}  // namespace

std::vector<MoeKernelRow> moe_kernel_rows(const model::KernelTable& k, const StringPool& pool,
                                          const knowledge::MoeTraceRules& rules) {
  std::vector<MoeKernelRow> rows;
  std::map<std::pair<StrId, StrId>, bool> memo;  // (name, type) -> instrumented
  for (size_t r = 0; r < k.size(); ++r) {
    auto [it, fresh] = memo.emplace(std::make_pair(k.name[r], k.type[r]), false);
    if (fresh) it->second = rules.is_instrumented_kernel(pool.view(k.name[r]), pool.view(k.type[r]));
    if (it->second) rows.push_back({static_cast<uint32_t>(r), k.start_ns[r], k.dur_ns[r], k.name[r]});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const MoeKernelRow& a, const MoeKernelRow& b) { return a.start_ns < b.start_ns; });
  return rows;
}

MoeRankSummary summarize_moe_traces(const std::vector<model::MoeTraceCall>& calls, const std::vector<MoeKernelRow>& rows,
                                    const StringPool& pool, const knowledge::MoeTraceRules& rules, Stats& stats) {
  MoeRankSummary s;
  size_t unnumbered = 0;
  for (const auto& c : calls) unnumbered += c.call_index < 0 ? 1 : 0;
  size_t next_unnumbered = 0;
  for (const auto& t : calls) {
    MoeCallSummary c;
    c.file = t.file;
    c.call_index = t.call_index;
    c.variant = t.variant;
    c.intervals = t.intervals.size();
    c.cores = t.cores.size();
    c.unmatched = t.unmatched_begin + t.unmatched_end;
    c.unmapped = t.unmapped_points;
    c.bad_events = t.bad_events;
    c.full_cores = t.full_cores;
    // the kernel call it stands for: named in the file, else the last calls in file order
    int64_t want = t.call_index;
    if (want < 0) want = static_cast<int64_t>(rows.size()) - static_cast<int64_t>(unnumbered) + static_cast<int64_t>(next_unnumbered++);
    if (!t.error.empty()) {
      c.status = "unreadable";
      c.detail = t.error;
      s.calls.push_back(std::move(c));
      continue;
    }
    if (t.intervals.empty()) {
      c.status = "empty";
      c.detail = "no paired interval of this rank in the file";
      s.calls.push_back(std::move(c));
      continue;
    }
    phases_and_bubbles(t, pool, rules, c);
    c.status = "not_attached";
    if (rows.empty()) {
      c.detail = "the rank has no row of the instrumented kernels (moe_trace.rules [kernel] names)";
    } else if (want < 0 || want >= static_cast<int64_t>(rows.size())) {
      c.detail = "call " + std::to_string(want) + " of the instrumented kernel, but the rank has " +
                 std::to_string(rows.size()) + " such rows";
    } else {
      const MoeKernelRow& row = rows[static_cast<size_t>(want)];
      c.kernel_call = want;
      c.kernel_row = row.row;
      c.kernel_name = std::string(pool.view(row.name));
      c.kernel_start_ns = row.start_ns;
      c.kernel_duration_ns = row.duration_ns;
      const double share = row.duration_ns > 0 ? static_cast<double>(c.span_ns) / static_cast<double>(row.duration_ns) : 0;
      char buf[200];
      std::snprintf(buf, sizeof buf, "span %s is %.1f %% of the row's %s", us(c.span_ns).c_str(), share * 100,
                    us(row.duration_ns).c_str());
      c.detail = buf;
      if (share >= rules.min_span_share && share <= rules.max_span_share) c.status = "attached";
      else c.detail += " (outside " + std::to_string(static_cast<int>(rules.min_span_share * 100)) + "-" +
                       std::to_string(static_cast<int>(rules.max_span_share * 100)) + " %: not this call?)";
    }
    if (c.status != "attached") stats.note(Stat::moe_trace_not_attached, t.file + ": " + c.detail);
    s.calls.push_back(std::move(c));
  }
  return s;
}

std::string moe_phase_evidence_id(uint32_t rank_ordinal, size_t call, size_t phase) {
  return "moe_" + std::to_string(rank_ordinal) + "_" + std::to_string(call) + "_" + std::to_string(phase);
}

}  // namespace ascprof::analysis

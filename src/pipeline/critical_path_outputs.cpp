#include "ascprof/pipeline/critical_path_outputs.hpp"

#include <set>

#include "ascprof/common/csv_writer.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/layout/out_layout.hpp"

namespace ascprof::pipeline {

namespace fs = std::filesystem;

namespace {

double us(int64_t ns) { return static_cast<double>(ns) / 1e3; }

std::string chain_table(const analysis::CriticalPaths& p) {
  std::string out = csv_header({"alignment_id", "position", "rank_id", "kind", "start_us", "end_us", "dur_us",
                                "compute_us", "transfer_us", "waiting_us", "host_gap_us", "kernels", "op_name", "group",
                                "seq", "waited_us", "members", "evidence_id"});
  CsvRow row;
  for (const auto& s : p.steps)
    for (uint32_t i = 0; i < s.element_count; ++i) {
      const auto& e = p.elements[s.first_element + i];
      const bool op = e.kind == analysis::PathKind::kTransfer || e.kind == analysis::PathKind::kWaiting;
      row.text(s.alignment_id).number(static_cast<uint64_t>(i)).text(p.rank_ids[e.rank]).text(analysis::path_kind_name(e.kind));
      row.number(us(e.start_ns - s.start_ns), 3).number(us(e.end_ns - s.start_ns), 3).number(us(e.end_ns - e.start_ns), 3);
      row.number(us(e.compute_ns), 3).number(us(e.transfer_ns), 3).number(us(e.waiting_ns), 3).number(us(e.gap_ns), 3);
      row.number(static_cast<uint64_t>(e.kernels)).text(e.op_name).text(e.group);
      if (op) row.number(static_cast<uint64_t>(e.seq));
      else row.empty();
      if (e.kind == analysis::PathKind::kTransfer) row.number(us(e.waited_ns), 3).number(static_cast<uint64_t>(e.members));
      else row.empty().empty();
      row.text(e.evidence_id);
      out += row.take_line();
    }
  return out;
}

std::string steps_table(const analysis::CriticalPaths& p) {
  std::string out = csv_header({"alignment_id", "wall_us", "walked_us", "end_rank", "compute_us", "transfer_us",
                                "waiting_us", "host_gap_us", "ranks_on_path", "hops", "elements"});
  CsvRow row;
  for (const auto& s : p.steps) {
    std::set<std::string> on_path;
    for (uint32_t i = 0; i < s.element_count; ++i) on_path.insert(p.rank_ids[p.elements[s.first_element + i].rank]);
    std::string ranks;
    for (const auto& r : on_path) ranks += (ranks.empty() ? "" : ";") + r;
    row.text(s.alignment_id).number(us(s.end_ns - s.start_ns), 3).number(us(s.walked_ns), 3).text(p.rank_ids[s.end_rank]);
    row.number(us(s.compute_ns), 3).number(us(s.transfer_ns), 3).number(us(s.waiting_ns), 3).number(us(s.gap_ns), 3);
    row.text(ranks).number(static_cast<uint64_t>(s.hops)).number(static_cast<uint64_t>(s.element_count));
    out += row.take_line();
  }
  return out;
}

std::string ranks_table(const analysis::CriticalPaths& p) {
  std::string out = csv_header({"rank_id", "steps_member", "steps_on_path", "path_us", "compute_us", "transfer_us",
                                "waiting_us", "host_gap_us", "share", "others_waited_us"});
  CsvRow row;
  for (const auto& r : p.ranks) {
    row.text(p.rank_ids[r.rank]).number(static_cast<uint64_t>(r.steps_member)).number(static_cast<uint64_t>(r.steps_on_path));
    row.number(us(r.path_ns), 3).number(us(r.compute_ns), 3).number(us(r.transfer_ns), 3).number(us(r.waiting_ns), 3);
    row.number(us(r.gap_ns), 3).number(r.share, 6).number(us(r.others_waited_ns), 3);
    out += row.take_line();
  }
  return out;
}

}  // namespace

const std::vector<std::string>& critical_path_tables() {
  static const std::vector<std::string> t = {layout::kCriticalPathCsv, layout::kCriticalPathStepsCsv, layout::kCriticalPathRanksCsv};
  return t;
}

Result<std::vector<fs::path>> write_critical_path_outputs(const fs::path& root_out, const analysis::CriticalPaths& paths) {
  if (paths.steps.empty()) {  // nothing walked: no table, not even one a previous run into OUT left
    ASCPROF_RETURN_IF_ERROR(remove_files(root_out, critical_path_tables()));
    return std::vector<fs::path>{};
  }
  return write_files_atomic(root_out, critical_path_tables(), {chain_table(paths), steps_table(paths), ranks_table(paths)});
}

}  // namespace ascprof::pipeline

#pragma once
/// The root's module breakdown tables (issue 21), written only when some rank has nn.Module ranges (a
/// capture without them writes exactly what it wrote before):
///   module_summary.csv  one row per rank and module path: depth, calls, host µs (sum of the calls'
///                       durations), self and total device µs (total = self + every module below it),
///                       the tasks behind them, the waiting tasks' part of both (modules.rules [device]),
///                       and the total's share of the rank's device time
///   module_ranks.csv    one row per rank with modules: where every device task's time went (in a
///                       module, launched outside every module, no launch found) and how launches were
///                       placed on the Python thread (the launch's own thread, the task queue, the
///                       torch op): the denominators and remainders of module_summary.csv
///   module_compare.csv  one row per module path across the ranks that have it: min / median / max total
///                       device µs, the slowest and fastest rank, slowest / median, the calls' range, the
///                       median and largest busy time (total - wait) with the busiest rank and busiest /
///                       median, and stands_out (modules.rules [compare]: at least two ranks, busiest /
///                       median >= spread_ratio and the busiest's busy time >= min_device_us)
/// µs with 3 decimals; rows in rank order, then the rank's module order (a parent before its children).
/// Every file is written under a temporary name and renamed.
#include <filesystem>
#include <string>
#include <vector>

#include "ascprof/analysis/module_breakdown.hpp"
#include "ascprof/common/status.hpp"
#include "ascprof/knowledge/module_rules.hpp"

namespace ascprof::pipeline {

/// One rank's module summary, for the root tables.
struct ModuleRankView {
  std::string rank_id;
  const analysis::ModuleRankSummary* summary = nullptr;
};

/// The file names above, in the order they are written.
const std::vector<std::string>& module_tables();

/// Writes the three tables for `ranks` (rank order). Returns the files written.
Result<std::vector<std::filesystem::path>> write_module_outputs(const std::filesystem::path& root_out,
                                                                const std::vector<ModuleRankView>& ranks,
                                                                const knowledge::ModuleRules& rules);

}  // namespace ascprof::pipeline

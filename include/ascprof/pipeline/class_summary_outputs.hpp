#pragma once
/// block_class_summary.csv, layer_class_summary.csv and step_class_summary.csv of a capture root
/// (reference-analysis.md §2.5.8, second part), from analysis::merge_class_partials.
///
/// Columns are the reference's, in its order; the reference's per-field pipeline columns of
/// block_class_summary are one `pipeline_us` JSON cell (as operator_class_summary.csv), empty
/// without signal. Lists and dicts are compact JSON; sums in ms and µs have 3 decimals, means,
/// quantiles and ratios 6 (trailing zeros trimmed, as CsvRow writes numbers); top_ops entries are
/// {"name","task_type","duration_sum_us" (3 decimals),"call_count"}. A table without rows is an
/// empty file (no header). Every file is written under a temporary name and renamed.
#include <filesystem>
#include <vector>

#include "ascprof/analysis/class_summary.hpp"
#include "ascprof/common/status.hpp"
#include "ascprof/knowledge/knowledge.hpp"

namespace ascprof::pipeline {

/// The three file names, in the order they are written.
const std::vector<std::string>& class_summary_tables();

/// Writes the three tables into `root_out` (created if missing). Returns the files written; on a
/// write error the error names the file, and files already written stay.
Result<std::vector<std::filesystem::path>> write_root_structure_class_summaries(const std::filesystem::path& root_out,
                                                                                const analysis::ClassSummaries& summaries,
                                                                                const knowledge::Knowledge& kb);

}  // namespace ascprof::pipeline

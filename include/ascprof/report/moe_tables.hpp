#pragma once
/// Which rows of the in-kernel MoE tables the reports show (report.md and report.html pick the same).
#include <cstddef>
#include <vector>

#include "ascprof/report/tables.hpp"

namespace ascprof::report {

/// The phases across ranks: the label rows of moe_phase_compare.csv (no expert-group index), without
/// the containers unless `with_containers`, by median union descending (ties keep file order).
std::vector<size_t> moe_phase_rows(const TextTable& compare, bool with_containers);

/// The worst cores: the non-container rows of moe_phase_summary.csv run on two or more cores, by how
/// far the slowest core runs past the median core, the first `cap`.
std::vector<size_t> moe_worst_core_rows(const TextTable& phases, size_t cap);

}  // namespace ascprof::report

#pragma once
/// operator_deep_dive.csv and operator_deep_dive.json of a capture root (issue 9): the rows of
/// analysis::build_deep_dive, columns as listed in the CSV header (ratios 0..1 with 6 decimals, µs
/// with 3; an empty cell is a value the capture does not give). The JSON adds each row's
/// classifications with their facts, inference, cause and suggestion, the chip used for the
/// lower-bound check and the host API rows. Both are written under temporary names and renamed.
#include <filesystem>
#include <string>
#include <vector>

#include "ascprof/analysis/deep_dive.hpp"
#include "ascprof/common/status.hpp"

namespace ascprof::pipeline {

/// The CSV columns, in order.
const std::vector<std::string>& deep_dive_columns();

/// Writes both files into `root_out`; returns their paths. `root` is the capture root as given.
Result<std::vector<std::filesystem::path>> write_deep_dive_outputs(const std::filesystem::path& root_out,
                                                                   const std::string& root,
                                                                   const analysis::DeepDive& dd,
                                                                   const knowledge::Knowledge& kb);

}  // namespace ascprof::pipeline

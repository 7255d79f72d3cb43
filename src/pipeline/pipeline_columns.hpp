#pragma once
// The 11 pipeline columns (aicore_time … aiv_scalar_time) of the operator, block and class tables,
// one column per knowledge field as the reference writes them (issue 23): named without the input
// header's "(us)" suffix, in µs with 3 decimals, all empty for a row without pipeline signal. The
// same suffix-free names are what bound_stage says. Private to the pipeline module.
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/common/csv_writer.hpp"
#include "ascprof/knowledge/knowledge.hpp"

namespace ascprof::pipeline {

// "aiv_mte2_time(us)" -> "aiv_mte2_time": a knowledge field (named as the kernel table's header) as
// the output tables name it; any other name is returned as it is.
inline std::string output_field_name(std::string_view field) {
  constexpr std::string_view kUnit = "(us)";
  if (field.size() > kUnit.size() && field.substr(field.size() - kUnit.size()) == kUnit)
    field.remove_suffix(kUnit.size());
  return std::string(field);
}

inline std::vector<std::string> pipeline_columns(const knowledge::Knowledge& kb) {
  std::vector<std::string> out;
  for (const auto& f : kb.pipeline.fields()) out.push_back(output_field_name(f.name));
  return out;
}

// One cell per field: the sums, or empty cells when the row has none (no event with stage signal).
inline void pipeline_cells(CsvRow& r, const std::vector<double>& sums, size_t field_count) {
  for (size_t f = 0; f < field_count; ++f) {
    if (f < sums.size()) r.number(sums[f], 3);
    else r.empty();
  }
}

// Column lists built from groups: {"a", "b"} + group + {"c"}.
inline std::vector<std::string> columns(std::initializer_list<std::vector<std::string>> groups) {
  std::vector<std::string> out;
  for (const auto& g : groups) out.insert(out.end(), g.begin(), g.end());
  return out;
}

}  // namespace ascprof::pipeline

#pragma once
/// The operator deep dive of one root (issue 9, /work/notes/deep_dive_schema.md) as the reports read
/// it back: operator_deep_dive.csv (the rows, cells kept as written) joined by deep_dive_id with the
/// rule details, chip, selection and host_api of operator_deep_dive.json. Private to src/report.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ascprof/common/status.hpp"
#include "ascprof/report/tables.hpp"
#include "ascprof/layout/out_layout.hpp"

namespace ascprof::report {

/// File names of the deep dive in the root's output folder.
inline constexpr const char* kDeepDiveCsv = layout::kOperatorDeepDiveCsv;
inline constexpr const char* kDeepDiveJson = layout::kOperatorDeepDiveJson;

/// One applied rule of a row (JSON rows[].details[]); texts as written.
struct DeepDiveDetail {
  std::string id, title, severity, inference, cause, suggestion;
  std::vector<std::string> facts;
};

/// One host_api entry; numbers as their JSON text (shortest round-trip form, "" when null/absent).
struct DeepDiveHostApi {
  std::string rank_id, level, api, time_us, count, avg_us, share_of_span, classification;
};

/// What the reports show. Numbers of the JSON are kept as text in shortest round-trip form, which
/// is how the coordinator's JSON writer prints them, so they read as in the file.
struct DeepDiveData {
  bool csv_present = false;   ///< operator_deep_dive.csv exists and has a header
  bool json_present = false;  ///< operator_deep_dive.json exists and parsed
  std::string json_error;     ///< JSON present but unusable: the reason (details then absent)
  TextTable table;            ///< the CSV as written
  std::string chip_name, chip_source, cube_cores, vector_cores, cube_tflops, hbm_gbps;
  int chip_assumed = -1;  ///< 1 assumed, 0 detected, -1 not stated
  std::string coverage, min_operators, max_operators;
  std::unordered_map<std::string, std::vector<DeepDiveDetail>> details;  ///< by deep_dive_id
  std::vector<DeepDiveHostApi> host_api;
};

/// Loads both files from `root_out`. Absent files give csv_present / json_present false (older
/// output folders). A CSV that cannot be read gives its kIo/kParse error; a JSON that cannot be
/// parsed only sets json_error (the table stands without details).
Result<DeepDiveData> load_deep_dive(const std::filesystem::path& root_out);

/// The decimal text `text` multiplied by 10^places (places may be negative) by moving the decimal
/// point, so no digit changes: ("12345.5", -3) -> "12.3455", ("0.4231", 2) -> "42.31". Text that
/// is not a plain decimal (exponent, empty, words) is returned unchanged.
std::string shift_decimal(std::string_view text, int places);

}  // namespace ascprof::report

#pragma once
// Shared reading of CANN's small statistics tables (op_statistic.csv, api_statistic.csv): the
// header by name, rows of the header's width, a row with a bad cell skipped and counted under the
// table's own counter. Private to this module.
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/common/numbers.hpp"
#include "ascprof/common/stats.hpp"
#include "ascprof/common/status.hpp"
#include "ascprof/importers/csv_reader.hpp"

namespace ascprof::importers::statistic_csv {

/// An optional or required floating-point column of a row type.
template <class Row>
struct NumberColumn {
  std::string_view name;  ///< as CANN writes it; matched case-insensitively
  double Row::*member;
  bool required;
};

/// The open table: cursor past the header, the header, and where it was.
class Table {
 public:
  /// Reads the header row. Errors: kSchema "empty file" for a 0-byte or blank file, kParse for a
  /// header that never ends, the cursor's own error (kLimit) otherwise.
  Status open(std::string_view content, std::string_view display_name, Stats& stats);
  /// Index of a required column, or a kSchema error naming it and the header.
  Status require(std::string_view name, int* col) const;
  /// Next row of the header's width; a row of another width is counted under `bad_row` and skipped.
  bool next(Stat bad_row, std::vector<std::string_view>& fields);
  /// Counts a bad row (reason "…; row skipped").
  void skip(Stat bad_row, const std::string& reason);
  const CsvHeader& header() const { return *header_; }
  uint64_t line() const { return cursor_->line(); }
  Status status() const { return cursor_->status(); }

 private:
  std::string display_;
  Stats* stats_ = nullptr;
  std::unique_ptr<CsvCursor> cursor_;
  std::unique_ptr<CsvHeader> header_;
  uint64_t header_line_ = 1;
};

/// Count as written (an integer; "3.0" accepted as some exporters go through float); nullopt if not
/// a non-negative whole number.
std::optional<uint64_t> parse_count(std::string_view cell);

/// Reads `columns` (indices `at`, -1 = absent) of a row into `row`; returns "" or the first bad
/// cell as "Name 'value' is not a number". Absent columns and empty/N/A optional cells read as NaN.
template <class Row, size_t N>
std::string read_numbers(const std::array<NumberColumn<Row>, N>& columns, const std::array<int, N>& at,
                         const std::vector<std::string_view>& fields, Row& row) {
  for (size_t i = 0; i < N; ++i) {
    double& value = row.*(columns[i].member);
    value = std::numeric_limits<double>::quiet_NaN();
    if (at[i] < 0) continue;
    const std::string_view cell = trim(fields[static_cast<size_t>(at[i])]);
    if (!columns[i].required && is_null_cell(cell)) continue;
    if (auto v = parse_double(cell)) {
      value = *v;
    } else {
      return std::string(columns[i].name) + " '" + std::string(cell) + "' is not a number";
    }
  }
  return {};
}

/// Indices of `columns` in the header; a missing required one is a kSchema error.
template <class Row, size_t N>
Status find_numbers(const Table& t, const std::array<NumberColumn<Row>, N>& columns, std::array<int, N>* at) {
  for (size_t i = 0; i < N; ++i) {
    if (columns[i].required) {
      ASCPROF_RETURN_IF_ERROR(t.require(columns[i].name, &(*at)[i]));
    } else {
      (*at)[i] = t.header().find(columns[i].name);
    }
  }
  return {};
}

}  // namespace ascprof::importers::statistic_csv

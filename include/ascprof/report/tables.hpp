#pragma once
/// The report stage reads the root's own output tables back (the CSV/JSON files are the source of
/// truth, so every number in a report equals the table it comes from). Small tables are loaded
/// whole; large ones (raw_kernel_index.csv) are streamed row by row.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/status.hpp"

namespace ascprof::report {

/// A report asked a table for a column it does not have: a misspelt name or a table written by
/// another version. Thrown by TextTable::cell / number and turned into the report part's error
/// (write_report_part) naming the file and the column, so a typo fails loudly instead of leaving
/// a report of empty cells.
struct UnknownColumn : std::logic_error {
  using std::logic_error::logic_error;
};

/// A CSV table as text cells. An absent or empty file is a table without header and rows (the
/// summarize stage writes a table without rows as an empty file).
struct TextTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  uint64_t total_rows = 0;  ///< rows in the file (more than rows.size() when capped)
  std::string source;       ///< the file it was read from, for errors

  /// Column index of `name`, or -1 (to probe a column that may be absent).
  int column(std::string_view name) const;
  /// The cell of `row` in column `name`; UnknownColumn when the table has a header without it
  /// ("" for a table without header: an absent or empty file has no rows to ask about).
  const std::string& cell(size_t row, std::string_view name) const;
  /// The cell as a number (NaN when empty or not a number); UnknownColumn as cell().
  double number(size_t row, std::string_view name) const;
  bool empty() const { return rows.empty(); }
};

/// Reads `path` keeping at most `max_rows` data rows (all are counted in total_rows). kIo/kParse
/// errors name the file and line.
Result<TextTable> read_table(const std::filesystem::path& path, uint64_t max_rows = UINT64_MAX);

/// Whether the table `path` is in the root: as the file or as its index of the ranks' rows
/// (store/table_index.hpp).
bool table_present(const std::filesystem::path& path);

/// Streams `path`: `on_row(fields, is_header)` for the header and then each row, until it returns
/// false. A table kept as an index (store/table_index.hpp) is read through it, the same rows in the
/// same order. The views are valid during the call only. Damaged records (an unterminated quote, a row
/// of the wrong width) are counted with samples in `stats` when given.
Status for_each_row(const std::filesystem::path& path,
                    const std::function<bool(const std::vector<std::string_view>& fields, bool is_header)>& on_row,
                    Stats* stats = nullptr);

}  // namespace ascprof::report

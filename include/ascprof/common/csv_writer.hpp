#pragma once
/// One CSV row at a time (RFC 4180: fields with a comma, quote, CR or LF are quoted, quotes doubled).
/// Text cells that start with = + - @ (or a tab / CR) are prefixed with a single quote so spreadsheet
/// software shows them as text instead of running them as formulas: input strings (kernel names,
/// shapes) end up in reports that are shared. Numbers are written by the typed overloads and are
/// never guarded.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ascprof {

/// The text CsvRow::number(v, decimals) writes: fixed decimals (0..17), trailing zeros trimmed, "-0"
/// as "0"; empty for NaN and infinities. Also how the reference's JSON figures are rendered.
std::string fixed_number(double v, int decimals = 6);

class CsvRow {
 public:
  CsvRow& text(std::string_view v);            ///< a string cell (quoted and guarded as needed)
  CsvRow& number(int64_t v);
  CsvRow& number(uint64_t v);
  CsvRow& number(double v, int decimals = 6);  ///< fixed decimals (0..17), trailing zeros trimmed; NaN -> empty
  CsvRow& boolean(bool v);                     ///< "True" / "False": Python's str(bool), as the reference writes
  CsvRow& empty();                             ///< an empty cell (null)
  CsvRow& json(std::string_view compact_json); ///< a JSON value as one text cell (not formula-guarded)
  CsvRow& literal(std::string_view number);    ///< an already formatted number (e.g. exact µs text)
  /// The row with its line ending ("\n"), ready to append; resets the row.
  std::string take_line();
  const std::string& str() const { return line_; }
  size_t cell_count() const { return starts_.size(); }

 private:
  friend class CsvLayout;
  void sep();
  void quoted(std::string_view v);
  std::string line_;
  std::vector<uint32_t> starts_;  // where each cell's text begins in line_ (after its comma)
  bool first_ = true;
};

/// A table whose rows are rendered in one column order (the writer's: e.g. the window metrics as one
/// group) and written in another (the file's: the reference's columns in the reference's order, our
/// extra columns after them). Both lists name the same columns; a layout that does not is a bug and
/// aborts at construction, naming the column, and a row with the wrong number of cells aborts too,
/// since either would write values under the wrong names.
class CsvLayout {
 public:
  CsvLayout(const std::vector<std::string>& writer_order, std::vector<std::string> file_order);
  /// The header line in file order.
  const std::string& header() const { return header_; }
  const std::vector<std::string>& file_columns() const { return file_; }
  /// `row`'s cells (writer order) as one line in file order; resets `row`.
  std::string take_line(CsvRow& row) const;

 private:
  std::vector<std::string> file_;
  std::vector<uint16_t> source_;  // file position -> writer position
  std::string header_;
};

/// A header line from column names.
std::string csv_header(std::initializer_list<std::string_view> columns);

}  // namespace ascprof

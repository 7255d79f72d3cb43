#pragma once
/// One CSV row at a time (RFC 4180: fields with a comma, quote, CR or LF are quoted, quotes doubled).
/// Text cells that start with = + - @ (or a tab / CR) are prefixed with a single quote so spreadsheet
/// software shows them as text instead of running them as formulas: input strings (kernel names,
/// shapes) end up in reports that are shared. Numbers are written by the typed overloads and are
/// never guarded.
#include <cstdint>
#include <string>
#include <string_view>

namespace ascprof {

class CsvRow {
 public:
  CsvRow& text(std::string_view v);            ///< a string cell (quoted and guarded as needed)
  CsvRow& number(int64_t v);
  CsvRow& number(uint64_t v);
  CsvRow& number(double v, int decimals = 6);  ///< fixed decimals (0..17), trailing zeros trimmed; NaN -> empty
  CsvRow& boolean(bool v);                     ///< "true" / "false", as the reference's Python writes
  CsvRow& empty();                             ///< an empty cell (null)
  CsvRow& json(std::string_view compact_json); ///< a JSON value as one text cell (not formula-guarded)
  CsvRow& literal(std::string_view number);    ///< an already formatted number (e.g. exact µs text)
  /// The row with its line ending ("\n"), ready to append; resets the row.
  std::string take_line();
  const std::string& str() const { return line_; }

 private:
  void sep();
  void quoted(std::string_view v);
  std::string line_;
  bool first_ = true;
};

/// A header line from column names.
std::string csv_header(std::initializer_list<std::string_view> columns);

}  // namespace ascprof

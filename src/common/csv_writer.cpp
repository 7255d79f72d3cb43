#include "ascprof/common/csv_writer.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "ascprof/common/utf8.hpp"

namespace ascprof {

void CsvRow::sep() {
  if (!first_) line_ += ',';
  first_ = false;
  starts_.push_back(static_cast<uint32_t>(line_.size()));
}

void CsvRow::quoted(std::string_view v) {
  // A value with bytes that are not UTF-8 (a damaged kernel name) is written with them as visible
  // \xNN escapes: one such byte made the whole file unreadable to CSV readers that decode UTF-8.
  std::string escaped;
  if (std::any_of(v.begin(), v.end(), [](char c) { return c == '\0' || static_cast<unsigned char>(c) >= 0x80; })) {
    escaped = escape_invalid_utf8(std::string(v));
    v = escaped;
  }
  const bool needs = v.find_first_of(",\"\r\n") != std::string_view::npos;
  if (!needs) {
    line_ += v;
    return;
  }
  line_ += '"';
  for (const char c : v) {
    if (c == '"') line_ += '"';
    line_ += c;
  }
  line_ += '"';
}

CsvRow& CsvRow::text(std::string_view v) {
  sep();
  if (!v.empty() && (v[0] == '=' || v[0] == '+' || v[0] == '-' || v[0] == '@' || v[0] == '\t' || v[0] == '\r')) {
    std::string guarded = "'";
    guarded += v;
    quoted(guarded);
  } else {
    quoted(v);
  }
  return *this;
}

CsvRow& CsvRow::json(std::string_view compact_json) {
  sep();
  quoted(compact_json);
  return *this;
}

CsvRow& CsvRow::literal(std::string_view number) {
  sep();
  line_ += number;
  return *this;
}

CsvRow& CsvRow::number(int64_t v) {
  sep();
  char buf[24];
  line_.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
  return *this;
}

CsvRow& CsvRow::number(uint64_t v) {
  sep();
  char buf[24];
  line_.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
  return *this;
}

namespace {

// to_chars with a precision prints exactly what printf("%.*f") prints, without its format parsing
// and locale lookups (every summary table writes millions of these). `buf` holds the longest finite
// double (309 digits before the point; callers use 3 or 6 after it).
std::string_view format_fixed(double v, int decimals, char (&buf)[512]) {
  if (!std::isfinite(v)) return {};
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, std::clamp(decimals, 0, 17));
  if (ec != std::errc{}) return {};
  std::string_view s(buf, static_cast<size_t>(end - buf));
  if (s.find('.') != std::string_view::npos) {
    while (s.back() == '0') s.remove_suffix(1);
    if (s.back() == '.') s.remove_suffix(1);
  }
  if (s == "-0") s = "0";
  return s;
}

}  // namespace

std::string fixed_number(double v, int decimals) {
  char buf[512];
  return std::string(format_fixed(v, decimals, buf));
}

CsvRow& CsvRow::number(double v, int decimals) {
  sep();
  char buf[512];
  line_ += format_fixed(v, decimals, buf);
  return *this;
}

CsvRow& CsvRow::boolean(bool v) {
  sep();
  line_ += v ? "True" : "False";
  return *this;
}

CsvRow& CsvRow::empty() {
  sep();
  return *this;
}

std::string CsvRow::take_line() {
  std::string out = std::move(line_);
  out += '\n';
  line_.clear();
  starts_.clear();
  first_ = true;
  return out;
}

CsvLayout::CsvLayout(const std::vector<std::string>& writer_order, std::vector<std::string> file_order)
    : file_(std::move(file_order)) {
  auto fail = [](const char* what, std::string_view column) {
    std::fprintf(stderr, "ascprof-mpi: internal error: CSV layout %s column '%.*s'\n", what,
                 static_cast<int>(column.size()), column.data());
    std::abort();
  };
  if (writer_order.size() != file_.size()) fail("lists differ in length at", file_.empty() ? "" : file_.back());
  for (const auto& c : file_) {
    const auto it = std::find(writer_order.begin(), writer_order.end(), c);
    if (it == writer_order.end()) fail("has no writer for", c);
    if (std::count(file_.begin(), file_.end(), c) > 1) fail("repeats", c);
    source_.push_back(static_cast<uint16_t>(it - writer_order.begin()));
  }
  CsvRow r;
  for (const auto& c : file_) r.text(c);
  header_ = r.take_line();
}

std::string CsvLayout::take_line(CsvRow& row) const {
  if (row.starts_.size() != source_.size()) {
    std::fprintf(stderr, "ascprof-mpi: internal error: a row of %zu cells for a table of %zu columns (first '%.*s')\n",
                 row.starts_.size(), source_.size(), static_cast<int>(file_.front().size()), file_.front().data());
    std::abort();
  }
  const std::string& line = row.line_;
  const size_t n = row.starts_.size();
  std::string out;
  out.reserve(line.size() + 1);
  for (size_t i = 0; i < n; ++i) {
    const size_t k = source_[i];
    const size_t begin = row.starts_[k];
    const size_t end = k + 1 < n ? row.starts_[k + 1] - 1 : line.size();  // the next cell's comma
    if (i) out += ',';
    out.append(line, begin, end - begin);
  }
  out += '\n';
  row.line_.clear();
  row.starts_.clear();
  row.first_ = true;
  return out;
}

std::string csv_header(std::initializer_list<std::string_view> columns) {
  CsvRow r;
  for (const auto c : columns) r.text(c);
  return r.take_line();
}

}  // namespace ascprof

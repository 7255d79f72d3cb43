#include "ascprof/report/tables.hpp"

#include <cmath>
#include <cstdlib>

#include "ascprof/common/files.hpp"
#include "ascprof/common/stats.hpp"
#include "ascprof/importers/csv_reader.hpp"

namespace ascprof::report {

namespace fs = std::filesystem;

int TextTable::column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

const std::string& TextTable::cell(size_t row, std::string_view name) const {
  static const std::string kEmpty;
  const int c = column(name);
  if (c < 0 && !header.empty()) throw UnknownColumn(source + ": no column '" + std::string(name) + "'");
  if (c < 0 || row >= rows.size() || static_cast<size_t>(c) >= rows[row].size()) return kEmpty;
  return rows[row][static_cast<size_t>(c)];
}

double TextTable::number(size_t row, std::string_view name) const {
  const std::string& text = cell(row, name);
  if (text.empty()) return std::nan("");
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return end != text.c_str() && *end == '\0' ? v : std::nan("");
}

Status for_each_row(const fs::path& path,
                    const std::function<bool(const std::vector<std::string_view>& fields, bool is_header)>& on_row,
                    Stats* stats_out) {
  std::error_code ec;
  if (!fs::exists(path, ec) || fs::file_size(path, ec) == 0) return {};
  auto file = MappedFile::open(path);
  if (!file.ok()) return file.status();
  Stats local;
  Stats& stats = stats_out != nullptr ? *stats_out : local;
  importers::CsvOptions options;
  options.fix_width = true;
  importers::CsvCursor cursor(file->data(), path.string(), stats, options);
  cursor.attach(&*file);
  std::vector<std::string_view> fields;
  bool header = true;
  while (cursor.next_row(fields)) {
    if (!on_row(fields, header)) return {};
    header = false;
  }
  return cursor.status();
}

Result<TextTable> read_table(const fs::path& path, uint64_t max_rows) {
  TextTable t;
  t.source = path.string();
  const Status st = for_each_row(path, [&t, max_rows](const std::vector<std::string_view>& f, bool is_header) {
    if (is_header) {
      t.header.assign(f.begin(), f.end());
      return true;
    }
    if (t.rows.size() < max_rows) t.rows.emplace_back(f.begin(), f.end());
    ++t.total_rows;
    return true;
  });
  if (!st.ok()) return st;
  return t;
}

}  // namespace ascprof::report

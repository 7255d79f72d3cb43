#include "ascprof/report/tables.hpp"

#include <cmath>
#include <cstdlib>

#include "ascprof/common/files.hpp"
#include "ascprof/common/stats.hpp"
#include "ascprof/importers/csv_reader.hpp"
#include "ascprof/store/table_index.hpp"

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

namespace {

// A table kept as an index of the ranks' part-pack ranges (store/table_index.hpp): the header, then
// each range in order, one range in memory at a time (a rank's rows, a few MB). Each range is parsed
// after a copy of the header so a damaged row is named by its file and range and the width is the
// header's, as in the copied table.
Status for_each_indexed_row(const fs::path& path,
                            const std::function<bool(const std::vector<std::string_view>& fields, bool is_header)>& on_row,
                            Stats& stats) {
  ASCPROF_ASSIGN_OR_RETURN(store::TableIndex index, store::read_table_index(path));
  importers::CsvOptions options;
  options.fix_width = true;
  std::vector<std::string_view> fields;
  std::string text;
  bool header = true;
  {
    importers::CsvCursor cursor(index.header, store::table_index_path(path).string(), stats, options);
    if (cursor.next_row(fields) && !on_row(fields, true)) return {};
    ASCPROF_RETURN_IF_ERROR(cursor.status());
    header = false;
  }
  std::string part;
  for (const auto& p : index.parts) {
    ASCPROF_RETURN_IF_ERROR(store::read_table_part(path.parent_path(), p, part));
    text.assign(index.header);
    text += part;
    const std::string name = p.file + " bytes " + std::to_string(p.offset) + "+" + std::to_string(p.length) + " (" +
                             index.table + (p.rank_id.empty() ? "" : ", rank " + p.rank_id) + ")";
    importers::CsvCursor cursor(text, name, stats, options);
    bool first = true;
    while (cursor.next_row(fields)) {
      if (first) {  // the header copy
        first = false;
        continue;
      }
      if (!on_row(fields, header)) return {};
    }
    ASCPROF_RETURN_IF_ERROR(cursor.status());
  }
  return {};
}

}  // namespace

bool table_present(const fs::path& path) {
  std::error_code ec;
  return fs::exists(path, ec) || fs::exists(store::table_index_path(path), ec);
}

Status for_each_row(const fs::path& path,
                    const std::function<bool(const std::vector<std::string_view>& fields, bool is_header)>& on_row,
                    Stats* stats_out) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    if (!fs::exists(store::table_index_path(path), ec)) return {};
    Stats local;
    return for_each_indexed_row(path, on_row, stats_out != nullptr ? *stats_out : local);
  }
  if (fs::file_size(path, ec) == 0) return {};
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

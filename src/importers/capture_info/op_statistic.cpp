#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ascprof/common/files.hpp"
#include "ascprof/common/numbers.hpp"
#include "ascprof/importers/csv_reader.hpp"
#include "ascprof/importers/op_statistics.hpp"

namespace ascprof::importers {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool all_blank(std::string_view data) {
  for (char c : data)
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') return false;
  return true;
}

// Count is written as an integer; "3.0" is accepted too since some exporters go through float.
std::optional<uint64_t> parse_count(std::string_view cell) {
  if (auto v = parse_int64(cell)) {
    if (*v >= 0) return static_cast<uint64_t>(*v);
    return std::nullopt;
  }
  if (auto d = parse_double(cell); d && *d >= 0 && *d < 1.8e19 && std::floor(*d) == *d)
    return static_cast<uint64_t>(*d);
  return std::nullopt;
}

struct NumberColumn {
  std::string_view name;
  double model::OpStatisticRow::*member;
  bool required;
};

// Header names as CANN writes them; matched case-insensitively.
constexpr std::array<NumberColumn, 5> kNumberColumns = {{
    {"Total Time(us)", &model::OpStatisticRow::total_us, true},
    {"Min Time(us)", &model::OpStatisticRow::min_us, false},
    {"Avg Time(us)", &model::OpStatisticRow::avg_us, false},
    {"Max Time(us)", &model::OpStatisticRow::max_us, false},
    {"Ratio(%)", &model::OpStatisticRow::ratio_pct, false},
}};

Status import_impl(std::string_view content, std::string_view display_name, std::vector<model::OpStatisticRow>& out,
                   Stats& stats) {
  out.clear();
  // Rows of the wrong width are skipped here rather than padded, so the tokenizer must not pad them.
  CsvOptions opt;
  opt.fix_width = false;
  CsvCursor cur(content, display_name, stats, opt);
  std::vector<std::string_view> f;
  if (!cur.next_row(f)) {
    if (!cur.status().ok()) return cur.status();
    std::string_view body = content;
    if (body.size() >= 3 && body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);
    if (all_blank(body)) return file_error(ErrorCode::kSchema, display_name, "", "empty file");
    return file_error(ErrorCode::kParse, display_name, "line 1", "no complete header row (unterminated quote)");
  }
  const CsvHeader header(f);
  const std::string header_place = "line " + std::to_string(cur.line());
  auto require = [&](std::string_view name, int* col) -> Status {
    *col = header.find(name);
    if (*col < 0)
      return file_error(ErrorCode::kSchema, display_name, header_place,
                        "missing required column '" + std::string(name) + "' (header has: " + header.joined() + ")");
    return {};
  };
  int op_type_col = -1, core_type_col = -1, count_col = -1;
  ASCPROF_RETURN_IF_ERROR(require("OP Type", &op_type_col));
  ASCPROF_RETURN_IF_ERROR(require("Core Type", &core_type_col));
  ASCPROF_RETURN_IF_ERROR(require("Count", &count_col));
  std::array<int, kNumberColumns.size()> number_col{};
  for (size_t i = 0; i < kNumberColumns.size(); ++i) {
    if (kNumberColumns[i].required)
      ASCPROF_RETURN_IF_ERROR(require(kNumberColumns[i].name, &number_col[i]));
    else
      number_col[i] = header.find(kNumberColumns[i].name);
  }
  const int device_col = header.find_first({"Device_id", "Device ID"});
  const size_t width = header.size();

  while (cur.next_row(f)) {
    if (f.size() != width) {
      note_line(stats, Stat::op_stat_bad_row, display_name, cur.line(),
                std::to_string(f.size()) + " fields, header has " + std::to_string(width) + "; row skipped");
      continue;
    }
    std::string bad;  // "column 'value' is ..." of the first bad cell
    model::OpStatisticRow row;
    row.source_line = cur.line();
    row.op_type = std::string(trim(f[static_cast<size_t>(op_type_col)]));
    row.core_type = std::string(trim(f[static_cast<size_t>(core_type_col)]));
    if (device_col >= 0) {
      const std::string_view cell = trim(f[static_cast<size_t>(device_col)]);
      if (!cell.empty()) {
        auto v = parse_int64(cell);
        if (v && *v >= std::numeric_limits<int32_t>::min() && *v <= std::numeric_limits<int32_t>::max())
          row.device_id = static_cast<int32_t>(*v);
        else
          bad = header.name(static_cast<size_t>(device_col)) + " '" + std::string(cell) + "' is not an integer";
      }
    }
    if (bad.empty()) {
      const std::string_view cell = trim(f[static_cast<size_t>(count_col)]);
      if (auto v = parse_count(cell))
        row.count = *v;
      else
        bad = "Count '" + std::string(cell) + "' is not a non-negative integer";
    }
    for (size_t i = 0; i < kNumberColumns.size() && bad.empty(); ++i) {
      double& value = row.*(kNumberColumns[i].member);
      value = kNaN;
      if (number_col[i] < 0) continue;
      const std::string_view cell = trim(f[static_cast<size_t>(number_col[i])]);
      if (!kNumberColumns[i].required && is_null_cell(cell)) continue;
      if (auto v = parse_double(cell))
        value = *v;
      else
        bad = std::string(kNumberColumns[i].name) + " '" + std::string(cell) + "' is not a number";
    }
    if (!bad.empty()) {
      note_line(stats, Stat::op_stat_bad_row, display_name, cur.line(), bad + "; row skipped");
      continue;
    }
    out.push_back(std::move(row));
  }
  if (!cur.status().ok()) {
    out.clear();
    return cur.status();
  }
  return {};
}

}  // namespace

Status import_op_statistic(const std::filesystem::path& path, std::vector<model::OpStatisticRow>& out, Stats& stats) {
  auto mapped = MappedFile::open(path);
  if (!mapped.ok()) {
    out.clear();
    return mapped.status();
  }
  return import_impl(mapped->data(), path.string(), out, stats);
}

Status import_op_statistic(std::string_view content, std::string_view display_name,
                           std::vector<model::OpStatisticRow>& out, Stats& stats) {
  return import_impl(content, display_name, out, stats);
}

}  // namespace ascprof::importers

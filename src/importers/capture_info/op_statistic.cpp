#include <array>
#include <limits>
#include <string>
#include <vector>

#include "ascprof/common/files.hpp"
#include "ascprof/importers/op_statistics.hpp"
#include "statistic_csv.hpp"

namespace ascprof::importers {

namespace {

using Row = model::OpStatisticRow;

// Header names as CANN writes them; matched case-insensitively.
constexpr std::array<statistic_csv::NumberColumn<Row>, 5> kNumberColumns = {{
    {"Total Time(us)", &Row::total_us, true},
    {"Min Time(us)", &Row::min_us, false},
    {"Avg Time(us)", &Row::avg_us, false},
    {"Max Time(us)", &Row::max_us, false},
    {"Ratio(%)", &Row::ratio_pct, false},
}};

Status import_impl(std::string_view content, std::string_view display_name, std::vector<Row>& out, Stats& stats) {
  out.clear();
  statistic_csv::Table t;
  ASCPROF_RETURN_IF_ERROR(t.open(content, display_name, stats));
  int op_type_col = -1, core_type_col = -1, count_col = -1;
  ASCPROF_RETURN_IF_ERROR(t.require("OP Type", &op_type_col));
  ASCPROF_RETURN_IF_ERROR(t.require("Core Type", &core_type_col));
  ASCPROF_RETURN_IF_ERROR(t.require("Count", &count_col));
  std::array<int, kNumberColumns.size()> number_col{};
  ASCPROF_RETURN_IF_ERROR(statistic_csv::find_numbers(t, kNumberColumns, &number_col));
  const int device_col = t.header().find_first({"Device_id", "Device ID"});
  std::vector<std::string_view> f;
  while (t.next(Stat::op_stat_bad_row, f)) {
    std::string bad;  // "column 'value' is ..." of the first bad cell
    Row row;
    row.source_line = t.line();
    row.op_type = std::string(trim(f[static_cast<size_t>(op_type_col)]));
    row.core_type = std::string(trim(f[static_cast<size_t>(core_type_col)]));
    if (device_col >= 0) {
      const std::string_view cell = trim(f[static_cast<size_t>(device_col)]);
      if (!cell.empty()) {
        auto v = parse_int64(cell);
        if (v && *v >= std::numeric_limits<int32_t>::min() && *v <= std::numeric_limits<int32_t>::max())
          row.device_id = static_cast<int32_t>(*v);
        else
          bad = t.header().name(static_cast<size_t>(device_col)) + " '" + std::string(cell) + "' is not an integer";
      }
    }
    if (bad.empty()) {
      const std::string_view cell = trim(f[static_cast<size_t>(count_col)]);
      if (auto v = statistic_csv::parse_count(cell))
        row.count = *v;
      else
        bad = "Count '" + std::string(cell) + "' is not a non-negative integer";
    }
    if (bad.empty()) bad = statistic_csv::read_numbers(kNumberColumns, number_col, f, row);
    if (!bad.empty()) {
      t.skip(Stat::op_stat_bad_row, bad);
      continue;
    }
    out.push_back(std::move(row));
  }
  if (!t.status().ok()) {
    out.clear();
    return t.status();
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

#include <array>
#include <string>
#include <vector>

#include "ascprof/common/files.hpp"
#include "ascprof/importers/op_statistics.hpp"
#include "statistic_csv.hpp"

namespace ascprof::importers {

namespace {

using Row = model::ApiStatisticRow;

// Header names as CANN writes them; matched case-insensitively.
constexpr std::array<statistic_csv::NumberColumn<Row>, 5> kNumberColumns = {{
    {"Time(us)", &Row::time_us, true},
    {"Avg(us)", &Row::avg_us, false},
    {"Min(us)", &Row::min_us, false},
    {"Max(us)", &Row::max_us, false},
    {"Variance", &Row::variance, false},
}};

Status import_impl(std::string_view content, std::string_view display_name, std::vector<Row>& out, Stats& stats) {
  out.clear();
  statistic_csv::Table t;
  ASCPROF_RETURN_IF_ERROR(t.open(content, display_name, stats));
  int api_name_col = -1, count_col = -1;
  ASCPROF_RETURN_IF_ERROR(t.require("API Name", &api_name_col));
  std::array<int, kNumberColumns.size()> number_col{};
  ASCPROF_RETURN_IF_ERROR(statistic_csv::find_numbers(t, kNumberColumns, &number_col));
  ASCPROF_RETURN_IF_ERROR(t.require("Count", &count_col));
  const int level_col = t.header().find("Level");
  const int device_col = t.header().find_first({"Device_id", "Device ID"});
  std::vector<std::string_view> f;
  while (t.next(Stat::api_stat_bad_row, f)) {
    std::string bad;  // "column 'value' is ..." of the first bad cell
    Row row;
    row.source_line = t.line();
    row.api_name = std::string(trim(f[static_cast<size_t>(api_name_col)]));
    if (level_col >= 0) row.level = std::string(trim(f[static_cast<size_t>(level_col)]));
    // Device_id is an integer for device APIs and "host" for host APIs: kept as text.
    if (device_col >= 0) row.device_id = std::string(trim(f[static_cast<size_t>(device_col)]));
    const std::string_view count = trim(f[static_cast<size_t>(count_col)]);
    if (auto v = statistic_csv::parse_count(count))
      row.count = *v;
    else
      bad = "Count '" + std::string(count) + "' is not a non-negative integer";
    if (bad.empty()) bad = statistic_csv::read_numbers(kNumberColumns, number_col, f, row);
    if (!bad.empty()) {
      t.skip(Stat::api_stat_bad_row, bad);
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

Status import_api_statistic(const std::filesystem::path& path, std::vector<model::ApiStatisticRow>& out,
                            Stats& stats) {
  auto mapped = MappedFile::open(path);
  if (!mapped.ok()) {
    out.clear();
    return mapped.status();
  }
  return import_impl(mapped->data(), path.string(), out, stats);
}

Status import_api_statistic(std::string_view content, std::string_view display_name,
                            std::vector<model::ApiStatisticRow>& out, Stats& stats) {
  return import_impl(content, display_name, out, stats);
}

}  // namespace ascprof::importers

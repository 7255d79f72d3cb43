#include "ascprof/importers/step_trace_time.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ascprof/common/files.hpp"
#include "ascprof/common/numbers.hpp"
#include "ascprof/importers/csv_reader.hpp"

namespace ascprof::importers {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct ValueColumn {
  std::string_view name;
  std::vector<double> model::StepTraceTable::*member;
};

// Header names as torch_npu writes them; matched case-insensitively.
constexpr std::array<ValueColumn, 9> kValueColumns = {{
    {"Computing", &model::StepTraceTable::computing},
    {"Communication(Not Overlapped)", &model::StepTraceTable::comm_not_overlapped},
    {"Overlapped", &model::StepTraceTable::overlapped},
    {"Communication", &model::StepTraceTable::communication},
    {"Free", &model::StepTraceTable::free},
    {"Stage", &model::StepTraceTable::stage},
    {"Bubble", &model::StepTraceTable::bubble},
    {"Communication(Not Overlapped and Exclude Receive)", &model::StepTraceTable::comm_not_overlapped_excl_receive},
    {"Preparing", &model::StepTraceTable::preparing},
}};

bool all_blank(std::string_view data) {
  for (char c : data)
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') return false;
  return true;
}

Status import_impl(std::string_view content, std::string_view display_name, model::StepTraceTable& out, Stats& stats) {
  out = model::StepTraceTable{};
  CsvCursor cur(content, display_name, stats);
  std::vector<std::string_view> f;
  if (!cur.next_row(f)) {
    if (!cur.status().ok()) return cur.status();
    std::string_view body = content;
    if (body.size() >= 3 && body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);
    if (all_blank(body)) return file_error(ErrorCode::kSchema, display_name, "", "empty file");
    return file_error(ErrorCode::kParse, display_name, "line 1", "no complete header row (unterminated quote)");
  }
  const CsvHeader header(f);
  const int step_col = header.find("Step");
  if (step_col < 0)
    return file_error(ErrorCode::kSchema, display_name, "line " + std::to_string(cur.line()),
                      "missing required column 'Step' (header has: " + header.joined() + ")");
  const int device_col = header.find_first({"Device_id", "Device ID"});
  std::array<int, kValueColumns.size()> value_col{};
  for (size_t i = 0; i < kValueColumns.size(); ++i) value_col[i] = header.find(kValueColumns[i].name);

  std::array<double, kValueColumns.size()> values{};
  while (cur.next_row(f)) {
    std::string bad;  // "column 'value'" of the first bad cell
    int64_t step = -1;
    int64_t device = -1;
    const std::string_view step_cell = trim(f[static_cast<size_t>(step_col)]);
    if (!step_cell.empty()) {
      if (auto v = parse_int64(step_cell))
        step = *v;
      else
        bad = "Step '" + std::string(step_cell) + "'";
    }
    if (device_col >= 0 && bad.empty()) {
      const std::string_view cell = trim(f[static_cast<size_t>(device_col)]);
      if (!cell.empty()) {
        auto v = parse_int64(cell);
        if (v && *v >= std::numeric_limits<int32_t>::min() && *v <= std::numeric_limits<int32_t>::max())
          device = *v;
        else
          bad = header.name(static_cast<size_t>(device_col)) + " '" + std::string(cell) + "'";
      }
    }
    for (size_t i = 0; i < kValueColumns.size() && bad.empty(); ++i) {
      values[i] = kNaN;
      if (value_col[i] < 0) continue;
      const std::string_view cell = trim(f[static_cast<size_t>(value_col[i])]);
      if (is_null_cell(cell)) continue;
      if (auto v = parse_double(cell))
        values[i] = *v;
      else
        bad = std::string(kValueColumns[i].name) + " '" + std::string(cell) + "'";
    }
    if (!bad.empty()) {
      note_line(stats, Stat::step_trace_bad_row, display_name, cur.line(), bad + " is not a number; row skipped");
      continue;
    }
    out.step.push_back(step);
    out.device_id.push_back(static_cast<int32_t>(device));
    for (size_t i = 0; i < kValueColumns.size(); ++i) (out.*(kValueColumns[i].member)).push_back(values[i]);
  }
  if (!cur.status().ok()) {
    out = model::StepTraceTable{};
    return cur.status();
  }
  return {};
}

}  // namespace

Status import_step_trace_time(const std::filesystem::path& path, model::StepTraceTable& out, Stats& stats) {
  auto mapped = MappedFile::open(path);
  if (!mapped.ok()) {
    out = model::StepTraceTable{};
    return mapped.status();
  }
  return import_impl(mapped->data(), path.string(), out, stats);
}

Status import_step_trace_time(std::string_view content, std::string_view display_name, model::StepTraceTable& out,
                              Stats& stats) {
  return import_impl(content, display_name, out, stats);
}

}  // namespace ascprof::importers

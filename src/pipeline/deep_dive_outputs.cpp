#include "ascprof/pipeline/deep_dive_outputs.hpp"

#include <cmath>

#include "ascprof/common/csv_writer.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/layout/out_layout.hpp"

namespace ascprof::pipeline {

namespace fs = std::filesystem;

namespace {

// Numeric columns straight from DeepDiveRow::numbers, with their decimals.
struct NumberColumn {
  const char* name;
  int decimals;
};
constexpr NumberColumn kHead[] = {{"call_count", 0}, {"total_us", 3}, {"avg_us", 3}, {"min_us", 3}, {"max_us", 3},
                                  {"kernel_time_share", 6}};
constexpr NumberColumn kMiddle[] = {
    {"wait_avg_us", 3},          {"wait_share", 6},          {"block_dim_min", 0},       {"block_dim_max", 0},
    {"mix_block_dim_max", 0},    {"cores_of_type", 0},       {"block_dim_per_core", 6},  {"aic_mac_ratio", 6},
    {"aic_scalar_ratio", 6},     {"aic_mte1_ratio", 6},      {"aic_mte2_ratio", 6},      {"aic_fixpipe_ratio", 6},
    {"aic_icache_miss_rate", 6}, {"aiv_vec_ratio", 6},       {"aiv_scalar_ratio", 6},    {"aiv_mte2_ratio", 6},
    {"aiv_mte3_ratio", 6},       {"aiv_icache_miss_rate", 6}, {"cube_utilization_pct", 3}, {"hf32_eligible_share", 6}};

// the row's value of a column named like its feature ("call_count" is the feature "calls")
double value(const analysis::DeepDiveRow& r, std::string_view column) {
  return r.number(column == "call_count" ? std::string_view("calls") : column);
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ";") + s;
  return out;
}

void number_or_null(JsonWriter& w, const char* key, double v) {
  w.key(key);
  if (std::isfinite(v)) {
    w.value(v);
  } else {
    w.null();
  }
}

void string_array(JsonWriter& w, const char* key, const std::vector<std::string>& v) {
  w.key(key);
  w.begin_array();
  for (const auto& s : v) w.value(s);
  w.end_array();
}

// The files are written in pieces of about this many bytes: at 10,000 ranks the JSON is ~360 MB
// and the CSV ~120 MB, which process 0 must not hold whole on top of the rows.
constexpr size_t kPieceBytes = size_t{1} << 20;

void write_csv(AtomicFileWriter& file, const analysis::DeepDive& dd) {
  std::string out;
  for (const auto& c : deep_dive_columns()) out += (out.empty() ? "" : ",") + c;
  out += '\n';
  CsvRow row;
  for (const auto& r : dd.rows) {
    row.text(r.deep_dive_id).text(r.scope).text(r.rank_id).number(static_cast<uint64_t>(r.hot_rank)).text(r.name);
    row.text(r.task_type).text(r.kernel_type).text(r.categories).text(r.shape_class).text(r.input_shapes);
    row.text(r.input_dtypes).number(static_cast<uint64_t>(r.rank_count));
    for (const auto& c : kHead) row.number(value(r, c.name), c.decimals);
    row.number(r.cumulative_share, 6);
    for (const auto& c : kMiddle) row.number(value(r, c.name), c.decimals);
    row.text(r.bound_family).text(r.work_kind).number(r.number("work_per_call"), 0).number(r.number("achieved"), 3);
    row.text(r.achieved_unit).number(r.number("peak"), 3).number(r.number("efficiency"), 6);
    row.number(r.number("op_stat_total_us"), 3).number(r.number("op_stat_ratio_pct"), 3);
    row.text(r.host_api);
    if (r.host_api.empty()) {
      row.empty().empty();
    } else {
      row.number(r.host_api_avg_us, 3).number(static_cast<uint64_t>(r.host_api_count));
    }
    row.number(r.number("host_us_per_call"), 3).number(r.number("host_to_device_ratio"), 6);
    row.text(r.slowest_rank_id);
    if (r.slowest_rank_id.empty()) {
      row.empty();
    } else {
      row.number(r.slowest_rank_avg_us, 3);
    }
    row.number(r.number("rank_avg_spread"), 6);
    std::vector<std::string> ids;
    for (const auto& d : r.details) ids.push_back(d.id);
    row.text(joined(ids)).text(r.severity).text(r.verdict()).text(joined(r.evidence_ids)).text(joined(r.gaps));
    out += row.take_line();
    if (out.size() >= kPieceBytes) {
      file.write(out);
      out.clear();
    }
  }
  file.write(out);
}

void write_json(AtomicFileWriter& file, const std::string& root, const analysis::DeepDive& dd, const knowledge::Knowledge& kb) {
  JsonWriter w;
  w.begin_object();
  w.kv("schema", "operator_deep_dive/v1");
  w.kv("root", root);
  w.key("chip");
  w.begin_object();
  w.kv("name", dd.chip.name);
  w.kv("assumed", dd.chip_assumed);
  w.kv("source", dd.chip.source);
  w.kv("cube_cores", dd.chip.cube_cores);
  w.kv("vector_cores", dd.chip.vector_cores);
  w.kv("cube_tflops", dd.chip.cube_tflops);
  w.kv("hbm_gbps", dd.chip.hbm_gbps);
  w.end_object();
  w.key("selection");
  w.begin_object();
  w.kv("coverage", kb.deep_dive.coverage);
  w.kv("min_operators", static_cast<uint64_t>(kb.deep_dive.min_operators));
  w.kv("max_operators", static_cast<uint64_t>(kb.deep_dive.max_operators));
  w.end_object();
  w.key("inputs");
  w.begin_object();
  w.kv("ranks", static_cast<uint64_t>(dd.ranks));
  w.kv("ranks_without_metric_columns", static_cast<uint64_t>(dd.ranks_without_metrics));
  w.kv("ranks_without_op_statistic", static_cast<uint64_t>(dd.ranks_without_op_statistic));
  w.kv("ranks_without_api_statistic", static_cast<uint64_t>(dd.ranks_without_api_statistic));
  w.end_object();
  w.key("rows");
  w.begin_array();
  for (const auto& r : dd.rows) {
    w.begin_object();
    w.kv("deep_dive_id", r.deep_dive_id);
    w.kv("scope", r.scope);
    w.kv("rank_id", r.rank_id);
    w.kv("hot_rank", static_cast<uint64_t>(r.hot_rank));
    w.kv("name", r.name);
    w.kv("task_type", r.task_type);
    w.kv("kernel_type", r.kernel_type);
    w.kv("categories", r.categories);
    w.kv("shape_class", r.shape_class);
    w.kv("input_shapes", r.input_shapes);
    w.kv("input_dtypes", r.input_dtypes);
    w.kv("rank_count", static_cast<uint64_t>(r.rank_count));
    for (const auto& c : kHead) number_or_null(w, c.name, value(r, c.name));
    w.kv("cumulative_share", r.cumulative_share);
    for (const auto& c : kMiddle) number_or_null(w, c.name, value(r, c.name));
    w.kv("bound_family", r.bound_family);
    w.kv("work_kind", r.work_kind);
    for (const char* k : {"work_per_call", "achieved"}) number_or_null(w, k, r.number(k));
    w.kv("achieved_unit", r.achieved_unit);
    for (const char* k : {"peak", "efficiency", "op_stat_total_us", "op_stat_ratio_pct"}) number_or_null(w, k, r.number(k));
    w.kv("host_api", r.host_api);
    number_or_null(w, "host_api_avg_us", r.host_api.empty() ? NAN : r.host_api_avg_us);
    number_or_null(w, "host_api_count", r.host_api.empty() ? NAN : static_cast<double>(r.host_api_count));
    for (const char* k : {"host_us_per_call", "host_to_device_ratio"}) number_or_null(w, k, r.number(k));
    w.kv("slowest_rank_id", r.slowest_rank_id);
    number_or_null(w, "slowest_rank_avg_us", r.slowest_rank_id.empty() ? NAN : r.slowest_rank_avg_us);
    number_or_null(w, "rank_avg_spread", r.number("rank_avg_spread"));
    std::vector<std::string> ids;
    for (const auto& d : r.details) ids.push_back(d.id);
    string_array(w, "classifications", ids);
    w.kv("severity", r.severity);
    w.kv("verdict", r.verdict());
    string_array(w, "evidence_ids", r.evidence_ids);
    string_array(w, "gaps", r.gaps);
    w.key("details");
    w.begin_array();
    for (const auto& d : r.details) {
      w.begin_object();
      w.kv("id", d.id);
      w.kv("title", d.title);
      w.kv("severity", d.severity);
      string_array(w, "facts", d.facts);
      w.kv("inference", d.inference);
      w.kv("cause", d.cause);
      w.kv("suggestion", d.suggestion);
      w.end_object();
    }
    w.end_array();
    w.end_object();
    if (w.size() >= kPieceBytes) file.write(w.take());
  }
  w.end_array();
  w.key("host_api");
  w.begin_array();
  for (const auto& h : dd.host_api) {
    w.begin_object();
    w.kv("rank_id", h.rank_id);
    w.kv("level", h.level);
    w.kv("api", h.api);
    w.kv("time_us", h.time_us);
    w.kv("count", h.count);
    w.kv("avg_us", h.avg_us);
    w.kv("share_of_span", h.share_of_span);
    w.kv("classification", h.rule);
    w.kv("title", h.title);
    w.kv("cause", h.cause);
    w.kv("suggestion", h.suggestion);
    w.end_object();
    if (w.size() >= kPieceBytes) file.write(w.take());
  }
  w.end_array();
  w.end_object();
  std::string tail = w.take();
  tail += '\n';
  file.write(tail);
}

}  // namespace

const std::vector<std::string>& deep_dive_columns() {
  static const std::vector<std::string> cols = [] {
    std::vector<std::string> c = {"deep_dive_id", "scope",       "rank_id",      "hot_rank",   "name",
                                  "task_type",    "kernel_type", "categories",   "shape_class", "input_shapes",
                                  "input_dtypes", "rank_count"};
    for (const auto& n : kHead) c.emplace_back(n.name);
    c.emplace_back("cumulative_share");
    for (const auto& n : kMiddle) c.emplace_back(n.name);
    for (const char* n : {"bound_family", "work_kind", "work_per_call", "achieved", "achieved_unit", "peak", "efficiency",
                          "op_stat_total_us", "op_stat_ratio_pct", "host_api", "host_api_avg_us", "host_api_count",
                          "host_us_per_call", "host_to_device_ratio", "slowest_rank_id", "slowest_rank_avg_us",
                          "rank_avg_spread", "classifications", "severity", "verdict", "evidence_ids", "gaps"})
      c.emplace_back(n);
    return c;
  }();
  return cols;
}

Result<std::vector<fs::path>> write_deep_dive_outputs(const fs::path& root_out, const std::string& root,
                                                      const analysis::DeepDive& dd, const knowledge::Knowledge& kb) {
  std::vector<fs::path> written;
  const fs::path csv = root_out / layout::kOperatorDeepDiveCsv;
  {
    AtomicFileWriter file;
    ASCPROF_RETURN_IF_ERROR(file.open(csv));
    write_csv(file, dd);
    ASCPROF_RETURN_IF_ERROR(file.commit());
  }
  written.push_back(csv);
  const fs::path json = root_out / layout::kOperatorDeepDiveJson;
  {
    AtomicFileWriter file;
    ASCPROF_RETURN_IF_ERROR(file.open(json));
    write_json(file, root, dd, kb);
    ASCPROF_RETURN_IF_ERROR(file.commit());
  }
  written.push_back(json);
  return written;
}

}  // namespace ascprof::pipeline

#include "ascprof/report/sweep.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <span>

#include "ascprof/common/csv_writer.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/report/tables.hpp"
#include "ascprof/store/h5_writer.hpp"
#include "ascprof/layout/out_layout.hpp"

namespace ascprof::report {

namespace fs = std::filesystem;

namespace {

double to_number(std::string_view s) {
  if (s.empty()) return std::nan("");
  const std::string t(s);
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  return end != t.c_str() && *end == '\0' ? v : std::nan("");
}

double finite(double v) { return std::isfinite(v) ? v : 0.0; }

// What one finished root's folder says, for both outputs.
struct RootFacts {
  uint64_t rank_count = 0, event_count = 0, segment_count = 0, layer_count = 0, step_count = 0;
  double wall_ms_sum = 0;
  std::map<std::string, uint64_t> diagnosis_counts;
  std::map<std::string, std::map<std::string, uint64_t>> rank_layer_inventory;  // rank -> main layers -> steps
  std::set<uint64_t> union_layers;
  uint64_t step_class_count = 0, block_class_count = 0;
  std::string top_step_class_id, top_step_family, top_step_members;
  double top_step_wall_ms_mean = NAN, top_step_wall_ms_p50 = NAN, top_step_wall_ms_p90 = NAN, top_step_bubble_ratio_mean = NAN;
  std::map<std::string, double> block_kind_wall_ms_sum;
  double hccl_total_ms = 0, hccl_max_rank_skew_ratio = NAN;
  std::string hccl_top_kind, hccl_top_comm_aiv_fused, hccl_top_calls;
  double hccl_top_duration_ms = NAN, hccl_top_rank_skew_ratio = NAN;
};

uint64_t json_u64(simdjson::dom::element doc, std::initializer_list<const char*> path) {
  simdjson::dom::element e = doc;
  for (const char* k : path)
    if (e[k].get(e) != simdjson::SUCCESS) return 0;
  uint64_t v = 0;
  return e.get(v) == simdjson::SUCCESS ? v : 0;
}

Result<RootFacts> read_root_tables(const fs::path& dir) {
  RootFacts f;
  simdjson::dom::parser parser;
  auto manifest = [&](const char* name) -> Result<simdjson::dom::element> {
    auto text = read_file(dir / name);
    if (!text.ok()) return text.status();
    simdjson::dom::element doc;
    if (parser.parse(*text).get(doc) != simdjson::SUCCESS)
      return file_error(ErrorCode::kParse, (dir / name).string(), "", "not valid JSON");
    return doc;
  };
  {
    ASCPROF_ASSIGN_OR_RETURN(simdjson::dom::element n, manifest(layout::kNormalizeManifestJson));
    f.rank_count = json_u64(n, {"rank_count"});
    f.event_count = json_u64(n, {"event_count"});
  }
  {
    ASCPROF_ASSIGN_OR_RETURN(simdjson::dom::element s, manifest(layout::kSegmentManifestJson));
    f.segment_count = json_u64(s, {"segment_count"});
    f.layer_count = json_u64(s, {"layer_count"});
    f.step_count = json_u64(s, {"step_count"});
  }
  if (fs::exists(dir / layout::kDiagnosisFindingsJson)) {
    ASCPROF_ASSIGN_OR_RETURN(simdjson::dom::element d, manifest(layout::kDiagnosisFindingsJson));
    simdjson::dom::object by_type;
    if (d["counts"]["by_type"].get(by_type) == simdjson::SUCCESS)
      for (auto [k, v] : by_type) {
        uint64_t n = 0;
        if (v.get(n) == simdjson::SUCCESS) f.diagnosis_counts[std::string(k)] = n;
      }
  }
  ASCPROF_ASSIGN_OR_RETURN(TextTable ranks, read_table(dir / layout::kRankSummaryCsv));
  for (size_t i = 0; i < ranks.rows.size(); ++i) f.wall_ms_sum += finite(ranks.number(i, "wall_ms"));
  // steps per (rank, main layer count), streamed: step_summary.csv can be 100+ MB
  int c_type = -1, c_rank = -1, c_layers = -1;
  ASCPROF_RETURN_IF_ERROR(for_each_row(dir / layout::kStepSummaryCsv, [&](const std::vector<std::string_view>& row, bool header) {
    if (header) {
      for (size_t i = 0; i < row.size(); ++i) {
        if (row[i] == "segment_type") c_type = static_cast<int>(i);
        if (row[i] == "rank_id") c_rank = static_cast<int>(i);
        if (row[i] == "main_layer_count") c_layers = static_cast<int>(i);
      }
      return c_type >= 0 && c_rank >= 0 && c_layers >= 0;
    }
    if (row[static_cast<size_t>(c_type)] != "step") return true;
    const std::string layers(row[static_cast<size_t>(c_layers)]);
    ++f.rank_layer_inventory[std::string(row[static_cast<size_t>(c_rank)])][layers];
    const double n = to_number(layers);
    if (std::isfinite(n) && n >= 0) f.union_layers.insert(static_cast<uint64_t>(n));
    return true;
  }));
  ASCPROF_ASSIGN_OR_RETURN(TextTable steps, read_table(dir / layout::kStepClassSummaryCsv));
  f.step_class_count = steps.rows.size();
  double best = -1;
  for (size_t i = 0; i < steps.rows.size(); ++i) {
    const double w = finite(steps.number(i, "wall_ms_mean")) * finite(steps.number(i, "member_count"));
    if (w <= best) continue;
    best = w;
    f.top_step_class_id = steps.cell(i, "step_class_id");
    f.top_step_family = steps.cell(i, "step_family");
    f.top_step_members = steps.cell(i, "member_count");
    f.top_step_wall_ms_mean = steps.number(i, "wall_ms_mean");
    f.top_step_wall_ms_p50 = steps.number(i, "wall_ms_p50");
    f.top_step_wall_ms_p90 = steps.number(i, "wall_ms_p90");
    f.top_step_bubble_ratio_mean = steps.number(i, "bubble_ratio_mean");
  }
  ASCPROF_ASSIGN_OR_RETURN(TextTable blocks, read_table(dir / layout::kBlockClassSummaryCsv));
  f.block_class_count = blocks.rows.size();
  for (size_t i = 0; i < blocks.rows.size(); ++i) f.block_kind_wall_ms_sum[blocks.cell(i, "block_kind")] += finite(blocks.number(i, "wall_ms_sum"));
  ASCPROF_ASSIGN_OR_RETURN(TextTable hccl, read_table(dir / layout::kHcclClassSummaryCsv));
  double top = -1;
  for (size_t i = 0; i < hccl.rows.size(); ++i) {
    const double us = finite(hccl.number(i, "duration_sum_us"));
    f.hccl_total_ms += us / 1000.0;
    const double skew = hccl.number(i, "rank_skew_ratio");
    if (std::isfinite(skew) && !(skew <= f.hccl_max_rank_skew_ratio)) f.hccl_max_rank_skew_ratio = skew;
    if (us <= top) continue;
    top = us;
    f.hccl_top_kind = hccl.cell(i, "hccl_op_kind");
    f.hccl_top_comm_aiv_fused = hccl.cell(i, "comm_aiv_fused");
    f.hccl_top_calls = hccl.cell(i, "call_count");
    f.hccl_top_duration_ms = us / 1000.0;
    f.hccl_top_rank_skew_ratio = skew;
  }
  return f;
}

// A root's facts, or why not (a column the sweep reads that the root's table lacks is a bug or a
// table of another version: the root's error says which).
Result<RootFacts> read_root(const fs::path& dir) {
  try {
    return read_root_tables(dir);
  } catch (const UnknownColumn& e) {
    return file_error(ErrorCode::kInternal, dir.string(), "sweep", std::string("a column the sweep reads is missing: ") + e.what());
  }
}

std::string counts_json(const std::map<std::string, uint64_t>& m) {
  JsonWriter w;
  w.begin_object();
  for (const auto& [k, v] : m) w.kv(k, v);
  w.end_object();
  return w.take();
}

std::string layers_json(const std::set<uint64_t>& s) {
  JsonWriter w;
  w.begin_array();
  for (const uint64_t v : s) w.value(v);
  w.end_array();
  return w.take();
}

std::string doubles_json(const std::map<std::string, double>& m, double divide_by) {
  JsonWriter w;
  w.begin_object();
  for (const auto& [k, v] : m) w.kv(k, std::round((divide_by > 0 ? v / divide_by : v) * 1e6) / 1e6);
  w.end_object();
  return w.take();
}

const char* const kRollupColumns[] = {
    "root", "status", "error", "output_dir", "rank_count", "event_count", "segment_count", "layer_count", "union_layers",
    "step_count", "wall_ms_sum", "elapsed_s", "diagnosis_counts", "step_class_count", "block_class_count",
    "top_step_class_id", "top_step_family", "top_step_members", "top_step_wall_ms_mean", "top_step_wall_ms_p50",
    "top_step_wall_ms_p90", "top_step_bubble_ratio_mean", "block_kind_wall_share", "block_kind_wall_ms_sum",
    "hccl_total_ms", "hccl_share_of_wall", "hccl_top_kind", "hccl_top_comm_aiv_fused", "hccl_top_calls",
    "hccl_top_duration_ms", "hccl_top_rank_skew_ratio", "hccl_max_rank_skew_ratio", "profile_root_label"};

std::string rollup_row(const SweepRootRun& run, const RootFacts* f, const std::string& error) {
  CsvRow r;
  r.text(run.root).text(f != nullptr ? "ok" : "error").text(error);
  if (f == nullptr) {
    for (size_t i = 3; i < sizeof(kRollupColumns) / sizeof(kRollupColumns[0]); ++i) r.empty();
    return r.take_line();
  }
  double kinds_total = 0;
  for (const auto& [k, v] : f->block_kind_wall_ms_sum) kinds_total += v;
  r.text(run.output_dir).number(f->rank_count).number(f->event_count).number(f->segment_count).number(f->layer_count);
  r.json(layers_json(f->union_layers)).number(f->step_count).number(f->wall_ms_sum, 6).number(run.elapsed_s, 3);
  r.json(counts_json(f->diagnosis_counts)).number(f->step_class_count).number(f->block_class_count);
  r.text(f->top_step_class_id).text(f->top_step_family).text(f->top_step_members).number(f->top_step_wall_ms_mean, 6);
  r.number(f->top_step_wall_ms_p50, 6).number(f->top_step_wall_ms_p90, 6).number(f->top_step_bubble_ratio_mean, 6);
  r.json(doubles_json(f->block_kind_wall_ms_sum, kinds_total)).json(doubles_json(f->block_kind_wall_ms_sum, 0));
  r.number(f->hccl_total_ms, 6).number(f->wall_ms_sum > 0 ? f->hccl_total_ms / f->wall_ms_sum : 0.0, 6);
  r.text(f->hccl_top_kind).text(f->hccl_top_comm_aiv_fused).text(f->hccl_top_calls).number(f->hccl_top_duration_ms, 6);
  r.number(f->hccl_top_rank_skew_ratio, 6).number(f->hccl_max_rank_skew_ratio, 6);
  r.text(fs::path(run.root).filename().string());
  return r.take_line();
}

// The rollup again as an HDF5 table (/rollup): a column whose non-empty cells are all numbers is
// float64 (NaN where empty, e.g. failed roots), any other a string column.
Status write_rollup_h5(const fs::path& csv, const fs::path& h5) {
  ASCPROF_ASSIGN_OR_RETURN(TextTable t, read_table(csv));
  ASCPROF_ASSIGN_OR_RETURN(store::H5Writer w, store::H5Writer::create(h5));
  store::TableWriter table(w, "/rollup", t.rows.size());
  for (size_t c = 0; c < t.header.size(); ++c) {
    bool numeric = true;
    std::vector<double> values(t.rows.size(), NAN);
    std::vector<std::string> text(t.rows.size());
    for (size_t r = 0; r < t.rows.size(); ++r) {
      text[r] = c < t.rows[r].size() ? t.rows[r][c] : std::string();
      if (text[r].empty()) continue;
      values[r] = to_number(text[r]);
      numeric = numeric && std::isfinite(values[r]);
    }
    if (numeric) table.column(t.header[c], values);
    else table.string_column(t.header[c], std::span<const std::string>(text));
  }
  ASCPROF_RETURN_IF_ERROR(table.finish());
  return w.commit("sweep");
}

}  // namespace

fs::path shard_file(const fs::path& out, uint32_t index, uint32_t count) {
  return out / layout::kSweepShardsDir / ("shard-" + std::to_string(index) + "-of-" + std::to_string(count) + ".json");
}

Result<std::string> sweep_result_json(const SweepRootRun& run) {
  JsonWriter w;
  w.begin_object();
  w.kv("root", run.root);
  w.kv("output_dir", run.output_dir);
  std::string error = run.error;
  Result<RootFacts> facts = run.status == "ok" ? read_root(run.output_dir) : Result<RootFacts>(Status(ErrorCode::kIo, ""));
  if (run.status == "ok" && !facts.ok()) error = "outputs unreadable: " + facts.status().to_string();
  const bool ok = run.status == "ok" && facts.ok();
  w.kv("status", ok ? "ok" : "error");
  w.kv("elapsed_s", run.elapsed_s);
  if (run.reused) w.kv("reused", true);
  if (!ok) {
    w.kv("error", error);
    w.end_object();
    return w.take();
  }
  const RootFacts& f = *facts;
  w.kv("rank_count", f.rank_count);
  w.kv("event_count", f.event_count);
  w.kv("segment_count", f.segment_count);
  w.kv("layer_count", f.layer_count);
  w.key("diagnosis_counts");
  w.raw(counts_json(f.diagnosis_counts));
  w.key("rank_layer_inventory");
  w.begin_object();
  for (const auto& [rank, inv] : f.rank_layer_inventory) {
    w.key(rank);
    w.raw(counts_json(inv));
  }
  w.end_object();
  w.key("union_layers");
  w.raw(layers_json(f.union_layers));
  w.end_object();
  return w.take();
}

Status write_sweep_summary(const fs::path& json_path, const fs::path& rollup_csv, const SweepConfig& c,
                           const std::vector<SweepRootRun>& runs, double elapsed_s) {
  std::map<std::string, uint64_t> status_counts;
  std::string results = "[";
  std::string rows;
  for (size_t i = 0; i < runs.size(); ++i) {
    auto one = sweep_result_json(runs[i]);
    if (!one.ok()) return one.status();
    results += (i ? ",\n  " : "\n  ") + *one;
    auto facts = runs[i].status == "ok" ? read_root(runs[i].output_dir) : Result<RootFacts>(Status(ErrorCode::kIo, ""));
    const bool ok = runs[i].status == "ok" && facts.ok();
    ++status_counts[ok ? "ok" : "error"];
    if (!rollup_csv.empty())
      rows += rollup_row(runs[i], ok ? &*facts : nullptr,
                         ok ? std::string() : (runs[i].status == "ok" ? facts.status().to_string() : runs[i].error));
  }
  results += runs.empty() ? "]" : "\n]";
  JsonWriter w(true);
  w.begin_object();
  w.key("search_roots");
  w.begin_array();
  for (const auto& s : c.search_roots) w.value(s);
  w.end_array();
  w.kv("output_dir", c.output_dir);
  if (!c.shard.empty()) w.kv("shard", c.shard);
  w.kv("root_count", static_cast<uint64_t>(runs.size()));
  w.kv("elapsed_s", elapsed_s);
  w.key("status_counts");
  w.raw(counts_json(status_counts));
  w.key("config");
  w.begin_object();
  w.kv("processes", c.processes);
  w.kv("skip_html", c.skip_html);
  w.kv("report_mode", c.report_mode);
  w.kv("reuse_existing", c.reuse_existing);
  w.end_object();
  w.key("files");
  w.begin_array();
  w.value(json_path.filename().string());
  if (!rollup_csv.empty()) {
    w.value(rollup_csv.filename().string());
    w.value(fs::path(rollup_csv).replace_extension(".h5").filename().string());
  }
  w.end_array();
  w.kv("rollup_row_count", rollup_csv.empty() ? uint64_t{0} : static_cast<uint64_t>(runs.size()));
  w.key("results");
  w.raw(results);
  w.end_object();
  if (!rollup_csv.empty()) {
    std::string header;
    for (const char* col : kRollupColumns) header += std::string(header.empty() ? "" : ",") + col;
    ASCPROF_RETURN_IF_ERROR(write_file_atomic(rollup_csv, runs.empty() ? std::string() : header + "\n" + rows));
    ASCPROF_RETURN_IF_ERROR(write_rollup_h5(rollup_csv, fs::path(rollup_csv).replace_extension(".h5")));
  }
  return write_file_atomic(json_path, w.take());
}

Result<RollupCounts> rollup_sweep_shards(const fs::path& out) {
  RollupCounts counts;
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out / layout::kSweepShardsDir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path());
  if (ec || files.empty())
    return file_error(ErrorCode::kIo, (out / layout::kSweepShardsDir).string(), "", "no shard results to merge (run the shards first)");
  std::sort(files.begin(), files.end());
  SweepConfig config;
  config.output_dir = out.string();
  std::map<std::string, SweepRootRun> runs;  // by root: a root in two shard files counts once
  double elapsed = 0;
  std::set<uint32_t> present;
  uint32_t shard_count = 0;
  for (const auto& f : files) {
    auto text = read_file(f);
    if (!text.ok()) return text.status();
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    simdjson::dom::array results;
    if (parser.parse(*text).get(doc) != simdjson::SUCCESS || doc["results"].get(results) != simdjson::SUCCESS)
      return file_error(ErrorCode::kParse, f.string(), "results", "not a sweep shard file");
    ++counts.shards;
    {  // "I/K": the rollup needs one file for every I of one K
      std::string_view shard;
      unsigned i = 0, k = 0;
      if (doc["shard"].get(shard) != simdjson::SUCCESS || std::sscanf(std::string(shard).c_str(), "%u/%u", &i, &k) != 2 ||
          k == 0 || i >= k || (shard_count != 0 && k != shard_count))
        return file_error(ErrorCode::kParse, f.string(), "shard", "not a shard of the same sweep (shard I/K)");
      shard_count = k;
      present.insert(i);
    }
    double e = 0;
    if (doc["elapsed_s"].get(e) == simdjson::SUCCESS) elapsed = std::max(elapsed, e);
    if (config.search_roots.empty()) {
      simdjson::dom::array roots;
      if (doc["search_roots"].get(roots) == simdjson::SUCCESS)
        for (simdjson::dom::element r : roots) {
          std::string_view s;
          if (r.get(s) == simdjson::SUCCESS) config.search_roots.emplace_back(s);
        }
      bool b = false;
      std::string_view mode;
      if (doc["config"]["skip_html"].get(b) == simdjson::SUCCESS) config.skip_html = b;
      if (doc["config"]["reuse_existing"].get(b) == simdjson::SUCCESS) config.reuse_existing = b;
      if (doc["config"]["report_mode"].get(mode) == simdjson::SUCCESS) config.report_mode = mode;
    }
    for (simdjson::dom::element r : results) {
      SweepRootRun run;
      std::string_view s;
      if (r["root"].get(s) != simdjson::SUCCESS) return file_error(ErrorCode::kParse, f.string(), "results", "a result without root");
      run.root = s;
      if (r["output_dir"].get(s) == simdjson::SUCCESS) run.output_dir = s;
      if (r["status"].get(s) == simdjson::SUCCESS) run.status = s;
      if (r["error"].get(s) == simdjson::SUCCESS) run.error = s;
      double el = 0;
      if (r["elapsed_s"].get(el) == simdjson::SUCCESS) run.elapsed_s = el;
      bool reused = false;
      if (r["reused"].get(reused) == simdjson::SUCCESS) run.reused = reused;
      runs[run.root] = run;
    }
  }
  if (present.size() != shard_count) {
    std::string missing;
    for (uint32_t i = 0; i < shard_count; ++i)
      if (!present.count(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
    return file_error(ErrorCode::kIo, (out / layout::kSweepShardsDir).string(), "",
                      "shards " + missing + " of " + std::to_string(shard_count) + " have no result yet: nothing merged");
  }
  std::vector<SweepRootRun> merged;
  for (auto& [root, run] : runs) {
    counts.failed += run.status == "ok" ? 0 : 1;
    merged.push_back(std::move(run));
  }
  counts.roots = merged.size();
  ASCPROF_RETURN_IF_ERROR(write_sweep_summary(out / layout::kSweepSummaryJson, out / layout::kSweepClassRollupCsv, config, merged, elapsed));
  return counts;
}

}  // namespace ascprof::report

#include "ascprof/pipeline/summary_outputs.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <queue>
#include <set>

#include "ascprof/analysis/summarize.hpp"
#include "ascprof/common/csv_writer.hpp"
#include "ascprof/common/numbers.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/common/stable_id.hpp"
#include "ascprof/model/finding.hpp"
#include "ascprof/store/part_pack.hpp"
#include "ascprof/store/table_index.hpp"
#include "ascprof/pipeline/stage.hpp"
#include "ascprof/layout/out_layout.hpp"
#include "pipeline_columns.hpp"

namespace ascprof::pipeline {

namespace fs = std::filesystem;

namespace {

double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }
using model::event_id;

std::string counts_json(const model::NameCounts& c) {
  std::string out = "{";
  for (size_t i = 0; i < c.size(); ++i) {
    if (i) out += ',';
    out += '"';
    json_escape_append(out, c[i].first.str());
    out += "\":" + std::to_string(c[i].second);
  }
  return out + "}";
}

std::string strings_json(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += '"';
    json_escape_append(out, v[i]);
    out += '"';
  }
  return out + "]";
}

// "a,b" (a model row's joined names) as the JSON list the reference writes: ["a","b"]; "" -> [].
std::string comma_list_json(std::string_view joined) {
  std::vector<std::string> items;
  for (size_t at = 0; at < joined.size();) {
    const size_t end = std::min(joined.find(',', at), joined.size());
    items.emplace_back(joined.substr(at, end - at));
    at = end + 1;
  }
  return strings_json(items);
}

// An operator called 100k times in a rank has 100k row runs: the cell keeps the first
// kMaxRowRanges (the row_range_count column says how many there are; all rows are in the HDF5).
constexpr size_t kMaxRowRanges = 64;

std::string ranges_json(const std::vector<std::pair<uint32_t, uint32_t>>& r) {
  std::string out = "[";
  for (size_t i = 0; i < r.size() && i < kMaxRowRanges; ++i)
    out += (i ? ",[" : "[") + std::to_string(r[i].first) + "," + std::to_string(r[i].second) + "]";
  return out + "]";
}

std::string events_json(uint32_t ordinal, const std::vector<uint32_t>& rows) {
  std::vector<std::string> ids;
  for (const uint32_t r : rows) ids.push_back(event_id(ordinal, r));
  return strings_json(ids);
}

// A window's top bubbles as the reference writes them: before_event and after_event are the
// neighbouring rows' event objects when `events` holds them (a segment's, see bubble_event_records),
// else their event ids.
std::string bubbles_json(uint32_t ordinal, const std::vector<model::Bubble>& b, size_t limit,
                         const EventRecords* events = nullptr) {
  auto event = [&](uint32_t row) {
    if (events != nullptr)
      if (const auto it = events->find(row); it != events->end()) return it->second;
    return "\"" + event_id(ordinal, row) + "\"";
  };
  std::string out = "[";
  for (size_t i = 0; i < b.size() && i < limit; ++i) {
    const auto& x = b[i];
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6f", ms(x.end_ns - x.start_ns));
    out += (i ? "," : "");
    out += "{\"bubble_index\":" + std::to_string(x.bubble_index) + ",\"start_us\":" + us_text(x.start_ns) +
           ",\"end_us\":" + us_text(x.end_ns) + ",\"duration_us\":" + us_text(x.end_ns - x.start_ns) +
           ",\"duration_ms\":" + buf + ",\"before_event\":" + event(x.before_row) +
           ",\"after_event\":" + event(x.after_row) + "}";
  }
  return out + "]";
}

// A window's §2.5.1 metrics as the members of the reference's `metrics` object of an evidence record
// (no braces: the structure writer adds the step's structural fields beside them), keys in the
// reference's (sorted) order, numbers as the CSV cells render them.
std::string metrics_members(uint32_t ordinal, const model::WindowMetrics& m, const EventRecords* events) {
  auto num = [](double v) {
    std::string t = fixed_number(v, 6);
    return t.empty() ? std::string("null") : t;
  };
  std::string o;
  o += "\"bubble_count\":" + std::to_string(m.bubble_count);
  o += ",\"busy_union_ms\":" + num(ms(m.busy_union_ns));
  o += ",\"category_counts\":" + counts_json(m.category_counts);
  o += ",\"end_us\":" + (m.event_count ? us_text(m.end_ns) : std::string("null"));
  o += ",\"event_count\":" + std::to_string(m.event_count);
  o += ",\"internal_bubble_total_ms\":" + num(ms(m.internal_bubble_total_ns));
  o += ",\"kernel_sum_ms\":" + num(ms(m.kernel_sum_ns));
  o += ",\"largest_internal_bubble_ms\":" + num(ms(m.largest_internal_bubble_ns));
  o += ",\"role_counts\":" + counts_json(m.role_counts);
  o += ",\"row_end\":" + std::to_string(m.row_end);
  o += ",\"row_start\":" + std::to_string(m.row_start);
  o += ",\"start_us\":" + (m.event_count ? us_text(m.start_ns) : std::string("null"));
  o += ",\"stream_count\":" + std::to_string(m.stream_count);
  o += ",\"task_type_counts\":" + counts_json(m.task_type_counts);
  o += ",\"top_bubbles\":" + bubbles_json(ordinal, m.top_bubbles, kEvidenceBubbles, events);
  o += ",\"total_cost_ms\":" + num(ms(m.total_cost_ns));
  o += ",\"underfeed_ms\":" + num(ms(m.underfeed_ns));
  o += ",\"underfeed_ratio\":" + num(m.underfeed_ratio);
  o += ",\"wait_sum_ms\":" + num(ms(m.wait_sum_ns));
  o += ",\"wall_ms\":" + num(ms(m.wall_ns));
  return o;
}

// The §2.5.1 metric columns as metric_cells renders them (the window's own row range is written by
// the caller); each table places them where the reference does (its file order below).
const std::vector<std::string> kMetricColumns = {
    "event_count", "start_us", "end_us", "wall_ms", "busy_union_ms", "kernel_sum_ms", "total_cost_ms", "wait_sum_ms",
    "underfeed_ms", "underfeed_ratio", "internal_bubble_total_ms", "largest_internal_bubble_ms", "bubble_count",
    "stream_count", "task_type_counts", "role_counts"};

void metric_cells(CsvRow& r, const model::WindowMetrics& m) {
  r.number(m.event_count);
  if (m.event_count == 0) {
    r.empty().empty();
  } else {
    r.literal(us_text(m.start_ns)).literal(us_text(m.end_ns));
  }
  r.number(ms(m.wall_ns)).number(ms(m.busy_union_ns)).number(ms(m.kernel_sum_ns)).number(ms(m.total_cost_ns));
  r.number(ms(m.wait_sum_ns)).number(ms(m.underfeed_ns)).number(m.underfeed_ratio);
  r.number(ms(m.internal_bubble_total_ns)).number(ms(m.largest_internal_bubble_ns));
  r.number(uint64_t{m.bubble_count}).number(uint64_t{m.stream_count});
  r.json(counts_json(m.task_type_counts)).json(counts_json(m.role_counts));
}

// The anatomy of a step as step_summary.csv inlines it (reference-analysis.md §2.5.3).
const std::vector<std::string> kAnatomyBriefColumns = {
    "anatomy_kind",   "head_wall_ms",   "main_wall_ms",   "tail_wall_ms", "head_busy_ms", "main_busy_ms",
    "tail_busy_ms",   "head_bubble_ms", "main_bubble_ms", "tail_bubble_ms", "head_ratio", "main_ratio",
    "tail_ratio",     "bubble_ratio"};

// The columns of an operator row (operator_summary.csv; wait_anchor_ops.csv repeats them).
std::vector<std::string> operator_columns(const std::vector<std::string>& pipeline) {
  return columns({{"rank_id", "name", "task_type", "roles", "categories", "call_count", "duration_sum_us",
                   "wait_sum_us", "total_cost_sum_us", "duration_avg_us", "wait_avg_us", "total_cost_avg_us",
                   "wait_ratio", "stream_count", "row_ranges", "row_range_count", "sample_rows", "sample_event_ids",
                   "op_type", "bound_stage", "bound_family", "dominant_core", "pipeline_signal"},
                  pipeline});
}

// Every table a rank writes a part of: the order its writer renders the cells, and the file order:
// the reference's columns in the reference's order (reference-analysis.md §2.5; issue 23), then ours.
std::map<std::string, CsvLayout> summary_layouts(const knowledge::Knowledge& kb) {
  const std::vector<std::string> pipe = pipeline_columns(kb);
  const std::vector<std::string> m = kMetricColumns;
  std::map<std::string, CsvLayout> out;
  auto add = [&out](const char* table, const std::vector<std::string>& writer, const std::vector<std::string>& file) {
    out.emplace(table, CsvLayout(writer, file));
  };
  {
    const std::vector<std::string> head = {
        "segment_id", "rank_id", "segment_type", "complete", "cluster_id", "step_family", "row_start", "row_end",
        "main_layer_count", "speculative_layer_count", "structure_signature", "has_attention", "has_moe",
        "has_communication", "attention_event_count", "moe_event_count", "comm_event_count", "category_counts",
        "anomaly_tags", "top_bubbles", "evidence_ids"};
    add(layout::kStepSummaryCsv, columns({head, m, {"step_class_id", "step_source", "declared_step", "phase"}, kAnatomyBriefColumns}),
        columns({head, m, {"step_class_id"}, kAnatomyBriefColumns, {"step_source", "declared_step", "phase"}}));
  }
  {
    std::vector<std::string> cols = {"segment_id", "rank_id", "cluster_id", "step_family", "structure_signature",
                                     "main_layer_count", "anatomy_kind", "layer_count", "step_wall_ms",
                                     "step_busy_ms", "step_bubble_ms"};
    for (const char* w : {"head", "main", "tail"})
      for (const char* f : {"row_start", "row_end", "start_us", "end_us", "wall_ms", "busy_ms", "bubble_ms", "event_count"})
        cols.push_back(std::string(w) + "_" + f);
    cols.insert(cols.end(), {"head_ratio", "main_ratio", "tail_ratio", "bubble_ratio"});
    add(layout::kStepAnatomyCsv, cols, cols);
  }
  add(layout::kLayerSummaryCsv,
      columns({{"layer_id", "segment_id", "rank_id", "layer_index", "layer_role", "microbatch", "boundary_source",
                "row_start", "row_end", "structure_signature", "has_attention", "has_moe", "has_communication",
                "evidence_ids"},
               m, {"category_counts", "top_bubbles", "layer_class_id", "companion_layer", "block_kinds", "boundary_detail"}}),
      {"layer_id", "segment_id", "rank_id", "layer_index", "layer_role", "boundary_source", "row_start", "row_end",
       "structure_signature", "has_attention", "has_moe", "has_communication", "role_counts", "evidence_ids",
       "event_count", "start_us", "end_us", "wall_ms", "busy_union_ms", "kernel_sum_ms", "total_cost_ms",
       "wait_sum_ms", "underfeed_ms", "underfeed_ratio", "internal_bubble_total_ms", "largest_internal_bubble_ms",
       "bubble_count", "stream_count", "task_type_counts", "category_counts", "top_bubbles", "layer_class_id",
       "companion_layer", "block_kinds", "microbatch", "boundary_detail"});
  add(layout::kBlockSummaryCsv,
      columns({{"block_id", "rank_id", "segment_id", "layer_id", "layer_index", "block_index", "block_kind",
                "companion_layer", "row_start", "row_end"},
               m,
               {"category_counts", "op_type_counts", "dominant_op_type", "comm_duration_us", "comm_share",
                "bound_stage", "bound_family", "dominant_core", "pipeline_signal"},
               pipe,
               {"top_ops", "has_attention", "has_moe", "has_communication", "block_class_id", "evidence_ids"}}),
      columns({{"block_id", "block_class_id", "layer_id", "segment_id", "rank_id", "layer_index", "block_index",
                "block_kind", "companion_layer", "row_start", "row_end", "start_us", "end_us", "event_count",
                "has_attention", "has_moe", "has_communication", "role_counts", "op_type_counts", "bound_stage",
                "bound_family", "dominant_core", "dominant_op_type", "pipeline_signal", "comm_duration_us",
                "comm_share", "top_ops", "wall_ms", "busy_union_ms", "kernel_sum_ms", "total_cost_ms", "wait_sum_ms",
                "underfeed_ms", "underfeed_ratio", "internal_bubble_total_ms", "largest_internal_bubble_ms",
                "bubble_count", "stream_count", "task_type_counts", "category_counts"},
               pipe, {"evidence_ids"}}));
  add(layout::kRankSummaryCsv,
      columns({{"rank_id", "step_count", "segment_count", "layer_count_inventory", "has_attention", "has_moe",
                "has_communication", "row_start", "row_end"},
               m, {"category_counts", "top_bubbles", "step_source", "anchor_family", "rank_top_bubbles"}}),
      {"rank_id", "step_count", "segment_count", "layer_count_inventory", "has_attention", "has_moe",
       "has_communication", "role_counts", "event_count", "row_start", "row_end", "start_us", "end_us", "wall_ms",
       "busy_union_ms", "kernel_sum_ms", "total_cost_ms", "wait_sum_ms", "underfeed_ms", "underfeed_ratio",
       "internal_bubble_total_ms", "largest_internal_bubble_ms", "bubble_count", "stream_count", "task_type_counts",
       "category_counts", "top_bubbles", "step_source", "anchor_family", "rank_top_bubbles"});
  {
    // the reference has no row_range_count: ours follows its columns
    std::vector<std::string> file = operator_columns(pipe);
    file.erase(std::find(file.begin(), file.end(), "row_range_count"));
    add(layout::kOperatorSummaryCsv, operator_columns(pipe), columns({file, {"row_range_count"}}));
    add(layout::kWaitAnchorOpsCsv, columns({operator_columns(pipe), {"total_cost_avg_rank", "is_false_hotspot_risk"}}),
        columns({file, {"total_cost_avg_rank", "is_false_hotspot_risk", "row_range_count"}}));
  }
  {
    const std::vector<std::string> hccl = {"hccl_op_kind",    "comm_aiv_fused",  "rank_id",         "name_count",
                                           "call_count",      "duration_sum_us", "wait_sum_us",     "duration_avg_us",
                                           "duration_min_us", "duration_p50_us", "duration_p90_us", "duration_max_us",
                                           "wait_ratio"};
    add(layout::kHcclOpSummaryCsv, hccl, hccl);
  }
  add(layout::kEvidenceIndexCsv, {"evidence_id", "kind", "rank_id", "segment_id", "layer_id", "row_start", "row_end", "summary"},
      {"evidence_id", "kind", "rank_id", "segment_id", "row_start", "row_end", "summary", "layer_id"});
  {
    const std::vector<std::string> aicpu = {"rank_id",    "name",         "call_count",     "duration_sum_us",
                                            "overlap_with_ai_core_us",    "masked_ratio",   "classification",
                                            "row_ranges", "sample_event_ids"};
    add(layout::kAicpuSummaryCsv,
        {"rank_id", "name", "call_count", "duration_sum_us", "overlap_with_ai_core_us", "masked_ratio",
         "classification", "row_ranges", "row_range_count", "sample_event_ids"},
        columns({aicpu, {"row_range_count"}}));
  }
  {
    const std::vector<std::string> raw = {"event_id", "rank_id",     "source_id", "row_idx", "name",       "task_type",
                                          "start_us", "duration_us", "wait_us",   "roles",   "categories", "shape_signature"};
    add(layout::kRawKernelIndexCsv, raw, raw);
    const std::vector<std::string> events = {
        "event_id",   "profile_id",  "rank_id", "source_id",     "row_idx",         "name_raw",       "task_type",
        "accelerator_core", "stream_id", "start_us", "end_us",   "duration_us",     "wait_us",        "op_categories",
        "op_roles",   "shape_signature", "shape_features", "pipeline_us", "op_type"};
    add(layout::kNormalizedEventIndexCsv, events, events);
  }
  return out;
}

// An empty window (a step whose layers cover it) has no rows or times, and zero length, as the
// reference writes it.
void anatomy_cells(CsvRow& r, const model::AnatomyWindow& w) {
  if (w.empty) {
    r.empty().empty().empty().empty().number(0.0).number(0.0).number(0.0).number(uint64_t{0});
    return;
  }
  r.number(uint64_t{w.row_start}).number(uint64_t{w.row_end}).literal(us_text(w.start_ns)).literal(us_text(w.end_ns));
  r.number(ms(w.wall_ns)).number(ms(w.busy_ns)).number(ms(w.bubble_ns)).number(w.event_count);
}

double window_ms(const model::AnatomyWindow& w, int64_t model::AnatomyWindow::*field) {
  return w.empty ? 0.0 : ms(w.*field);
}

double us(int64_t ns) { return static_cast<double>(ns) / 1e3; }

// An operator row's cells, in operator_columns() order.
void operator_cells(CsvRow& r, const std::string& rank_id, uint32_t ord, const model::OperatorRow& o, size_t n_pipe) {
  const double calls = static_cast<double>(std::max<uint64_t>(1, o.call_count));
  const int64_t total = o.duration_sum_ns + o.wait_sum_ns;
  r.text(rank_id).text(o.name).text(o.task_type).text(o.roles).json(comma_list_json(o.categories)).number(o.call_count);
  r.number(us(o.duration_sum_ns), 3).number(us(o.wait_sum_ns), 3).number(us(total), 3);
  r.number(us(o.duration_sum_ns) / calls).number(us(o.wait_sum_ns) / calls).number(us(total) / calls);  // 6 decimals, as the reference
  r.number(total > 0 ? static_cast<double>(o.wait_sum_ns) / static_cast<double>(total) : 0.0);
  r.number(uint64_t{o.stream_count}).json(ranges_json(o.row_ranges)).number(uint64_t{o.row_ranges.size()});
  std::string rows = "[";
  for (size_t i = 0; i < o.sample_rows.size(); ++i) rows += (i ? "," : "") + std::to_string(o.sample_rows[i]);
  r.json(rows + "]").json(events_json(ord, o.sample_rows));
  r.text(o.op_type).text(output_field_name(o.bound.bound_stage)).text(o.bound.bound_family).text(o.bound.dominant_core);
  r.boolean(o.pipeline_signal);
  pipeline_cells(r, o.pipeline_us, n_pipe);
}


// Rows of CSV text: line ends outside quoted fields (a kernel name may hold a newline). `quoted`
// carries the state from one chunk of a file to the next.
uint64_t csv_rows(std::string_view text, bool& quoted) {
  uint64_t n = 0;
  for (const char ch : text) {
    if (ch == '"') quoted = !quoted;
    else if (ch == '\n' && !quoted) ++n;
  }
  return n;
}

}  // namespace

namespace {
// evidence_index.csv is written by kind, each over all ranks, as the reference lists it: a rank's
// window rows (evidence_index.csv.part), layer rows (.layers.part) and bubble rows keyed by duration
// (.bubbles.part, "<ns>\t<line>", largest first) go to three files; the root concatenates the first
// two kinds rank by rank and merges the bubbles, largest first over the root.
constexpr const char* kEvidenceLayerRows = "evidence_index.csv.layers";
constexpr const char* kEvidenceBubbleRows = "evidence_index.csv.bubbles";
}  // namespace

const std::vector<std::string>& summary_tables() {
  static const std::vector<std::string> t = {layout::kStepSummaryCsv,    layout::kStepAnatomyCsv,     layout::kLayerSummaryCsv,
                                             layout::kBlockSummaryCsv,   layout::kRankSummaryCsv,     layout::kOperatorSummaryCsv,
                                             layout::kHcclOpSummaryCsv, layout::kWaitAnchorOpsCsv,  layout::kAicpuSummaryCsv,
                                             layout::kEvidenceIndexCsv,  layout::kRawKernelIndexCsv, layout::kNormalizedEventIndexCsv};
  return t;
}

const std::vector<std::string>& summary_part_sections() {
  static const std::vector<std::string> f = [] {
    std::vector<std::string> v = summary_tables();
    v.push_back(kEvidenceLayerRows);
    v.push_back(kEvidenceBubbleRows);
    v.push_back(kBubbleWindowsPart);
    v.push_back(kEvidenceMetricsPart);
    return v;
  }();
  return f;
}

namespace {

// The cells of one rendered CSV line (RFC 4180: quoted cells with doubled quotes), unescaped.
std::vector<std::string> csv_cells(std::string_view line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch != '"') cells.back() += ch;
      else if (i + 1 < line.size() && line[i + 1] == '"') cells.back() += line[++i];
      else quoted = false;
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      cells.emplace_back();
    } else if (ch != '\n' && ch != '\r') {
      cells.back() += ch;
    }
  }
  return cells;
}

// The reference's finding metrics are its table row as read back by csv.DictReader: every column
// with its text. Ours keep the finding's typed figures and gain the row's other columns that way.
void add_row_metrics(model::Finding& f, const std::vector<std::string>& columns, std::string_view line) {
  std::set<std::string> have;
  simdjson::dom::parser parser;
  simdjson::dom::object existing;
  if (parser.parse(f.metrics_json).get(existing) == simdjson::SUCCESS)
    for (auto [key, value] : existing) have.emplace(key);
  const std::vector<std::string> cells = csv_cells(line);
  JsonWriter w;
  w.begin_object();
  w.members(f.metrics_json);
  for (size_t i = 0; i < columns.size() && i < cells.size(); ++i)
    if (have.insert(columns[i]).second) w.kv(columns[i], cells[i]);
  w.end_object();
  f.metrics_json = w.take();
}

}  // namespace

Status write_rank_summary_parts(store::PartPackWriter& pack, uint32_t ord, const std::string& rank_id,
                                const model::RankStructure& s, const model::RankClasses& c,
                                const model::RankSummary& sum, const knowledge::Knowledge& kb,
                                const EventRecords& events, std::vector<model::Finding>* findings,
                                std::string* evidence_metrics) {
  // the findings about a row of a table written here, by (table, row index)
  std::map<std::pair<std::string, size_t>, std::vector<model::Finding*>> about;
  if (findings != nullptr)
    for (auto& f : *findings)
      if (!f.row_table.empty()) about[{f.row_table, f.row_index}].push_back(&f);
  // Each table's rows go to its section of the rank's part pack as they are rendered (the pack
  // spills a section in segments: a big rank's block table alone is over 100 MB of text).
  struct Section {
    store::PartPackWriter* pack;
    const char* name;
    void add(std::string_view row) const { pack->add(name, row, 1); }  // each call is one CSV row
  };
  auto part = [&pack](const char* table) { return Section{&pack, table}; };
  const std::map<std::string, CsvLayout> layouts = summary_layouts(kb);
  const size_t n_pipe = kb.pipeline.fields().size();
  // the row's cells (writer order) as a line of `table` (file order)
  auto line = [&layouts](const char* table, CsvRow& row) { return layouts.at(table).take_line(row); };
  // a row some finding is about: its columns go into that finding's metrics too
  auto row_line = [&layouts, &about](const char* table, size_t index, CsvRow& row) {
    std::string text = layouts.at(table).take_line(row);
    if (const auto it = about.find({table, index}); it != about.end())
      for (model::Finding* f : it->second) add_row_metrics(*f, layouts.at(table).file_columns(), text);
    return text;
  };
  // a table's section is declared even without rows (an empty table is an empty section)
  auto declare = [&pack](const char* table) { pack.add(table, ""); };
  // the root merges these line by line over every rank at once (merge_keyed_lines): stored raw,
  // a cursor per rank then reads them through a small buffer
  pack.store_raw(kEvidenceBubbleRows);
  pack.store_raw(kBubbleWindowsPart);
  CsvRow r;

  // step_summary + step_anatomy: one row per segment (anatomy: steps only)
  for (const auto& ss : sum.segments) {
    const auto& g = s.segments[ss.segment];
    const bool step = g.type == model::SegmentType::kStep;
    const std::string evd = stable_id("evd", {g.segment_id, step ? "step_window" : "edge_window"});
    r.text(g.segment_id).text(rank_id).text(model::segment_type_name(g.type)).boolean(g.complete).text(g.cluster_id);
    r.text(g.step_family).number(uint64_t{g.row_start}).number(uint64_t{g.row_end});
    if (step) r.number(uint64_t{g.main_layer_count}).number(uint64_t{g.speculative_layer_count});
    else r.empty().empty();  // layer counts belong to steps: empty on head, tail and window rows, as the reference
    r.text(g.structure_signature);
    r.boolean(ss.has_attention).boolean(ss.has_moe).boolean(ss.has_communication);
    r.number(ss.attention_event_count).number(ss.moe_event_count).number(ss.comm_event_count);
    r.json(counts_json(ss.metrics.category_counts)).json(strings_json(ss.anomaly_tags));
    r.json(bubbles_json(ord, ss.metrics.top_bubbles, kEvidenceBubbles, &events)).json(strings_json({evd}));
    metric_cells(r, ss.metrics);
    const int32_t cls = ss.segment < c.step_class.size() ? c.step_class[ss.segment] : -1;
    if (cls >= 0) r.text(c.step_classes[static_cast<size_t>(cls)].class_id);
    else r.empty();
    r.text(model::step_source_name(g.source));
    if (g.declared_step >= 0) r.number(g.declared_step);
    else r.empty();
    r.text(g.phase);
    const auto& a = ss.anatomy;
    if (step) {
      r.text(a.anatomy_kind);
      for (const auto field : {&model::AnatomyWindow::wall_ns, &model::AnatomyWindow::busy_ns, &model::AnatomyWindow::bubble_ns})
        r.number(window_ms(a.head, field)).number(window_ms(a.main, field)).number(window_ms(a.tail, field));
      r.number(a.head_ratio).number(a.main_ratio).number(a.tail_ratio).number(a.bubble_ratio);
    } else {
      for (size_t i = 0; i < kAnatomyBriefColumns.size(); ++i) r.empty();
    }
    part(layout::kStepSummaryCsv).add(row_line(layout::kStepSummaryCsv, static_cast<size_t>(&ss - sum.segments.data()), r));
    if (!step) continue;
    r.text(g.segment_id).text(rank_id).text(g.cluster_id).text(g.step_family).text(g.structure_signature);
    r.number(uint64_t{g.main_layer_count}).text(a.anatomy_kind).number(uint64_t{g.layer_count});
    r.number(ms(ss.metrics.wall_ns)).number(ms(ss.metrics.busy_union_ns)).number(ms(ss.metrics.underfeed_ns));
    anatomy_cells(r, a.head);
    anatomy_cells(r, a.main);
    anatomy_cells(r, a.tail);
    r.number(a.head_ratio).number(a.main_ratio).number(a.tail_ratio).number(a.bubble_ratio);
    part(layout::kStepAnatomyCsv).add(line(layout::kStepAnatomyCsv, r));
  }

  declare(layout::kStepSummaryCsv);
  declare(layout::kStepAnatomyCsv);

  // layer_summary
  for (const auto& ls : sum.layers) {
    const auto& l = s.layers[ls.layer];
    r.text(l.layer_id).text(s.segments[l.segment].segment_id).text(rank_id).number(uint64_t{l.layer_index});
    r.text(model::layer_role_name(l.role));
    if (l.microbatch >= 0) r.number(int64_t{l.microbatch});
    else r.empty();
    r.text(model::reference_boundary_source_name(l.boundary_source)).number(uint64_t{l.row_start}).number(uint64_t{l.row_end});
    r.text(s.signature(l)).boolean(ls.has_attention).boolean(ls.has_moe).boolean(ls.has_communication);
    r.json(strings_json({stable_id("evd", {l.layer_id, "layer_window"})}));
    metric_cells(r, ls.metrics);
    r.json(counts_json(ls.metrics.category_counts)).json(bubbles_json(ord, ls.metrics.top_bubbles, 5));
    const int32_t cls = ls.layer < c.layer_class.size() ? c.layer_class[ls.layer] : -1;
    if (cls >= 0) {
      const auto& lc = c.layer_classes[static_cast<size_t>(cls)];
      r.text(lc.class_id).boolean(lc.companion_layer).json(strings_json(lc.block_kinds));
    } else {
      r.empty().empty().empty();
    }
    r.text(model::boundary_source_name(l.boundary_source));  // boundary_detail: ours, e.g. declared_step_window
    part(layout::kLayerSummaryCsv).add(line(layout::kLayerSummaryCsv, r));
  }

  declare(layout::kLayerSummaryCsv);

  // block_summary
  for (const auto& bs : sum.blocks) {
    if (bs.block >= c.blocks.size()) continue;
    const auto& b = c.blocks[bs.block];
    const auto& l = s.layers[b.layer];
    r.text(b.block_id).text(rank_id).text(s.segments[l.segment].segment_id).text(l.layer_id);
    r.number(uint64_t{l.layer_index}).number(uint64_t{b.block_index}).text(model::block_kind_name(b.kind)).boolean(b.companion_layer);
    r.number(uint64_t{b.row_start}).number(uint64_t{b.row_end});
    metric_cells(r, bs.metrics);
    r.json(counts_json(bs.metrics.category_counts));
    r.json(counts_json(bs.op_type_counts)).text(bs.dominant_op_type).number(us(bs.comm_duration_ns), 3);
    r.number(bs.comm_share).text(output_field_name(bs.bound.bound_stage)).text(bs.bound.bound_family);
    r.text(bs.bound.dominant_core).boolean(bs.pipeline_signal);
    pipeline_cells(r, bs.pipeline_us, n_pipe);
    std::string top = "[";
    for (size_t i = 0; i < bs.top_ops.size(); ++i) {
      const auto& t = bs.top_ops[i];
      char buf[48];
      std::snprintf(buf, sizeof buf, "%.3f", us(t.duration_sum_ns));
      top += (i ? "," : "");
      top += "{\"name\":\"";
      json_escape_append(top, t.name.str());
      top += "\",\"task_type\":\"";
      json_escape_append(top, t.task_type.str());
      top += "\",\"call_count\":" + std::to_string(t.call_count) + ",\"duration_sum_us\":" + buf + "}";
    }
    r.json(top + "]").boolean(bs.has_attention).boolean(bs.has_moe).boolean(bs.has_communication);
    r.text(b.block_class < c.block_classes.size() ? c.block_classes[b.block_class].class_id : std::string());
    r.json(strings_json({stable_id("evd", {l.layer_id, "layer_window"})}));
    part(layout::kBlockSummaryCsv).add(line(layout::kBlockSummaryCsv, r));
  }

  declare(layout::kBlockSummaryCsv);

  // rank_summary
  {
    std::vector<uint32_t> inventory;
    for (const auto& g : s.segments)
      if (g.type == model::SegmentType::kStep) inventory.push_back(g.main_layer_count);
    std::sort(inventory.begin(), inventory.end());
    inventory.erase(std::unique(inventory.begin(), inventory.end()), inventory.end());
    std::string inv = "[";
    for (size_t i = 0; i < inventory.size(); ++i) inv += (i ? "," : "") + std::to_string(inventory[i]);
    inv += "]";
    bool att = false, moe = false, comm = false;
    for (const auto& ss : sum.segments) {
      att = att || ss.has_attention;
      moe = moe || ss.has_moe;
      comm = comm || ss.has_communication;
    }
    r.text(rank_id).number(uint64_t{s.step_count()}).number(uint64_t{s.segments.size()}).json(inv);
    r.boolean(att).boolean(moe).boolean(comm);
    if (sum.rank.event_count == 0) r.empty().empty();
    else r.number(uint64_t{sum.rank.row_start}).number(uint64_t{sum.rank.row_end});
    metric_cells(r, sum.rank);
    // the reference's rank rows list no bubbles (its top_bubbles is always []); ours are an extra column
    r.json(counts_json(sum.rank.category_counts)).json("[]");
    r.text(model::step_source_name(s.step_source)).text(s.anchor_family).json(bubbles_json(ord, sum.rank.top_bubbles, 5));
    part(layout::kRankSummaryCsv).add(line(layout::kRankSummaryCsv, r));
  }

  declare(layout::kRankSummaryCsv);

  // operator_summary
  for (const auto& o : sum.operators) {
    operator_cells(r, rank_id, ord, o, n_pipe);
    part(layout::kOperatorSummaryCsv).add(line(layout::kOperatorSummaryCsv, r));
  }

  declare(layout::kOperatorSummaryCsv);

  // hccl_op_summary
  for (const auto& h : sum.hccl) {
    r.text(h.hccl_op_kind).boolean(h.comm_aiv_fused).text(rank_id).number(h.name_count).number(h.call_count);
    r.number(us(h.duration_sum_ns), 3).number(us(h.wait_sum_ns), 3).number(h.duration_avg_us, 3);
    r.number(h.duration_min_us, 3).number(h.duration_p50_us, 3).number(h.duration_p90_us, 3).number(h.duration_max_us, 3);
    r.number(h.wait_ratio);
    part(layout::kHcclOpSummaryCsv).add(line(layout::kHcclOpSummaryCsv, r));
  }

  declare(layout::kHcclOpSummaryCsv);

  // wait_anchor_ops: the operator's row and the anchor's own columns
  for (const auto& w : sum.wait_anchors) {
    operator_cells(r, rank_id, ord, sum.operators[w.op], n_pipe);
    r.number(uint64_t{w.total_cost_avg_rank}).boolean(w.is_false_hotspot_risk);
    part(layout::kWaitAnchorOpsCsv).add(row_line(layout::kWaitAnchorOpsCsv, static_cast<size_t>(&w - sum.wait_anchors.data()), r));
  }

  declare(layout::kWaitAnchorOpsCsv);

  // aicpu_summary
  for (const auto& a : sum.aicpu) {
    r.text(rank_id).text(a.name).number(a.call_count).number(us(a.duration_sum_ns), 3);
    r.number(us(a.overlap_with_ai_core_ns), 3).number(a.masked_ratio).text(a.classification);
    r.json(ranges_json(a.row_ranges)).number(uint64_t{a.row_ranges.size()}).json(events_json(ord, a.sample_rows));
    part(layout::kAicpuSummaryCsv).add(row_line(layout::kAicpuSummaryCsv, static_cast<size_t>(&a - sum.aicpu.data()), r));
  }

  declare(layout::kAicpuSummaryCsv);

  // evidence_index (segment, layer and bubble windows) and the bubble evidence records. Every
  // step_summary row has its window here (a step_window, or the edge_window of a head, tail or
  // island), because a device_idle_bubble finding on any of them cites it. Bubble lines carry their
  // duration as a sort key ("<ns>\t<json>") for the root's merge, largest first.
  std::vector<std::pair<int64_t, std::string>> bubbles, evidence_bubbles;
  // a bubble's neighbouring kernel row: its event object (bubble_event_records), or its id alone
  // when the caller rendered none
  auto event = [&](JsonWriter& w, const char* key, uint32_t row) {
    w.key(key);
    const auto it = events.find(row);
    if (it != events.end()) w.raw(it->second);
    else w.value(event_id(ord, row));
  };
  // The reference's evidence_index: every segment's window (kind step_window, whatever the segment
  // type; the id keeps our edge_window key, as structure_evidence_graph.json files it), then the
  // layer windows, then the top bubbles of the steps; the root concatenates each kind over the ranks
  // (three part files, see kEvidenceLayerRows).
  for (const auto& ss : sum.segments) {
    const auto& g = s.segments[ss.segment];
    const bool step = g.type == model::SegmentType::kStep;
    const char* kind = step ? "step_window" : "edge_window";
    r.text(stable_id("evd", {g.segment_id, kind})).text("step_window").text(rank_id).text(g.segment_id).empty();
    r.number(uint64_t{g.row_start}).number(uint64_t{g.row_end}).text("Step window " + g.segment_id);
    part(layout::kEvidenceIndexCsv).add(line(layout::kEvidenceIndexCsv, r));
    if (!step) continue;  // bubble windows: the complete steps' only, as the reference lists them
    for (size_t i = 0; i < ss.metrics.top_bubbles.size() && i < kEvidenceBubbles; ++i) {
      const auto& b = ss.metrics.top_bubbles[i];
      const std::string id =
          stable_id("evd", {g.segment_id, "bubble", std::to_string(b.bubble_index), us_text(b.start_ns)});
      r.text(id).text("bubble_window").text(rank_id).text(g.segment_id).empty();
      r.number(uint64_t{b.before_row}).number(uint64_t{b.after_row});
      // the duration as Python's repr of the value rounded to 6 decimals: 11.09325
      r.text("Bubble " + fixed_number(ms(b.end_ns - b.start_ns), 6) + " ms in " + g.segment_id);
      evidence_bubbles.emplace_back(b.end_ns - b.start_ns, line(layout::kEvidenceIndexCsv, r));
      // the reference's record: the kernel rows on either side as event objects, the segment's
      // cluster and step family
      JsonWriter w;
      w.begin_object();
      event(w, "after_event", b.after_row);
      event(w, "before_event", b.before_row);
      w.kv("bubble_index", uint64_t{b.bubble_index});
      w.kv("cluster_id", g.cluster_id);
      w.kv("duration_ms", ms(b.end_ns - b.start_ns));
      w.key("duration_us");
      w.raw(us_text(b.end_ns - b.start_ns));
      w.key("end_us");
      w.raw(us_text(b.end_ns));
      w.kv("evidence_id", id);
      w.kv("rank_id", rank_id);
      w.kv("segment_id", g.segment_id);
      w.key("start_us");
      w.raw(us_text(b.start_ns));
      w.kv("step_family", g.step_family);
      w.end_object();
      bubbles.emplace_back(b.end_ns - b.start_ns, w.take());
    }
  }
  for (const auto& ls : sum.layers) {
    const auto& l = s.layers[ls.layer];
    r.text(stable_id("evd", {l.layer_id, "layer_window"})).text("layer_window").text(rank_id);
    r.text(s.segments[l.segment].segment_id).text(l.layer_id).number(uint64_t{l.row_start}).number(uint64_t{l.row_end});
    r.text("Layer window " + l.layer_id);
    part(kEvidenceLayerRows).add(line(layout::kEvidenceIndexCsv, r));
  }
  std::stable_sort(bubbles.begin(), bubbles.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string bubble_part;
  for (const auto& [ns, json] : bubbles) bubble_part += std::to_string(ns) + "\t" + json + "\n";

  // each evidence window's metrics, for structure_evidence_graph.json: "<evidence id>\t<members>"
  {
    std::string lines;
    lines += stable_id("evd", {rank_id, "rank_window"}) + "\t" + metrics_members(ord, sum.rank, &events) + "\n";
    for (const auto& ss : sum.segments) {
      const auto& g = s.segments[ss.segment];
      const char* kind = g.type == model::SegmentType::kStep ? "step_window" : "edge_window";
      lines += stable_id("evd", {g.segment_id, kind}) + "\t" + metrics_members(ord, ss.metrics, &events) + "\n";
    }
    for (const auto& ls : sum.layers)
      lines += stable_id("evd", {s.layers[ls.layer].layer_id, "layer_window"}) + "\t" +
               metrics_members(ord, ls.metrics, &events) + "\n";
    pack.add(kEvidenceMetricsPart, lines, 1 + sum.segments.size() + sum.layers.size());
    if (evidence_metrics != nullptr) *evidence_metrics = std::move(lines);
  }
  declare(layout::kEvidenceIndexCsv);
  declare(kEvidenceLayerRows);
  std::stable_sort(evidence_bubbles.begin(), evidence_bubbles.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string keyed;
  for (const auto& [ns, row] : evidence_bubbles) keyed += std::to_string(ns) + "\t" + row;  // row ends in \n
  pack.add(kEvidenceBubbleRows, keyed, evidence_bubbles.size());
  pack.add(kBubbleWindowsPart, bubble_part, bubbles.size());
  return {};
}

namespace {

// k-way merge of part-pack sections of "<key>\t<line>" lines (each largest key first) into `o`,
// largest first; ties keep the ranks' order. `before_first` goes before the first line, if there
// is one. Streams: one line and a small read buffer per rank in memory. Returns the lines written.
Result<uint64_t> merge_keyed_lines(const std::vector<store::PartPackReader>& packs, const char* section, std::FILE* o,
                                   std::string_view before_first, const fs::path& out_name) {
  struct Source {
    std::optional<store::PartLineCursor> cursor;
    int64_t key = 0;
    std::string text;
  };
  std::vector<Source> src(packs.size());
  // the next line of a section: false at its end; a line that is not "<integer>\t<text>" (a
  // damaged part) is an error naming the pack, the section and the line
  Status bad;
  std::string line;
  auto next = [&](size_t i) {
    Source& s = src[i];
    s.text.clear();
    if (!s.cursor->next(line) || line.empty()) {
      if (!s.cursor->status().ok()) bad = s.cursor->status();
      return false;
    }
    const size_t tab = line.find('\t');
    const auto key = tab == std::string::npos ? std::nullopt : parse_int64(std::string_view(line).substr(0, tab));
    if (!key) {
      bad = file_error(ErrorCode::kParse, packs[i].path().string(),
                       std::string("section ") + section + " line \"" + line.substr(0, 80) + "\"",
                       "not a \"<duration ns>\\t<row>\" line (damaged part)");
      return false;
    }
    s.key = *key;
    s.text = line.substr(tab + 1);
    return true;
  };
  std::vector<size_t> live;
  for (size_t i = 0; i < packs.size(); ++i) {
    src[i].cursor.emplace(packs[i], section);
    if (next(i)) live.push_back(i);
    if (!bad.ok()) return bad;
  }
  uint64_t n = 0;
  bool ok = live.empty() || std::fwrite(before_first.data(), 1, before_first.size(), o) == before_first.size();
  int err = ok ? 0 : errno;  // the first failed write's errno: the reason users need ("No space left on device")
  // max-heap on (key, then earlier rank first)
  auto later = [&src](size_t a, size_t b) { return src[a].key != src[b].key ? src[a].key < src[b].key : a > b; };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later, live);
  while (!heap.empty() && ok) {
    const size_t i = heap.top();
    heap.pop();
    Source& s = src[i];
    ok = std::fwrite(s.text.data(), 1, s.text.size(), o) == s.text.size() && std::fputc('\n', o) != EOF;
    if (!ok) err = errno;
    ++n;
    if (next(i)) heap.push(i);
    if (!bad.ok()) return bad;
  }
  if (!ok) return file_error(ErrorCode::kIo, out_name.string(), "", std::string("write failed: ") + std::strerror(err));
  return n;
}

// A file of a section's keyed lines merged over the ranks, largest first (bubble_windows.jsonl: the
// ranks' bubble records; evidence_index.csv's bubble rows when the table is kept as an index).
Result<uint64_t> merge_to_file(const fs::path& out, const std::vector<store::PartPackReader>& packs, const char* section) {
  std::error_code ec;
  fs::create_directories(out.parent_path(), ec);
  if (ec) return file_error(ErrorCode::kIo, out.parent_path().string(), "", "cannot create folder: " + ec.message());
  const fs::path tmp = temp_sibling(out);
  std::FILE* o = std::fopen(tmp.c_str(), "wb");
  if (o == nullptr) return file_error(ErrorCode::kIo, tmp.string(), "", std::strerror(errno));
  auto n = merge_keyed_lines(packs, section, o, "", out);
  const int close_err = std::fclose(o) != 0 ? errno : 0;
  if (n.ok() && close_err != 0)
    n = file_error(ErrorCode::kIo, out.string(), "", std::string("write failed: ") + std::strerror(close_err));
  if (n.ok()) fs::rename(tmp, out, ec);
  if (!n.ok() || ec) {
    const std::string why = ec ? "rename failed: " + ec.message() : std::string();
    fs::remove(tmp, ec);
    if (n.ok()) return file_error(ErrorCode::kIo, out.string(), "", why);
  }
  return n;
}

// The root file of evidence_index.csv's bubble rows when the table is kept as an index.
fs::path bubble_rows_file(const fs::path& table) {
  fs::path p = table;
  p += ".bubbles";
  return p;
}

// A table's index and side files from a previous run, removed once the table itself is written.
void remove_table_index(const fs::path& table) {
  std::error_code ec;
  fs::remove(store::table_index_path(table), ec);
  fs::remove(bubble_rows_file(table), ec);
}

// `table` kept as an index of the ranks' pack ranges (store/table_index.hpp): the same bytes the
// copy would hold, in the same order; evidence_index.csv's bubble rows, merged over the ranks
// largest first, go to a root file of their own that the index names last. Returns the data rows.
Result<uint64_t> write_indexed_table(const fs::path& root_out, const std::string& table, const std::string& header,
                                     const std::vector<const char*>& sections, const std::vector<SummaryPart>& ranks,
                                     const std::vector<store::PartPackReader>& packs, bool evidence) {
  const fs::path out = root_out / table;
  store::TableIndex index;
  index.table = table;
  index.header = header;
  // a pack inside the root's folder is named relative to it, so the folder can be moved whole
  auto file_name = [&root_out](const fs::path& pack) {
    const fs::path rel = pack.lexically_relative(root_out);
    return !rel.empty() && *rel.begin() != ".." && pack.is_absolute() == root_out.is_absolute() ? rel.string()
                                                                                               : fs::absolute(pack).string();
  };
  for (const char* section : sections)
    for (size_t i = 0; i < packs.size(); ++i) {
      if (!packs[i].has(section)) return packs[i].read(section).status();  // the missing-section error
      for (const auto& seg : packs[i].section_segments(section)) {
        index.parts.push_back({ranks[i].rank_id, file_name(packs[i].path()), seg.offset, seg.length, seg.rows, seg.raw_length, seg.zlib});
        index.rows += seg.rows;
      }
    }
  if (evidence) {
    const fs::path bubbles = bubble_rows_file(out);
    auto merged = merge_to_file(bubbles, packs, kEvidenceBubbleRows);
    if (!merged.ok()) return merged.status();
    std::error_code ec;
    const uint64_t length = fs::file_size(bubbles, ec);
    if (ec) return file_error(ErrorCode::kIo, bubbles.string(), "", ec.message());
    if (*merged > 0) index.parts.push_back({"", bubbles.filename().string(), 0, length, *merged, length, false});
    index.rows += *merged;
  }
  ASCPROF_RETURN_IF_ERROR(store::write_table_index(out, index));
  std::error_code ec;
  fs::remove(out, ec);  // a previous run's copy of this table (it was smaller then)
  if (ec) return file_error(ErrorCode::kIo, out.string(), "", "cannot remove the previous copy: " + ec.message());
  return index.rows;
}

}  // namespace

Result<std::vector<fs::path>> write_root_summary_outputs(const fs::path& root_out, const std::vector<SummaryPart>& ranks,
                                                         const knowledge::Knowledge& kb,
                                                         const std::vector<fs::path>& class_tables,
                                                         const store::SectionCopyRunner& run_copies) {
  std::vector<fs::path> written;
  const std::map<std::string, CsvLayout> layouts = summary_layouts(kb);
  std::vector<std::pair<std::string, uint64_t>> counts;  // (table file, data rows)
  std::vector<store::PartPackReader> packs;
  packs.reserve(ranks.size());
  for (const auto& r : ranks) {
    auto pack = store::PartPackReader::open(r.pack);
    if (!pack.ok()) return pack.status();
    packs.push_back(std::move(pack).value());
  }
  std::vector<std::vector<store::SectionCopy>> copies_of(packs.size());  // each rank's sections of the copied tables
  std::vector<std::pair<fs::path, fs::path>> pending;  // (temporary, final) of the copied tables
  // an error: the temporary files written so far are removed, none is renamed
  auto fail_pending = [&pending](Status st) {
    std::error_code ec;
    for (const auto& [tmp, out] : pending) fs::remove(tmp, ec);
    pending.clear();
    return st;
  };
  for (const auto& t : summary_tables()) {
    const fs::path out = root_out / t;
    const bool evidence = t == layout::kEvidenceIndexCsv;
    std::vector<const char*> sections = {t.c_str()};
    if (evidence) sections.push_back(kEvidenceLayerRows);
    // A table too large to copy stays in the ranks' packs, the root holding its index
    // (knowledge/summarize.rules [root_tables]); the bubble rows' bytes, keys included, bound theirs.
    // (A table without rows stays an empty file, as below.)
    uint64_t row_bytes = 0;
    for (const auto& pack : packs) {
      for (const char* section : sections) row_bytes += pack.size(section);
      if (evidence) row_bytes += pack.size(kEvidenceBubbleRows);
    }
    if (row_bytes > 0 && layouts.at(t).header().size() + row_bytes > uint64_t{kb.summarize.root_table_max_mib} << 20) {
      auto rows = write_indexed_table(root_out, t, layouts.at(t).header(), sections, ranks, packs, evidence);
      if (!rows.ok()) return fail_pending(rows.status());
      written.push_back(store::table_index_path(out));
      counts.emplace_back(t, *rows);
      continue;
    }
    // The header, then each rank's section at its offset (planned here from the packs' indexes,
    // copied by `run_copies`, possibly on other processes), then evidence_index.csv's bubble rows
    // merged over the ranks, largest first, after them. Renamed once every copy is done.
    const fs::path tmp = temp_sibling(out);
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (f == nullptr) return fail_pending(file_error(ErrorCode::kIo, tmp.string(), "", std::strerror(errno)));
    pending.push_back({tmp, out});
    uint64_t rows = 0, at = 0;
    bool ok = true;
    int err = 0;  // the first failed write's errno
    for (const char* section : sections)
      for (size_t i = 0; i < packs.size(); ++i) {
        const uint64_t size = packs[i].size(section);
        if (size == 0) {
          if (!packs[i].has(section)) {
            std::fclose(f);
            return fail_pending(packs[i].read(section).status());  // the missing-section error, naming the pack
          }
          continue;
        }
        if (at == 0) {  // a table without rows stays an empty file, as the reference writes it
          const std::string& h = layouts.at(t).header();
          ok = std::fwrite(h.data(), 1, h.size(), f) == h.size();
          if (!ok) err = errno;
          at = h.size();
        }
        copies_of[i].push_back({packs[i].path().string(), section, tmp.string(), at, size});
        at += size;
        rows += packs[i].rows(section);
      }
    if (ok && evidence) {
      ok = std::fseek(f, static_cast<long>(at), SEEK_SET) == 0;  // the copies fill what lies before
      if (!ok) err = errno;
      if (ok) {
        auto merged = merge_keyed_lines(packs, kEvidenceBubbleRows, f, at > 0 ? "" : layouts.at(t).header(), out);
        if (!merged.ok()) {
          std::fclose(f);
          return fail_pending(merged.status());
        }
        rows += *merged;
      }
    }
    if (std::fclose(f) != 0 && ok) {
      ok = false;
      err = errno;
    }
    if (!ok) return fail_pending(file_error(ErrorCode::kIo, out.string(), "", std::string("write failed: ") + std::strerror(err)));
    written.push_back(out);
    counts.emplace_back(t, rows);
  }
  // every rank's sections into the tables (listed rank by rank: a pack is opened once), then each
  // table renamed into place
  {
    std::vector<store::SectionCopy> copies;
    for (auto& of_rank : copies_of)
      for (auto& c : of_rank) copies.push_back(std::move(c));
    copies_of.clear();
    const Status st = run_copies ? run_copies(copies) : store::run_section_copies(copies, 0, copies.size());
    if (!st.ok()) return fail_pending(st);
    for (const auto& [tmp, out] : pending) {
      std::error_code ec;
      fs::rename(tmp, out, ec);
      if (ec) return fail_pending(file_error(ErrorCode::kIo, out.string(), "", "rename failed: " + ec.message()));
      remove_table_index(out);  // a previous run's index of this table (it was larger then)
    }
    pending.clear();
  }
  {
    auto merged = merge_to_file(root_out / layout::kBubbleWindowsJsonl, packs, kBubbleWindowsPart);
    if (!merged.ok()) return merged.status();
    written.push_back(root_out / layout::kBubbleWindowsJsonl);
    counts.emplace_back(layout::kBubbleWindowsJsonl, *merged);
  }
  std::vector<std::pair<std::string, uint64_t>> class_counts;  // data rows of the cross-rank class tables
  for (const auto& t : class_tables) {
    auto text = read_file(t);
    if (!text.ok()) return text.status();
    bool quoted = false;
    const uint64_t lines = csv_rows(*text, quoted);
    class_counts.emplace_back(t.filename().string(), lines > 0 ? lines - 1 : uint64_t{0});
  }
  // the reference's names: files by stem, counts as <stem>_rows with its abbreviations
  auto stem = [](const std::string& file) { return fs::path(file).stem().string(); };
  auto count_key = [&stem](const std::string& file) {
    static const std::map<std::string, std::string> kShort = {
        {"wait_anchor_ops", "wait_anchor_rows"},         {"aicpu_summary", "aicpu_rows"},
        {"evidence_index", "evidence_rows"},             {"raw_kernel_index", "raw_kernel_rows"},
        {"normalized_event_index", "normalized_event_rows"}, {"bubble_windows", "bubble_rows"},
        {"block_class_summary", "block_class_rows"},     {"layer_class_summary", "layer_class_rows"},
        {"step_class_summary", "step_class_rows"}};
    const auto it = kShort.find(stem(file));
    return it != kShort.end() ? it->second : stem(file) + "_rows";
  };
  JsonWriter m;
  m.begin_object();
  write_manifest_fields(m, stage_name(Stage::kSummarize), root_out.string());
  m.key("files");
  m.begin_object();
  for (const auto& [file, rows] : counts) m.kv(stem(file), file);
  for (const auto& [file, rows] : class_counts) m.kv(stem(file), file);
  m.kv("summary_manifest", layout::kSummaryManifestJson);
  m.end_object();
  m.key("counts");
  m.begin_object();
  for (const auto& [file, rows] : counts) m.kv(count_key(file), rows);
  for (const auto& [file, rows] : class_counts) m.kv(count_key(file), rows);
  m.end_object();
  m.key("pipeline_fields");
  m.begin_array();
  for (const auto& c : pipeline_columns(kb)) m.value(c);
  m.end_array();
  m.kv("rank_count", static_cast<uint64_t>(ranks.size()));
  uint64_t ev = 0, ev_sig = 0, ops = 0, ops_sig = 0;
  for (const auto& p : ranks) {
    ev += p.events_total;
    ev_sig += p.events_with_pipeline_signal;
    ops += p.operators_total;
    ops_sig += p.operators_with_pipeline_signal;
  }
  m.key("class_summary_counts");  // the structure classes, as the reference counts them
  m.begin_object();
  for (const auto& [file, rows] : class_counts)
    if (file == layout::kBlockClassSummaryCsv || file == layout::kLayerClassSummaryCsv || file == layout::kStepClassSummaryCsv)
      m.kv(stem(file).substr(0, stem(file).find('_')) + "_classes", rows);
  m.end_object();
  m.key("pipeline_coverage");
  m.begin_object();
  m.kv("events_with_pipeline_signal", ev_sig);
  m.kv("events_total", ev);
  m.kv("events_ratio", ev ? static_cast<double>(ev_sig) / static_cast<double>(ev) : 0.0);
  m.kv("operators_with_pipeline_signal", ops_sig);
  m.kv("operators_total", ops);
  m.end_object();
  m.end_object();
  const fs::path manifest = root_out / layout::kSummaryManifestJson;
  ASCPROF_RETURN_IF_ERROR(write_file_atomic(manifest, m.take()));
  written.push_back(manifest);
  return written;
}

namespace {


// A table's text: header + rows, or nothing at all without rows (the reference's convention).
Status write_table(const fs::path& path, const std::string& header_line, const std::string& rows,
                   std::vector<fs::path>& written) {
  ASCPROF_RETURN_IF_ERROR(write_file_atomic(path, rows.empty() ? std::string() : header_line + rows));
  written.push_back(path);
  return {};
}

}  // namespace

Result<std::vector<fs::path>> write_root_class_summaries(const fs::path& root_out,
                                                         const std::vector<std::vector<model::OperatorRow>>& ops,
                                                         const std::vector<std::vector<model::HcclOpRow>>& hccl,
                                                         const knowledge::Knowledge& kb) {
  return write_root_class_summaries(root_out, analysis::merge_operator_classes(ops, kb), analysis::merge_hccl_classes(hccl), kb);
}

Result<std::vector<fs::path>> write_root_class_summaries(const fs::path& root_out,
                                                         const std::vector<model::OperatorClassRow>& operator_classes,
                                                         const std::vector<model::HcclClassRow>& hccl_classes,
                                                         const knowledge::Knowledge& kb) {
  std::vector<fs::path> written;
  CsvRow r;
  std::string rows;
  for (const auto& c : operator_classes) {
    const double calls = static_cast<double>(std::max<uint64_t>(1, c.call_count));
    const int64_t total = c.duration_sum_ns + c.wait_sum_ns;
    r.text(c.name).text(c.task_type).text(c.op_type).text(c.roles).number(uint64_t{c.rank_count}).number(c.call_count);
    r.number(us(c.duration_sum_ns), 3).number(us(c.wait_sum_ns), 3).number(us(total), 3);
    r.number(us(c.duration_sum_ns) / calls, 3).number(us(c.wait_sum_ns) / calls, 3);
    r.number(total > 0 ? static_cast<double>(c.wait_sum_ns) / static_cast<double>(total) : 0.0);
    r.number(c.rank_duration_min_us, 3).number(c.rank_duration_max_us, 3).number(c.rank_duration_p50_us, 3);
    r.number(c.rank_duration_skew_ratio);
    r.text(output_field_name(c.bound.bound_stage)).text(c.bound.bound_family).text(c.bound.dominant_core);
    r.boolean(c.pipeline_signal);
    pipeline_cells(r, c.pipeline_us, kb.pipeline.fields().size());
    rows += r.take_line();
  }
  CsvRow head;
  for (const auto& c : columns({{"name", "task_type", "op_type", "roles", "rank_count", "call_count", "duration_sum_us",
                                 "wait_sum_us", "total_cost_sum_us", "duration_avg_us", "wait_avg_us", "wait_ratio",
                                 "rank_duration_min_us", "rank_duration_max_us", "rank_duration_p50_us",
                                 "rank_duration_skew_ratio", "bound_stage", "bound_family", "dominant_core",
                                 "pipeline_signal"},
                                pipeline_columns(kb)}))
    head.text(c);
  ASCPROF_RETURN_IF_ERROR(write_table(root_out / layout::kOperatorClassSummaryCsv, head.take_line(), rows, written));
  rows.clear();
  for (const auto& h : hccl_classes) {
    r.text(h.hccl_op_kind).boolean(h.comm_aiv_fused).number(uint64_t{h.rank_count}).number(h.call_count);
    r.number(us(h.duration_sum_ns), 3).number(us(h.wait_sum_ns), 3).number(h.duration_avg_us, 3);
    r.number(h.rank_avg_min_us, 3).number(h.rank_avg_max_us, 3).number(h.rank_avg_mean_us, 3);
    r.number(h.rank_skew_ratio).number(h.duration_max_us, 3);
    rows += r.take_line();
  }
  ASCPROF_RETURN_IF_ERROR(write_table(
      root_out / layout::kHcclClassSummaryCsv,
      csv_header({"hccl_op_kind", "comm_aiv_fused", "rank_count", "call_count", "duration_sum_us", "wait_sum_us",
               "duration_avg_us", "rank_avg_min_us", "rank_avg_max_us", "rank_avg_mean_us", "rank_skew_ratio",
               "duration_max_us"}),
      rows, written));
  return written;
}

}  // namespace ascprof::pipeline

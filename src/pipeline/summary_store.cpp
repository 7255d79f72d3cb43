// Layout documented in summary_store.hpp.
#include "summary_store.hpp"
#include "column_tables.hpp"

#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ascprof/common/json_writer.hpp"
#include "ascprof/store/h5_reader.hpp"

namespace ascprof::pipeline {

namespace {

using model::AnatomyWindow;
using model::Bubble;
using model::NameCounts;
using model::WindowMetrics;
using RowRanges = std::vector<std::pair<uint32_t, uint32_t>>;

// ---- JSON cells ---------------------------------------------------------------------------------

std::string json_ranges(const RowRanges& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += '[';
    out += std::to_string(v[i].first);
    out += ',';
    out += std::to_string(v[i].second);
    out += ']';
  }
  out += ']';
  return out;
}

std::string json_counts(const NameCounts& c) {
  JsonWriter w(false);
  w.begin_object();
  for (const auto& [name, n] : c) w.kv(name.str(), n);
  w.end_object();
  return w.take();
}

std::string json_bubbles(const std::vector<Bubble>& v) {
  JsonWriter w(false);
  w.begin_array();
  for (const auto& b : v) {
    w.begin_object();
    w.kv("bubble_index", b.bubble_index);
    w.kv("start_ns", b.start_ns);
    w.kv("end_ns", b.end_ns);
    w.kv("before_row", b.before_row);
    w.kv("after_row", b.after_row);
    w.end_object();
  }
  w.end_array();
  return w.take();
}

// Shortest round-trip form; integral values get ".0" so every reader sees a float (and -0 and
// values beyond 2^64 survive), non-finite values become null (JSON has no NaN).
std::string json_doubles(const std::vector<double>& v) {
  if (v.empty()) return {};
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    if (!std::isfinite(v[i])) {
      out += "null";
      continue;
    }
    char buf[40];
    auto r = std::to_chars(buf, buf + sizeof buf, v[i]);
    const std::string_view s(buf, static_cast<size_t>(r.ptr - buf));
    out += s;
    if (s.find_first_of(".e") == std::string_view::npos) out += ".0";
  }
  out += ']';
  return out;
}

// [{"name","task_type","call_count","duration_sum_ns"},...] in model order.
std::string json_top_ops(const std::vector<model::BlockSummary::TopOp>& v) {
  JsonWriter w(false);
  w.begin_array();
  for (const auto& t : v) {
    w.begin_object();
    w.kv("name", t.name.str());
    w.kv("task_type", t.task_type.str());
    w.kv("call_count", t.call_count);
    w.kv("duration_sum_ns", t.duration_sum_ns);
    w.end_object();
  }
  w.end_array();
  return w.take();
}

// Cell parsers: nullptr on success, else the reason.

bool get_u32(element e, uint32_t* out) {
  uint64_t v = 0;
  if (e.get_uint64().get(v) != simdjson::SUCCESS || v > UINT32_MAX) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

const char* parse_strings(element doc, std::vector<std::string>* out) {
  simdjson::dom::array arr;
  if (doc.get_array().get(arr) != simdjson::SUCCESS) return "not a JSON array";
  for (element e : arr) {
    std::string_view s;
    if (e.get_string().get(s) != simdjson::SUCCESS) return "JSON array element is not a string";
    out->emplace_back(s);
  }
  return nullptr;
}

const char* parse_indices(element doc, std::vector<uint32_t>* out) {
  simdjson::dom::array arr;
  if (doc.get_array().get(arr) != simdjson::SUCCESS) return "not a JSON array";
  for (element e : arr) {
    uint32_t v = 0;
    if (!get_u32(e, &v)) return "JSON array element is not a row index";
    out->push_back(v);
  }
  return nullptr;
}

const char* parse_ranges(element doc, RowRanges* out) {
  simdjson::dom::array arr;
  if (doc.get_array().get(arr) != simdjson::SUCCESS) return "not a JSON array";
  for (element e : arr) {
    simdjson::dom::array pair;
    uint32_t a = 0, b = 0;
    element first, second;
    if (e.get_array().get(pair) != simdjson::SUCCESS || pair.at(0).get(first) != simdjson::SUCCESS ||
        pair.at(1).get(second) != simdjson::SUCCESS || pair.size() != 2 || !get_u32(first, &a) || !get_u32(second, &b))
      return "JSON array element is not a [start,end] row range";
    out->emplace_back(a, b);
  }
  return nullptr;
}

const char* parse_counts(element doc, NameCounts* out) {
  simdjson::dom::object obj;
  if (doc.get_object().get(obj) != simdjson::SUCCESS) return "not a JSON object";
  for (simdjson::dom::key_value_pair kv : obj) {
    uint64_t n = 0;
    if (kv.value.get_uint64().get(n) != simdjson::SUCCESS) return "JSON object value is not a count";
    out->emplace_back(model::CountName(kv.key), n);
  }
  return nullptr;
}

const char* parse_bubbles(element doc, std::vector<Bubble>* out) {
  simdjson::dom::array arr;
  if (doc.get_array().get(arr) != simdjson::SUCCESS) return "not a JSON array";
  for (element e : arr) {
    simdjson::dom::object o;
    Bubble b;
    element idx, before, after;
    if (e.get_object().get(o) != simdjson::SUCCESS || o["bubble_index"].get(idx) != simdjson::SUCCESS ||
        o["before_row"].get(before) != simdjson::SUCCESS || o["after_row"].get(after) != simdjson::SUCCESS ||
        !get_u32(idx, &b.bubble_index) || !get_u32(before, &b.before_row) || !get_u32(after, &b.after_row) ||
        o["start_ns"].get_int64().get(b.start_ns) != simdjson::SUCCESS ||
        o["end_ns"].get_int64().get(b.end_ns) != simdjson::SUCCESS)
      return "JSON array element is not a bubble object";
    out->push_back(b);
  }
  return nullptr;
}

const char* parse_top_ops(element doc, std::vector<model::BlockSummary::TopOp>* out) {
  simdjson::dom::array arr;
  if (doc.get_array().get(arr) != simdjson::SUCCESS) return "not a JSON array";
  for (element e : arr) {
    simdjson::dom::object o;
    std::string_view name, task_type;
    model::BlockSummary::TopOp t;
    if (e.get_object().get(o) != simdjson::SUCCESS || o["name"].get_string().get(name) != simdjson::SUCCESS ||
        o["task_type"].get_string().get(task_type) != simdjson::SUCCESS ||
        o["call_count"].get_uint64().get(t.call_count) != simdjson::SUCCESS ||
        o["duration_sum_ns"].get_int64().get(t.duration_sum_ns) != simdjson::SUCCESS)
      return "JSON array element is not a top-op object";
    t.name = model::CountName(name);
    t.task_type = model::CountName(task_type);
    out->push_back(std::move(t));
  }
  return nullptr;
}

const char* parse_doubles(element doc, std::vector<double>* out) {
  simdjson::dom::array arr;
  if (doc.get_array().get(arr) != simdjson::SUCCESS) return "not a JSON array";
  for (element e : arr) {
    double v = 0;
    if (e.is_null())
      v = std::numeric_limits<double>::quiet_NaN();
    else if (e.get_double().get(v) != simdjson::SUCCESS)
      return "JSON array element is not a number";
    out->push_back(v);
  }
  return nullptr;
}

// ---- writing ------------------------------------------------------------------------------------

// The window tables are written a column at a time: a big rank has ~38k layers and ~76k blocks
// whose JSON cells, all rendered at once, cost more memory than the summary itself. Each column is
// rendered, written and freed before the next, in the layout's column order.
template <class T, class Get>
void num_column(store::TableWriter& t, std::string_view name, size_t n, Get get) {
  if (!t.status().ok()) return;
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>(get(i));
  t.column(name, v);
}

// String cells go into one buffer (no allocation per cell).
template <class Get>
void str_column(store::TableWriter& t, std::string_view name, size_t n, Get get) {
  if (!t.status().ok()) return;
  std::string text;
  std::vector<size_t> ends(n);
  for (size_t i = 0; i < n; ++i) {
    text += get(i);
    ends[i] = text.size();
  }
  std::vector<std::string_view> cells(n);
  for (size_t i = 0, begin = 0; i < n; begin = ends[i++]) cells[i] = std::string_view(text).substr(begin, ends[i] - begin);
  t.string_column(name, std::span<const std::string_view>(cells));
}

// The metric columns (M in the header) of n rows; `m(i)` is row i's WindowMetrics.
template <class Get>
void metric_columns(store::TableWriter& t, size_t n, Get m) {
  num_column<uint64_t>(t, "event_count", n, [&](size_t i) { return m(i).event_count; });
  num_column<uint32_t>(t, "row_start", n, [&](size_t i) { return m(i).row_start; });
  num_column<uint32_t>(t, "row_end", n, [&](size_t i) { return m(i).row_end; });
  num_column<int64_t>(t, "start_ns", n, [&](size_t i) { return m(i).start_ns; });
  num_column<int64_t>(t, "end_ns", n, [&](size_t i) { return m(i).end_ns; });
  num_column<int64_t>(t, "wall_ns", n, [&](size_t i) { return m(i).wall_ns; });
  num_column<int64_t>(t, "busy_union_ns", n, [&](size_t i) { return m(i).busy_union_ns; });
  num_column<int64_t>(t, "kernel_sum_ns", n, [&](size_t i) { return m(i).kernel_sum_ns; });
  num_column<int64_t>(t, "wait_sum_ns", n, [&](size_t i) { return m(i).wait_sum_ns; });
  num_column<int64_t>(t, "total_cost_ns", n, [&](size_t i) { return m(i).total_cost_ns; });
  num_column<int64_t>(t, "underfeed_ns", n, [&](size_t i) { return m(i).underfeed_ns; });
  num_column<double>(t, "underfeed_ratio", n, [&](size_t i) { return m(i).underfeed_ratio; });
  num_column<int64_t>(t, "internal_bubble_total_ns", n, [&](size_t i) { return m(i).internal_bubble_total_ns; });
  num_column<int64_t>(t, "largest_internal_bubble_ns", n, [&](size_t i) { return m(i).largest_internal_bubble_ns; });
  num_column<uint32_t>(t, "bubble_count", n, [&](size_t i) { return m(i).bubble_count; });
  num_column<uint32_t>(t, "stream_count", n, [&](size_t i) { return m(i).stream_count; });
  str_column(t, "task_type_counts", n, [&](size_t i) { return json_counts(m(i).task_type_counts); });
  str_column(t, "role_counts", n, [&](size_t i) { return json_counts(m(i).role_counts); });
  str_column(t, "category_counts", n, [&](size_t i) { return json_counts(m(i).category_counts); });
  str_column(t, "top_bubbles", n, [&](size_t i) { return json_bubbles(m(i).top_bubbles); });
}

// The W_* columns of one anatomy window (head / main / tail); `a(i)` is row i's window.
template <class Get>
void anatomy_columns(store::TableWriter& t, const std::string& w, size_t n, Get a) {
  num_column<uint8_t>(t, w + "_empty", n, [&](size_t i) { return a(i).empty ? 1 : 0; });
  num_column<uint32_t>(t, w + "_row_start", n, [&](size_t i) { return a(i).row_start; });
  num_column<uint32_t>(t, w + "_row_end", n, [&](size_t i) { return a(i).row_end; });
  num_column<int64_t>(t, w + "_start_ns", n, [&](size_t i) { return a(i).start_ns; });
  num_column<int64_t>(t, w + "_end_ns", n, [&](size_t i) { return a(i).end_ns; });
  num_column<int64_t>(t, w + "_wall_ns", n, [&](size_t i) { return a(i).wall_ns; });
  num_column<int64_t>(t, w + "_busy_ns", n, [&](size_t i) { return a(i).busy_ns; });
  num_column<int64_t>(t, w + "_bubble_ns", n, [&](size_t i) { return a(i).bubble_ns; });
  num_column<uint64_t>(t, w + "_event_count", n, [&](size_t i) { return a(i).event_count; });
}

Status write_segments(store::H5Writer& w, const std::vector<model::SegmentSummary>& segs) {
  const size_t n = segs.size();
  store::TableWriter t(w, "/summary/segments", n);
  num_column<uint32_t>(t, "segment", n, [&](size_t i) { return segs[i].segment; });
  metric_columns(t, n, [&](size_t i) -> const WindowMetrics& { return segs[i].metrics; });
  str_column(t, "anomaly_tags", n, [&](size_t i) { return json_strings(segs[i].anomaly_tags); });
  num_column<uint8_t>(t, "has_attention", n, [&](size_t i) { return segs[i].has_attention ? 1 : 0; });
  num_column<uint8_t>(t, "has_moe", n, [&](size_t i) { return segs[i].has_moe ? 1 : 0; });
  num_column<uint8_t>(t, "has_communication", n, [&](size_t i) { return segs[i].has_communication ? 1 : 0; });
  num_column<uint64_t>(t, "attention_event_count", n, [&](size_t i) { return segs[i].attention_event_count; });
  num_column<uint64_t>(t, "moe_event_count", n, [&](size_t i) { return segs[i].moe_event_count; });
  num_column<uint64_t>(t, "comm_event_count", n, [&](size_t i) { return segs[i].comm_event_count; });
  str_column(t, "anatomy_kind", n, [&](size_t i) -> const std::string& { return segs[i].anatomy.anatomy_kind; });
  anatomy_columns(t, "head", n, [&](size_t i) -> const AnatomyWindow& { return segs[i].anatomy.head; });
  anatomy_columns(t, "main", n, [&](size_t i) -> const AnatomyWindow& { return segs[i].anatomy.main; });
  anatomy_columns(t, "tail", n, [&](size_t i) -> const AnatomyWindow& { return segs[i].anatomy.tail; });
  num_column<double>(t, "head_ratio", n, [&](size_t i) { return segs[i].anatomy.head_ratio; });
  num_column<double>(t, "main_ratio", n, [&](size_t i) { return segs[i].anatomy.main_ratio; });
  num_column<double>(t, "tail_ratio", n, [&](size_t i) { return segs[i].anatomy.tail_ratio; });
  num_column<double>(t, "bubble_ratio", n, [&](size_t i) { return segs[i].anatomy.bubble_ratio; });
  return t.finish();
}

Status write_layers(store::H5Writer& w, const std::vector<model::LayerSummary>& layers) {
  const size_t n = layers.size();
  store::TableWriter t(w, "/summary/layers", n);
  num_column<uint32_t>(t, "layer", n, [&](size_t i) { return layers[i].layer; });
  metric_columns(t, n, [&](size_t i) -> const WindowMetrics& { return layers[i].metrics; });
  num_column<uint8_t>(t, "has_attention", n, [&](size_t i) { return layers[i].has_attention ? 1 : 0; });
  num_column<uint8_t>(t, "has_moe", n, [&](size_t i) { return layers[i].has_moe ? 1 : 0; });
  num_column<uint8_t>(t, "has_communication", n, [&](size_t i) { return layers[i].has_communication ? 1 : 0; });
  return t.finish();
}

Status write_blocks(store::H5Writer& w, const std::vector<model::BlockSummary>& blocks) {
  const size_t n = blocks.size();
  store::TableWriter t(w, "/summary/blocks", n);
  num_column<uint32_t>(t, "block", n, [&](size_t i) { return blocks[i].block; });
  metric_columns(t, n, [&](size_t i) -> const WindowMetrics& { return blocks[i].metrics; });
  str_column(t, "op_type_counts", n, [&](size_t i) { return json_counts(blocks[i].op_type_counts); });
  str_column(t, "dominant_op_type", n, [&](size_t i) -> const std::string& { return blocks[i].dominant_op_type; });
  num_column<int64_t>(t, "comm_duration_ns", n, [&](size_t i) { return blocks[i].comm_duration_ns; });
  num_column<double>(t, "comm_share", n, [&](size_t i) { return blocks[i].comm_share; });
  num_column<uint8_t>(t, "pipeline_signal", n, [&](size_t i) { return blocks[i].pipeline_signal ? 1 : 0; });
  str_column(t, "pipeline_us", n, [&](size_t i) { return json_doubles(blocks[i].pipeline_us); });
  str_column(t, "bound_stage", n, [&](size_t i) -> const std::string& { return blocks[i].bound.bound_stage; });
  str_column(t, "bound_family", n, [&](size_t i) -> const std::string& { return blocks[i].bound.bound_family; });
  str_column(t, "dominant_core", n, [&](size_t i) -> const std::string& { return blocks[i].bound.dominant_core; });
  str_column(t, "top_ops", n, [&](size_t i) { return json_top_ops(blocks[i].top_ops); });
  num_column<uint8_t>(t, "has_attention", n, [&](size_t i) { return blocks[i].has_attention ? 1 : 0; });
  num_column<uint8_t>(t, "has_moe", n, [&](size_t i) { return blocks[i].has_moe ? 1 : 0; });
  num_column<uint8_t>(t, "has_communication", n, [&](size_t i) { return blocks[i].has_communication ? 1 : 0; });
  return t.finish();
}

Status write_operators(store::H5Writer& w, const std::vector<model::OperatorRow>& ops) {
  const size_t n = ops.size();
  std::vector<std::string> name(n), task(n), roles(n), cats(n), ranges(n), samples(n), op_type(n), stage(n), family(n),
      core(n), pipeline(n);
  std::vector<uint64_t> calls(n);
  std::vector<int64_t> dur(n), wait(n);
  std::vector<uint32_t> streams(n);
  std::vector<uint8_t> signal(n);
  for (size_t i = 0; i < n; ++i) {
    const auto& o = ops[i];
    name[i] = o.name;
    task[i] = o.task_type;
    roles[i] = o.roles;
    cats[i] = o.categories;
    calls[i] = o.call_count;
    dur[i] = o.duration_sum_ns;
    wait[i] = o.wait_sum_ns;
    streams[i] = o.stream_count;
    ranges[i] = json_ranges(o.row_ranges);
    samples[i] = json_indices(o.sample_rows);
    op_type[i] = o.op_type;
    stage[i] = o.bound.bound_stage;
    family[i] = o.bound.bound_family;
    core[i] = o.bound.dominant_core;
    signal[i] = o.pipeline_signal ? 1 : 0;
    pipeline[i] = json_doubles(o.pipeline_us);
  }
  store::TableWriter t(w, "/summary/operators", n);
  t.string_column("name", name);
  t.string_column("task_type", task);
  t.string_column("roles", roles);
  t.string_column("categories", cats);
  t.column("call_count", calls);
  t.column("duration_sum_ns", dur);
  t.column("wait_sum_ns", wait);
  t.column("stream_count", streams);
  t.string_column("row_ranges", ranges);
  t.string_column("sample_rows", samples);
  t.string_column("op_type", op_type);
  t.string_column("bound_stage", stage);
  t.string_column("bound_family", family);
  t.string_column("dominant_core", core);
  t.column("pipeline_signal", signal);
  t.string_column("pipeline_us", pipeline);
  return t.finish();
}

Status write_hccl(store::H5Writer& w, const std::vector<model::HcclOpRow>& rows) {
  const size_t n = rows.size();
  std::vector<std::string> kind(n);
  std::vector<uint8_t> fused(n);
  std::vector<uint64_t> names(n), calls(n);
  std::vector<int64_t> dur(n), wait(n);
  std::vector<double> avg(n), mn(n), p50(n), p90(n), mx(n), ratio(n);
  for (size_t i = 0; i < n; ++i) {
    const auto& h = rows[i];
    kind[i] = h.hccl_op_kind;
    fused[i] = h.comm_aiv_fused ? 1 : 0;
    names[i] = h.name_count;
    calls[i] = h.call_count;
    dur[i] = h.duration_sum_ns;
    wait[i] = h.wait_sum_ns;
    avg[i] = h.duration_avg_us;
    mn[i] = h.duration_min_us;
    p50[i] = h.duration_p50_us;
    p90[i] = h.duration_p90_us;
    mx[i] = h.duration_max_us;
    ratio[i] = h.wait_ratio;
  }
  store::TableWriter t(w, "/summary/hccl", n);
  t.string_column("hccl_op_kind", kind);
  t.column("comm_aiv_fused", fused);
  t.column("name_count", names);
  t.column("call_count", calls);
  t.column("duration_sum_ns", dur);
  t.column("wait_sum_ns", wait);
  t.column("duration_avg_us", avg);
  t.column("duration_min_us", mn);
  t.column("duration_p50_us", p50);
  t.column("duration_p90_us", p90);
  t.column("duration_max_us", mx);
  t.column("wait_ratio", ratio);
  return t.finish();
}

Status write_wait_anchors(store::H5Writer& w, const std::vector<model::WaitAnchorRow>& rows) {
  const size_t n = rows.size();
  std::vector<uint32_t> op(n), rank(n);
  std::vector<double> ratio(n);
  std::vector<uint8_t> risk(n);
  for (size_t i = 0; i < n; ++i) {
    op[i] = rows[i].op;
    rank[i] = rows[i].total_cost_avg_rank;
    ratio[i] = rows[i].wait_ratio;
    risk[i] = rows[i].is_false_hotspot_risk ? 1 : 0;
  }
  store::TableWriter t(w, "/summary/wait_anchors", n);
  t.column("op", op);
  t.column("total_cost_avg_rank", rank);
  t.column("wait_ratio", ratio);
  t.column("is_false_hotspot_risk", risk);
  return t.finish();
}

Status write_aicpu(store::H5Writer& w, const std::vector<model::AicpuRow>& rows) {
  const size_t n = rows.size();
  std::vector<std::string> name(n), cls(n), ranges(n), samples(n);
  std::vector<uint64_t> calls(n);
  std::vector<int64_t> dur(n), overlap(n);
  std::vector<double> masked(n);
  for (size_t i = 0; i < n; ++i) {
    const auto& a = rows[i];
    name[i] = a.name;
    calls[i] = a.call_count;
    dur[i] = a.duration_sum_ns;
    overlap[i] = a.overlap_with_ai_core_ns;
    masked[i] = a.masked_ratio;
    cls[i] = a.classification;
    ranges[i] = json_ranges(a.row_ranges);
    samples[i] = json_indices(a.sample_rows);
  }
  store::TableWriter t(w, "/summary/aicpu", n);
  t.string_column("name", name);
  t.column("call_count", calls);
  t.column("duration_sum_ns", dur);
  t.column("overlap_with_ai_core_ns", overlap);
  t.column("masked_ratio", masked);
  t.string_column("classification", cls);
  t.string_column("row_ranges", ranges);
  t.string_column("sample_rows", samples);
  return t.finish();
}

// ---- reading ------------------------------------------------------------------------------------

struct MetricReader {
  std::vector<uint64_t> events;
  std::vector<uint32_t> rs, re, bubbles, streams;
  std::vector<int64_t> start, end, wall, busy, kernel, wait, cost, underfeed, bubble_total, largest;
  std::vector<double> ratio;
  std::vector<NameCounts> task_types, roles, categories;
  std::vector<std::vector<Bubble>> top;

  explicit MetricReader(TableReader& t)
      : events(t.num<uint64_t>("event_count")),
        rs(t.num<uint32_t>("row_start")),
        re(t.num<uint32_t>("row_end")),
        start(t.num<int64_t>("start_ns")),
        end(t.num<int64_t>("end_ns")),
        wall(t.num<int64_t>("wall_ns")),
        busy(t.num<int64_t>("busy_union_ns")),
        kernel(t.num<int64_t>("kernel_sum_ns")),
        wait(t.num<int64_t>("wait_sum_ns")),
        cost(t.num<int64_t>("total_cost_ns")),
        underfeed(t.num<int64_t>("underfeed_ns")),
        bubble_total(t.num<int64_t>("internal_bubble_total_ns")),
        largest(t.num<int64_t>("largest_internal_bubble_ns")),
        ratio(t.num<double>("underfeed_ratio")),
        task_types(t.json<NameCounts>("task_type_counts", parse_counts)),
        roles(t.json<NameCounts>("role_counts", parse_counts)),
        categories(t.json<NameCounts>("category_counts", parse_counts)),
        top(t.json<std::vector<Bubble>>("top_bubbles", parse_bubbles)) {
    bubbles = t.num<uint32_t>("bubble_count");
    streams = t.num<uint32_t>("stream_count");
  }

  // Only after the table reader is ok (every vector has rows() entries).
  void get(size_t i, WindowMetrics* m) {
    m->event_count = events[i];
    m->row_start = rs[i];
    m->row_end = re[i];
    m->start_ns = start[i];
    m->end_ns = end[i];
    m->wall_ns = wall[i];
    m->busy_union_ns = busy[i];
    m->kernel_sum_ns = kernel[i];
    m->wait_sum_ns = wait[i];
    m->total_cost_ns = cost[i];
    m->underfeed_ns = underfeed[i];
    m->underfeed_ratio = ratio[i];
    m->internal_bubble_total_ns = bubble_total[i];
    m->largest_internal_bubble_ns = largest[i];
    m->bubble_count = bubbles[i];
    m->stream_count = streams[i];
    m->task_type_counts = std::move(task_types[i]);
    m->role_counts = std::move(roles[i]);
    m->category_counts = std::move(categories[i]);
    m->top_bubbles = std::move(top[i]);
  }
};

struct AnatomyReader {
  std::vector<uint8_t> empty;
  std::vector<uint32_t> rs, re;
  std::vector<int64_t> start, end, wall, busy, bubble;
  std::vector<uint64_t> events;

  AnatomyReader(TableReader& t, const std::string& w)
      : empty(t.num<uint8_t>(w + "_empty")),
        rs(t.num<uint32_t>(w + "_row_start")),
        re(t.num<uint32_t>(w + "_row_end")),
        start(t.num<int64_t>(w + "_start_ns")),
        end(t.num<int64_t>(w + "_end_ns")),
        wall(t.num<int64_t>(w + "_wall_ns")),
        busy(t.num<int64_t>(w + "_busy_ns")),
        bubble(t.num<int64_t>(w + "_bubble_ns")),
        events(t.num<uint64_t>(w + "_event_count")) {}

  void get(size_t i, AnatomyWindow* a) const {
    a->empty = empty[i] != 0;
    a->row_start = rs[i];
    a->row_end = re[i];
    a->start_ns = start[i];
    a->end_ns = end[i];
    a->wall_ns = wall[i];
    a->busy_ns = busy[i];
    a->bubble_ns = bubble[i];
    a->event_count = events[i];
  }
};

Status read_segments(const store::H5Reader& r, std::vector<model::SegmentSummary>* out) {
  TableReader t(r, "/summary/segments");
  auto seg = t.num<uint32_t>("segment");
  MetricReader m(t);
  auto tags = t.json<std::vector<std::string>>("anomaly_tags", parse_strings);
  auto attn = t.num<uint8_t>("has_attention");
  auto moe = t.num<uint8_t>("has_moe");
  auto comm = t.num<uint8_t>("has_communication");
  auto attn_events = t.num<uint64_t>("attention_event_count");
  auto moe_events = t.num<uint64_t>("moe_event_count");
  auto comm_events = t.num<uint64_t>("comm_event_count");
  auto kind = t.str("anatomy_kind");
  AnatomyReader head(t, "head"), main(t, "main"), tail(t, "tail");
  auto head_ratio = t.num<double>("head_ratio");
  auto main_ratio = t.num<double>("main_ratio");
  auto tail_ratio = t.num<double>("tail_ratio");
  auto bubble_ratio = t.num<double>("bubble_ratio");
  if (!t.ok()) return t.status();
  out->resize(t.rows());
  for (size_t i = 0; i < t.rows(); ++i) {
    auto& g = (*out)[i];
    g.segment = seg[i];
    m.get(i, &g.metrics);
    g.anomaly_tags = std::move(tags[i]);
    g.has_attention = attn[i] != 0;
    g.has_moe = moe[i] != 0;
    g.has_communication = comm[i] != 0;
    g.attention_event_count = attn_events[i];
    g.moe_event_count = moe_events[i];
    g.comm_event_count = comm_events[i];
    g.anatomy.anatomy_kind = std::move(kind[i]);
    head.get(i, &g.anatomy.head);
    main.get(i, &g.anatomy.main);
    tail.get(i, &g.anatomy.tail);
    g.anatomy.head_ratio = head_ratio[i];
    g.anatomy.main_ratio = main_ratio[i];
    g.anatomy.tail_ratio = tail_ratio[i];
    g.anatomy.bubble_ratio = bubble_ratio[i];
  }
  return {};
}

Status read_layers(const store::H5Reader& r, std::vector<model::LayerSummary>* out) {
  TableReader t(r, "/summary/layers");
  auto layer = t.num<uint32_t>("layer");
  MetricReader m(t);
  auto attn = t.num<uint8_t>("has_attention");
  auto moe = t.num<uint8_t>("has_moe");
  auto comm = t.num<uint8_t>("has_communication");
  if (!t.ok()) return t.status();
  out->resize(t.rows());
  for (size_t i = 0; i < t.rows(); ++i) {
    auto& l = (*out)[i];
    l.layer = layer[i];
    m.get(i, &l.metrics);
    l.has_attention = attn[i] != 0;
    l.has_moe = moe[i] != 0;
    l.has_communication = comm[i] != 0;
  }
  return {};
}

Status read_rank(const store::H5Reader& r, WindowMetrics* out) {
  TableReader t(r, "/summary/rank");
  if (t.ok() && t.rows() != 1) t.fail(std::to_string(t.rows()) + " rows, expected exactly 1");
  MetricReader m(t);
  if (!t.ok()) return t.status();
  m.get(0, out);
  return {};
}

Status read_blocks(const store::H5Reader& r, std::vector<model::BlockSummary>* out) {
  TableReader t(r, "/summary/blocks");
  auto block = t.num<uint32_t>("block");
  MetricReader m(t);
  auto op_types = t.json<NameCounts>("op_type_counts", parse_counts);
  auto dominant = t.str("dominant_op_type");
  auto comm_ns = t.num<int64_t>("comm_duration_ns");
  auto comm_share = t.num<double>("comm_share");
  auto signal = t.num<uint8_t>("pipeline_signal");
  auto pipeline = t.json<std::vector<double>>("pipeline_us", parse_doubles, /*blank_is_empty=*/true);
  auto stage = t.str("bound_stage");
  auto family = t.str("bound_family");
  auto core = t.str("dominant_core");
  auto top = t.json<std::vector<model::BlockSummary::TopOp>>("top_ops", parse_top_ops);
  auto attn = t.num<uint8_t>("has_attention");
  auto moe = t.num<uint8_t>("has_moe");
  auto comm = t.num<uint8_t>("has_communication");
  if (!t.ok()) return t.status();
  out->resize(t.rows());
  for (size_t i = 0; i < t.rows(); ++i) {
    auto& b = (*out)[i];
    b.block = block[i];
    m.get(i, &b.metrics);
    b.op_type_counts = std::move(op_types[i]);
    b.dominant_op_type = std::move(dominant[i]);
    b.comm_duration_ns = comm_ns[i];
    b.comm_share = comm_share[i];
    b.pipeline_signal = signal[i] != 0;
    b.pipeline_us = std::move(pipeline[i]);
    b.bound.bound_stage = std::move(stage[i]);
    b.bound.bound_family = std::move(family[i]);
    b.bound.dominant_core = std::move(core[i]);
    b.top_ops = std::move(top[i]);
    b.has_attention = attn[i] != 0;
    b.has_moe = moe[i] != 0;
    b.has_communication = comm[i] != 0;
  }
  return {};
}

Status read_operators(const store::H5Reader& r, std::vector<model::OperatorRow>* out) {
  TableReader t(r, "/summary/operators");
  auto name = t.str("name");
  auto task = t.str("task_type");
  auto roles = t.str("roles");
  auto cats = t.str("categories");
  auto calls = t.num<uint64_t>("call_count");
  auto dur = t.num<int64_t>("duration_sum_ns");
  auto wait = t.num<int64_t>("wait_sum_ns");
  auto streams = t.num<uint32_t>("stream_count");
  auto ranges = t.json<RowRanges>("row_ranges", parse_ranges);
  auto samples = t.json<std::vector<uint32_t>>("sample_rows", parse_indices);
  auto op_type = t.str("op_type");
  auto stage = t.str("bound_stage");
  auto family = t.str("bound_family");
  auto core = t.str("dominant_core");
  auto signal = t.num<uint8_t>("pipeline_signal");
  auto pipeline = t.json<std::vector<double>>("pipeline_us", parse_doubles, /*blank_is_empty=*/true);
  if (!t.ok()) return t.status();
  out->resize(t.rows());
  for (size_t i = 0; i < t.rows(); ++i) {
    auto& o = (*out)[i];
    o.name = std::move(name[i]);
    o.task_type = std::move(task[i]);
    o.roles = std::move(roles[i]);
    o.categories = std::move(cats[i]);
    o.call_count = calls[i];
    o.duration_sum_ns = dur[i];
    o.wait_sum_ns = wait[i];
    o.stream_count = streams[i];
    o.row_ranges = std::move(ranges[i]);
    o.sample_rows = std::move(samples[i]);
    o.op_type = std::move(op_type[i]);
    o.bound.bound_stage = std::move(stage[i]);
    o.bound.bound_family = std::move(family[i]);
    o.bound.dominant_core = std::move(core[i]);
    o.pipeline_signal = signal[i] != 0;
    o.pipeline_us = std::move(pipeline[i]);
  }
  return {};
}

Status read_hccl(const store::H5Reader& r, std::vector<model::HcclOpRow>* out) {
  TableReader t(r, "/summary/hccl");
  auto kind = t.str("hccl_op_kind");
  auto fused = t.num<uint8_t>("comm_aiv_fused");
  auto names = t.num<uint64_t>("name_count");
  auto calls = t.num<uint64_t>("call_count");
  auto dur = t.num<int64_t>("duration_sum_ns");
  auto wait = t.num<int64_t>("wait_sum_ns");
  auto avg = t.num<double>("duration_avg_us");
  auto mn = t.num<double>("duration_min_us");
  auto p50 = t.num<double>("duration_p50_us");
  auto p90 = t.num<double>("duration_p90_us");
  auto mx = t.num<double>("duration_max_us");
  auto ratio = t.num<double>("wait_ratio");
  if (!t.ok()) return t.status();
  out->resize(t.rows());
  for (size_t i = 0; i < t.rows(); ++i) {
    auto& h = (*out)[i];
    h.hccl_op_kind = std::move(kind[i]);
    h.comm_aiv_fused = fused[i] != 0;
    h.name_count = names[i];
    h.call_count = calls[i];
    h.duration_sum_ns = dur[i];
    h.wait_sum_ns = wait[i];
    h.duration_avg_us = avg[i];
    h.duration_min_us = mn[i];
    h.duration_p50_us = p50[i];
    h.duration_p90_us = p90[i];
    h.duration_max_us = mx[i];
    h.wait_ratio = ratio[i];
  }
  return {};
}

Status read_wait_anchors(const store::H5Reader& r, std::vector<model::WaitAnchorRow>* out) {
  TableReader t(r, "/summary/wait_anchors");
  auto op = t.num<uint32_t>("op");
  auto rank = t.num<uint32_t>("total_cost_avg_rank");
  auto ratio = t.num<double>("wait_ratio");
  auto risk = t.num<uint8_t>("is_false_hotspot_risk");
  if (!t.ok()) return t.status();
  out->resize(t.rows());
  for (size_t i = 0; i < t.rows(); ++i) (*out)[i] = model::WaitAnchorRow{op[i], rank[i], ratio[i], risk[i] != 0};
  return {};
}

Status read_aicpu(const store::H5Reader& r, std::vector<model::AicpuRow>* out) {
  TableReader t(r, "/summary/aicpu");
  auto name = t.str("name");
  auto calls = t.num<uint64_t>("call_count");
  auto dur = t.num<int64_t>("duration_sum_ns");
  auto overlap = t.num<int64_t>("overlap_with_ai_core_ns");
  auto masked = t.num<double>("masked_ratio");
  auto cls = t.str("classification");
  auto ranges = t.json<RowRanges>("row_ranges", parse_ranges);
  auto samples = t.json<std::vector<uint32_t>>("sample_rows", parse_indices);
  if (!t.ok()) return t.status();
  out->resize(t.rows());
  for (size_t i = 0; i < t.rows(); ++i) {
    auto& a = (*out)[i];
    a.name = std::move(name[i]);
    a.call_count = calls[i];
    a.duration_sum_ns = dur[i];
    a.overlap_with_ai_core_ns = overlap[i];
    a.masked_ratio = masked[i];
    a.classification = std::move(cls[i]);
    a.row_ranges = std::move(ranges[i]);
    a.sample_rows = std::move(samples[i]);
  }
  return {};
}

}  // namespace

std::string summary_inconsistency(const model::RankSummary& s) {
  for (size_t i = 0; i < s.wait_anchors.size(); ++i)
    if (s.wait_anchors[i].op >= s.operators.size())
      return at("wait anchor", i) + ": op " + std::to_string(s.wait_anchors[i].op) + " out of range (" +
             std::to_string(s.operators.size()) + " operators)";
  return {};
}

Status write_summary_tables(store::H5Writer& w, const model::RankSummary& s) {
  if (auto e = summary_inconsistency(s); !e.empty())
    return file_error(ErrorCode::kInternal, w.path().string(), "/summary", "inconsistent summary: " + e);
  ASCPROF_RETURN_IF_ERROR(w.create_group("/summary"));
  ASCPROF_RETURN_IF_ERROR(write_segments(w, s.segments));
  ASCPROF_RETURN_IF_ERROR(write_layers(w, s.layers));
  ASCPROF_RETURN_IF_ERROR(write_blocks(w, s.blocks));
  {
    store::TableWriter t(w, "/summary/rank", 1);
    metric_columns(t, 1, [&](size_t) -> const WindowMetrics& { return s.rank; });
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  ASCPROF_RETURN_IF_ERROR(write_operators(w, s.operators));
  ASCPROF_RETURN_IF_ERROR(write_hccl(w, s.hccl));
  ASCPROF_RETURN_IF_ERROR(write_wait_anchors(w, s.wait_anchors));
  return write_aicpu(w, s.aicpu);
}

Result<model::RankSummary> read_summary_tables(const std::string& h5_path) {
  ASCPROF_ASSIGN_OR_RETURN(store::H5Reader r, store::H5Reader::open(h5_path));
  if (r.kind("/summary") != store::ObjectKind::kGroup)
    return file_error(ErrorCode::kSchema, h5_path, "/summary", "missing group (summarize stage not written)");
  model::RankSummary s;
  ASCPROF_RETURN_IF_ERROR(read_rank(r, &s.rank));
  ASCPROF_RETURN_IF_ERROR(read_segments(r, &s.segments));
  ASCPROF_RETURN_IF_ERROR(read_layers(r, &s.layers));
  ASCPROF_RETURN_IF_ERROR(read_blocks(r, &s.blocks));
  ASCPROF_RETURN_IF_ERROR(read_operators(r, &s.operators));
  ASCPROF_RETURN_IF_ERROR(read_hccl(r, &s.hccl));
  ASCPROF_RETURN_IF_ERROR(read_wait_anchors(r, &s.wait_anchors));
  ASCPROF_RETURN_IF_ERROR(read_aicpu(r, &s.aicpu));
  if (auto e = summary_inconsistency(s); !e.empty())
    return file_error(ErrorCode::kSchema, h5_path, "/summary/wait_anchors", "inconsistent tables: " + e);
  return s;
}

}  // namespace ascprof::pipeline

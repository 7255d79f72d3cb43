// The JSON cell codecs of cells.hpp. Cells are written with JsonWriter's escaping and read with
// simdjson's DOM (a cell is small; one parser per thread is reused).
#include "ascprof/schema/cells.hpp"

#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "ascprof/common/json_writer.hpp"

namespace ascprof::schema {

namespace {

using simdjson::dom::element;

// The parsed cell, or nullptr when it is not JSON. The parser, its document and the padded copy
// simdjson reads from live per thread, so a cell costs no allocation once they have grown.
const element* parse_cell(std::string_view cell, element* doc) {
  thread_local simdjson::dom::parser parser;
  thread_local std::string padded;
  padded.assign(cell);
  padded.resize(cell.size() + simdjson::SIMDJSON_PADDING);
  return parser.parse(padded.data(), cell.size(), false).get(*doc) == simdjson::SUCCESS ? doc : nullptr;
}

bool get_u32(element e, uint32_t* out) {
  uint64_t v = 0;
  if (e.get_uint64().get(v) != simdjson::SUCCESS || v > UINT32_MAX) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

// The cell's top-level array, or the reason it is not one.
const char* array_of(std::string_view cell, simdjson::dom::array* arr) {
  element doc;
  if (!parse_cell(cell, &doc)) return "not JSON";
  if (doc.get_array().get(*arr) != simdjson::SUCCESS) return "not a JSON array";
  return nullptr;
}

}  // namespace

void render_strings(const std::vector<std::string>& v, std::string& out) {
  JsonWriter w(false);
  w.begin_array();
  for (const auto& s : v) w.value(s);
  w.end_array();
  out += w.take();
}

const char* parse_strings(std::string_view cell, std::vector<std::string>* out) {
  simdjson::dom::array arr;
  if (const char* why = array_of(cell, &arr)) return why;
  for (element e : arr) {
    std::string_view s;
    if (e.get_string().get(s) != simdjson::SUCCESS) return "JSON array element is not a string";
    out->emplace_back(s);
  }
  return nullptr;
}

void render_indices(const std::vector<uint32_t>& v, std::string& out) {
  out += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(v[i]);
  }
  out += ']';
}

const char* parse_indices(std::string_view cell, std::vector<uint32_t>* out) {
  simdjson::dom::array arr;
  if (const char* why = array_of(cell, &arr)) return why;
  for (element e : arr) {
    uint32_t v = 0;
    if (!get_u32(e, &v)) return "JSON array element is not a row index";
    out->push_back(v);
  }
  return nullptr;
}

void render_ranges(const RowRanges& v, std::string& out) {
  out += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += '[';
    out += std::to_string(v[i].first);
    out += ',';
    out += std::to_string(v[i].second);
    out += ']';
  }
  out += ']';
}

const char* parse_ranges(std::string_view cell, RowRanges* out) {
  simdjson::dom::array arr;
  if (const char* why = array_of(cell, &arr)) return why;
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

void render_counts(const model::NameCounts& v, std::string& out) {
  JsonWriter w(false);
  w.begin_object();
  for (const auto& [name, n] : v) w.kv(name.str(), n);
  w.end_object();
  out += w.take();
}

const char* parse_counts(std::string_view cell, model::NameCounts* out) {
  element doc;
  simdjson::dom::object obj;
  if (!parse_cell(cell, &doc)) return "not JSON";
  if (doc.get_object().get(obj) != simdjson::SUCCESS) return "not a JSON object";
  for (simdjson::dom::key_value_pair kv : obj) {
    uint64_t n = 0;
    if (kv.value.get_uint64().get(n) != simdjson::SUCCESS) return "JSON object value is not a count";
    out->emplace_back(model::CountName(kv.key), n);
  }
  return nullptr;
}

void render_bubbles(const std::vector<model::Bubble>& v, std::string& out) {
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
  out += w.take();
}

const char* parse_bubbles(std::string_view cell, std::vector<model::Bubble>* out) {
  simdjson::dom::array arr;
  if (const char* why = array_of(cell, &arr)) return why;
  for (element e : arr) {
    simdjson::dom::object o;
    model::Bubble b;
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

// Shortest round-trip form; integral values get ".0" so every reader sees a float (and -0 and
// values beyond 2^64 survive), non-finite values become null (JSON has no NaN).
void render_doubles(const std::vector<double>& v, std::string& out) {
  if (v.empty()) return;
  out += '[';
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
}

const char* parse_doubles(std::string_view cell, std::vector<double>* out) {
  if (cell.empty()) return nullptr;  // the empty list
  simdjson::dom::array arr;
  if (const char* why = array_of(cell, &arr)) return why;
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

void render_comma_ints(const std::vector<int64_t>& v, std::string& out) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(v[i]);
  }
}

const char* parse_comma_ints(std::string_view cell, std::vector<int64_t>* out) {
  while (!cell.empty()) {
    const size_t comma = cell.find(',');
    const std::string_view item = cell.substr(0, comma);
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size()) return "not a comma-separated list of integers";
    out->push_back(v);
    if (comma == std::string_view::npos) break;
    cell.remove_prefix(comma + 1);
    if (cell.empty()) return "not a comma-separated list of integers";
  }
  return nullptr;
}

void render_top_ops(const std::vector<model::BlockSummary::TopOp>& v, std::string& out) {
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
  out += w.take();
}

const char* parse_top_ops(std::string_view cell, std::vector<model::BlockSummary::TopOp>* out) {
  simdjson::dom::array arr;
  if (const char* why = array_of(cell, &arr)) return why;
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

}  // namespace ascprof::schema

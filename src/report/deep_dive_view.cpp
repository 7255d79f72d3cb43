#include "deep_dive_view.hpp"

#include <simdjson.h>

#include <charconv>

#include "ascprof/common/files.hpp"

namespace ascprof::report {

namespace fs = std::filesystem;

namespace {

// JSON scalars as text; numbers in to_chars shortest form (what JsonWriter writes).
std::string text_of(simdjson::dom::element e) {
  using simdjson::dom::element_type;
  char buf[64];
  switch (e.type()) {
    case element_type::STRING:
      return std::string(std::string_view(e));
    case element_type::INT64:
      return std::to_string(int64_t(e));
    case element_type::UINT64:
      return std::to_string(uint64_t(e));
    case element_type::DOUBLE: {
      const auto r = std::to_chars(buf, buf + sizeof buf, double(e));
      return std::string(buf, r.ptr);
    }
    case element_type::BOOL:
      return bool(e) ? "true" : "false";
    default:
      return "";
  }
}

std::string field(simdjson::dom::element obj, const char* key) {
  simdjson::dom::element v;
  return obj[key].get(v) == simdjson::SUCCESS ? text_of(v) : std::string();
}

std::vector<std::string> strings(simdjson::dom::element obj, const char* key) {
  std::vector<std::string> out;
  simdjson::dom::array arr;
  if (obj[key].get(arr) != simdjson::SUCCESS) return out;
  for (simdjson::dom::element v : arr) out.push_back(text_of(v));
  return out;
}

}  // namespace

std::string shift_decimal(std::string_view text, int places) {
  std::string_view s = text;
  const bool negative = !s.empty() && s.front() == '-';
  if (negative) s.remove_prefix(1);
  std::string digits;
  int point = -1;
  for (const char c : s) {
    if (c == '.' && point < 0) point = static_cast<int>(digits.size());
    else if (c >= '0' && c <= '9') digits += c;
    else return std::string(text);
  }
  if (digits.empty()) return std::string(text);
  if (point < 0) point = static_cast<int>(digits.size());
  point += places;
  if (point < 1) {
    digits.insert(0, static_cast<size_t>(1 - point), '0');
    point = 1;
  }
  if (point > static_cast<int>(digits.size())) digits.append(static_cast<size_t>(point) - digits.size(), '0');
  std::string whole = digits.substr(0, static_cast<size_t>(point));
  std::string frac = digits.substr(static_cast<size_t>(point));
  const size_t nz = whole.find_first_not_of('0');
  whole = nz == std::string::npos ? "0" : whole.substr(nz);
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  std::string out = negative && (whole != "0" || !frac.empty()) ? "-" : "";
  out += whole;
  if (!frac.empty()) out += "." + frac;
  return out;
}

Result<DeepDiveData> load_deep_dive(const fs::path& root_out) {
  DeepDiveData d;
  ASCPROF_ASSIGN_OR_RETURN(d.table, read_table(root_out / kDeepDiveCsv));
  d.csv_present = !d.table.header.empty();
  const fs::path json_path = root_out / kDeepDiveJson;
  std::error_code ec;
  if (!fs::exists(json_path, ec)) return d;
  auto text = read_file(json_path);
  if (!text.ok()) {
    d.json_error = text.status().to_string();
    return d;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (const auto err = parser.parse(*text).get(doc)) {
    d.json_error = json_path.filename().string() + ": " + simdjson::error_message(err);
    return d;
  }
  simdjson::dom::array rows;
  if (doc["rows"].get(rows) != simdjson::SUCCESS) {
    d.json_error = json_path.filename().string() + ": key rows missing or not an array";
    return d;
  }
  d.json_present = true;
  simdjson::dom::element chip;
  if (doc["chip"].get(chip) == simdjson::SUCCESS && chip.is_object()) {
    d.chip_name = field(chip, "name");
    d.chip_source = field(chip, "source");
    d.cube_cores = field(chip, "cube_cores");
    d.vector_cores = field(chip, "vector_cores");
    d.cube_tflops = field(chip, "cube_tflops");
    d.hbm_gbps = field(chip, "hbm_gbps");
    bool assumed = false;
    if (chip["assumed"].get(assumed) == simdjson::SUCCESS) d.chip_assumed = assumed ? 1 : 0;
  }
  simdjson::dom::element sel;
  if (doc["selection"].get(sel) == simdjson::SUCCESS && sel.is_object()) {
    d.coverage = field(sel, "coverage");
    d.min_operators = field(sel, "min_operators");
    d.max_operators = field(sel, "max_operators");
  }
  for (simdjson::dom::element row : rows) {
    if (!row.is_object()) continue;
    const std::string id = field(row, "deep_dive_id");
    simdjson::dom::array details;
    if (id.empty() || row["details"].get(details) != simdjson::SUCCESS) continue;
    auto& out = d.details[id];
    for (simdjson::dom::element x : details) {
      if (!x.is_object()) continue;
      DeepDiveDetail det;
      det.id = field(x, "id");
      det.title = field(x, "title");
      det.severity = field(x, "severity");
      det.inference = field(x, "inference");
      det.cause = field(x, "cause");
      det.suggestion = field(x, "suggestion");
      det.facts = strings(x, "facts");
      out.push_back(std::move(det));
    }
  }
  simdjson::dom::array host;
  if (doc["host_api"].get(host) == simdjson::SUCCESS)
    for (simdjson::dom::element h : host) {
      if (!h.is_object()) continue;
      d.host_api.push_back({field(h, "rank_id"), field(h, "level"), field(h, "api"), field(h, "time_us"),
                            field(h, "count"), field(h, "avg_us"), field(h, "share_of_span"),
                            field(h, "classification")});
    }
  return d;
}

}  // namespace ascprof::report

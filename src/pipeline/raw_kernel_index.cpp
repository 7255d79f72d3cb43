// raw_kernel_index.csv and normalized_event_index.csv fragments (reference-analysis.md §2.1, §2.5.9):
// one row per kernel in each, written in one streamed pass over the rank's kernel rows.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ascprof/analysis/normalize.hpp"
#include "ascprof/common/numbers.hpp"
#include "ascprof/common/csv_writer.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/pipeline/rank_job.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/common/stable_id.hpp"
#include "ascprof/layout/out_layout.hpp"
#include "ascprof/pipeline/summary_outputs.hpp"
#include "pipeline_columns.hpp"

namespace ascprof::pipeline {

namespace fs = std::filesystem;

namespace {

// A rank has 600k+ kernels (~150 MB of rows): text goes out in chunks of this size.
constexpr size_t kFlushBytes = 4u << 20;

void append_uint(std::string& out, uint64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// A text cell exactly as CsvRow::text writes it. Almost every kernel name and shape signature needs
// neither quoting, a formula guard nor a UTF-8 repair, so the common case appends the view as is and
// only the rare cell goes through CsvRow (the one source of those rules).
void append_text(std::string& out, std::string_view v) {
  const bool guard = !v.empty() && (v[0] == '=' || v[0] == '+' || v[0] == '-' || v[0] == '@' || v[0] == '\t' ||
                                    v[0] == '\r');
  const bool plain = std::none_of(v.begin(), v.end(), [](char c) {
    return c == ',' || c == '"' || c == '\r' || c == '\n' || c == '\0' || static_cast<unsigned char>(c) >= 0x80;
  });
  if (!guard && plain) {
    out += v;
    return;
  }
  CsvRow r;
  r.text(v);
  out += r.str();
}

// A row's stream_id cell as the reference writes it: the number; N/A when the capture has the column
// but the row has none (CANN writes N/A for communication rows); "unknown" without the column.
void append_stream(std::string& out, const model::KernelTable& k, size_t row) {
  if (row < k.stream_id.size() && k.stream_id[row] != model::kAbsentI32) append_uint(out, static_cast<uint64_t>(k.stream_id[row]));
  else out += k.header.has_stream_id ? "N/A" : "unknown";
}

std::string ascii_upper(std::string_view v) {
  std::string out(v);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

// A pipeline value in a JSON cell: up to 6 decimals (the reference rounds to 6), trailing zeros cut.
void append_json_number(std::string& out, double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, 6);
  std::string_view t(buf, static_cast<size_t>(r.ptr - buf));
  while (t.size() > 1 && t.back() == '0') t.remove_suffix(1);
  if (t.back() == '.') t.remove_suffix(1);
  out += t;
}

// ["a","b"] as one (quoted) CSV cell.
std::string json_list_cell(const std::vector<std::string>& names) {
  std::string json = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) json += ',';
    json += '"';
    json_escape_append(json, names[i]);
    json += '"';
  }
  json += ']';
  CsvRow r;
  r.json(json);
  return r.str();
}

}  // namespace

std::string root_profile_id(const std::string& root) { return stable_id("profile", {root}); }

EventRecords bubble_event_records(uint32_t ord, const std::string& rank_id, const model::RankSummary& sum,
                                  const model::KernelTable& k, const analysis::NormalizedKernels& norm,
                                  const StringPool& pool, const knowledge::Knowledge& kb) {
  EventRecords out;
  auto render = [&](uint32_t row) {
    if (row >= k.size() || out.count(row)) return;
    auto names = [](JsonWriter& w, const char* key, const std::vector<std::string>& v) {
      w.key(key);
      w.begin_array();
      for (const auto& x : v) w.value(x);
      w.end_array();
    };
    const uint32_t tx = row < norm.taxon.size() ? norm.taxon[row] : UINT32_MAX;
    JsonWriter w;
    w.begin_object();
    w.kv("accelerator_core", row < k.accelerator_core.size() ? ascii_upper(pool.view(k.accelerator_core[row])) : "");
    names(w, "categories", tx < norm.taxa.size() ? analysis::category_names(norm.taxa[tx].categories, kb.vocab)
                                                   : std::vector<std::string>{});
    w.key("duration_us");
    w.raw(us_text(k.dur_ns[row]));
    w.kv("event_id", "evt_" + std::to_string(ord) + "_" + std::to_string(row));
    w.kv("name", pool.view(k.name[row]));
    w.kv("rank_id", rank_id);
    names(w, "roles", tx < norm.taxa.size() ? analysis::role_names(norm.taxa[tx].roles, kb.vocab)
                                              : std::vector<std::string>{});
    w.kv("row_idx", uint64_t{row});
    w.key("shape_signature");
    if (row < norm.shape_signature.size() && norm.shape_signature[row] != 0) w.value(pool.view(norm.shape_signature[row]));
    else w.null();
    w.key("start_us");
    w.raw(us_text(k.start_ns[row]));
    std::string stream;
    append_stream(stream, k, row);
    w.kv("stream_id", stream);
    w.kv("task_type", ascii_upper(pool.view(k.type[row])));
    w.key("wait_us");
    w.raw(us_text(k.wait_ns[row]));
    w.end_object();
    out.emplace(row, w.take());
  };
  for (const auto& ss : sum.segments)
    for (size_t i = 0; i < ss.metrics.top_bubbles.size() && i < kEvidenceBubbles; ++i) {
      render(ss.metrics.top_bubbles[i].before_row);
      render(ss.metrics.top_bubbles[i].after_row);
    }
  return out;
}

Status write_raw_kernel_index_part(store::PartPackWriter& pack, uint32_t ord, const std::string& rank_id,
                                   const char* source_kind, const std::string& source_path,
                                   const std::string& profile_id, const model::KernelTable& k,
                                   const analysis::NormalizedKernels& norm, const StringPool& pool,
                                   const knowledge::Knowledge& kb) {
  const fs::path& out = pack.path();
  const size_t n = k.size();
  if (norm.taxon.size() != n || norm.shape_signature.size() != n || k.name.size() != n || k.type.size() != n ||
      k.dur_ns.size() != n || k.wait_ns.size() != n)
    return file_error(ErrorCode::kInternal, out.string(), "",
                      "normalized columns are not parallel to the " + std::to_string(n) + " kernel rows");
  // Per distinct (name, type, core): its roles and categories cells, rendered once (in the order of
  // each file: raw_kernel_index has roles first, normalized_event_index categories first).
  std::vector<std::string> taxon_cells(norm.taxa.size()), taxon_cells_categories_first(norm.taxa.size());
  for (size_t t = 0; t < norm.taxa.size(); ++t) {
    const auto& e = norm.taxa[t];
    const std::string roles = json_list_cell(analysis::role_names(e.roles, kb.vocab));
    const std::string categories = json_list_cell(analysis::category_names(e.categories, kb.vocab));
    taxon_cells[t] = roles + "," + categories + ",";
    taxon_cells_categories_first[t] = categories + "," + roles + ",";
  }
  const std::string evt_prefix = "evt_" + std::to_string(ord) + "_";
  std::string rank_source = ",";
  append_text(rank_source, rank_id);
  rank_source += ',';
  append_text(rank_source, stable_id("src", {rank_id, source_kind, source_path}));
  rank_source += ',';
  // normalized_event_index.csv: the same identity with the profile id after the event id
  std::string profile_rank_source = ",";
  append_text(profile_rank_source, profile_id);
  profile_rank_source += rank_source;
  // per op type its cell; per pipeline field its name and value column (absent: not in the JSON)
  std::vector<std::string> op_type_cells;
  for (const auto& name : kb.vocab.op_types()) {
    std::string cell;
    append_text(cell, name);
    op_type_cells.push_back(std::move(cell));
  }
  std::vector<std::pair<std::string, const std::vector<double>*>> pipe;
  for (size_t f = 0; f < kb.pipeline.fields().size() && f < norm.pipeline_metric.size(); ++f)
    if (const int m = norm.pipeline_metric[f]; m >= 0 && static_cast<size_t>(m) < k.metrics.size())
      // the key as it stands inside the CSV-quoted JSON cell: ""name"": (field names hold no quote)
      pipe.emplace_back("\"\"" + output_field_name(kb.pipeline.fields()[f].name) + "\"\":",
                        &k.metrics[static_cast<size_t>(m)].values);

  // task_type and accelerator_core cells upper-cased as the reference writes them (GATHERV2, the key
  // operator_summary joins on), rendered once per interned string rather than once per row
  std::unordered_map<StrId, std::string> upper_cells;
  auto upper_cell = [&](StrId id) -> const std::string& {
    auto [it, inserted] = upper_cells.try_emplace(id);
    if (inserted) append_text(it->second, ascii_upper(pool.view(id)));
    return it->second;
  };

  // The cells both tables open with: event_id, the table's identity cells (",[profile,]rank,source,"),
  // row_idx, the name and the upper-cased task type.
  auto identity = [&](std::string& line, size_t row, const std::string& identity_cells) {
    line += evt_prefix;
    append_uint(line, row);
    line += identity_cells;
    append_uint(line, row);
    line += ',';
    append_text(line, pool.view(k.name[row]));
    line += ',';
    line += upper_cell(k.type[row]);
    line += ',';
  };
  // The cells both tables share: start_us, (end_us,) duration_us, wait_us, the roles and categories
  // cells (in the table's order) and shape_signature.
  auto times_taxon_shape = [&](std::string& line, size_t row, bool with_end, const std::vector<std::string>& taxa) {
    append_us(line, k.start_ns[row]);
    line += ',';
    if (with_end) {
      append_us(line, k.start_ns[row] + std::max<int64_t>(0, k.dur_ns[row]));
      line += ',';
    }
    append_us(line, k.dur_ns[row]);
    line += ',';
    append_us(line, k.wait_ns[row]);
    line += ',';
    const uint32_t tx = norm.taxon[row];
    if (tx < taxa.size()) line += taxa[tx];
    else line += "[],[],";
    if (norm.shape_signature[row] != 0) append_text(line, pool.view(norm.shape_signature[row]));
  };

  // rows go to the pack's sections in ~4 MB pieces (each becomes a segment of the pack)
  const char* file = layout::kRawKernelIndexCsv;
  const char* events = layout::kNormalizedEventIndexCsv;
  pack.add(file, "");
  pack.add(events, "");
  uint64_t buf_rows = 0, ev_rows = 0;  // rows in each buffer
  const auto spill = [&pack](const char* section, std::string& text, uint64_t& rows) {
    pack.add(section, text, rows);
    text.clear();
    rows = 0;
  };
  std::string buf, ev;
  buf.reserve(kFlushBytes + (64u << 10));
  ev.reserve(kFlushBytes + (64u << 10));
  for (size_t row = 0; row < n; ++row) {
    // normalized_event_index: event_id, profile_id, rank_id, source_id, row_idx, name_raw, task_type
    // (upper-cased), accelerator_core (upper-cased), stream_id, start_us, end_us, duration_us, wait_us,
    // op_categories, op_roles, shape_signature, shape_features ({} as the reference writes it),
    // pipeline_us (the fields the capture has, each clamped at 0; N/A cells 0), op_type
    identity(ev, row, profile_rank_source);
    if (row < k.accelerator_core.size()) ev += upper_cell(k.accelerator_core[row]);
    ev += ',';
    append_stream(ev, k, row);
    ev += ',';
    times_taxon_shape(ev, row, true, taxon_cells_categories_first);
    ev += ",{},";
    // pipeline_us: a JSON object of numbers, so its CSV cell is the object quoted with its quotes
    // doubled; written straight into the row (no per-row cell object)
    ev += pipe.empty() ? "{" : "\"{";
    for (size_t i = 0; i < pipe.size(); ++i) {
      if (i) ev += ',';
      ev += pipe[i].first;
      const double v = row < pipe[i].second->size() ? (*pipe[i].second)[row] : 0.0;
      append_json_number(ev, std::isfinite(v) && v > 0 ? v : 0.0);
    }
    ev += pipe.empty() ? "}" : "}\"";
    ev += ',';
    if (row < norm.op_type.size() && norm.op_type[row] < op_type_cells.size()) ev += op_type_cells[norm.op_type[row]];
    ev += '\n';
    ++ev_rows;
    if (ev.size() >= kFlushBytes) spill(events, ev, ev_rows);

    identity(buf, row, rank_source);
    times_taxon_shape(buf, row, false, taxon_cells);
    buf += '\n';
    ++buf_rows;
    if (buf.size() >= kFlushBytes) spill(file, buf, buf_rows);
  }
  spill(file, buf, buf_rows);
  spill(events, ev, ev_rows);
  return {};
}

}  // namespace ascprof::pipeline

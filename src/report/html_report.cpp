// report/report.html: the root's tables as one self-contained interactive page (issue 5).
//
// Everything from the input reaches the page only as JSON inside <script type="application/json">,
// written through append_script_json_string; the page's script (html_assets.cpp) inserts input text
// with textContent only. The raw kernels of whole segments are embedded up to a budget; the whole
// capture is summarised as a per-rank/lane busy histogram, so the page size is bounded. A root with
// in-kernel MoE traces adds a section, its data and its script part; without them nothing is added.
#include "ascprof/report/html_report.hpp"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "ascprof/common/files.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/common/numbers.hpp"
#include "ascprof/report/moe_lanes.hpp"
#include "ascprof/report/moe_tables.hpp"
#include "ascprof/report/tables.hpp"
#include "ascprof/layout/out_layout.hpp"
#include "critical_path_view.hpp"

namespace ascprof::report {

// html_assets.cpp
extern const char* const kHtmlCss;
extern const char* const kHtmlJs;
extern const char* const kHtmlJsStart;
extern const char* const kHtmlMoeCss;
extern const char* const kHtmlMoeJs;

namespace fs = std::filesystem;

namespace {

// Timeline lanes; the page script has the same list (names, colours).
enum Lane : uint8_t { kAiCore = 0, kAiVector, kHccl, kAiCpu, kOther, kLaneCount };
constexpr const char* kLaneNames[kLaneCount] = {"AI_CORE", "AI_VECTOR", "HCCL", "AI_CPU", "OTHER"};

constexpr int64_t kNoValue = INT64_MIN;

// The written page is flushed to disk in chunks of this size, so a 30 MB page is never held twice.
constexpr size_t kFlushBytes = 4u << 20;

void append_json_str(std::string& out, std::string_view s) {
  out += '"';
  append_script_json_string(out, s);
  out += '"';
}

void append_int(std::string& out, int64_t v) { out += std::to_string(v); }

// A number for JSON: finite doubles with up to 10 significant digits, otherwise null.
void append_num(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  out += buf;
}

// Nanoseconds as µs with up to 3 decimals, trailing zeros dropped ("12.5", "3").
void append_us_short(std::string& out, int64_t ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  out += std::to_string(ns / 1000);
  int frac = static_cast<int>(ns % 1000);
  if (frac == 0) return;
  char d[4] = {char('0' + frac / 100), char('0' + frac / 10 % 10), char('0' + frac % 10), 0};
  int len = 3;
  while (len > 0 && d[len - 1] == '0') --len;
  out += '.';
  out.append(d, static_cast<size_t>(len));
}

// Interned strings for the page: kernel names, types, shapes repeat a lot.
class StringTable {
 public:
  StringTable() { id(""); }
  uint32_t id(std::string_view s) {
    key_.assign(s);
    auto it = ids_.find(key_);
    if (it != ids_.end()) return it->second;
    const auto v = static_cast<uint32_t>(strings_.size());
    strings_.push_back(key_);
    ids_.emplace(key_, v);
    return v;
  }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::string> strings_;
  std::string key_;  // reused lookup buffer: no allocation per lookup once warm
};

// A table kept as selected columns; time columns are rebased to the page's time origin.
struct KeptTable {
  std::vector<std::string> cols;
  std::vector<int> src;            // source column per kept column (-1: absent)
  std::vector<char> kind;          // 's' string, 'i' interned string, 'n' number, 't' epoch µs -> page µs
  std::vector<std::string> rows;   // each row already serialised as a JSON array
};

struct Segment {
  std::string id;
  int64_t row_start = 0, row_end = -1;
  uint64_t events = 0;
  double wall = 0;
  bool is_step = false;
  bool embedded = false;
};

struct RankInfo {
  std::string id;
  int64_t offset_ns = 0;                 // clock offset, subtracted from the rank's times
  int64_t start_ns = INT64_MAX, end_ns = INT64_MIN;  // corrected
  std::vector<Segment> segments;
  std::vector<std::pair<int64_t, int64_t>> embed_rows;  // sorted, disjoint row ranges embedded
  std::vector<std::pair<int64_t, int64_t>> embed_times;  // their corrected time spans
  std::string evt_prefix;                // "evt_<ord>_" when event ids follow the row numbers
  bool evt_prefix_known = false;
  // embedded events, in file (row) order
  std::vector<int64_t> ev_row, ev_start, ev_dur;
  std::vector<uint8_t> ev_lane;
  std::vector<int32_t> ev_op;
  // per extra column: string ids, or for µs columns (numeric_cols_) ns values (kNoValue: empty)
  std::vector<std::vector<uint32_t>> ev_cells;
  std::vector<std::vector<int64_t>> ev_nums;
};

// An optional JSON input of the page: false when the file is absent; an error when it exists but
// cannot be read or is not JSON. `doc` lives as long as `parser`.
Result<bool> load_optional_json(const fs::path& path, simdjson::dom::parser& parser, simdjson::dom::element* doc) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return false;
  auto text = read_file(path);
  if (!text.ok()) return text.status();
  if (parser.parse(*text).get(*doc) != simdjson::SUCCESS)
    return file_error(ErrorCode::kParse, path.string(), "", "not valid JSON");
  return true;
}

class HtmlBuilder {
 public:
  HtmlBuilder(fs::path root, const HtmlOptions& o) : root_(std::move(root)), opt_(o) {}
  Status build();
  Status write(const fs::path& out);

 private:
  int rank_index(std::string_view id);
  Status read_offsets();
  Status read_rank_summary();
  Status read_steps();
  Status read_anatomy();
  void choose_embedded();
  Status read_operators();
  Status read_kernels();
  Status read_layers_blocks(const char* file, uint64_t cap, KeptTable& t, const std::vector<std::pair<const char*, char>>& cols);
  Status read_bubbles();
  Status read_findings();
  Status read_deep_dive();
  Status read_moe_calls();
  void note_moe_kernel(int rank, int64_t row, std::string_view event_id, int64_t start, int64_t dur);
  Status read_moe();
  int64_t rel(int64_t corrected_ns) const { return corrected_ns - t0_ns_; }
  void emit_table(std::string& out, const KeptTable& t) const;

  fs::path root_;
  HtmlOptions opt_;
  std::vector<RankInfo> ranks_;
  std::unordered_map<std::string, int> rank_ids_;
  std::unordered_map<std::string, int64_t> offsets_ns_;
  KeptTable steps_, layers_, blocks_;
  std::unordered_map<std::string, std::pair<int, size_t>> segment_of_;  // segment id -> (rank, index)
  std::vector<std::string> anatomy_cols_;
  std::unordered_map<std::string, std::vector<std::string>> anatomy_;  // segment id -> cells
  // operator_summary: (name \x1f task_type) -> op index; ops_ rows [op_type, bound_family, dominant_core]
  std::unordered_map<std::string, int32_t> op_of_;
  std::vector<std::array<std::string, 3>> ops_;
  std::vector<uint8_t> op_lane_;
  std::vector<std::string> kernel_extra_cols_;
  std::vector<bool> numeric_cols_;  // "*_us" columns: numbers, not strings (mostly distinct values)
  std::vector<double> hist_;  // [rank][lane][bin] busy ns
  uint32_t bins_ = 0;
  int64_t bin_ns_ = 1;
  int64_t t0_ns_ = 0, t1_ns_ = 0;
  uint64_t total_events_ = 0, embedded_events_ = 0;
  std::vector<std::string> bubbles_;  // serialised [rank index, start, end, segment id, evidence id]
  uint64_t bubble_total_ = 0;
  std::string findings_json_ = "[]";
  std::string deep_dive_json_ = "null";  // operator_deep_dive.json, bounded (null: absent)
  std::string moe_json_;                 // the in-kernel MoE part (empty: the root has no traces)
  std::string critical_path_html_;       // the critical path section (empty: no aligned steps walked)
  std::optional<TextTable> moe_calls_;   // moe_trace_calls.csv (absent: the root has no traces)
  // The kernel rows traces attached to, (rank index, row) -> their event id and exact page start and
  // duration (ns, noted while the kernels are read): moe_trace_calls.csv's kernel_start_us went
  // through a double, which keeps only quarter-µs steps at epoch scale, and the lanes must sit
  // exactly on the kernel the page draws.
  struct MoeKernel {
    std::string event_id;
    int64_t start = kNoValue, dur = 0;
  };
  std::map<std::pair<int, int64_t>, MoeKernel> moe_kernels_;
  StringTable strings_;
};

int HtmlBuilder::rank_index(std::string_view id) {
  auto it = rank_ids_.find(std::string(id));
  if (it != rank_ids_.end()) return it->second;
  RankInfo r;
  r.id = std::string(id);
  auto off = offsets_ns_.find(r.id);
  if (off != offsets_ns_.end()) r.offset_ns = off->second;
  ranks_.push_back(std::move(r));
  const int v = static_cast<int>(ranks_.size() - 1);
  rank_ids_.emplace(std::string(id), v);
  return v;
}

Status HtmlBuilder::read_offsets() {
  const fs::path path = root_ / layout::kCrossRankManifestJson;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASCPROF_ASSIGN_OR_RETURN(const bool present, load_optional_json(path, parser, &doc));
  if (!present) return {};
  simdjson::dom::object offsets;
  if (doc["clock_offsets_us"].get(offsets) != simdjson::SUCCESS) return {};
  for (auto field : offsets) {
    double v = 0;
    if (field.value.get(v) == simdjson::SUCCESS && std::isfinite(v))
      offsets_ns_[std::string(field.key)] = us_double_to_ns(v);
  }
  return {};
}

Status HtmlBuilder::read_rank_summary() {
  int c_rank = -1, c_start = -1, c_end = -1;
  return for_each_row(root_ / layout::kRankSummaryCsv, [&](const std::vector<std::string_view>& f, bool header) {
    if (header) {
      for (size_t i = 0; i < f.size(); ++i) {
        if (f[i] == "rank_id") c_rank = int(i);
        if (f[i] == "start_us") c_start = int(i);
        if (f[i] == "end_us") c_end = int(i);
      }
      return c_rank >= 0;
    }
    RankInfo& r = ranks_[size_t(rank_index(f[size_t(c_rank)]))];
    if (c_start >= 0 && c_end >= 0) {
      auto s = parse_us_to_ns(f[size_t(c_start)]);
      auto e = parse_us_to_ns(f[size_t(c_end)]);
      if (s && e) {
        r.start_ns = std::min(r.start_ns, *s - r.offset_ns);
        r.end_ns = std::max(r.end_ns, *e - r.offset_ns);
      }
    }
    return true;
  });
}

// Reads a CSV keeping `cols` (name, kind); `keep(fields)` decides per row. Times ('t') are rebased
// per rank, so the table must have rank_id when it has time columns.
Status read_kept(const fs::path& path, KeptTable& t, const std::vector<std::pair<const char*, char>>& cols,
                 const std::function<bool(const std::vector<std::string_view>&, const KeptTable&)>& keep,
                 const std::function<int64_t(std::string_view rank)>& rank_base, StringTable& strings) {
  t.cols.clear();
  t.kind.clear();
  for (const auto& [name, kind] : cols) {
    t.cols.emplace_back(name);
    t.kind.push_back(kind);
  }
  int c_rank = -1;
  std::string row;
  return for_each_row(path, [&](const std::vector<std::string_view>& f, bool header) {
    if (header) {
      t.src.assign(cols.size(), -1);
      for (size_t i = 0; i < f.size(); ++i) {
        if (f[i] == "rank_id") c_rank = int(i);
        for (size_t k = 0; k < cols.size(); ++k)
          if (f[i] == cols[k].first) t.src[k] = int(i);
      }
      return true;
    }
    if (!keep(f, t)) return true;
    const std::string_view rank = c_rank >= 0 && size_t(c_rank) < f.size() ? f[size_t(c_rank)] : std::string_view();
    row.assign("[");
    for (size_t k = 0; k < cols.size(); ++k) {
      if (k) row += ',';
      const int s = t.src[k];
      const std::string_view cell = s >= 0 && size_t(s) < f.size() ? f[size_t(s)] : std::string_view();
      if (t.kind[k] == 't') {
        auto ns = parse_us_to_ns(cell);
        if (ns) append_us_short(row, *ns - rank_base(rank));
        else row += "null";
      } else if (t.kind[k] == 'n') {
        auto v = parse_double(cell);
        if (v) append_num(row, *v);
        else row += "null";
      } else if (t.kind[k] == 'i') {
        append_int(row, strings.id(cell));
      } else {
        append_json_str(row, cell);
      }
    }
    row += ']';
    t.rows.push_back(row);
    return true;
  });
}

Status HtmlBuilder::read_steps() {
  const std::vector<std::pair<const char*, char>> cols = {
      {"segment_id", 's'}, {"rank_id", 'i'}, {"segment_type", 'i'}, {"complete", 'i'},
      {"step_family", 'i'}, {"row_start", 'n'}, {"row_end", 'n'}, {"main_layer_count", 'n'},
      {"speculative_layer_count", 'n'}, {"event_count", 'n'}, {"start_us", 't'}, {"end_us", 't'},
      {"wall_ms", 'n'}, {"busy_union_ms", 'n'}, {"kernel_sum_ms", 'n'}, {"underfeed_ms", 'n'},
      {"underfeed_ratio", 'n'}, {"internal_bubble_total_ms", 'n'}, {"largest_internal_bubble_ms", 'n'},
      {"bubble_count", 'n'}, {"stream_count", 'n'}, {"anomaly_tags", 'i'}, {"step_class_id", 'i'},
      {"cluster_id", 'i'}, {"step_source", 'i'}, {"declared_step", 's'}, {"phase", 'i'}};
  // The per-rank segment list is built while the rows are kept.
  int c_seg = -1, c_rank = -1, c_type = -1, c_rs = -1, c_re = -1, c_ev = -1, c_wall = -1, c_s = -1, c_e = -1;
  auto keep = [&](const std::vector<std::string_view>& f, const KeptTable&) {
    auto at = [&](int c) { return c >= 0 && size_t(c) < f.size() ? f[size_t(c)] : std::string_view(); };
    if (c_rank < 0) return false;
    const int ri = rank_index(at(c_rank));
    RankInfo& r = ranks_[size_t(ri)];
    Segment s;
    s.id = std::string(at(c_seg));
    s.row_start = parse_int64(at(c_rs)).value_or(0);
    s.row_end = parse_int64(at(c_re)).value_or(s.row_start - 1);
    s.events = parse_int64(at(c_ev)).has_value() ? uint64_t(std::max<int64_t>(0, *parse_int64(at(c_ev))))
                                                  : uint64_t(std::max<int64_t>(0, s.row_end - s.row_start + 1));
    s.wall = parse_double(at(c_wall)).value_or(0);
    s.is_step = at(c_type) == "step";
    auto st = parse_us_to_ns(at(c_s));
    auto en = parse_us_to_ns(at(c_e));
    if (st && en) {
      r.start_ns = std::min(r.start_ns, *st - r.offset_ns);
      r.end_ns = std::max(r.end_ns, *en - r.offset_ns);
    }
    segment_of_[s.id] = {ri, r.segments.size()};
    r.segments.push_back(std::move(s));
    return true;
  };
  // Column positions for the segment list: a first look at the header.
  ASCPROF_RETURN_IF_ERROR(for_each_row(root_ / layout::kStepSummaryCsv, [&](const std::vector<std::string_view>& f, bool) {
    for (size_t i = 0; i < f.size(); ++i) {
      const std::string_view n = f[i];
      if (n == "segment_id") c_seg = int(i);
      else if (n == "rank_id") c_rank = int(i);
      else if (n == "segment_type") c_type = int(i);
      else if (n == "row_start") c_rs = int(i);
      else if (n == "row_end") c_re = int(i);
      else if (n == "event_count") c_ev = int(i);
      else if (n == "wall_ms") c_wall = int(i);
      else if (n == "start_us") c_s = int(i);
      else if (n == "end_us") c_e = int(i);
    }
    return false;
  }));
  return read_kept(root_ / layout::kStepSummaryCsv, steps_, cols, keep,
                   [this](std::string_view rank) { return ranks_[size_t(rank_index(rank))].offset_ns + t0_ns_; },
                   strings_);
}

Status HtmlBuilder::read_anatomy() {
  static const char* kCols[] = {"anatomy_kind", "layer_count", "step_bubble_ms", "head_wall_ms", "head_busy_ms",
                                "head_event_count", "main_wall_ms", "main_busy_ms", "main_event_count",
                                "tail_wall_ms", "tail_busy_ms", "tail_event_count", "head_ratio", "main_ratio",
                                "tail_ratio", "bubble_ratio"};
  for (const char* c : kCols) anatomy_cols_.emplace_back(c);
  std::vector<int> src;
  int c_seg = -1;
  return for_each_row(root_ / layout::kStepAnatomyCsv, [&](const std::vector<std::string_view>& f, bool header) {
    if (header) {
      src.assign(anatomy_cols_.size(), -1);
      for (size_t i = 0; i < f.size(); ++i) {
        if (f[i] == "segment_id") c_seg = int(i);
        for (size_t k = 0; k < anatomy_cols_.size(); ++k)
          if (f[i] == anatomy_cols_[k]) src[k] = int(i);
      }
      return c_seg >= 0;
    }
    std::vector<std::string> cells;
    for (int s : src) cells.emplace_back(s >= 0 && size_t(s) < f.size() ? f[size_t(s)] : std::string_view());
    anatomy_[std::string(f[size_t(c_seg)])] = std::move(cells);
    return true;
  });
}

// Whole segments, so a step in the inspector is either complete or absent: each rank's heaviest
// step, then its first, then the others round-robin across ranks while the budget lasts.
void HtmlBuilder::choose_embedded() {
  uint64_t left = opt_.max_kernel_events;
  auto take = [&](RankInfo& r, Segment& s) {
    if (s.embedded || s.events > left || s.row_end < s.row_start) return;
    s.embedded = true;
    left -= s.events;
    r.embed_rows.emplace_back(s.row_start, s.row_end);
  };
  for (RankInfo& r : ranks_) {
    Segment* heavy = nullptr;
    for (Segment& s : r.segments)
      if (s.is_step && (heavy == nullptr || s.wall > heavy->wall)) heavy = &s;
    if (heavy) take(r, *heavy);
  }
  for (RankInfo& r : ranks_)
    for (Segment& s : r.segments)
      if (s.is_step) {
        take(r, s);
        break;
      }
  size_t most = 0;
  for (const RankInfo& r : ranks_) most = std::max(most, r.segments.size());
  for (size_t i = 0; i < most && left > 0; ++i)
    for (RankInfo& r : ranks_)
      if (i < r.segments.size()) take(r, r.segments[i]);
  // A rank whose steps are each larger than the budget still gets the start of its heaviest one
  // (beside its small head or tail windows, if those fitted).
  const uint64_t share = ranks_.empty() ? 0 : opt_.max_kernel_events / ranks_.size();
  for (RankInfo& r : ranks_) {
    const bool has_step = std::any_of(r.segments.begin(), r.segments.end(),
                                      [](const Segment& s) { return s.is_step && s.embedded; });
    if (has_step || left == 0 || r.segments.empty()) continue;
    const Segment* heavy = &r.segments[0];
    for (const Segment& s : r.segments)
      if (s.wall > heavy->wall) heavy = &s;
    const uint64_t n = std::min(left, std::max<uint64_t>(share, 1));
    r.embed_rows.emplace_back(heavy->row_start, std::min(heavy->row_end, heavy->row_start + int64_t(n) - 1));
    left -= n;
  }
  for (RankInfo& r : ranks_) std::sort(r.embed_rows.begin(), r.embed_rows.end());
}

// operator_summary.csv writes the type upper-cased, raw_kernel_index.csv as in the source row.
void op_key(std::string& key, std::string_view name, std::string_view type) {
  key.assign(name);
  key += '\x1f';
  for (char c : type) key += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
}

Status HtmlBuilder::read_operators() {
  int c_name = -1, c_type = -1, c_op = -1, c_bf = -1, c_core = -1;
  std::string key;
  return for_each_row(root_ / layout::kOperatorSummaryCsv, [&](const std::vector<std::string_view>& f, bool header) {
    auto at = [&](int c) { return c >= 0 && size_t(c) < f.size() ? f[size_t(c)] : std::string_view(); };
    if (header) {
      for (size_t i = 0; i < f.size(); ++i) {
        if (f[i] == "name") c_name = int(i);
        else if (f[i] == "task_type") c_type = int(i);
        else if (f[i] == "op_type") c_op = int(i);
        else if (f[i] == "bound_family") c_bf = int(i);
        else if (f[i] == "dominant_core") c_core = int(i);
      }
      return c_name >= 0;
    }
    op_key(key, at(c_name), at(c_type));
    if (op_of_.count(key)) return true;
    op_of_.emplace(key, int32_t(ops_.size()));
    ops_.push_back({std::string(at(c_op)), std::string(at(c_bf)), std::string(at(c_core))});
    const std::string_view op = at(c_op);
    uint8_t lane = kOther;
    if (op == "communication") lane = kHccl;
    else if (op == "aicpu") lane = kAiCpu;
    else if (op == "aic" || op == "mix_cv" || op == "mix_aic") lane = kAiCore;
    else if (op == "aiv" || op == "mix_aiv" || op == "mix_comm_aiv") lane = kAiVector;
    op_lane_.push_back(lane);
    return true;
  });
}

bool contains_ci(std::string_view hay, std::string_view needle) {
  if (needle.size() > hay.size()) return false;
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && std::toupper(static_cast<unsigned char>(hay[i + k])) == needle[k]) ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

// Lane of a kernel: the accelerator core when the table carries it, else the operator's op_type,
// else its role/type text (communication and AI CPU are recognisable from those alone).
uint8_t lane_of(std::string_view core, int32_t op, const std::vector<uint8_t>& op_lane, std::string_view roles,
                std::string_view type) {
  if (!core.empty()) {
    if (contains_ci(core, "AI_CPU")) return kAiCpu;
    if (contains_ci(core, "COMMUNICATION") || contains_ci(core, "HCCL")) return kHccl;
    if (contains_ci(core, "VECTOR") || contains_ci(core, "AIV")) return kAiVector;
    if (contains_ci(core, "AI_CORE") || contains_ci(core, "AIC")) return kAiCore;
  }
  if (op >= 0 && op_lane[size_t(op)] != kOther) return op_lane[size_t(op)];
  if (contains_ci(roles, "COMMUNICATION") || contains_ci(type, "HCOM") || contains_ci(type, "HCCL")) return kHccl;
  if (contains_ci(type, "AI_CPU") || contains_ci(type, "AICPU")) return kAiCpu;
  return kOther;
}

Status HtmlBuilder::read_kernels() {
  int c_rank = -1, c_row = -1, c_start = -1, c_dur = -1, c_name = -1, c_type = -1, c_roles = -1, c_core = -1,
      c_evt = -1;
  std::vector<int> extra;  // source columns stored per embedded event
  int last_rank = -1;
  std::string key;
  std::string expect_id;
  const fs::path path = root_ / layout::kRawKernelIndexCsv;
  return for_each_row(path, [&](const std::vector<std::string_view>& f, bool header) {
    auto at = [&](int c) { return c >= 0 && size_t(c) < f.size() ? f[size_t(c)] : std::string_view(); };
    if (header) {
      for (size_t i = 0; i < f.size(); ++i) {
        const std::string_view n = f[i];
        if (n == "rank_id") c_rank = int(i);
        else if (n == "row_idx") c_row = int(i);
        else if (n == "start_us") c_start = int(i);
        else if (n == "duration_us") c_dur = int(i);
        else {
          if (n == "name") c_name = int(i);
          else if (n == "task_type") c_type = int(i);
          else if (n == "roles") c_roles = int(i);
          else if (n == "accelerator_core") c_core = int(i);
          else if (n == "event_id") c_evt = int(i);
          extra.push_back(int(i));
          kernel_extra_cols_.emplace_back(n);
          numeric_cols_.push_back(n.size() > 3 && n.substr(n.size() - 3) == "_us");
        }
      }
      return c_rank >= 0 && c_start >= 0 && c_dur >= 0;
    }
    const auto start = parse_us_to_ns(at(c_start));
    const auto dur = parse_us_to_ns(at(c_dur));
    if (!start || !dur) return true;  // a malformed row: not drawable, skipped
    ++total_events_;
    // a rank's rows are contiguous: look the rank up only when it changes
    if (last_rank < 0 || at(c_rank) != ranks_[size_t(last_rank)].id) last_rank = rank_index(at(c_rank));
    const int ri = last_rank;
    RankInfo& r = ranks_[size_t(ri)];
    op_key(key, at(c_name), at(c_type));
    auto op_it = op_of_.find(key);
    const int32_t op = op_it == op_of_.end() ? -1 : op_it->second;
    const uint8_t lane = lane_of(at(c_core), op, op_lane_, at(c_roles), at(c_type));
    const int64_t s = rel(*start - r.offset_ns);
    const int64_t e = s + std::max<int64_t>(*dur, 0);
    // busy time per bin: an event adds its overlap with each bin it spans
    if (static_cast<size_t>(ri + 1) * kLaneCount * bins_ <= hist_.size()) {
      double* h = &hist_[(size_t(ri) * kLaneCount + lane) * bins_];
      const int64_t b0 = std::clamp<int64_t>(s / bin_ns_, 0, bins_ - 1);
      const int64_t b1 = std::clamp<int64_t>(e / bin_ns_, 0, bins_ - 1);
      for (int64_t b = b0; b <= b1; ++b) {
        const int64_t lo = std::max(s, b * bin_ns_), hi = std::min(e, (b + 1) * bin_ns_);
        if (hi > lo) h[b] += double(hi - lo);
      }
    }
    // rows of a rank come in ascending order, so ev_row stays sorted (binary-searched later)
    const int64_t row = parse_int64(at(c_row)).value_or(-1);
    if (!moe_kernels_.empty()) note_moe_kernel(ri, row, at(c_evt), s, e - s);
    auto it = std::upper_bound(r.embed_rows.begin(), r.embed_rows.end(), std::make_pair(row, INT64_MAX));
    if (it == r.embed_rows.begin() || (it - 1)->second < row) return true;
    ++embedded_events_;
    r.ev_row.push_back(row);
    r.ev_start.push_back(s);
    r.ev_dur.push_back(e - s);
    r.ev_lane.push_back(lane);
    r.ev_op.push_back(op);
    r.ev_cells.resize(extra.size());
    r.ev_nums.resize(extra.size());
    // event ids are "evt_<ordinal>_<row>": stored once per rank, and per event only when different
    const std::string_view evt = at(c_evt);
    if (!r.evt_prefix_known && c_evt >= 0) {
      const std::string tail = "_" + std::to_string(row);
      if (evt.size() > tail.size() && evt.substr(evt.size() - tail.size()) == tail)
        r.evt_prefix = std::string(evt.substr(0, evt.size() - tail.size() + 1));
      r.evt_prefix_known = true;
    }
    for (size_t k = 0; k < extra.size(); ++k) {
      std::string_view cell = at(extra[k]);
      if (extra[k] == c_evt && !r.evt_prefix.empty()) {
        expect_id.assign(r.evt_prefix);
        expect_id += std::to_string(row);
        if (cell == expect_id) cell = {};
      }
      if (numeric_cols_[k]) r.ev_nums[k].push_back(parse_us_to_ns(cell).value_or(kNoValue));
      else r.ev_cells[k].push_back(strings_.id(cell));
    }
    return true;
  });
}

Status HtmlBuilder::read_layers_blocks(const char* file, uint64_t cap, KeptTable& t,
                                       const std::vector<std::pair<const char*, char>>& cols) {
  int c_seg = -1;
  bool looked = false;
  uint64_t other = 0;
  return read_kept(
      root_ / file, t, cols,
      [&](const std::vector<std::string_view>& f, const KeptTable&) {
        if (!looked) {
          looked = true;
          for (size_t k = 0; k < cols.size(); ++k)
            if (std::strcmp(cols[k].first, "segment_id") == 0) c_seg = t.src[k];
        }
        if (t.rows.size() >= cap) return false;
        // rows of embedded segments always (their operator cards exist); others while half the cap lasts
        auto it = c_seg >= 0 && size_t(c_seg) < f.size() ? segment_of_.find(std::string(f[size_t(c_seg)]))
                                                         : segment_of_.end();
        if (it != segment_of_.end() && ranks_[size_t(it->second.first)].segments[it->second.second].embedded)
          return true;
        return ++other <= cap / 2;
      },
      [this](std::string_view rank) { return ranks_[size_t(rank_index(rank))].offset_ns + t0_ns_; }, strings_);
}

Status HtmlBuilder::read_bubbles() {
  const fs::path path = root_ / layout::kBubbleWindowsJsonl;
  std::error_code ec;
  if (!fs::exists(path, ec)) return {};
  auto file = MappedFile::open(path);
  if (!file.ok()) return file.status();
  // The longest windows are kept: a min-heap on duration of at most max_bubbles entries.
  using Item = std::pair<double, std::string>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
  simdjson::dom::parser parser;
  const std::string_view data = file->data();
  size_t pos = 0, line = 0;
  while (pos < data.size()) {
    size_t nl = data.find('\n', pos);
    if (nl == std::string_view::npos) nl = data.size();
    const std::string_view text = trim(data.substr(pos, nl - pos));
    pos = nl + 1;
    ++line;
    if (text.empty()) continue;
    simdjson::dom::element doc;
    if (parser.parse(text.data(), text.size()).get(doc) != simdjson::SUCCESS)
      return file_error(ErrorCode::kParse, path.string(), "line " + std::to_string(line), "not valid JSON");
    std::string_view rank, seg, evd;
    double s = 0, e = 0;
    if (doc["rank_id"].get(rank) != simdjson::SUCCESS || doc["start_us"].get(s) != simdjson::SUCCESS ||
        doc["end_us"].get(e) != simdjson::SUCCESS)
      continue;
    // optional fields: absent ones stay empty
    if (doc["segment_id"].get(seg) != simdjson::SUCCESS) seg = {};
    if (doc["evidence_id"].get(evd) != simdjson::SUCCESS) evd = {};
    ++bubble_total_;
    const int ri = rank_index(rank);
    const RankInfo& r = ranks_[size_t(ri)];
    std::string item = "[" + std::to_string(ri) + ",";
    append_us_short(item, rel(us_double_to_ns(s) - r.offset_ns));
    item += ',';
    append_us_short(item, rel(us_double_to_ns(e) - r.offset_ns));
    item += ',';
    append_json_str(item, seg);
    item += ',';
    append_json_str(item, evd);
    item += ']';
    heap.emplace(e - s, std::move(item));
    if (heap.size() > opt_.max_bubbles) heap.pop();
  }
  while (!heap.empty()) {
    bubbles_.push_back(heap.top().second);
    heap.pop();
  }
  return {};
}

// Any JSON value re-serialised with script-safe strings (findings carry free text and metrics).
void append_element(std::string& out, simdjson::dom::element e) {
  using simdjson::dom::element_type;
  switch (e.type()) {
    case element_type::OBJECT: {
      out += '{';
      bool first = true;
      for (auto field : simdjson::dom::object(e)) {
        if (!first) out += ',';
        first = false;
        append_json_str(out, field.key);
        out += ':';
        append_element(out, field.value);
      }
      out += '}';
      break;
    }
    case element_type::ARRAY: {
      out += '[';
      bool first = true;
      for (auto v : simdjson::dom::array(e)) {
        if (!first) out += ',';
        first = false;
        append_element(out, v);
      }
      out += ']';
      break;
    }
    case element_type::STRING:
      append_json_str(out, std::string_view(e));
      break;
    case element_type::INT64:
      append_int(out, int64_t(e));
      break;
    case element_type::UINT64:
      out += std::to_string(uint64_t(e));
      break;
    case element_type::DOUBLE:
      append_num(out, double(e));
      break;
    case element_type::BOOL:
      out += bool(e) ? "true" : "false";
      break;
    default:
      out += "null";
  }
}

Status HtmlBuilder::read_findings() {
  const fs::path path = root_ / layout::kDiagnosisFindingsJson;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASCPROF_ASSIGN_OR_RETURN(const bool present, load_optional_json(path, parser, &doc));
  if (!present) return {};
  simdjson::dom::element arr;
  if (doc["diagnosis_findings"].get(arr) != simdjson::SUCCESS || !arr.is_array())
    return file_error(ErrorCode::kSchema, path.string(), "key diagnosis_findings", "missing or not an array");
  findings_json_.clear();
  append_element(findings_json_, arr);
  return {};
}

// The deep dive's root rows whole, each rank's first kDeepDiveRankRows rows (hot order) while
// kDeepDiveRankBudget lasts, and the first kDeepDiveHostApi host API entries: the page stays bounded
// however many ranks the root has; the CSV and JSON hold every row.
constexpr uint64_t kDeepDiveRootRows = 1000, kDeepDiveRankRows = 5, kDeepDiveRankBudget = 5000, kDeepDiveHostApi = 2000;

Status HtmlBuilder::read_deep_dive() {
  const fs::path path = root_ / layout::kOperatorDeepDiveJson;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASCPROF_ASSIGN_OR_RETURN(const bool present, load_optional_json(path, parser, &doc));
  if (!present) return {};
  simdjson::dom::array rows;
  if (doc["rows"].get(rows) != simdjson::SUCCESS)
    return file_error(ErrorCode::kSchema, path.string(), "key rows", "missing or not an array");
  std::string& out = deep_dive_json_;
  out = "{";
  for (const char* key : {"schema", "chip", "selection"}) {
    simdjson::dom::element v;
    append_json_str(out, key);
    out += ':';
    if (doc[key].get(v) == simdjson::SUCCESS) append_element(out, v);
    else out += "null";
    out += ',';
  }
  out += "\"rows\":[";
  uint64_t root_total = 0, root_kept = 0, rank_total = 0, rank_kept = 0;
  std::unordered_map<std::string, uint64_t> per_rank;
  bool first = true;
  for (simdjson::dom::element row : rows) {
    std::string_view scope, rank;
    if (row["scope"].get(scope) != simdjson::SUCCESS) scope = {};
    bool keep = false;
    if (scope == "rank") {
      ++rank_total;
      if (row["rank_id"].get(rank) != simdjson::SUCCESS) rank = {};
      keep = rank_kept < kDeepDiveRankBudget && ++per_rank[std::string(rank)] <= kDeepDiveRankRows;
      rank_kept += keep;
    } else {
      ++root_total;
      keep = root_kept < kDeepDiveRootRows;
      root_kept += keep;
    }
    if (!keep) continue;
    if (!first) out += ",\n";
    first = false;
    append_element(out, row);
  }
  out += "],\"host_api\":[";
  uint64_t host_total = 0;
  simdjson::dom::array host;
  if (doc["host_api"].get(host) == simdjson::SUCCESS)
    for (simdjson::dom::element h : host) {
      if (host_total++ >= kDeepDiveHostApi) continue;
      if (host_total > 1) out += ',';
      append_element(out, h);
    }
  out += "],\"counts\":{\"root_rows\":" + std::to_string(root_total) + ",\"root_rows_embedded\":" +
         std::to_string(root_kept) + ",\"rank_rows\":" + std::to_string(rank_total) +
         ",\"rank_rows_embedded\":" + std::to_string(rank_kept) + ",\"host_api\":" + std::to_string(host_total) +
         ",\"host_api_embedded\":" + std::to_string(std::min(host_total, kDeepDiveHostApi)) + "}}";
  return {};
}

// In-kernel MoE (issue 20): the section's tables, bounded like report.md's (the first calls, the
// longest phases, the worst cores), and each attached call's intervals for the nested lanes.
constexpr size_t kMoeCallRows = 1000, kMoePhaseRows = 200, kMoeWorstCores = 10;

using MoeCols = std::vector<std::pair<const char*, bool>>;  // column, numeric

void append_moe_cells(std::string& out, const TextTable& t, size_t row, const MoeCols& cols) {
  for (size_t k = 0; k < cols.size(); ++k) {
    if (k) out += ',';
    if (cols[k].second) append_num(out, t.number(row, cols[k].first));
    else append_json_str(out, t.cell(row, cols[k].first));
  }
}

void append_moe_table(std::string& out, const TextTable& t, const std::vector<size_t>& rows, const MoeCols& cols) {
  out += "{\"cols\":[";
  for (size_t k = 0; k < cols.size(); ++k) {
    if (k) out += ',';
    append_json_str(out, cols[k].first);
  }
  out += "],\"rows\":[";
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i) out += ",\n";
    out += '[';
    append_moe_cells(out, t, rows[i], cols);
    out += ']';
  }
  out += "]}";
}

void append_str_array(std::string& out, const std::vector<std::string>& v) {
  out += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    append_json_str(out, v[i]);
  }
  out += ']';
}

// One attached call for the nested lanes: its kernel row on the page's clock (`start_ns`,
// `dur_ns`), labels, roles and core groups, its cores as [core_type, core_id] pairs, and its
// intervals flat as [core, label, index, start, end] with times in µs from the kernel row's start.
void append_moe_call(std::string& out, const MoeCallLanes& c, std::string_view call, int64_t start_ns, int64_t dur_ns,
                     double span_us) {
  out += "{\"rank\":";
  append_json_str(out, c.rank_id);
  out += ",\"call\":";
  append_json_str(out, call);
  out += ",\"event_id\":";
  append_json_str(out, c.kernel_event_id);
  out += ",\"kernel\":";
  append_json_str(out, c.kernel_name);
  out += ",\"s\":";
  append_us_short(out, start_ns);
  out += ",\"d\":";
  append_us_short(out, dur_ns);
  out += ",\"span\":";
  append_num(out, span_us);
  out += c.t0_aligned ? ",\"t0_aligned\":true,\"groups\":" : ",\"t0_aligned\":false,\"groups\":";
  append_str_array(out, c.core_groups);
  out += ",\"labels\":";
  append_str_array(out, c.labels);
  out += ",\"roles\":";
  append_str_array(out, c.roles);
  std::vector<std::pair<uint32_t, uint32_t>> cores;
  for (const MoeLaneInterval& iv : c.intervals) cores.emplace_back(iv.core_type, iv.core_id);
  std::sort(cores.begin(), cores.end());
  cores.erase(std::unique(cores.begin(), cores.end()), cores.end());
  out += ",\"cores\":[";
  for (size_t i = 0; i < cores.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(cores[i].first) + ',' + std::to_string(cores[i].second);
  }
  out += "],\"iv\":[";
  for (size_t i = 0; i < c.intervals.size(); ++i) {
    const MoeLaneInterval& iv = c.intervals[i];
    if (i) out += ',';
    const auto core =
        std::lower_bound(cores.begin(), cores.end(), std::make_pair(iv.core_type, iv.core_id)) - cores.begin();
    out += std::to_string(core) + ',' + std::to_string(iv.label) + ',' + std::to_string(iv.index) + ',';
    append_us_short(out, std::llround(iv.start_us * 1e3));
    out += ',';
    append_us_short(out, std::llround(iv.end_us * 1e3));
  }
  out += "]}";
}

// Before the kernels are read: the calls table, and the kernel rows the attached calls name.
Status HtmlBuilder::read_moe_calls() {
  std::error_code ec;
  if (!fs::exists(root_ / layout::kMoeTraceCallsCsv, ec)) return {};
  ASCPROF_ASSIGN_OR_RETURN(moe_calls_, read_table(root_ / layout::kMoeTraceCallsCsv));
  const TextTable& calls = *moe_calls_;
  for (size_t i = 0; i < calls.rows.size(); ++i) {
    const std::string& id = calls.cell(i, "event_id");
    const auto rank = rank_ids_.find(calls.cell(i, "rank_id"));
    const auto row = parse_int64(std::string_view(id).substr(id.rfind('_') + 1));  // evt_<ordinal>_<row>
    if (calls.cell(i, "status") == "attached" && rank != rank_ids_.end() && row)
      moe_kernels_[{rank->second, *row}].event_id = id;
  }
  return {};
}

void HtmlBuilder::note_moe_kernel(int rank, int64_t row, std::string_view event_id, int64_t start, int64_t dur) {
  auto it = moe_kernels_.find({rank, row});
  if (it == moe_kernels_.end() || it->second.event_id != event_id) return;
  it->second.start = start;
  it->second.dur = dur;
}

Status HtmlBuilder::read_moe() {
  if (!moe_calls_) return {};
  const TextTable& calls = *moe_calls_;
  ASCPROF_ASSIGN_OR_RETURN(TextTable compare, read_table(root_ / layout::kMoePhaseCompareCsv));
  ASCPROF_ASSIGN_OR_RETURN(TextTable phases, read_table(root_ / layout::kMoePhaseSummaryCsv));
  auto offset_ns = [this](const std::string& rank) {
    auto it = offsets_ns_.find(rank);
    return it == offsets_ns_.end() ? int64_t{0} : it->second;
  };
  // the kernel row's start on the page's clock (its rank's offset plus t0 subtracted) is the fallback
  // when the kernel table lacks the row; the intervals themselves count from the row's start
  std::map<std::string, double> base_us;
  for (size_t i = 0; i < calls.rows.size(); ++i) {
    const std::string& rank = calls.cell(i, "rank_id");
    base_us[rank] = static_cast<double>(offset_ns(rank) + t0_ns_) / 1e3;
  }
  ASCPROF_ASSIGN_OR_RETURN(const std::vector<MoeCallLanes> lanes, read_moe_lanes(root_, base_us));
  std::map<std::pair<std::string, std::string>, size_t> lanes_of;  // (rank, kernel event id) -> lanes
  for (size_t i = 0; i < lanes.size(); ++i) lanes_of.emplace(std::make_pair(lanes[i].rank_id, lanes[i].kernel_event_id), i);

  const MoeCols call_cols = {{"rank_id", false}, {"call", false}, {"variant", false}, {"status", false},
                             {"event_id", false}, {"kernel_name", false}, {"kernel_duration_us", true},
                             {"span_us", true}, {"span_share_of_kernel", true}, {"cores", true}, {"detail", false}};
  std::string& out = moe_json_;
  out = "{\"calls\":{\"cols\":[";
  for (const auto& [name, numeric] : call_cols) {
    append_json_str(out, name);
    out += ',';
  }
  out += "\"lane\"],\"rows\":[";
  std::string lane_json;
  uint64_t attached = 0, embedded = 0;
  for (size_t i = 0; i < calls.rows.size(); ++i) {
    const bool is_attached = calls.cell(i, "status") == "attached";
    attached += is_attached;
    int64_t lane = -1;
    auto it = lanes_of.find({calls.cell(i, "rank_id"), calls.cell(i, "event_id")});
    if (is_attached && embedded < opt_.max_moe_calls && it != lanes_of.end()) {
      const MoeCallLanes& c = lanes[it->second];
      // the kernel as the page draws it; a row the kernel table lacks falls back to the calls table
      int64_t s = std::llround(c.kernel_start_us * 1e3), d = std::llround((c.kernel_end_us - c.kernel_start_us) * 1e3);
      const auto rank = rank_ids_.find(c.rank_id);
      const auto row = parse_int64(std::string_view(c.kernel_event_id).substr(c.kernel_event_id.rfind('_') + 1));
      const auto k = rank != rank_ids_.end() && row ? moe_kernels_.find({rank->second, *row}) : moe_kernels_.end();
      if (k != moe_kernels_.end() && k->second.start != kNoValue) {
        s = k->second.start;
        d = k->second.dur;
      }
      if (embedded) lane_json += ",\n";
      append_moe_call(lane_json, c, calls.cell(i, "call"), s, d, calls.number(i, "span_us"));
      lane = int64_t(embedded++);
    }
    if (i >= kMoeCallRows) continue;
    if (i) out += ",\n";
    out += '[';
    append_moe_cells(out, calls, i, call_cols);
    out += ',' + std::to_string(lane) + ']';
  }
  out += "]},\"calls_total\":" + std::to_string(calls.rows.size()) + ",\"attached\":" + std::to_string(attached) +
         ",\"lane_cap\":" + std::to_string(opt_.max_moe_calls) + ",\n\"phases\":";
  std::vector<size_t> label_rows = moe_phase_rows(compare, /*with_containers=*/true);
  const size_t phases_total = label_rows.size();
  if (label_rows.size() > kMoePhaseRows) label_rows.resize(kMoePhaseRows);
  append_moe_table(out, compare, label_rows,
                   {{"call", false}, {"label", false}, {"core_group", false}, {"role", false}, {"ranks", true},
                    {"union_us_median", true}, {"max_core_us_median", true}, {"max_core_us_max", true},
                    {"slowest_rank", false}, {"slowest_to_median", true}});
  out += ",\"phases_total\":" + std::to_string(phases_total) + ",\n\"worst\":";
  append_moe_table(out, phases, moe_worst_core_rows(phases, kMoeWorstCores),
                   {{"rank_id", false}, {"call", false}, {"label", false}, {"index", false}, {"core_group", false},
                    {"max_core_id", false}, {"max_core_us", true}, {"median_core_us", true}, {"evidence_id", false}});
  out += ",\n\"lanes\":[";
  out += lane_json;
  out += "]}";
  return {};
}

Status HtmlBuilder::build() {
  ASCPROF_RETURN_IF_ERROR(read_offsets());
  ASCPROF_ASSIGN_OR_RETURN(critical_path_html_, critical_path_section_html(root_));
  ASCPROF_RETURN_IF_ERROR(read_rank_summary());
  // t0 must be known before any time is rebased: the earliest corrected start of rank_summary, or
  // of the step table when rank_summary is absent (a second read; it is small).
  auto origin = [this]() {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const RankInfo& r : ranks_)
      if (r.start_ns <= r.end_ns) {
        lo = std::min(lo, r.start_ns);
        hi = std::max(hi, r.end_ns);
      }
    return std::make_pair(lo, hi);
  };
  auto [lo, hi] = origin();
  if (lo == INT64_MAX) {
    ASCPROF_RETURN_IF_ERROR(read_steps());
    std::tie(lo, hi) = origin();
    steps_ = KeptTable{};
    for (RankInfo& r : ranks_) r.segments.clear();
    segment_of_.clear();
  }
  t0_ns_ = lo == INT64_MAX ? 0 : lo;
  t1_ns_ = hi == INT64_MIN ? 1 : hi;
  ASCPROF_RETURN_IF_ERROR(read_steps());
  std::tie(lo, hi) = origin();
  if (hi != INT64_MIN) t1_ns_ = std::max(t1_ns_, hi);
  ASCPROF_RETURN_IF_ERROR(read_anatomy());
  choose_embedded();
  ASCPROF_RETURN_IF_ERROR(read_operators());
  // Fewer bins per lane for many ranks keep the histogram near 2 M cells.
  const size_t nr = std::max<size_t>(ranks_.size(), 1);
  bins_ = std::clamp<uint32_t>(uint32_t(2'000'000 / (nr * kLaneCount)), 64, std::max<uint32_t>(opt_.histogram_bins, 64));
  bin_ns_ = std::max<int64_t>(1, (t1_ns_ - t0_ns_ + bins_ - 1) / bins_);
  hist_.assign(nr * kLaneCount * bins_, 0.0);
  ASCPROF_RETURN_IF_ERROR(read_moe_calls());
  ASCPROF_RETURN_IF_ERROR(read_kernels());
  // ranks seen only in the kernel table: their histogram rows did not exist during the read
  hist_.resize(std::max<size_t>(ranks_.size(), 1) * kLaneCount * bins_, 0.0);
  // time spans of the embedded rows (for the page's "detail available" marks)
  for (RankInfo& r : ranks_) {
    for (const auto& [a, b] : r.embed_rows) {
      int64_t lo2 = INT64_MAX, hi2 = INT64_MIN;
      auto first = std::lower_bound(r.ev_row.begin(), r.ev_row.end(), a);
      for (auto it = first; it != r.ev_row.end() && *it <= b; ++it) {
        const size_t i = size_t(it - r.ev_row.begin());
        lo2 = std::min(lo2, r.ev_start[i]);
        hi2 = std::max(hi2, r.ev_start[i] + r.ev_dur[i]);
      }
      if (lo2 <= hi2) r.embed_times.emplace_back(lo2, hi2);
    }
  }
  const std::vector<std::pair<const char*, char>> layer_cols = {
      {"layer_id", 's'}, {"segment_id", 'i'}, {"rank_id", 'i'}, {"layer_index", 'n'}, {"layer_role", 'i'},
      {"microbatch", 'i'}, {"row_start", 'n'}, {"row_end", 'n'}, {"event_count", 'n'}, {"start_us", 't'},
      {"end_us", 't'}, {"wall_ms", 'n'}, {"busy_union_ms", 'n'}, {"underfeed_ratio", 'n'},
      {"largest_internal_bubble_ms", 'n'}, {"layer_class_id", 'i'}, {"block_kinds", 'i'}};
  const std::vector<std::pair<const char*, char>> block_cols = {
      {"block_id", 's'}, {"segment_id", 'i'}, {"layer_id", 'i'}, {"rank_id", 'i'}, {"block_index", 'n'},
      {"block_kind", 'i'}, {"row_start", 'n'}, {"row_end", 'n'}, {"event_count", 'n'}, {"start_us", 't'},
      {"end_us", 't'}, {"wall_ms", 'n'}, {"busy_union_ms", 'n'}, {"dominant_op_type", 'i'}, {"bound_family", 'i'},
      {"dominant_core", 'i'}, {"comm_share", 'n'}, {"block_class_id", 'i'}};
  ASCPROF_RETURN_IF_ERROR(read_layers_blocks(layout::kLayerSummaryCsv, opt_.max_layer_rows, layers_, layer_cols));
  ASCPROF_RETURN_IF_ERROR(read_layers_blocks(layout::kBlockSummaryCsv, opt_.max_block_rows, blocks_, block_cols));
  ASCPROF_RETURN_IF_ERROR(read_bubbles());
  ASCPROF_RETURN_IF_ERROR(read_findings());
  ASCPROF_RETURN_IF_ERROR(read_deep_dive());
  return read_moe();
}

void HtmlBuilder::emit_table(std::string& out, const KeptTable& t) const {
  out += "{\"cols\":[";
  for (size_t i = 0; i < t.cols.size(); ++i) {
    if (i) out += ',';
    append_json_str(out, t.cols[i]);
  }
  // columns holding indexes into "strings" (ids and labels repeat across rows)
  out += "],\"interned\":[";
  bool first = true;
  for (size_t i = 0; i < t.kind.size(); ++i)
    if (t.kind[i] == 'i') {
      if (!first) out += ',';
      first = false;
      out += std::to_string(i);
    }
  out += "],\"rows\":[";
  for (size_t i = 0; i < t.rows.size(); ++i) {
    if (i) out += ",\n";
    out += t.rows[i];
  }
  out += "]}";
}

Status HtmlBuilder::write(const fs::path& out) {
  AtomicFileWriter w;
  ASCPROF_RETURN_IF_ERROR(w.open(out));
  std::string b;
  b.reserve(kFlushBytes + (1u << 20));
  auto flush = [&](bool force) {
    if (force || b.size() >= kFlushBytes) {
      w.write(b);
      b.clear();
    }
  };
  b += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
       // the page needs nothing from the network: a CSP that forbids it documents and enforces that
       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
       "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
       "<title>ascprof-mpi report</title>\n<style>\n";
  b += kHtmlCss;
  if (!moe_json_.empty()) b += kHtmlMoeCss;
  b += "</style></head>\n<body>\n";
  b += R"(<header><h1>ascprof-mpi profiling report</h1><div id="meta" class="meta"></div></header>
<nav><a href="#l1">L1 cross-rank</a><a href="#tl">Timeline</a><a href="#l2">L2 step inspector</a><a href="#l3">L3 layers / blocks / operators</a><a href="#dd">Operator deep dive</a>)";
  if (!moe_json_.empty()) b += R"(<a href="#moe">In-kernel MoE</a>)";
  if (!critical_path_html_.empty()) b += R"(<a href="#cp">Critical path</a>)";
  b += R"(</nav>
<section id="l1"><h2>L1 · Cross-rank overview</h2>
<div class="cols"><div class="col"><h3>Per-rank steps <span class="hint">(bar = mean step wall: head / main / tail; text: count, mean, max, bubble)</span></h3><div id="rank-bars"></div></div>
<div class="col"><h3>Findings</h3><div id="findings-summary" class="hint"></div><ol id="findings"></ol></div></div>
<h3>Rank × step heat map <span class="hint">(step wall; click a cell to inspect)</span></h3><div id="heat-legend" class="hint"></div><div class="scroll"><canvas id="heatmap"></canvas></div>
</section>
<section id="tl"><h2>Timeline</h2>
<div class="toolbar"><button id="tl-reset" type="button">Whole capture</button><button id="tl-in" type="button">Zoom in</button><button id="tl-out" type="button">Zoom out</button><button id="tl-step" type="button">Selected step</button><span id="tl-legend"></span></div>
<div class="hint">Wheel: zoom at the pointer · drag: pan · shaded = busy histogram of the whole capture, solid = kernels of the embedded steps · bubble axis: idle gaps (orange), findings (red)</div>
<div id="tl-wrap"><canvas id="timeline" tabindex="0"></canvas><div id="tl-tip" class="tip" hidden></div></div>
<div id="tl-status" class="hint"></div>
</section>
<section id="l2"><h2>L2 · Single-step Inspector</h2>
<div class="toolbar"><label>Rank <select id="rank-select"></select></label><span id="step-count" class="hint"></span></div>
<div id="step-list" class="step-list"></div>
<h3 id="inspector-title">No step selected</h3>
<div id="anatomy" class="anatomy"></div><div id="anatomy-legend" class="hint"></div>
<table id="step-stats" class="kv"></table>
<div class="cols"><div class="col"><h3>Layers</h3><div class="scroll tbl"><table id="layers"></table></div></div>
<div class="col"><h3>Blocks</h3><div class="scroll tbl"><table id="blocks"></table></div></div></div>
</section>
<section id="l3"><h2>L3 · Layer / block / operators</h2><h3 id="l3-title">Select a layer or block</h3><div id="l3-note" class="hint"></div><div id="op-cards" class="cards"></div></section>
<section id="dd"><h2>Operator deep dive <span class="hint">(hot operators by total kernel time; click a row for its card, a header to sort)</span></h2>
<div id="dd-chip" class="hint"></div>
<div class="toolbar"><label>Scope <select id="dd-scope"></select></label><span id="dd-count" class="hint"></span></div>
<div class="cols"><div class="col"><div class="scroll tbl"><table id="dd-table"></table></div></div>
<div class="col"><div id="dd-card" class="dd-card"></div></div></div>
<h3>Host API overhead</h3><div id="dd-host-note" class="hint"></div><div class="scroll tbl"><table id="dd-host"></table></div>
</section>
)";
  if (!moe_json_.empty())
    b += R"(<section id="moe"><h2>In-kernel MoE <span class="hint">(MoeTracing traces inside the fused MoE kernels; each core's times count from its own kernel entry, so ranks are compared by durations; the instrumented build's trace points make phases longer than in a clean build)</span></h2>
<div id="moe-note" class="hint"></div><div id="moe-cap" class="hint"></div>
<h3>Calls and their kernel rows <span class="hint">(open lanes: the call's cores as nested lanes under its rank in the timeline, coloured by role; a click on a traced kernel in the timeline does the same, a click on an opened call's head row closes it; up to 8 calls open at once)</span></h3>
<div class="toolbar"><button id="moe-close" type="button">Close all lanes</button><span id="moe-legend"></span></div>
<div class="scroll tbl"><table id="moe-calls"></table></div>
<h3>Phases across ranks <span id="moe-phases-note" class="hint"></span></h3><div class="scroll tbl"><table id="moe-phases"></table></div>
<h3>Worst cores <span class="hint">(slowest core past the median core; click a row for its call's lanes)</span></h3><div class="scroll tbl"><table id="moe-worst"></table></div>
<h3>In-kernel findings <span class="hint">(click one for the lanes of the kernel it cites)</span></h3><ol id="moe-findings"></ol>
</section>
)";
  b += critical_path_html_;
  b += "<script type=\"application/json\" id=\"data\">{";
  // meta
  b += "\"meta\":{\"root\":";
  {
    // "OUT/<slug>/" has an empty filename: name the folder itself
    const fs::path norm = root_.lexically_normal();
    append_json_str(b, (norm.has_filename() ? norm.filename() : norm.parent_path().filename()).string());
  }
  b += ",\"t0_note\":\"times are µs from the earliest clock-corrected rank start\"";
  b += ",\"span_us\":";
  append_us_short(b, t1_ns_ - t0_ns_);
  b += ",\"bins\":" + std::to_string(bins_) + ",\"bin_us\":";
  append_us_short(b, bin_ns_);
  b += ",\"total_events\":" + std::to_string(total_events_) + ",\"embedded_events\":" +
       std::to_string(embedded_events_) + ",\"event_budget\":" + std::to_string(opt_.max_kernel_events) +
       ",\"bubble_total\":" + std::to_string(bubble_total_) + "},\n\"lanes\":[";
  for (int l = 0; l < kLaneCount; ++l) {
    if (l) b += ',';
    append_json_str(b, kLaneNames[l]);
  }
  b += "],\n\"ranks\":[";
  for (size_t i = 0; i < ranks_.size(); ++i) {
    const RankInfo& r = ranks_[i];
    if (i) b += ",\n";
    b += "{\"id\":";
    append_json_str(b, r.id);
    b += ",\"offset_us\":";
    append_us_short(b, r.offset_ns);
    b += ",\"start\":";
    if (r.start_ns <= r.end_ns) append_us_short(b, rel(r.start_ns));
    else b += "null";
    b += ",\"end\":";
    if (r.start_ns <= r.end_ns) append_us_short(b, rel(r.end_ns));
    else b += "null";
    b += ",\"evt_prefix\":";
    append_json_str(b, r.evt_prefix);
    b += ",\"embedded\":[";
    for (size_t k = 0; k < r.embed_times.size(); ++k) {
      if (k) b += ',';
      b += '[';
      append_us_short(b, r.embed_times[k].first);
      b += ',';
      append_us_short(b, r.embed_times[k].second);
      b += ']';
    }
    b += "],\"hist\":[";
    for (int l = 0; l < kLaneCount; ++l) {
      if (l) b += ',';
      b += '[';
      const double* h = &hist_[(i * kLaneCount + size_t(l)) * bins_];
      bool any = false;
      for (uint32_t k = 0; k < bins_ && !any; ++k) any = h[k] > 0;
      // busy per mille of the bin; overlapping kernels of one lane are capped at full
      for (uint32_t k = 0; any && k < bins_; ++k) {
        if (k) b += ',';
        append_int(b, std::min<int64_t>(1000, std::llround(h[k] * 1000.0 / double(bin_ns_))));
      }
      b += ']';
    }
    b += "],\"ev\":{\"row\":[";
    for (size_t k = 0; k < r.ev_row.size(); ++k) {
      if (k) b += ',';
      append_int(b, r.ev_row[k]);
    }
    b += "],\"s\":[";
    for (size_t k = 0; k < r.ev_start.size(); ++k) {
      if (k) b += ',';
      append_us_short(b, r.ev_start[k]);
    }
    b += "],\"d\":[";
    for (size_t k = 0; k < r.ev_dur.size(); ++k) {
      if (k) b += ',';
      append_us_short(b, r.ev_dur[k]);
    }
    b += "],\"lane\":[";
    for (size_t k = 0; k < r.ev_lane.size(); ++k) {
      if (k) b += ',';
      append_int(b, r.ev_lane[k]);
    }
    b += "],\"op\":[";
    for (size_t k = 0; k < r.ev_op.size(); ++k) {
      if (k) b += ',';
      append_int(b, r.ev_op[k]);
    }
    b += "],\"cells\":[";
    for (size_t c = 0; c < r.ev_cells.size(); ++c) {
      if (c) b += ',';
      b += '[';
      for (size_t k = 0; k < r.ev_cells[c].size(); ++k) {
        if (k) b += ',';
        append_int(b, r.ev_cells[c][k]);
      }
      for (size_t k = 0; k < r.ev_nums[c].size(); ++k) {
        if (k) b += ',';
        if (r.ev_nums[c][k] == kNoValue) b += "null";
        else append_us_short(b, r.ev_nums[c][k]);
      }
      b += ']';
      flush(false);
    }
    b += "]}}";
    flush(false);
  }
  b += "],\n\"kernel_cols\":[";
  for (size_t i = 0; i < kernel_extra_cols_.size(); ++i) {
    if (i) b += ',';
    append_json_str(b, kernel_extra_cols_[i]);
  }
  b += "],\n\"kernel_numeric\":[";
  for (size_t i = 0; i < numeric_cols_.size(); ++i) {
    if (i) b += ',';
    b += numeric_cols_[i] ? "true" : "false";
  }
  b += "],\n\"ops\":[";
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (i) b += ',';
    b += '[';
    append_json_str(b, ops_[i][0]);
    b += ',';
    append_json_str(b, ops_[i][1]);
    b += ',';
    append_json_str(b, ops_[i][2]);
    b += ']';
  }
  b += "],\n\"strings\":[";
  const auto& strs = strings_.strings();
  for (size_t i = 0; i < strs.size(); ++i) {
    if (i) b += ',';
    append_json_str(b, strs[i]);
    flush(false);
  }
  b += "],\n\"steps\":";
  emit_table(b, steps_);
  b += ",\n\"anatomy_cols\":[";
  for (size_t i = 0; i < anatomy_cols_.size(); ++i) {
    if (i) b += ',';
    append_json_str(b, anatomy_cols_[i]);
  }
  b += "],\n\"anatomy\":{";
  {
    bool first = true;
    for (const RankInfo& r : ranks_)
      for (const Segment& s : r.segments) {
        auto it = anatomy_.find(s.id);
        if (it == anatomy_.end()) continue;
        if (!first) b += ',';
        first = false;
        append_json_str(b, s.id);
        b += ":[";
        for (size_t k = 0; k < it->second.size(); ++k) {
          if (k) b += ',';
          const std::string& cell = it->second[k];
          auto v = k == 0 ? std::nullopt : parse_double(cell);
          if (v && std::isfinite(*v)) append_num(b, *v);
          else append_json_str(b, cell);
        }
        b += ']';
      }
  }
  b += "},\n\"embedded_segments\":[";
  {
    bool first = true;
    for (const RankInfo& r : ranks_)
      for (const Segment& s : r.segments)
        if (s.embedded) {
          if (!first) b += ',';
          first = false;
          append_json_str(b, s.id);
        }
  }
  b += "],\n\"layers\":";
  flush(false);
  emit_table(b, layers_);
  flush(false);
  b += ",\n\"blocks\":";
  emit_table(b, blocks_);
  flush(false);
  b += ",\n\"bubbles\":[";
  for (size_t i = 0; i < bubbles_.size(); ++i) {
    if (i) b += ',';
    b += bubbles_[i];
  }
  b += "],\n\"findings\":";
  b += findings_json_;
  b += ",\n\"deep_dive\":";
  b += deep_dive_json_;
  if (!moe_json_.empty()) {
    b += ",\n\"moe\":";
    b += moe_json_;
  }
  b += "}</script>\n<script>\n";
  b += kHtmlJs;
  if (!moe_json_.empty()) b += kHtmlMoeJs;
  b += kHtmlJsStart;
  b += "</script>\n</body></html>\n";
  flush(true);
  return w.commit();
}

}  // namespace

void append_script_json_string(std::string& out, std::string_view text) {
  std::string escaped;
  json_escape_append(escaped, text);
  out.reserve(out.size() + escaped.size());
  for (size_t i = 0; i < escaped.size(); ++i) {
    const char c = escaped[i];
    // `</script>` or `<!--` in a name would end or alter the data element; `&` is escaped too so
    // the text never forms an HTML character reference in any context.
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    // U+2028/2029 are line terminators in older JavaScript string literals
    else if (c == '\xE2' && i + 2 < escaped.size() && escaped[i + 1] == '\x80' &&
             (escaped[i + 2] == '\xA8' || escaped[i + 2] == '\xA9')) {
      out += escaped[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
}

Result<fs::path> write_report_html(const fs::path& root_out, const HtmlOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(root_out, ec))
    return file_error(ErrorCode::kIo, root_out.string(), "", "capture root output folder not found");
  HtmlBuilder builder(root_out, options);
  ASCPROF_RETURN_IF_ERROR(builder.build());
  const fs::path out = root_out / layout::kReportDir / layout::kReportHtml;
  ASCPROF_RETURN_IF_ERROR(builder.write(out));
  return out;
}

}  // namespace ascprof::report

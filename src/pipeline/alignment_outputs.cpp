#include "alignment_outputs.hpp"

#include <algorithm>

#include "ascprof/analysis/diagnose.hpp"
#include "ascprof/common/csv_writer.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/common/stable_id.hpp"
#include "ascprof/model/finding.hpp"
#include "ascprof/layout/out_layout.hpp"

namespace ascprof::pipeline {

namespace fs = std::filesystem;

namespace {

// The union of the step and operator columns, in first-seen order, as the reference writes them
// (issue 23); ours follow its columns. The reference's start_us, end_us and start_skew_us are on the
// ranks' raw clocks, as it compares them; the members were found on clocks corrected by the estimated
// offsets (alignment_method says +clock_offsets), and the corrected_* columns and end_skew_us hold
// the corrected values. Without step rows the file has the operator columns only (kOperatorColumns),
// again as the reference's first-seen union.
const char* const kColumns[] = {
    "alignment_id",  "alignment_type",  "rank_ids",        "segment_ids",     "event_ids",
    "start_us",      "end_us",          "alignment_method", "alignment_confidence", "alignment_limitations",
    "member_count",  "wall_skew_us",    "layer_counts",    "step_families",   "is_structure_mismatch",
    "evidence_ids",  "role",            "name_key",        "shape_signature", "bucket_us",
    "rank_count",    "start_skew_us",   "duration_min_us", "duration_max_us", "duration_skew_us",
    "duration_ratio", "wait_max_us",    "end_skew_us",     "corrected_start_us", "corrected_end_us",
    "corrected_start_skew_us"};
const char* const kOperatorColumns[] = {
    "alignment_id",  "alignment_type",  "rank_ids",        "segment_ids",     "event_ids",
    "start_us",      "end_us",          "alignment_method", "alignment_confidence", "alignment_limitations",
    "role",          "name_key",        "shape_signature", "bucket_us",       "member_count",
    "rank_count",    "start_skew_us",   "duration_min_us", "duration_max_us", "duration_skew_us",
    "duration_ratio", "wait_max_us",    "evidence_ids",    "end_skew_us",     "corrected_start_us",
    "corrected_end_us", "corrected_start_skew_us"};

constexpr const char* kStepMethod = "step_time_overlap_v1+clock_offsets";
constexpr const char* kOperatorMethod = "time_bucket_v1+clock_offsets";
// alignment_limitations is text, as the reference writes it: what the method cannot tell apart
// (then, for an operator row, what the row leaves out), sentences joined by a space
constexpr const char* kStepLimitation =
    "Step alignment uses start/end overlap after the per-rank clock offsets; ranks whose steps do not overlap "
    "are treated as independent.";
constexpr const char* kOperatorLimitation =
    "Operator alignment buckets events by (role, name_key, shape, floor(start_us / bucket_us)) after the per-rank "
    "clock offsets. Multiple ops landing in the same bucket are assumed to be the same logical op across ranks; "
    "operator-level reordering can mis-pair.";

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

std::string json_list(const std::vector<std::string>& v) {
  JsonWriter w;
  w.begin_array();
  for (const auto& x : v) w.value(x);
  w.end_array();
  return w.take();
}

// Both files grow row by row; a row is written to each before the next is built.
class Sinks {
 public:
  Status open(const fs::path& dir, bool step_columns) {
    step_columns_ = step_columns;
    ASCPROF_RETURN_IF_ERROR(json_.open(dir / layout::kCrossRankAlignmentJson));
    ASCPROF_RETURN_IF_ERROR(csv_.open(dir / layout::kCrossRankAlignmentCsv));
    json_.write("{\"cross_rank_alignments\": [");  // the reference's wrapper object
    return {};
  }
  void row(const std::string& json_object, const std::string& csv_line) {
    if (rows_ == 0) {
      std::string header;
      if (step_columns_)
        for (const char* c : kColumns) header += std::string(header.empty() ? "" : ",") + c;
      else
        for (const char* c : kOperatorColumns) header += std::string(header.empty() ? "" : ",") + c;
      csv_.write(header + "\n");
    }
    json_.write(rows_ ? ",\n  " : "\n  ");
    json_.write(json_object);
    csv_.write(csv_line);
    ++rows_;
  }
  bool step_columns() const { return step_columns_; }  // else the operator-only header
  Status commit(std::vector<std::string>* written) {
    json_.write(rows_ ? "\n]}\n" : "]}\n");  // no rows: an empty list and an empty CSV (reference convention)
    ASCPROF_RETURN_IF_ERROR(json_.commit());
    ASCPROF_RETURN_IF_ERROR(csv_.commit());
    written->push_back(json_.path().string());
    written->push_back(csv_.path().string());
    return {};
  }

 private:
  AtomicFileWriter json_, csv_;
  uint64_t rows_ = 0;
  bool step_columns_ = true;
};

void step_row(const AlignmentTables& t, const analysis::StepAlignment& al, Sinks& out) {
  const auto& windows = *t.windows;
  std::vector<std::string> segs, fams, evidence;
  std::vector<uint64_t> layers;
  for (const size_t m : al.members) {
    const analysis::StepWindowView wm = windows[m];
    segs.emplace_back(wm.segment_id);
    fams.emplace_back(wm.step_family);
    layers.push_back(wm.main_layer_count);
    evidence.push_back(stable_id("evd", {wm.segment_id, "step_window"}));
  }
  // step_families is the set of the members' families, sorted, as the reference writes it
  // (layer_counts keeps one entry per member)
  std::sort(fams.begin(), fams.end());
  fams.erase(std::unique(fams.begin(), fams.end()), fams.end());
  // the members' raw window (the reference's start_us, end_us); al's times are corrected
  int64_t raw_start = INT64_MAX, raw_end = INT64_MIN;
  for (const size_t m : al.members) {
    raw_start = std::min(raw_start, windows[m].start_ns);
    raw_end = std::max(raw_end, windows[m].end_ns);
  }
  JsonWriter a;
  a.begin_object();
  a.kv("alignment_id", al.alignment_id);
  a.kv("alignment_type", "time_window");
  a.key("rank_ids");
  a.raw(json_list(al.rank_ids));
  a.key("segment_ids");
  a.raw(json_list(segs));
  a.key("event_ids");
  a.raw("[]");
  a.kv("start_us", us(raw_start));
  a.kv("end_us", us(raw_end));
  JsonWriter m;  // the alignment's figures, under metrics as the reference nests them (the CSV has them flat)
  m.begin_object();
  m.kv("alignment_method", kStepMethod);
  m.kv("alignment_confidence", al.confidence);
  m.kv("alignment_limitations", kStepLimitation);
  m.kv("member_count", static_cast<uint64_t>(al.members.size()));
  m.kv("wall_skew_us", al.wall_skew_us);
  m.key("layer_counts");
  m.begin_array();
  for (const auto v : layers) m.value(v);
  m.end_array();
  m.key("step_families");
  m.raw(json_list(fams));
  m.kv("is_structure_mismatch", al.is_structure_mismatch);
  m.kv("corrected_start_us", us(al.start_ns));
  m.kv("corrected_end_us", us(al.end_ns));
  m.end_object();
  a.key("metrics");
  a.raw(m.str());
  a.key("evidence_ids");
  a.raw(json_list(evidence));
  a.end_object();
  std::string layer_list = "[";
  for (size_t i = 0; i < layers.size(); ++i) layer_list += (i ? "," : "") + std::to_string(layers[i]);
  layer_list += "]";
  CsvRow r;
  r.text(al.alignment_id).text("time_window").json(json_list(al.rank_ids)).json(json_list(segs)).json("[]");
  r.number(us(raw_start), 3).number(us(raw_end), 3).text(kStepMethod).text(al.confidence).text(kStepLimitation);
  r.number(static_cast<uint64_t>(al.members.size())).number(al.wall_skew_us, 3).json(layer_list).json(json_list(fams));
  r.boolean(al.is_structure_mismatch).json(json_list(evidence));
  for (int i = 0; i < 12; ++i) r.empty();  // the operator columns
  r.number(us(al.start_ns), 3).number(us(al.end_ns), 3).empty();  // corrected start, end; no start skew
  out.row(a.take(), r.take_line());
}

void operator_row(const AlignmentTables& t, const analysis::OperatorAlignment& al, Sinks& out) {
  using analysis::RankRange;
  const auto& ops = *t.operators;
  const auto& key = ops.keys[al.key];
  const std::string role = key.role < t.rules->roles.size() ? t.rules->roles[key.role].name : std::to_string(key.role);
  std::vector<std::string> ranks, events, evidence;
  auto id_of = [&t](uint32_t rank, uint32_t row) {
    return model::event_id((*t.rank_ordinals)[rank], row);
  };
  // every member rank, or past max_rank_ids_per_row only the outlier ranks (the runs say the rest)
  const bool all_ranks = al.member_ranks <= t.rules->max_rank_ids_per_row;
  if (all_ranks) {
    for (uint32_t r = 0; r < al.range_count; ++r)
      for (uint32_t rank = ops.ranges[al.first_range + r].first; rank < ops.ranges[al.first_range + r].end; ++rank)
        ranks.push_back((*t.rank_ids)[rank]);
  } else {
    uint32_t outliers[] = {al.latest_start_rank, al.latest_end_rank, al.longest_rank, al.shortest_rank};
    std::sort(std::begin(outliers), std::end(outliers));
    for (size_t i = 0; i < std::size(outliers); ++i)
      if (i == 0 || outliers[i] != outliers[i - 1]) ranks.push_back((*t.rank_ids)[outliers[i]]);
  }
  // event ids as the merge kept them: rank by rank when they all fit under the cap, else
  // round-robin over the ranks (every rank's first member before any second one)
  for (uint32_t e = 0; e < al.event_count; ++e) {
    const auto& ev = ops.events[al.first_event + e];
    events.push_back(id_of(ev.rank, ev.row));
  }
  // the evidence of the skew: the first rows of the longest and the shortest member
  for (const uint32_t rank : {al.longest_rank, al.shortest_rank}) {
    const auto rows = ops.outlier_rows(al, rank);
    if (rows.empty()) continue;
    const std::string id = id_of(rank, rows.front());
    if (evidence.empty() || evidence.back() != id) evidence.push_back(id);
  }
  std::string limitations = kOperatorLimitation;
  if (events.size() < al.member_count)
    limitations += " event_ids lists " + std::to_string(events.size()) + " of the " + std::to_string(al.member_count) +
                   " member events (each rank's first ones).";
  std::string runs;  // every member as runs of consecutive ranks, when rank_ids does not list them all
  if (!all_ranks) {
    JsonWriter w;
    w.begin_array();
    std::string text;
    for (uint32_t r = 0; r < al.range_count; ++r) {
      const RankRange& range = ops.ranges[al.first_range + r];
      const std::string& first = (*t.rank_ids)[range.first];
      const std::string& last = (*t.rank_ids)[range.end - 1];
      w.begin_array();
      w.value(first);
      w.value(last);
      w.end_array();
      if (r < 16) text += (r ? ", " : "") + (range.end - range.first > 1 ? first + ".." + last : first);
    }
    w.end_array();
    runs = w.take();
    limitations += " rank_ids lists the " + std::to_string(ranks.size()) + " outlier ranks (latest start, latest end, " +
                   "longest, shortest) of the " + std::to_string(al.member_ranks) + " member ranks: " + text +
                   (al.range_count > 16 ? ", ... (" + std::to_string(al.range_count) + " runs in all)" : std::string()) +
                   " (metrics.member_rank_runs in the JSON file).";
  }
  // the raw clocks: the merge added each member's offset back to its corrected times
  const int64_t raw_start_min = al.raw_start_min_ns, raw_start_max = al.raw_start_max_ns, raw_end = al.raw_end_ns;
  const std::string id = analysis::operator_alignment_id(ops, al, *t.rules);
  const char* conf = analysis::confidence_name(al.confidence);
  const double skew = us(al.dur_max_ns - al.dur_min_ns);
  JsonWriter a;
  a.begin_object();
  a.kv("alignment_id", id);
  a.kv("alignment_type", "operator");
  a.key("rank_ids");
  a.raw(json_list(ranks));
  a.key("segment_ids");
  a.raw("[]");
  a.key("event_ids");
  a.raw(json_list(events));
  a.kv("start_us", us(raw_start_min));
  a.kv("end_us", us(raw_end));
  JsonWriter m;  // the alignment's figures, under metrics as the reference nests them (the CSV has them flat)
  m.begin_object();
  m.kv("alignment_method", kOperatorMethod);
  m.kv("alignment_confidence", conf);
  m.kv("alignment_limitations", limitations);
  m.kv("member_count", al.member_count);
  m.kv("role", role);
  m.kv("name_key", key.name_key);
  m.kv("shape_signature", key.shape);
  m.kv("bucket_us", t.rules->bucket_us);
  m.kv("rank_count", uint64_t{al.member_ranks});
  m.kv("start_skew_us", us(raw_start_max - raw_start_min));
  m.kv("end_skew_us", us(al.end_skew_ns));
  m.kv("duration_min_us", us(al.dur_min_ns));
  m.kv("duration_max_us", us(al.dur_max_ns));
  m.kv("duration_skew_us", skew);
  m.kv("duration_ratio", al.duration_ratio);
  m.kv("wait_max_us", us(al.wait_max_ns));
  m.kv("corrected_start_us", us(al.start_ns));
  m.kv("corrected_end_us", us(al.end_ns));
  m.kv("corrected_start_skew_us", us(al.start_skew_ns));
  if (!runs.empty()) {
    m.key("member_rank_runs");  // [first, last] rank id of each run of consecutive member ranks
    m.raw(runs);
  }
  m.end_object();
  a.key("metrics");
  a.raw(m.str());
  a.key("evidence_ids");
  a.raw(json_list(evidence));
  a.end_object();
  CsvRow r;
  r.text(id).text("operator").json(json_list(ranks)).json("[]").json(json_list(events));
  r.number(us(raw_start_min), 3).number(us(raw_end), 3).text(kOperatorMethod).text(conf).text(limitations);
  if (out.step_columns()) {
    r.number(al.member_count);
    for (int i = 0; i < 4; ++i) r.empty();  // the step columns
    r.json(json_list(evidence)).text(role).text(key.name_key).text(key.shape).number(t.rules->bucket_us, 3);
  } else {
    r.text(role).text(key.name_key).text(key.shape).number(t.rules->bucket_us, 3).number(al.member_count);
  }
  r.number(uint64_t{al.member_ranks}).number(us(raw_start_max - raw_start_min), 3).number(us(al.dur_min_ns), 3);
  r.number(us(al.dur_max_ns), 3).number(skew, 3).number(al.duration_ratio, 6).number(us(al.wait_max_ns), 3);
  if (!out.step_columns()) r.json(json_list(evidence));
  r.number(us(al.end_skew_ns), 3).number(us(al.start_ns), 3).number(us(al.end_ns), 3).number(us(al.start_skew_ns), 3);
  out.row(a.take(), r.take_line());
}

}  // namespace

Status write_alignment_tables(const fs::path& out_dir, const AlignmentTables& t, std::vector<std::string>* written) {
  Sinks out;
  ASCPROF_RETURN_IF_ERROR(out.open(out_dir, t.steps != nullptr && !t.steps->empty()));
  if (t.steps != nullptr)
    for (const auto& al : *t.steps) step_row(t, al, out);
  if (t.operators != nullptr)
    for (const auto& al : t.operators->alignments) operator_row(t, al, out);
  return out.commit(written);
}

}  // namespace ascprof::pipeline

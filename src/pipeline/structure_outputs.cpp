#include "ascprof/pipeline/structure_outputs.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <string_view>
#include <unordered_map>

#include "ascprof/common/numbers.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/common/stable_id.hpp"
#include "ascprof/model/finding.hpp"
#include "ascprof/store/h5_writer.hpp"
#include "ascprof/pipeline/stage.hpp"
#include "ascprof/layout/out_layout.hpp"
#include "structure_store.hpp"

namespace ascprof::pipeline {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxEventIds = 64;

void kv_us(JsonWriter& w, std::string_view key, int64_t ns) {
  w.key(key);
  w.raw(us_text(ns));
}

void kv_strings(JsonWriter& w, std::string_view key, const std::vector<std::string>& v) {
  w.key(key);
  w.begin_array();
  for (const auto& s : v) w.value(s);
  w.end_array();
}

// The reference's reference fields of an evidence record: the alignments, layers and segments it
// covers, its source references (none: the event ids and row range point into kernel_details) and a
// one-line summary of the window.
void kv_evidence_refs(JsonWriter& w, const std::string& segment_id, const std::string& layer_id,
                      const std::string& summary) {
  kv_strings(w, "alignment_ids", {});
  kv_strings(w, "layer_ids", layer_id.empty() ? std::vector<std::string>{} : std::vector<std::string>{layer_id});
  kv_strings(w, "segment_ids", segment_id.empty() ? std::vector<std::string>{} : std::vector<std::string>{segment_id});
  kv_strings(w, "source_refs", {});
  w.kv("summary", summary);
}

std::string rows_text(uint32_t row_start, uint32_t row_end) {
  return "rows " + std::to_string(row_start) + "-" + std::to_string(row_end);
}

uint64_t row_count(uint32_t row_start, uint32_t row_end) {
  return row_end >= row_start ? uint64_t{row_end} - row_start + 1 : 0;
}

// The first <= kMaxEventIds event ids of the rows [row_start, row_end], appended to an open array.
void append_event_ids(JsonWriter& w, uint32_t ordinal, uint32_t row_start, uint32_t row_end, size_t* budget) {
  const std::string prefix = "evt_" + std::to_string(ordinal) + "_";
  for (uint64_t r = row_start; r <= row_end && *budget > 0; ++r, --*budget) w.value(prefix + std::to_string(r));
}

// One JSON array streamed to a temporary file: an optional head (the reference wraps its lists in an
// object: `{"step_segments": `), "[", rows separated by ",\n", "]", and the trailer given to close().
class TempArray {
 public:
  TempArray() = default;
  TempArray(const TempArray&) = delete;
  TempArray& operator=(const TempArray&) = delete;
  ~TempArray() { discard(); }

  Status open(const fs::path& tmp, std::string_view head = "") {
    tmp_ = tmp;
    f_ = std::fopen(tmp.c_str(), "wb");
    if (f_ == nullptr) return st_ = file_error(ErrorCode::kIo, tmp.string(), "", std::strerror(errno));
    write(head);
    write("[");
    return st_;
  }
  void add(std::string_view row) {
    write(count_ ? ",\n" : "\n");
    write(row);
    ++count_;
  }
  void write(std::string_view s) {
    if (!st_.ok() || f_ == nullptr) return;
    if (std::fwrite(s.data(), 1, s.size(), f_) != s.size())
      st_ = file_error(ErrorCode::kIo, tmp_.string(), "", std::string("write failed: ") + std::strerror(errno));
  }
  /// Appends a rank's rows: `section` of `pack` as write_rank_structure_parts wrote it (each row
  /// preceded by ",\n"; the file's first row takes "\n"), inflated into the file, never parsed.
  /// With `deferred`, the copy is only planned there (the rows' place is left for it).
  Status append(const store::PartPackReader& pack, std::string_view section,
                std::vector<store::SectionCopy>* deferred = nullptr) {
    if (!st_.ok() || f_ == nullptr) return st_;
    if (!pack.has(section))
      return st_ = file_error(ErrorCode::kSchema, pack.path().string(), std::string(section), "section missing from the part pack");
    if (pack.size(section) == 0) return st_;
    if (deferred != nullptr) {
      const uint64_t skip = count_ == 0 ? 1 : 0;
      const uint64_t length = pack.size(section) - skip;
      const long at = std::ftell(f_);
      if (at < 0 || std::fseek(f_, at + static_cast<long>(length), SEEK_SET) != 0)
        return st_ = file_error(ErrorCode::kIo, tmp_.string(), "", std::string("seek failed: ") + std::strerror(errno));
      deferred->push_back({pack.path().string(), std::string(section), tmp_.string(), static_cast<uint64_t>(at), length, skip});
      count_ += pack.rows(section);
      return st_;
    }
    if (std::fflush(f_) != 0)
      return st_ = file_error(ErrorCode::kIo, tmp_.string(), "", std::string("write failed: ") + std::strerror(errno));
    st_ = pack.copy_to(section, fileno(f_), tmp_, count_ == 0 ? 1 : 0);
    std::fseek(f_, 0, SEEK_END);  // the stream's position after the descriptor's writes
    count_ += pack.rows(section);
    return st_;
  }
  /// Writes out what the stream buffers (so other writers of the file see a complete frame).
  Status flush() {
    if (f_ != nullptr && st_.ok() && std::fflush(f_) != 0)
      st_ = file_error(ErrorCode::kIo, tmp_.string(), "", std::string("write failed: ") + std::strerror(errno));
    return st_;
  }
  /// Ends the array (and the file, with `trailer`) and closes it.
  Status close(std::string_view trailer) {
    if (f_ == nullptr) return st_;
    write(count_ ? "\n]" : "]");
    write(trailer);
    const bool flushed = std::fflush(f_) == 0;
    const int e = errno;
    const bool closed = std::fclose(f_) == 0;
    f_ = nullptr;
    if (st_.ok() && (!flushed || !closed))
      st_ = file_error(ErrorCode::kIo, tmp_.string(), "", std::string("write failed: ") + std::strerror(e));
    return st_;
  }
  void discard() {
    if (f_ != nullptr) std::fclose(f_);
    f_ = nullptr;
    if (!tmp_.empty()) {
      std::error_code ec;
      fs::remove(tmp_, ec);
    }
    tmp_.clear();
  }
  /// The file was renamed to its final name: forget it (a later writer may reuse the temporary name).
  void release() { tmp_.clear(); }
  const Status& status() const { return st_; }
  const fs::path& path() const { return tmp_; }
  uint64_t count() const { return count_; }

 private:
  fs::path tmp_;
  std::FILE* f_ = nullptr;
  uint64_t count_ = 0;
  Status st_;
};

// A class merged across ranks by class_id: the first rank's metadata, every rank's members.
// Members are kept as one pre-escaped JSON text per class ("\"seg_..\",\"seg_..\"") rather than a
// string per member: about a third of the memory for a 1000-rank root's block classes. Member ids
// are unique across ranks (segment ids hash the rank id; layer and block ids hash their segment's),
// so they are written bare, as the reference writes them and as the *_segments.json files name them.
struct MergedClass {
  model::ShapeClass meta;  // members left empty
  std::string members_json;  // escaped member id strings, comma-separated
  uint64_t member_count = 0;

  void add_member(const std::string& id) {
    if (member_count++) members_json += ',';
    members_json += '"';
    json_escape_append(members_json, id);
    members_json += '"';
  }
};

struct ClassMap {
  std::vector<MergedClass> classes;  // first-seen order
  std::unordered_map<std::string, size_t> index;

  MergedClass& get(const model::ShapeClass& c) {
    auto [it, inserted] = index.emplace(c.class_id, classes.size());
    if (inserted) {
      MergedClass m;
      m.meta = c;
      m.meta.members = std::vector<uint32_t>{};  // frees the copied buffer (clear() would keep it)
      classes.push_back(std::move(m));
    }
    return classes[it->second];
  }
};

enum class Scope { kStep, kLayer, kBlock };

void write_class_meta(JsonWriter& w, const MergedClass& m, Scope scope) {
  const auto& c = m.meta;
  w.begin_object();
  switch (scope) {
    case Scope::kStep:
      w.kv("structure_signature", c.structure_signature);
      w.kv("main_layer_count", uint64_t{c.main_layer_count});
      w.kv("step_family", c.step_family);
      w.kv("layer_count", uint64_t{c.layer_count});
      kv_strings(w, "layer_class_ids", c.child_class_ids);
      break;
    case Scope::kLayer:
      w.kv("structure_signature", c.structure_signature);
      kv_strings(w, "block_kinds", c.block_kinds);
      kv_strings(w, "block_class_ids", c.child_class_ids);
      w.kv("companion_layer", c.companion_layer);
      break;
    case Scope::kBlock:
      w.kv("block_kind", model::block_kind_name(c.block_kind));
      w.kv("companion_layer", c.companion_layer);
      break;
  }
  w.kv("scope_label", c.scope_label);
  w.key("members");
  w.raw("[" + m.members_json + "]");
  w.kv("member_count", m.member_count);
  w.kv("has_unknown_shape", c.has_unknown_shape);
  w.kv("shape_pairs_count", uint64_t{c.shape_pairs_count});
  w.end_object();
}

Status write_temp_file(const fs::path& tmp, std::string_view content) {
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return file_error(ErrorCode::kIo, tmp.string(), "", std::strerror(errno));
  const bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size() && std::fflush(f) == 0;
  const int e = errno;
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) return file_error(ErrorCode::kIo, tmp.string(), "", std::string("write failed: ") + std::strerror(e));
  return {};
}

Status append_file(std::FILE* out, const fs::path& out_path, const fs::path& in_path) {
  std::FILE* in = std::fopen(in_path.c_str(), "rb");
  if (in == nullptr) return file_error(ErrorCode::kIo, in_path.string(), "", std::strerror(errno));
  std::vector<char> buf(1 << 20);
  Status st;
  for (;;) {
    const size_t n = std::fread(buf.data(), 1, buf.size(), in);
    if (n > 0 && std::fwrite(buf.data(), 1, n, out) != n) {
      st = file_error(ErrorCode::kIo, out_path.string(), "", std::string("write failed: ") + std::strerror(errno));
      break;
    }
    if (n < buf.size()) {
      if (std::ferror(in)) st = file_error(ErrorCode::kIo, in_path.string(), "", "read failed");
      break;
    }
  }
  std::fclose(in);
  return st;
}

}  // namespace

uint64_t interior_unclassified_count(const model::RankStructure& s) {
  size_t first = s.segments.size(), last = 0;
  for (size_t i = 0; i < s.segments.size(); ++i) {
    if (s.segments[i].type != model::SegmentType::kStep) continue;
    first = std::min(first, i);
    last = i;
  }
  uint64_t n = 0;
  for (size_t i = first + 1; i < last; ++i) n += s.segments[i].type == model::SegmentType::kUnclassifiedIsland ? 1 : 0;
  // With declared steps an island lies inside a declared step (no island segment of its own); the
  // segment stage reports it as an interior_unclassified_island hard error instead.
  uint64_t reported = 0;
  for (const auto& e : s.hard_errors) reported += e.error_type == "interior_unclassified_island" ? 1 : 0;
  return std::max(n, reported);
}

namespace {

// The part pack sections of a rank's structure rows, its classes and its manifest figures.
constexpr const char* kStepRows = layout::kStepSegmentsJson;
constexpr const char* kLayerRows = layout::kLayerSegmentsJson;
constexpr const char* kBlockRows = layout::kBlockSegmentsJson;
constexpr const char* kObservationRows = "structure_evidence_graph.json.observations";
constexpr const char* kRoleObservationRows = "structure_evidence_graph.json.role_observations";
constexpr const char* kEvidenceRows = "structure_evidence_graph.json.evidence";
constexpr const char* kClassLines = "structure_classes";
constexpr const char* kManifestLines = "structure_manifest";

// Tab-separated fields: a field's backslash, tab, CR and LF escaped, so any text round-trips.
void put_field(std::string& o, std::string_view v) {
  o += '\t';
  for (const char ch : v) {
    switch (ch) {
      case '\\': o += "\\\\"; break;
      case '\t': o += "\\t"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      default: o += ch;
    }
  }
}

std::vector<std::string> split_fields(std::string_view line) {
  std::vector<std::string> out(1);
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (ch == '\t') {
      out.emplace_back();
    } else if (ch == '\\' && i + 1 < line.size()) {
      const char e = line[++i];
      out.back() += e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r' : e;
    } else {
      out.back() += ch;
    }
  }
  return out;
}

// One array's rows of a rank, into its part pack section, each preceded by ",\n".
struct Rows {
  store::PartPackWriter* pack = nullptr;
  const char* section = "";
  std::string line;
  uint64_t n = 0;

  void add(std::string_view row) {
    line.assign(",\n");
    line.append(row);
    pack->add(section, line, 1);
    ++n;
  }
};

// What the two manifests and class_signatures.json hold besides the rows: a rank's (filled by its
// renderer) or the root's (their sum, the root's writer).
struct StructureFigures {
  StructureTotals totals;
  uint64_t declared_steps = 0, agreeing = 0, ranks_with_declared = 0;
  uint64_t layers_with_blocks = 0, companion_layers = 0;
  uint64_t kind_counts[5] = {0, 0, 0, 0, 0};
  std::vector<std::string> rank_summaries, hard_errors, disagreements;
  ClassMap step_classes, layer_classes, block_classes;

  // The figures of a pack's "counts" line, in its order: the one list its writer and reader use.
  std::array<uint64_t*, 18> counts() {
    return {&totals.segment_count, &totals.step_count, &totals.layer_count, &totals.hard_error_count,
            &totals.interior_island_total, &totals.evidence_count, &totals.structure_observation_count,
            &totals.block_count, &layers_with_blocks, &companion_layers, &kind_counts[0], &kind_counts[1],
            &kind_counts[2], &kind_counts[3], &kind_counts[4], &declared_steps, &agreeing, &ranks_with_declared};
  }
};

// Renders one rank (write_rank_structure_parts): its rows straight into the pack, its classes
// (merged within the rank) and manifest figures as lines at the end.
struct RankRenderer : StructureFigures {
  Rows steps, layers, observations, role_observations, evidence, blocks;

  explicit RankRenderer(store::PartPackWriter& pack) {
    const std::pair<Rows*, const char*> arrays[] = {{&steps, kStepRows},
                                                    {&layers, kLayerRows},
                                                    {&observations, kObservationRows},
                                                    {&role_observations, kRoleObservationRows},
                                                    {&evidence, kEvidenceRows},
                                                    {&blocks, kBlockRows}};
    for (const auto& [rows, section] : arrays) {
      rows->pack = &pack;
      rows->section = section;
    }
  }

  void add_segments(uint32_t ord, const std::string& rank_id, const model::RankStructure& s,
                    const std::vector<std::string>& layer_evd, const EvidenceMetrics* metrics);
  void add_classes(const std::string& rank_id, const model::RankStructure& s, const model::RankClasses& c,
                   const std::vector<std::string>& layer_evd);
  std::string class_lines() const;
  std::string manifest_lines();
};

}  // namespace

struct StructureOutputWriter::Impl : StructureFigures {  // the figures summed over the ranks
  fs::path out;
  StructureOutputOptions options;
  Status failed;
  bool finished = false;
  bool any_rank = false;
  uint32_t last_ordinal = 0;
  std::vector<fs::path> outputs;

  // segment stage
  // observations: ours, one per (step, layer role); role_observations: the reference's, per (step, operator role)
  TempArray steps, layers, observations, role_observations, evidence;
  /// the ranks' row sections still to place (options.run_copies set), run at the start of prepare()
  std::vector<store::SectionCopy> deferred;
  std::vector<store::SectionCopy>* deferring() { return options.run_copies ? &deferred : nullptr; }
  // classify stage
  TempArray blocks;
  // temporaries written by finish() before the renames
  std::vector<fs::path> finish_temps;

  ~Impl() {
    if (!finished) discard();
  }

  void discard() {
    steps.discard();
    layers.discard();
    observations.discard();
    role_observations.discard();
    evidence.discard();
    blocks.discard();
    std::error_code ec;
    for (const auto& p : finish_temps) fs::remove(p, ec);
    finish_temps.clear();
  }

  Status fail(Status st) {
    if (failed.ok()) failed = st;
    return failed;
  }

  Status add_rank_parts(uint32_t ord, const std::string& rank_id, const store::PartPackReader& pack);
  Status merge_manifest(const store::PartPackReader& pack);
  Status merge_classes(const store::PartPackReader& pack);
  Status write_class_signatures(const fs::path& tmp);
  Status prepare(std::vector<std::pair<fs::path, fs::path>>* publish);
  std::string segment_manifest() const;
  std::string classify_manifest() const;
};

void RankRenderer::add_segments(uint32_t ord, const std::string& rank_id, const model::RankStructure& s,
                                               const std::vector<std::string>& layer_evd, const EvidenceMetrics* metrics) {
  const size_t nseg = s.segments.size();
  // the window's metrics, as the reference's evidence records hold them (when the rank was summarised);
  // a step's also carry its structural counts
  auto kv_metrics = [metrics](JsonWriter& w, const std::string& evd, const model::StepSegment* step) {
    if (metrics == nullptr) return;
    const auto it = metrics->find(evd);
    if (it == metrics->end()) return;
    std::string o = "{" + it->second;
    if (step != nullptr) {
      JsonWriter x;
      x.begin_object();
      x.kv("frame_count", uint64_t{step->frame_reasons.size()});
      kv_strings(x, "frame_reasons", step->frame_reasons);
      x.key("frame_tags");
      x.begin_array();
      x.begin_array();
      for (const auto& t : step->frame_tags) x.value(t);
      x.end_array();
      x.end_array();
      x.kv("main_layer_count", uint64_t{step->main_layer_count});
      x.key("selection_rows");
      x.begin_array();
      for (const uint32_t r : step->selection_rows) x.value(uint64_t{r});
      x.end_array();
      x.kv("speculative_layer_count", uint64_t{step->speculative_layer_count});
      x.end_object();
      const std::string extra = x.take();
      o += "," + extra.substr(1, extra.size() - 2);
    }
    w.key("metrics");
    w.raw(o + "}");
  };
  // rank window
  {
    JsonWriter w;
    w.begin_object();
    w.kv("evidence_id", stable_id("evd", {rank_id, "rank_window"}));
    w.kv("rank_id", rank_id);
    w.kv("kind", "rank_window");
    w.key("segment_id");
    w.null();
    w.key("layer_id");
    w.null();
    if (s.event_count > 0) {
      w.kv("row_start", uint64_t{0});
      w.kv("row_end", s.event_count - 1);
    } else {
      w.key("row_start");
      w.null();
      w.key("row_end");
      w.null();
    }
    if (nseg > 0) {
      int64_t lo = s.segments[0].start_ns, hi = s.segments[0].end_ns;
      for (const auto& g : s.segments) {
        lo = std::min(lo, g.start_ns);
        hi = std::max(hi, g.end_ns);
      }
      kv_us(w, "start_us", lo);
      kv_us(w, "end_us", hi);
    } else {
      w.key("start_us");
      w.null();
      w.key("end_us");
      w.null();
    }
    w.key("event_ids");
    w.begin_array();
    size_t budget = kMaxEventIds;
    if (s.event_count > 0)
      append_event_ids(w, ord, 0, static_cast<uint32_t>(std::min<uint64_t>(s.event_count - 1, UINT32_MAX)), &budget);
    w.end_array();
    w.kv("event_count", s.event_count);
    kv_strings(w, "frame_reasons", {});
    kv_strings(w, "frame_tags", {});
    kv_metrics(w, stable_id("evd", {rank_id, "rank_window"}), nullptr);
    kv_evidence_refs(w, "", "", "Rank window: " + std::to_string(s.event_count) + " events in " + std::to_string(nseg) +
                                    " segments.");
    w.end_object();
    evidence.add(w.str());
  }

  for (size_t i = 0; i < nseg; ++i) {
    const auto& g = s.segments[i];
    const bool step = g.type == model::SegmentType::kStep;
    const char* kind = step ? "step_window" : "edge_window";
    const std::string evd = stable_id("evd", {g.segment_id, kind});
    {
      JsonWriter w;
      w.begin_object();
      w.kv("segment_id", g.segment_id);
      w.kv("rank_id", rank_id);
      w.kv("segment_type", model::segment_type_name(g.type));
      w.kv("complete", g.complete);
      w.kv("row_start", uint64_t{g.row_start});
      w.kv("row_end", uint64_t{g.row_end});
      kv_us(w, "start_us", g.start_ns);
      kv_us(w, "end_us", g.end_ns);
      w.kv("step_family", g.step_family);
      w.kv("main_layer_count", uint64_t{g.main_layer_count});
      w.kv("speculative_layer_count", uint64_t{g.speculative_layer_count});
      w.kv("layer_count", uint64_t{g.layer_count});
      w.kv("structure_signature", g.structure_signature);
      w.kv("cluster_id", g.cluster_id);
      w.key("layer_ids");
      w.begin_array();
      for (uint32_t l = g.first_layer; l < g.first_layer + g.layer_count; ++l) w.value(s.layers[l].layer_id);
      w.end_array();
      w.key("evidence_ids");
      w.begin_array();
      w.value(evd);
      w.end_array();
      kv_strings(w, "frame_reasons", g.frame_reasons);
      kv_strings(w, "frame_tags", g.frame_tags);
      w.kv("step_source", model::step_source_name(g.source));
      w.key("declared_step");
      if (g.declared_step < 0) w.null();
      else w.value(g.declared_step);
      w.kv("phase", g.phase);
      w.kv("microbatch_count", uint64_t{g.microbatch_count});
      w.end_object();
      steps.add(w.str());
    }
    {
      JsonWriter w;
      w.begin_object();
      w.kv("evidence_id", evd);
      w.kv("rank_id", rank_id);
      w.kv("kind", kind);
      w.kv("segment_id", g.segment_id);
      w.key("layer_id");
      w.null();
      w.kv("row_start", uint64_t{g.row_start});
      w.kv("row_end", uint64_t{g.row_end});
      kv_us(w, "start_us", g.start_ns);
      kv_us(w, "end_us", g.end_ns);
      w.key("event_ids");
      w.begin_array();
      size_t budget = kMaxEventIds;
      append_event_ids(w, ord, g.row_start, g.row_end, &budget);
      w.end_array();
      w.kv("event_count", row_count(g.row_start, g.row_end));
      kv_strings(w, "frame_reasons", g.frame_reasons);
      kv_strings(w, "frame_tags", g.frame_tags);
      kv_metrics(w, evd, step ? &g : nullptr);
      std::string reasons;
      for (const auto& r : g.frame_reasons) reasons += (reasons.empty() ? "" : ",") + r;
      kv_evidence_refs(w, g.segment_id, "",
                       step ? "Step cover: main_layers=" + std::to_string(g.main_layer_count) +
                                  ", speculative_layers=" + std::to_string(g.speculative_layer_count) +
                                  ", reason=" + reasons + "."
                            : std::string(model::segment_type_name(g.type)) + " segment, " +
                                  rows_text(g.row_start, g.row_end) + (reasons.empty() ? "" : ", reason=" + reasons) + ".");
      w.end_object();
      evidence.add(w.str());
    }
    if (!step) continue;
    // One structure observation per layer role of the step, roles in first-seen order.
    std::vector<model::LayerRole> roles;
    for (uint32_t l = g.first_layer; l < g.first_layer + g.layer_count; ++l)
      if (std::find(roles.begin(), roles.end(), s.layers[l].role) == roles.end()) roles.push_back(s.layers[l].role);
    for (model::LayerRole role : roles) {
      uint64_t count = 0, events = 0;
      uint32_t lo = UINT32_MAX, hi = 0;
      for (uint32_t l = g.first_layer; l < g.first_layer + g.layer_count; ++l) {
        const auto& ly = s.layers[l];
        if (ly.role != role) continue;
        ++count;
        events += row_count(ly.row_start, ly.row_end);
        lo = std::min(lo, ly.row_start);
        hi = std::max(hi, ly.row_end);
      }
      JsonWriter w;
      w.begin_object();
      w.kv("rank_id", rank_id);
      w.kv("segment_id", g.segment_id);
      w.kv("layer_role", model::layer_role_name(role));
      w.kv("layer_count", count);
      w.kv("row_start", uint64_t{lo});
      w.kv("row_end", uint64_t{hi});
      w.key("layer_ids");
      w.begin_array();
      for (uint32_t l = g.first_layer; l < g.first_layer + g.layer_count; ++l)
        if (s.layers[l].role == role) w.value(s.layers[l].layer_id);
      w.end_array();
      w.key("implementation_names");
      w.begin_array();
      // observations are in step order: look only at this step's
      const auto first = std::lower_bound(s.observations.begin(), s.observations.end(), i,
                                          [](const model::StructureObservation& o, size_t seg) { return o.segment < seg; });
      for (auto o = first; o != s.observations.end() && o->segment == i; ++o)
        if (o->role == role)
          for (const auto& name : o->implementation_names) w.value(name);
      w.end_array();
      w.key("event_ids");
      w.begin_array();
      size_t budget = kMaxEventIds;
      for (uint32_t l = g.first_layer; l < g.first_layer + g.layer_count && budget > 0; ++l)
        if (s.layers[l].role == role) append_event_ids(w, ord, s.layers[l].row_start, s.layers[l].row_end, &budget);
      w.end_array();
      w.kv("event_count", events);
      w.end_object();
      observations.add(w.str());
    }
    // The reference's step-scope observations, as its structure_observations records.
    const auto first_role = std::lower_bound(
        s.role_observations.begin(), s.role_observations.end(), i,
        [](const model::StepRoleObservation& o, size_t seg) { return o.segment < seg; });
    for (auto o = first_role; o != s.role_observations.end() && o->segment == i; ++o) {
      JsonWriter w;
      w.begin_object();
      w.kv("confidence", "high");  // a complete step's structure, as the reference rates every one
      w.key("event_ids");
      w.begin_array();
      for (const uint32_t row : o->rows) w.value(model::event_id(ord, row));
      w.end_array();
      w.key("evidence_ids");
      w.begin_array();
      w.value(evd);
      w.end_array();
      w.key("implementation_evidence");
      w.begin_array();
      for (const auto& name : o->implementation_names) w.value(name);
      w.end_array();
      w.key("layer_id");
      w.null();
      w.kv("rank_id", rank_id);
      w.kv("role", o->role);
      w.kv("role_family", o->role);
      w.kv("scope_type", "step");
      w.kv("segment_id", g.segment_id);
      w.kv("structure_id", stable_id("struct", {g.segment_id, o->role}));
      w.end_object();
      role_observations.add(w.str());
    }
  }

  for (size_t i = 0; i < s.layers.size(); ++i) {
    const auto& l = s.layers[i];
    const std::string& seg_id = s.segments[l.segment].segment_id;
    {
      JsonWriter w;
      w.begin_object();
      w.kv("layer_id", l.layer_id);
      w.kv("segment_id", seg_id);
      w.kv("rank_id", rank_id);
      w.kv("layer_index", uint64_t{l.layer_index});
      w.kv("layer_role", model::layer_role_name(l.role));
      w.kv("boundary_source", model::reference_boundary_source_name(l.boundary_source));
      w.kv("boundary_detail", model::boundary_source_name(l.boundary_source));
      w.kv("row_start", uint64_t{l.row_start});
      w.kv("row_end", uint64_t{l.row_end});
      kv_us(w, "start_us", l.start_ns);
      kv_us(w, "end_us", l.end_ns);
      w.kv("structure_signature", s.signature(l));
      w.kv("first_anchor_row", uint64_t{l.first_anchor_row});
      w.key("microbatch");
      if (l.microbatch < 0) w.null();
      else w.value(int64_t{l.microbatch});
      w.key("evidence_ids");
      w.begin_array();
      w.value(layer_evd[i]);
      w.end_array();
      w.end_object();
      layers.add(w.str());
    }
    {
      JsonWriter w;
      w.begin_object();
      w.kv("evidence_id", layer_evd[i]);
      w.kv("rank_id", rank_id);
      w.kv("kind", "layer_window");
      w.kv("segment_id", seg_id);
      w.kv("layer_id", l.layer_id);
      w.kv("row_start", uint64_t{l.row_start});
      w.kv("row_end", uint64_t{l.row_end});
      kv_us(w, "start_us", l.start_ns);
      kv_us(w, "end_us", l.end_ns);
      w.key("event_ids");
      w.begin_array();
      size_t budget = kMaxEventIds;
      append_event_ids(w, ord, l.row_start, l.row_end, &budget);
      w.end_array();
      w.kv("event_count", row_count(l.row_start, l.row_end));
      kv_strings(w, "frame_reasons", {});
      kv_strings(w, "frame_tags", {});
      kv_metrics(w, layer_evd[i], nullptr);
      kv_evidence_refs(w, seg_id, l.layer_id,
                       std::string("Layer observation: ") + model::layer_role_name(l.role) + " layer " +
                           std::to_string(l.layer_index) + ", " + rows_text(l.row_start, l.row_end) + ".");
      w.end_object();
      evidence.add(w.str());
    }
  }

  // Manifest parts (small: one summary per rank, errors and disagreements only).
  std::set<uint32_t> inventory;
  for (const auto& g : s.segments)
    if (g.type == model::SegmentType::kStep) inventory.insert(g.main_layer_count);
  const uint64_t interior = interior_unclassified_count(s);
  const size_t step_count = s.step_count();
  {
    JsonWriter w;
    w.begin_object();
    w.kv("rank_id", rank_id);
    w.kv("event_count", s.event_count);
    w.kv("segment_count", static_cast<uint64_t>(nseg));
    w.kv("step_count", static_cast<uint64_t>(step_count));
    w.kv("layer_count", static_cast<uint64_t>(s.layers.size()));
    w.kv("interior_unclassified_count", interior);
    w.key("layer_count_inventory");
    w.begin_array();
    for (uint32_t v : inventory) w.value(uint64_t{v});
    w.end_array();
    w.kv("hard_error_count", static_cast<uint64_t>(s.hard_errors.size()));
    w.kv("step_source", model::step_source_name(s.step_source));
    w.kv("anchor_family", s.anchor_family);
    w.end_object();
    rank_summaries.push_back(w.take());
  }
  for (const auto& h : s.hard_errors) {
    JsonWriter w;
    w.begin_object();
    w.kv("rank_id", rank_id);
    w.kv("error_type", h.error_type);
    w.kv("row_start", uint64_t{h.row_start});
    w.kv("row_end", uint64_t{h.row_end});
    w.key("segment_id");
    if (h.segment < 0) w.null();
    else w.value(s.segments[static_cast<size_t>(h.segment)].segment_id);
    w.kv("detail", h.detail);
    w.end_object();
    hard_errors.push_back(w.take());
  }
  if (!s.boundary_checks.empty()) ++ranks_with_declared;
  for (const auto& b : s.boundary_checks) {
    ++declared_steps;
    if (b.agrees) {
      ++agreeing;
      continue;
    }
    JsonWriter w;
    w.begin_object();
    w.kv("rank_id", rank_id);
    w.kv("declared_step", b.declared_step);
    w.kv("step_source", model::step_source_name(b.source));
    if (b.row_end >= b.row_start) {
      w.kv("row_start", uint64_t{b.row_start});
      w.kv("row_end", uint64_t{b.row_end});
    } else {
      w.key("row_start");
      w.null();
      w.key("row_end");
      w.null();
    }
    w.kv("structural_steps", uint64_t{b.structural_steps});
    w.kv("note", b.note);
    w.end_object();
    disagreements.push_back(w.take());
  }
  totals.segment_count += nseg;
  totals.step_count += step_count;
  totals.layer_count += s.layers.size();
  totals.hard_error_count += s.hard_errors.size();
  totals.interior_island_total += interior;
}

void RankRenderer::add_classes(const std::string& rank_id, const model::RankStructure& s,
                                              const model::RankClasses& c, const std::vector<std::string>& layer_evd) {
  std::vector<uint8_t> layer_seen(s.layers.size(), 0);
  for (const auto& b : c.blocks) {
    const auto& l = s.layers[b.layer];
    {
      JsonWriter w;
      w.begin_object();
      w.kv("block_id", b.block_id);
      w.kv("rank_id", rank_id);
      w.kv("segment_id", s.segments[l.segment].segment_id);
      w.kv("layer_id", l.layer_id);
      w.kv("layer_index", uint64_t{l.layer_index});
      w.kv("block_index", uint64_t{b.block_index});
      w.kv("block_kind", model::block_kind_name(b.kind));
      w.kv("companion_layer", b.companion_layer);
      w.kv("row_start", uint64_t{b.row_start});
      w.kv("row_end", uint64_t{b.row_end});
      kv_us(w, "start_us", b.start_ns);
      kv_us(w, "end_us", b.end_ns);
      w.kv("event_count", uint64_t{b.event_count});
      w.kv("block_class_id", c.block_classes[b.block_class].class_id);
      w.key("evidence_ids");
      w.begin_array();
      w.value(layer_evd[b.layer]);
      w.end_array();
      w.end_object();
      blocks.add(w.str());
    }
    const size_t k = static_cast<size_t>(b.kind);
    if (k < std::size(kind_counts)) ++kind_counts[k];
    if (!layer_seen[b.layer]) {
      layer_seen[b.layer] = 1;
      ++layers_with_blocks;
    }
    if (b.companion_layer && layer_seen[b.layer] == 1) {
      layer_seen[b.layer] = 2;
      ++companion_layers;
    }
  }
  totals.block_count += c.blocks.size();
  for (const auto& cls : c.block_classes) {
    MergedClass& m = block_classes.get(cls);
    for (uint32_t i : cls.members) m.add_member(c.blocks[i].block_id);
  }
  for (const auto& cls : c.layer_classes) {
    MergedClass& m = layer_classes.get(cls);
    for (uint32_t i : cls.members) m.add_member(s.layers[i].layer_id);
  }
  for (const auto& cls : c.step_classes) {
    MergedClass& m = step_classes.get(cls);
    for (uint32_t i : cls.members) m.add_member(s.segments[i].segment_id);
  }
  totals.step_classes = step_classes.classes.size();
  totals.layer_classes = layer_classes.classes.size();
  totals.block_classes = block_classes.classes.size();
}

// A class line: scope, member count, the class's metadata fields (lists as a count and the items),
// then its members as the JSON text class_signatures.json takes ("\"id\",\"id\"").
std::string RankRenderer::class_lines() const {
  std::string o;
  const std::pair<char, const ClassMap*> maps[] = {{'b', &block_classes}, {'l', &layer_classes}, {'s', &step_classes}};
  for (const auto& [scope, map] : maps)
    for (const MergedClass& m : map->classes) {
      const model::ShapeClass& c = m.meta;
      o += scope;
      put_field(o, std::to_string(m.member_count));
      put_field(o, c.class_id);
      put_field(o, c.structure_signature);
      put_field(o, c.scope_label);
      put_field(o, c.has_unknown_shape ? "1" : "0");
      put_field(o, std::to_string(c.shape_pairs_count));
      put_field(o, std::to_string(static_cast<int>(c.block_kind)));
      put_field(o, c.companion_layer ? "1" : "0");
      put_field(o, std::to_string(c.main_layer_count));
      put_field(o, std::to_string(c.layer_count));
      put_field(o, c.step_family);
      for (const auto* list : {&c.block_kinds, &c.child_class_ids}) {
        put_field(o, std::to_string(list->size()));
        for (const auto& v : *list) put_field(o, v);
      }
      put_field(o, m.members_json);
      o += '\n';
    }
  return o;
}

// "counts" and the figures the manifests add up, then the rank's summary, hard errors and
// boundary-check disagreements (rendered JSON), one per line.
std::string RankRenderer::manifest_lines() {
  totals.evidence_count = evidence.n;
  totals.structure_observation_count = role_observations.n;
  std::string o = "counts";
  for (const uint64_t* v : counts()) put_field(o, std::to_string(*v));
  o += '\n';
  const std::pair<const char*, const std::vector<std::string>*> lists[] = {
      {"summary", &rank_summaries}, {"hard_error", &hard_errors}, {"disagreement", &disagreements}};
  for (const auto& [tag, list] : lists)
    for (const auto& json : *list) {
      o += tag;
      put_field(o, json);
      o += '\n';
    }
  return o;
}

namespace {

bool to_u64(std::string_view text, uint64_t& v) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size();
}

// The lines of `section` of `pack`, each split into fields; kSchema naming the pack when absent.
Result<std::vector<std::vector<std::string>>> section_lines(const store::PartPackReader& pack, const char* section) {
  if (!pack.has(section))
    return file_error(ErrorCode::kSchema, pack.path().string(), section, "section missing from the part pack");
  auto text = pack.read(section);
  if (!text.ok()) return text.status();
  std::vector<std::vector<std::string>> out;
  for (size_t at = 0; at < text->size();) {
    const size_t end = std::min(text->find('\n', at), text->size());
    out.push_back(split_fields(std::string_view(*text).substr(at, end - at)));
    at = end + 1;
  }
  return out;
}

Status bad_section(const store::PartPackReader& pack, const char* section, size_t line, const char* what) {
  return file_error(ErrorCode::kSchema, pack.path().string(), std::string(section) + " line " + std::to_string(line + 1), what);
}

}  // namespace

Status StructureOutputWriter::Impl::merge_manifest(const store::PartPackReader& pack) {
  ASCPROF_ASSIGN_OR_RETURN(auto lines, section_lines(pack, kManifestLines));
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto& f = lines[i];
    if (f[0] == "counts") {  // added up whatever files are written: a rank that did not classify has zeros
      const auto mine = counts();
      if (f.size() != mine.size() + 1) return bad_section(pack, kManifestLines, i, "counts: wrong number of figures");
      std::array<uint64_t, std::tuple_size_v<decltype(mine)>> v{};
      for (size_t k = 0; k < mine.size(); ++k)
        if (!to_u64(f[k + 1], v[k])) return bad_section(pack, kManifestLines, i, "counts: not a number");
      for (size_t k = 0; k < mine.size(); ++k) *mine[k] += v[k];
      continue;
    }
    if (f.size() != 2) return bad_section(pack, kManifestLines, i, "expected a tag and one field");
    if (!options.segment_files) continue;
    if (f[0] == "summary") rank_summaries.push_back(f[1]);
    else if (f[0] == "hard_error") hard_errors.push_back(f[1]);
    else if (f[0] == "disagreement") disagreements.push_back(f[1]);
    else return bad_section(pack, kManifestLines, i, "unknown tag");
  }
  return {};
}

Status StructureOutputWriter::Impl::merge_classes(const store::PartPackReader& pack) {
  ASCPROF_ASSIGN_OR_RETURN(auto lines, section_lines(pack, kClassLines));
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto& f = lines[i];
    if (f.size() < 15 || f[0].size() != 1) return bad_section(pack, kClassLines, i, "too few fields");
    ClassMap* map = f[0] == "b" ? &block_classes : f[0] == "l" ? &layer_classes : f[0] == "s" ? &step_classes : nullptr;
    if (map == nullptr) return bad_section(pack, kClassLines, i, "unknown scope");
    uint64_t count = 0, pairs = 0, kind = 0, main = 0, layer_count = 0;
    // f: 0 scope, 1 members, 2 class_id, 3 structure_signature, 4 scope_label, 5 has_unknown_shape,
    // 6 shape_pairs_count, 7 block_kind, 8 companion_layer, 9 main_layer_count, 10 layer_count,
    // 11 step_family, then block_kinds and child_class_ids (a count and the items), then members
    if (!to_u64(f[1], count) || !to_u64(f[6], pairs) || !to_u64(f[7], kind) || !to_u64(f[9], main) ||
        !to_u64(f[10], layer_count) || kind > 255 || pairs > UINT32_MAX || main > UINT32_MAX || layer_count > UINT32_MAX)
      return bad_section(pack, kClassLines, i, "not a number");
    model::ShapeClass c;
    c.class_id = f[2];
    c.structure_signature = f[3];
    c.scope_label = f[4];
    c.has_unknown_shape = f[5] == "1";
    c.shape_pairs_count = static_cast<uint32_t>(pairs);
    c.block_kind = static_cast<model::BlockKind>(kind);
    c.companion_layer = f[8] == "1";
    c.main_layer_count = static_cast<uint32_t>(main);
    c.layer_count = static_cast<uint32_t>(layer_count);
    c.step_family = f[11];
    size_t at = 12;
    for (auto* list : {&c.block_kinds, &c.child_class_ids}) {
      uint64_t n = 0;
      if (at >= f.size() || !to_u64(f[at], n) || n > f.size() - at - 1) return bad_section(pack, kClassLines, i, "bad list");
      list->assign(f.begin() + static_cast<std::ptrdiff_t>(at + 1), f.begin() + static_cast<std::ptrdiff_t>(at + 1 + n));
      at += 1 + n;
    }
    if (at + 1 != f.size()) return bad_section(pack, kClassLines, i, "wrong field count");
    MergedClass& m = map->get(c);
    if (count == 0) continue;
    if (m.member_count) m.members_json += ',';
    m.members_json += f[at];
    m.member_count += count;
  }
  totals.step_classes = step_classes.classes.size();
  totals.layer_classes = layer_classes.classes.size();
  totals.block_classes = block_classes.classes.size();
  return {};
}

Status StructureOutputWriter::Impl::add_rank_parts(uint32_t ord, const std::string& rank_id,
                                                   const store::PartPackReader& pack) {
  if (finished) return file_error(ErrorCode::kInternal, out.string(), "", "add_rank after finish");
  if (!failed.ok()) return failed;
  if (any_rank && ord <= last_ordinal)
    return fail(file_error(ErrorCode::kInternal, out.string(), rank_id,
                           "rank ordinal " + std::to_string(ord) + " does not follow " + std::to_string(last_ordinal)));
  any_rank = true;
  last_ordinal = ord;
  ++totals.rank_count;
  if (options.segment_files)
    for (const auto& [array, section] : {std::pair<TempArray*, const char*>{&steps, kStepRows},
                                         {&layers, kLayerRows},
                                         {&observations, kObservationRows},
                                         {&role_observations, kRoleObservationRows},
                                         {&evidence, kEvidenceRows}})
      ASCPROF_RETURN_IF_ERROR(fail(array->append(pack, section, deferring())));
  if (options.classify_files) {
    ASCPROF_RETURN_IF_ERROR(fail(blocks.append(pack, kBlockRows, deferring())));
    ASCPROF_RETURN_IF_ERROR(fail(merge_classes(pack)));
  }
  return fail(merge_manifest(pack));
}

Status StructureOutputWriter::Impl::write_class_signatures(const fs::path& tmp) {
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return file_error(ErrorCode::kIo, tmp.string(), "", std::strerror(errno));
  bool ok = true;
  auto put = [&](std::string_view s) { ok = ok && std::fwrite(s.data(), 1, s.size(), f) == s.size(); };
  struct Part {
    const char* by_id;
    const char* classes;
    const ClassMap* map;
    Scope scope;
  };
  // The reference's shape, in its (sorted) key order: <scope>_class_by_id maps each member id to its
  // class id, <scope>_classes each class id to its record.
  const Part parts[] = {{"block_class_by_id", "block_classes", &block_classes, Scope::kBlock},
                        {"layer_class_by_id", "layer_classes", &layer_classes, Scope::kLayer},
                        {"step_class_by_id", "step_classes", &step_classes, Scope::kStep}};
  auto quoted = [](const std::string& text) {
    std::string q = "\"";
    json_escape_append(q, text);
    return q + "\"";
  };
  put("{");
  for (const Part& p : parts) {
    put("\n  \"");
    put(p.by_id);
    put("\": {");
    bool first = true;
    for (const MergedClass& m : p.map->classes) {
      const std::string cls = quoted(m.meta.class_id);
      // members_json is "\"id\",\"id\"": ids are hashes, so a comma only ever separates them
      for (size_t at = 0; at < m.members_json.size() && ok;) {
        const size_t end = std::min(m.members_json.find(',', at), m.members_json.size());
        put(first ? "\n    " : ",\n    ");
        first = false;
        put(std::string_view(m.members_json).substr(at, end - at));
        put(": ");
        put(cls);
        at = end + 1;
      }
    }
    put(first ? "}," : "\n  },");
    put("\n  \"");
    put(p.classes);
    put("\": {");
    for (size_t i = 0; i < p.map->classes.size() && ok; ++i) {
      JsonWriter w;
      w.raw(quoted(p.map->classes[i].meta.class_id) + ": ");  // a bare prefix; JsonWriter has no open container
      write_class_meta(w, p.map->classes[i], p.scope);
      put(i ? ",\n    " : "\n    ");
      put(w.str());
    }
    put(p.map->classes.empty() ? "}" : "\n  }");
    put(p.scope == Scope::kStep ? "" : ",");
    if (p.scope == Scope::kLayer) {  // the reference's sorted keys put these between layer and step
      put("\n  \"schema_version\": " + std::to_string(kOutputSchemaVersion) + ",\n  \"tool_version\": ");
      put(quoted(ASCPROF_VERSION));
      put(",");
    }
  }
  put("\n}\n");
  ok = ok && std::fflush(f) == 0;
  const int e = errno;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) return file_error(ErrorCode::kIo, tmp.string(), "", std::string("write failed: ") + std::strerror(e));
  return {};
}

std::string StructureOutputWriter::Impl::segment_manifest() const {
  JsonWriter w(true);
  w.begin_object();
  write_manifest_fields(w, stage_name(Stage::kSegment), out.string());
  w.key("files");
  w.begin_object();
  w.kv("layer_segments", layout::kLayerSegmentsJson);
  w.kv("segment_manifest", layout::kSegmentManifestJson);
  w.kv("step_segments", layout::kStepSegmentsJson);
  w.kv("structure_evidence_graph", layout::kStructureEvidenceGraphJson);
  w.end_object();
  if (!options.root.empty()) w.kv("root", options.root);
  w.kv("rank_count", totals.rank_count);
  w.kv("segment_count", totals.segment_count);
  w.kv("step_count", totals.step_count);
  w.kv("layer_count", totals.layer_count);
  w.kv("structure_observation_count", totals.structure_observation_count);
  w.kv("evidence_count", totals.evidence_count);
  w.kv("hard_error_count", totals.hard_error_count);
  w.kv("interior_island_total", totals.interior_island_total);
  w.key("hard_errors");
  w.begin_array();
  for (const auto& h : hard_errors) w.raw(h);
  w.end_array();
  w.key("rank_summaries");
  w.begin_array();
  for (const auto& r : rank_summaries) w.raw(r);
  w.end_array();
  w.key("boundary_checks");
  w.begin_object();
  w.kv("ranks_with_declared_steps", ranks_with_declared);
  w.kv("declared_steps", declared_steps);
  w.kv("agreeing", agreeing);
  w.kv("disagreeing", declared_steps - agreeing);
  w.key("disagreements");
  w.begin_array();
  for (const auto& d : disagreements) w.raw(d);
  w.end_array();
  w.end_object();
  w.end_object();
  return w.take() + "\n";
}

std::string StructureOutputWriter::Impl::classify_manifest() const {
  auto with_shape = [](const ClassMap& m) {
    uint64_t n = 0;
    for (const auto& c : m.classes) n += c.meta.has_unknown_shape ? 0 : 1;
    return n;
  };
  JsonWriter w(true);
  w.begin_object();
  write_manifest_fields(w, stage_name(Stage::kClassify), out.string());
  w.key("files");
  w.begin_object();
  w.kv("block_segments", layout::kBlockSegmentsJson);
  w.kv("class_signatures", layout::kClassSignaturesJson);
  w.end_object();
  if (!options.root.empty()) w.kv("root", options.root);
  w.kv("rank_count", totals.rank_count);
  w.key("counts");
  w.begin_object();
  w.kv("blocks", totals.block_count);
  w.kv("layers_with_blocks", layers_with_blocks);
  w.kv("companion_layers", companion_layers);
  w.kv("step_classes", totals.step_classes);
  w.kv("layer_classes", totals.layer_classes);
  w.kv("block_classes", totals.block_classes);
  w.key("block_kind_counts");
  w.begin_object();
  for (size_t k = 0; k < std::size(kind_counts); ++k) {
    const auto kind = static_cast<model::BlockKind>(k);
    if (kind == model::BlockKind::kOther && kind_counts[k] == 0) continue;  // never emitted (§2.4)
    w.kv(model::block_kind_name(kind), kind_counts[k]);
  }
  w.end_object();
  w.end_object();
  w.key("shape_coverage");
  w.begin_object();
  w.kv("step_classes_with_shape", with_shape(step_classes));
  w.kv("step_classes_total", totals.step_classes);
  w.kv("layer_classes_with_shape", with_shape(layer_classes));
  w.kv("layer_classes_total", totals.layer_classes);
  w.kv("block_classes_with_shape", with_shape(block_classes));
  w.kv("block_classes_total", totals.block_classes);
  w.end_object();
  w.end_object();
  return w.take() + "\n";
}

Status StructureOutputWriter::Impl::prepare(std::vector<std::pair<fs::path, fs::path>>* publish) {
  std::vector<std::pair<fs::path, fs::path>> markers;
  // the ranks' rows into the places left for them (before the graph is assembled from its arrays)
  for (TempArray* a : {&steps, &layers, &observations, &role_observations, &evidence, &blocks})
    ASCPROF_RETURN_IF_ERROR(a->flush());
  if (!deferred.empty()) {
    ASCPROF_RETURN_IF_ERROR(options.run_copies(deferred));
    deferred.clear();
  }
  if (options.segment_files) {
    ASCPROF_RETURN_IF_ERROR(steps.close("}\n"));
    publish->emplace_back(out / layout::kStepSegmentsJson, steps.path());
    ASCPROF_RETURN_IF_ERROR(layers.close("}\n"));
    publish->emplace_back(out / layout::kLayerSegmentsJson, layers.path());
    ASCPROF_RETURN_IF_ERROR(observations.close(""));
    ASCPROF_RETURN_IF_ERROR(role_observations.close(""));
    ASCPROF_RETURN_IF_ERROR(evidence.close(""));
    const fs::path graph_final = out / layout::kStructureEvidenceGraphJson;
    const fs::path graph = temp_sibling(graph_final);
    finish_temps.push_back(graph);
    std::FILE* f = std::fopen(graph.c_str(), "wb");
    if (f == nullptr) return file_error(ErrorCode::kIo, graph.string(), "", std::strerror(errno));
    auto put = [f](std::string_view s) { return std::fwrite(s.data(), 1, s.size(), f) == s.size(); };
    // the reference's keys first; ours (the layer-role observations) after them
    bool ok = put("{\n\"structure_observations\": ");
    Status st = ok ? append_file(f, graph, role_observations.path()) : Status{};
    ok = ok && st.ok() && put(",\n\"evidence\": ");
    if (ok) st = append_file(f, graph, evidence.path());
    ok = ok && st.ok() && put(",\n\"layer_role_observations\": ");
    if (ok) st = append_file(f, graph, observations.path());
    ok = ok && st.ok() && put("\n}\n") && std::fflush(f) == 0;
    const int e = errno;
    ok = std::fclose(f) == 0 && ok;
    ASCPROF_RETURN_IF_ERROR(st);
    if (!ok) return file_error(ErrorCode::kIo, graph.string(), "", std::string("write failed: ") + std::strerror(e));
    observations.discard();
    role_observations.discard();
    evidence.discard();
    publish->emplace_back(graph_final, graph);
    const fs::path manifest = out / layout::kSegmentManifestJson;
    finish_temps.push_back(temp_sibling(manifest));
    ASCPROF_RETURN_IF_ERROR(write_temp_file(temp_sibling(manifest), segment_manifest()));
    markers.emplace_back(manifest, temp_sibling(manifest));
  }
  if (options.classify_files) {
    ASCPROF_RETURN_IF_ERROR(
        blocks.close(",\n\"schema_version\": " + std::to_string(kOutputSchemaVersion) + ",\n\"tool_version\": \"" +
                     ASCPROF_VERSION + "\"}\n"));
    publish->emplace_back(out / layout::kBlockSegmentsJson, blocks.path());
    const fs::path sigs = out / layout::kClassSignaturesJson;
    finish_temps.push_back(temp_sibling(sigs));
    ASCPROF_RETURN_IF_ERROR(write_class_signatures(temp_sibling(sigs)));
    publish->emplace_back(sigs, temp_sibling(sigs));
    const fs::path manifest = out / layout::kClassifyManifestJson;
    finish_temps.push_back(temp_sibling(manifest));
    ASCPROF_RETURN_IF_ERROR(write_temp_file(temp_sibling(manifest), classify_manifest()));
    markers.emplace_back(manifest, temp_sibling(manifest));
  }
  publish->insert(publish->end(), markers.begin(), markers.end());
  return {};
}

StructureOutputWriter::StructureOutputWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StructureOutputWriter::StructureOutputWriter(StructureOutputWriter&& o) noexcept = default;
StructureOutputWriter& StructureOutputWriter::operator=(StructureOutputWriter&& o) noexcept = default;
StructureOutputWriter::~StructureOutputWriter() = default;

Result<StructureOutputWriter> StructureOutputWriter::create(const fs::path& out_dir, StructureOutputOptions options) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return file_error(ErrorCode::kIo, out_dir.string(), "", "cannot create output folder: " + ec.message());
  if (!fs::is_directory(out_dir, ec))
    return file_error(ErrorCode::kIo, out_dir.string(), "", "output path is not a folder");
  auto impl = std::make_unique<Impl>();
  impl->out = out_dir;
  impl->options = std::move(options);
  Impl& m = *impl;
  if (m.options.segment_files) {
    ASCPROF_RETURN_IF_ERROR(m.steps.open(temp_sibling(out_dir / layout::kStepSegmentsJson), "{\"step_segments\": "));
    ASCPROF_RETURN_IF_ERROR(m.layers.open(temp_sibling(out_dir / layout::kLayerSegmentsJson), "{\"layer_segments\": "));
    ASCPROF_RETURN_IF_ERROR(m.observations.open(temp_sibling(out_dir / "structure_evidence_graph.json.observations")));
    ASCPROF_RETURN_IF_ERROR(
        m.role_observations.open(temp_sibling(out_dir / "structure_evidence_graph.json.role_observations")));
    ASCPROF_RETURN_IF_ERROR(m.evidence.open(temp_sibling(out_dir / "structure_evidence_graph.json.evidence")));
  }
  if (m.options.classify_files) ASCPROF_RETURN_IF_ERROR(m.blocks.open(temp_sibling(out_dir / layout::kBlockSegmentsJson), "{\"block_segments\": "));
  return StructureOutputWriter(std::move(impl));
}

Status StructureOutputWriter::add_rank(uint32_t rank_ordinal, const std::string& rank_id,
                                       const model::RankStructure& s, const model::RankClasses& c,
                                       const EvidenceMetrics* metrics) {
  Impl& m = *impl_;
  if (m.finished) return file_error(ErrorCode::kInternal, m.out.string(), "", "add_rank after finish");
  if (!m.failed.ok()) return m.failed;
  // the rank job's path: its rows rendered into a part pack (here a temporary one), then added
  const fs::path path = temp_sibling(m.out / "structure_rank.parts");
  {
    store::PartPackWriter pack;
    ASCPROF_RETURN_IF_ERROR(m.fail(pack.open(path)));
    ASCPROF_RETURN_IF_ERROR(
        m.fail(write_rank_structure_parts(pack, rank_ordinal, rank_id, s, c, m.options.classify_files, metrics)));
    ASCPROF_RETURN_IF_ERROR(m.fail(pack.commit()));
  }
  auto reader = store::PartPackReader::open(path);
  Status st = reader.ok() ? add_rank_parts(rank_ordinal, rank_id, *reader) : m.fail(reader.status());
  if (st.ok() && !m.deferred.empty()) {  // the temporary pack goes now: its rows are placed first
    st = m.fail(store::run_section_copies(m.deferred, 0, m.deferred.size()));
    m.deferred.clear();
  }
  std::error_code ec;
  fs::remove(path, ec);
  return st;
}

Status StructureOutputWriter::add_rank_parts(uint32_t rank_ordinal, const std::string& rank_id,
                                             const store::PartPackReader& pack) {
  return impl_->add_rank_parts(rank_ordinal, rank_id, pack);
}

EvidenceMetrics parse_evidence_metrics(std::string_view text) {
  EvidenceMetrics metrics;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    if (const size_t tab = line.find('\t'); tab != std::string_view::npos)
      metrics.emplace(std::string(line.substr(0, tab)), std::string(line.substr(tab + 1)));
    at = end + 1;
  }
  return metrics;
}

const std::vector<std::string>& structure_part_sections(bool classify) {
  static const std::vector<std::string> segment = {kStepRows,    kLayerRows,   kObservationRows, kRoleObservationRows,
                                                   kEvidenceRows, kClassLines, kManifestLines};
  static const std::vector<std::string> both = [] {
    std::vector<std::string> v = segment;
    v.emplace_back(kBlockRows);
    return v;
  }();
  return classify ? both : segment;
}

Status write_rank_structure_parts(store::PartPackWriter& pack, uint32_t ord, const std::string& rank_id,
                                  const model::RankStructure& s, const model::RankClasses& c, bool classify,
                                  const EvidenceMetrics* metrics) {
  if (auto e = structure_inconsistency(s, c); !e.empty())
    return file_error(ErrorCode::kInternal, rank_id, "", "inconsistent structure: " + e);
  for (const auto& section : structure_part_sections(classify)) pack.add(section, "");  // declared, rows or not
  RankRenderer r(pack);
  std::vector<std::string> layer_evd(s.layers.size());
  for (size_t i = 0; i < s.layers.size(); ++i) layer_evd[i] = stable_id("evd", {s.layers[i].layer_id, "layer_window"});
  r.add_segments(ord, rank_id, s, layer_evd, metrics);
  if (classify) r.add_classes(rank_id, s, c, layer_evd);
  const std::string classes = r.class_lines(), manifest = r.manifest_lines();
  pack.add(kClassLines, classes, static_cast<uint64_t>(std::count(classes.begin(), classes.end(), '\n')));
  pack.add(kManifestLines, manifest, static_cast<uint64_t>(std::count(manifest.begin(), manifest.end(), '\n')));
  return {};
}

Status StructureOutputWriter::finish() {
  Impl& m = *impl_;
  if (m.finished) return file_error(ErrorCode::kInternal, m.out.string(), "", "finish called twice");
  m.finished = true;
  auto abort = [&m](Status st) {
    m.discard();
    return st;
  };
  if (!m.failed.ok()) return abort(m.failed);

  std::vector<std::pair<fs::path, fs::path>> publish;  // (final, temporary) in publication order
  Status st = m.prepare(&publish);
  if (!st.ok()) return abort(st);
  // Check every target before renaming any, so a taken name cannot leave a partial set behind.
  for (const auto& [final_path, tmp] : publish) {
    std::error_code ec;
    if (fs::exists(final_path, ec) && !fs::is_regular_file(final_path, ec))
      return abort(file_error(ErrorCode::kIo, final_path.string(), "", "exists and is not a regular file"));
  }
  for (const auto& [final_path, tmp] : publish) {
    std::error_code ec;
    fs::rename(tmp, final_path, ec);
    if (ec) return abort(file_error(ErrorCode::kIo, final_path.string(), "", "rename failed: " + ec.message()));
    m.outputs.push_back(final_path);
  }
  m.steps.release();
  m.layers.release();
  m.blocks.release();
  m.finish_temps.clear();
  return {};
}

const StructureTotals& StructureOutputWriter::totals() const { return impl_->totals; }
const std::vector<fs::path>& StructureOutputWriter::outputs() const { return impl_->outputs; }

}  // namespace ascprof::pipeline

#pragma once
// Internal types of the segment stage (reference-analysis.md §2.2). Split over:
//   segment_layers.cpp  event predicates, anchors, layers, layer signatures, MoE split repair
//   segment_frames.cpp  frames and their exact repairs, template covers
//   segment_plans.cpp   step plans, residual classification, hard errors
//   segment.cpp         entry point, materialising segments, declared steps, training phases
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ascprof/analysis/segment.hpp"

namespace ascprof::analysis::seg {

/// Interns strings (signatures, keys, terms) to dense ints so sequences compare as int vectors.
class Interner {
 public:
  int id(const std::string& s) {
    auto [it, inserted] = ids_.try_emplace(s, static_cast<int>(names_.size()));
    if (inserted) names_.push_back(s);
    return it->second;
  }
  const std::string& name(int id) const { return names_[static_cast<size_t>(id)]; }

 private:
  std::unordered_map<std::string, int> ids_;
  std::vector<std::string> names_;
};

/// Per distinct taxon: everything the rules ask of an event, computed once.
struct TaxonView {
  bool structural = false, boundary = false, anchor_boundary = false, selection = false;
  bool role_attention = false, role_moe = false, role_compute = false, role_communication = false;
  bool role_normalization = false, role_block_head = false;
  bool has_block_head_category = false;
  bool moe_anchor = false;     // role moe with a moe.* category
  bool gating = false;         // moe.gating
  bool moe_phase = false;      // dispatch, combine or dispatch_expert_compute
  bool backward = false;       // training: folded name has a backward token
  bool microbatch_boundary = false;  // training: a point-to-point transfer (segmentation.rules)
  int primary_attention = -1;  // category index (alphabetically smallest attention.*, no .metadata)
  int primary_moe = -1;
  int anchor_kind = -1;        // interned anchor kind (-1: none)
  int anchor_signature = -1;   // interned "<kind>:<name_key>"
};

/// The derived keys of a layer (§2.2.3). Layers with the same anchors, category counts and roles
/// share one entry, so the strings are built once per distinct layer shape, not once per layer.
struct LayerKind {
  int signature = -1, regime = -1, role_key = -1, core = -1, boundary = -1, anchor_seq = -1;
  int attention_set = -1;       // interned sorted set of primary attention categories ("" = none)
  std::vector<int> terms;       // interned terms of core ∪ boundary keys, sorted (subset checks)
  std::vector<int> attention_categories;  // attention.* category ids present, sorted by id
  uint32_t role_presence = 0;   // bit per structural role present (coarse role counts)
  bool primary_attention = false, has_moe = false, dense_compute = false, selection = false;
};

/// One layer observation.
struct Layer {
  uint32_t start = 0, end = 0;  // rows, inclusive
  uint32_t anchor_begin = 0, anchor_end = 0;  // its anchors: Ctx::anchors[anchor_begin, anchor_end)
  uint32_t first_anchor = 0, last_anchor = 0;  // rows of its first and last anchor
  int kind = -1;                // index into Ctx::kinds
  // copies of the kind's scalars, read everywhere
  int signature = -1, regime = -1, role_key = -1, core = -1, boundary = -1, anchor_seq = -1, attention_set = -1;
  uint32_t role_presence = 0;
  bool primary_attention = false, has_moe = false, dense_compute = false, selection = false;
  uint16_t gating = 0, moe_anchor_count = 0;
  bool moe_phase = false;
  int32_t attention_stream = -1;
};

struct Frame {
  std::vector<Layer> layers;
  bool selection_before = false, selection_after = false;
  bool residual = false;        // produced by a prefix/suffix template cover
  std::vector<std::string> reasons, tags;
  uint32_t first_row() const { return layers.front().start; }
  uint32_t last_row() const { return layers.back().end; }
};

struct Plan {
  std::vector<Frame> frames;    // [0] = main, rest = speculative
  model::SegmentType type = model::SegmentType::kStep;
  bool complete = true;
  std::string reason;
  uint32_t first_row() const { return frames.front().first_row(); }
  uint32_t last_row() const { return frames.back().last_row(); }
  size_t main_layers() const { return frames.front().layers.size(); }
  size_t layer_count() const {
    size_t n = 0;
    for (const auto& f : frames) n += f.layers.size();
    return n;
  }
  bool all_residual() const {
    for (const auto& f : frames)
      if (!f.residual) return false;
    return true;
  }
  bool primary_attention() const {
    for (const auto& f : frames)
      for (const auto& l : f.layers)
        if (l.primary_attention) return true;
    return false;
  }
};

/// Shared state of one rank's segmentation.
struct Ctx {
  const model::KernelTable& k;
  const NormalizedKernels& n;
  const StringPool& pool;
  const knowledge::Knowledge& kb;
  size_t rows = 0;
  std::vector<TaxonView> taxa;
  Interner strings;
  std::vector<uint32_t> boundary_rows, selection_rows;  // adjacent duplicates removed, sorted
  std::vector<uint32_t> anchor_boundary_rows;           // adjacent duplicates removed, sorted
  std::vector<uint32_t> anchors;                        // chosen anchor rows, sorted
  std::vector<uint32_t> microbatch_boundary_rows;       // training: point-to-point transfer rows, sorted
  std::string anchor_family;
  // layer kinds (memoised derived keys) and scratch for building them
  std::vector<LayerKind> kinds;
  std::unordered_map<uint64_t, std::vector<int>> kind_index;  // content hash -> kinds with that hash
  std::vector<std::vector<uint32_t>> kind_content;            // per kind: the content it was built from
  std::vector<uint32_t> cat_count;
  std::vector<int> touched;
  std::vector<uint32_t> content;
  // vocabulary indices
  int role_attention = -1, role_attention_aux = -1, role_moe = -1, role_compute = -1, role_communication = -1;
  int role_normalization = -1, role_block_head = -1, role_selection = -1, role_aicpu = -1;
  int cat_compute_matmul = -1, cat_moe_gating = -1;

  Ctx(const model::KernelTable& kt, const NormalizedKernels& nk, const StringPool& p, const knowledge::Knowledge& kbase)
      : k(kt), n(nk), pool(p), kb(kbase), rows(kt.size()) {}

  const TaxonView& tv(uint32_t row) const { return taxa[n.taxon[row]]; }
  const LayerKind& kind(const Layer& l) const { return kinds[static_cast<size_t>(l.kind)]; }
  bool duplicate(uint32_t a, uint32_t b) const;   // §2.2.1 adjacent-duplicate rule
  bool anchor_boundary_between(uint32_t a, uint32_t b) const;  // an anchor-boundary row strictly between a < b
  /// Layer start for an anchor group whose first anchor is `first_anchor` (§2.2.3).
  uint32_t layer_start(uint32_t lower, uint32_t first_anchor) const;
  bool selection_between(uint32_t a, uint32_t b) const;  // a selection row strictly between a < b
  bool microbatch_boundary_between(uint32_t a, uint32_t b) const;  // such a row strictly between a < b
};

// segment_layers.cpp
void prepare_rows(Ctx& c);
std::vector<Layer> build_layers(Ctx& c);
/// Computes a layer's keys from its rows [start, end] and its anchors (anchor_begin/end, or
/// first_anchor when the range is empty).
void finalize_layer(Ctx& c, Layer& l);
Layer merge_layers(Ctx& c, const std::vector<Layer>& src, size_t first, size_t last);

// segment_frames.cpp
std::vector<Frame> frames_from_selection(Ctx& c, std::vector<Layer> layers);
std::vector<Frame> split_composite_frames(Ctx& c, std::vector<Frame> frames);
/// Minimal exact period p (n % p == 0, s[i] == s[i-p]); returns n when none shorter.
size_t minimal_period(const std::vector<int>& s);
std::vector<int> regime_seq(const Frame& f);
std::vector<int> core_seq(const Frame& f);
std::vector<int> boundary_seq(const Frame& f);

// segment_plans.cpp
std::vector<Plan> compose_plans(Ctx& c, std::vector<Frame> frames);
void check_hard_errors(Ctx& c, const std::vector<Plan>& plans,
                       const std::vector<std::pair<uint32_t, uint32_t>>& layer_rows, std::vector<model::HardError>& out);

}  // namespace ascprof::analysis::seg

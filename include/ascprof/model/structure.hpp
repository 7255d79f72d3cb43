#pragma once
/// The structure of one profiling rank: step segments, layers, blocks and shape-strict classes
/// (reference-analysis.md §2.2, §2.4), plus what we add (declared steps, training phases).
///
/// Row numbers are kernel_details data-row indices (0-based, file order), inclusive ranges. Every
/// segment, layer and block is traceable to those rows. Nothing here depends on MPI or files.
#include <cstdint>
#include <string>
#include <vector>

namespace ascprof::model {

/// Segment types of the reference (§2.2.6), in its spelling (segment_type_name).
enum class SegmentType : uint8_t {
  kStep,
  kHead,
  kTail,
  kUnclassifiedIsland,
  kPiecewiseInterleavedWindow,
  kRunnerWindow,
  kPartialBodyWindow,
};
const char* segment_type_name(SegmentType t);

/// Layer roles: inference main/speculative (MTP, Eagle); training forward/backward.
enum class LayerRole : uint8_t { kMain, kSpeculative, kForward, kBackward };
const char* layer_role_name(LayerRole r);

/// How a layer's boundaries were found.
enum class BoundarySource : uint8_t {
  kExactStructuralAnchor,  ///< the reference's anchor rules (structural steps)
  kDeclaredStepWindow,     ///< structural layers placed in a declared step
  kTrainingAnchor,         ///< one layer per forward / backward attention anchor
};
const char* boundary_source_name(BoundarySource b);
/// The same in the reference's vocabulary, for its boundary_source columns: layers placed in a
/// declared step are found by its anchor rules, so they are exact_structural_anchor there (our
/// boundary_source_name goes in boundary_detail); training layers have no reference counterpart.
const char* reference_boundary_source_name(BoundarySource b);

/// Where a step's boundaries came from.
enum class StepSource : uint8_t {
  kStructural,    ///< the reference's structural rules (no declared steps in the capture)
  kProfilerStep,  ///< trace_view.json ProfilerStep#N ranges
  kStepId,        ///< kernel_details.csv `Step Id` column
};
const char* step_source_name(StepSource s);

/// Block kinds (§2.4). kOther is never emitted (as in the reference).
enum class BlockKind : uint8_t { kAttention, kFfn, kMoe, kAicpu, kOther };
const char* block_kind_name(BlockKind k);

/// One segment of a rank: a complete step or an explained / unexplained window.
struct StepSegment {
  std::string segment_id;           ///< stable_id("seg", rank_id, segment_index, row_start, row_end)
  SegmentType type = SegmentType::kStep;
  bool complete = false;            ///< true only for type kStep
  uint32_t row_start = 0, row_end = 0;  ///< inclusive kernel_details rows
  int64_t start_ns = 0, end_ns = 0; ///< earliest start / latest end of its rows
  std::string step_family;          ///< attention_moe_workload, ... ("" for non-steps)
  uint32_t main_layer_count = 0;
  uint32_t speculative_layer_count = 0;
  std::string structure_signature;  ///< "main_len=N ; main_period=..." ("" for non-steps)
  std::string cluster_id;           ///< stable_id("cluster", ...) 12 hex ("" for non-steps)
  uint32_t first_layer = 0;         ///< index into RankStructure::layers
  uint32_t layer_count = 0;         ///< layers of this segment (0 for non-steps)
  StepSource source = StepSource::kStructural;
  int64_t declared_step = -1;       ///< ProfilerStep#N / Step Id of the step (-1: none)
  std::string phase;                ///< "inference" or "training" ("" for non-steps)
  uint32_t microbatch_count = 0;    ///< training: microbatches seen in this step
  std::vector<std::string> frame_reasons;  ///< why the structural rules made it (reference reason strings)
  std::vector<std::string> frame_tags;     ///< repair tags, e.g. exact_regime_split
  /// A step's rows with a selection role (segmentation.rules selection_roles: the step delimiters),
  /// at most 64, in row order; empty for non-steps.
  std::vector<uint32_t> selection_rows;
};

/// One layer of a complete step.
struct LayerSegment {
  std::string layer_id;             ///< stable_id("layer", segment_id, layer_index)
  uint32_t segment = 0;             ///< index into RankStructure::segments
  uint32_t layer_index = 0;         ///< position within its step
  uint32_t row_start = 0, row_end = 0;
  int64_t start_ns = 0, end_ns = 0;
  uint32_t first_anchor_row = 0;    ///< the layer's first anchor event
  LayerRole role = LayerRole::kMain;
  int32_t microbatch = -1;          ///< training only
  BoundarySource boundary_source = BoundarySource::kExactStructuralAnchor;
  uint32_t signature = 0;           ///< the layer signature of §2.2.3: index into RankStructure::layer_signatures
};

/// A hard error of §2.2.7 (the run still writes everything; the wrapper treats it as failure).
struct HardError {
  std::string error_type;           ///< unexplained_structural_middle, overlapping_step_plan, ...
  uint32_t row_start = 0, row_end = 0;
  int32_t segment = -1;             ///< segment index when one is involved
  std::string detail;               ///< human-readable reason with the numbers that triggered it
};

/// Declared steps (ProfilerStep / Step Id) against the structural result, one entry per declared step.
struct StepBoundaryCheck {
  int64_t declared_step = -1;
  StepSource source = StepSource::kProfilerStep;
  uint32_t row_start = 0, row_end = 0;   ///< rows the declaration covers (row_end < row_start: none)
  uint32_t structural_steps = 0;         ///< complete structural steps whose rows overlap it
  bool agrees = false;                   ///< exactly one structural step, and it lies inside
  std::string note;                      ///< what differs, when it does not agree
};

/// What implements one layer role of a step (the reference's structure observation): the distinct
/// kernel names of the structural events (attention, MoE, block head, norm, compute) of its layers.
struct StructureObservation {
  uint32_t segment = 0;             ///< index into RankStructure::segments (a step)
  LayerRole role = LayerRole::kMain;
  std::vector<std::string> implementation_names;  ///< first seen first, at most 16
};

/// The reference's step-scope structure observation: one per (step, operator role) of the roles its
/// events carry, roles in the order their first event appears (an event's own roles in vocabulary
/// order). Written to structure_evidence_graph.json's structure_observations.
struct StepRoleObservation {
  uint32_t segment = 0;                           ///< index into RankStructure::segments (a step)
  std::string role;                               ///< the operator role ("attention", "compute", …)
  std::vector<std::string> implementation_names;  ///< distinct kernel names of its events, sorted, at most 16
  std::vector<uint32_t> rows;                     ///< its events' rows in row order, at most 64
};

/// Segment stage result for one rank.
struct RankStructure {
  std::string rank_id;
  uint64_t event_count = 0;
  StepSource step_source = StepSource::kStructural;
  std::string anchor_family;        ///< which anchor set was chosen (e.g. "attention.mla", "role:moe", "none")
  std::vector<StepSegment> segments;  ///< in row order, tiling the rank from the first plan
  std::vector<LayerSegment> layers;   ///< grouped by segment, in row order
  /// Distinct layer signatures (long strings shared by thousands of layers, stored once).
  std::vector<std::string> layer_signatures;
  const std::string& signature(const LayerSegment& l) const { return layer_signatures[l.signature]; }
  std::vector<HardError> hard_errors;
  std::vector<StepBoundaryCheck> boundary_checks;
  std::vector<StructureObservation> observations;  ///< one per (step, layer role), in step order
  std::vector<StepRoleObservation> role_observations;  ///< one per (step, operator role), in step order

  size_t step_count() const {
    size_t n = 0;
    for (const auto& s : segments) n += s.type == SegmentType::kStep ? 1 : 0;
    return n;
  }
};

/// One block of a layer (§2.4).
struct BlockSegment {
  std::string block_id;             ///< stable_id("blk", layer_id, block_index, kind, row_start, row_end)
  uint32_t layer = 0;               ///< index into RankStructure::layers
  uint32_t block_index = 0;
  BlockKind kind = BlockKind::kFfn;
  bool companion_layer = false;     ///< the layer has no attention block
  uint32_t row_start = 0, row_end = 0;
  int64_t start_ns = 0, end_ns = 0;
  uint32_t event_count = 0;
  uint32_t block_class = 0;         ///< index into RankClasses::block_classes
};

/// One shape-strict class (block, layer or step scope).
struct ShapeClass {
  std::string class_id;             ///< "<prefix>_<16 hex>" or "<prefix>_unknown_shape_<12 hex>"
  std::string structure_signature;  ///< "" for blocks
  std::string scope_label;          ///< "<kind>|companion=0", "<k1>-><k2>|companion=1", "layers=N|main=M"
  bool has_unknown_shape = false;
  uint32_t shape_pairs_count = 0;
  std::vector<uint32_t> members;    ///< indices into blocks / layers / segments of this rank
  // scope-specific metadata
  BlockKind block_kind = BlockKind::kFfn;          ///< block scope
  bool companion_layer = false;                    ///< block and layer scope
  std::vector<std::string> block_kinds;            ///< layer scope, block order
  std::vector<std::string> child_class_ids;        ///< layer: block class ids; step: layer class ids
  uint32_t main_layer_count = 0, layer_count = 0;  ///< step scope
  std::string step_family;                         ///< step scope
};

/// Classify stage result for one rank.
struct RankClasses {
  std::vector<BlockSegment> blocks;               ///< grouped by layer, in row order
  std::vector<ShapeClass> block_classes, layer_classes, step_classes;
  std::vector<int32_t> layer_class;               ///< per layer: index into layer_classes
  std::vector<int32_t> step_class;                ///< per segment: index into step_classes, -1 for non-steps
};

}  // namespace ascprof::model

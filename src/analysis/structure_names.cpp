#include "ascprof/model/structure.hpp"

namespace ascprof::model {

const char* segment_type_name(SegmentType t) {
  switch (t) {
    case SegmentType::kStep: return "step";
    case SegmentType::kHead: return "head";
    case SegmentType::kTail: return "tail";
    case SegmentType::kUnclassifiedIsland: return "unclassified_island";
    case SegmentType::kPiecewiseInterleavedWindow: return "piecewise_interleaved_window";
    case SegmentType::kRunnerWindow: return "runner_window";
    case SegmentType::kPartialBodyWindow: return "partial_body_window";
  }
  return "step";
}

const char* layer_role_name(LayerRole r) {
  switch (r) {
    case LayerRole::kMain: return "main";
    case LayerRole::kSpeculative: return "speculative";
    case LayerRole::kForward: return "forward";
    case LayerRole::kBackward: return "backward";
  }
  return "main";
}

const char* boundary_source_name(BoundarySource b) {
  switch (b) {
    case BoundarySource::kExactStructuralAnchor: return "exact_structural_anchor";
    case BoundarySource::kDeclaredStepWindow: return "declared_step_window";
    case BoundarySource::kTrainingAnchor: return "training_anchor";
  }
  return "exact_structural_anchor";
}

const char* reference_boundary_source_name(BoundarySource b) {
  return b == BoundarySource::kDeclaredStepWindow ? boundary_source_name(BoundarySource::kExactStructuralAnchor)
                                                  : boundary_source_name(b);
}

const char* step_source_name(StepSource s) {
  switch (s) {
    case StepSource::kStructural: return "structural";
    case StepSource::kProfilerStep: return "profiler_step";
    case StepSource::kStepId: return "step_id";
  }
  return "structural";
}

const char* block_kind_name(BlockKind k) {
  switch (k) {
    case BlockKind::kAttention: return "attention";
    case BlockKind::kFfn: return "ffn";
    case BlockKind::kMoe: return "moe";
    case BlockKind::kAicpu: return "aicpu";
    case BlockKind::kOther: return "other";
  }
  return "other";
}

}  // namespace ascprof::model

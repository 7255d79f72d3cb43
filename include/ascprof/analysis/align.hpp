#pragma once
/// Cross-rank step alignment (reference-analysis.md §2.7, step_time_overlap_v1): a rank's step and
/// the steps of other ranks that overlap it by at least 20 % of the shorter one form one alignment,
/// with skew, structure-mismatch and confidence. Beyond the reference, times are corrected by the
/// estimated clock offsets first, so ranks with skewed clocks still align. Plain function.
#include <cstdint>
#include <string>
#include <vector>

#include "ascprof/knowledge/knowledge.hpp"

namespace ascprof::analysis {

/// One complete step of a rank, as gathered (small: one per step).
struct StepWindow {
  std::string rank_id, segment_id, step_family;
  uint32_t main_layer_count = 0;
  int64_t start_ns = 0, end_ns = 0;
  uint32_t microbatch_count = 0;  ///< training steps: microbatches (0: not a training step)

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & rank_id & segment_id & step_family & main_layer_count & start_ns & end_ns & microbatch_count;
  }
};

struct StepAlignment {
  std::string alignment_id;            ///< stable_id("align", time_window, segment ids)
  std::vector<size_t> members;         ///< indices into the windows passed in, anchor first
  std::vector<std::string> rank_ids;   ///< distinct, in member order
  int64_t start_ns = 0, end_ns = 0;    ///< corrected times (reference rank's clock)
  double wall_skew_us = 0;             ///< max - min member duration
  bool is_structure_mismatch = false;  ///< more than one (step_family, main_layer_count)
  std::string confidence;              ///< high | medium | low
};

/// `windows` of all ranks; `offset_ns[i]` is subtracted from windows[i]'s times (0 when unknown).
/// Overlap and confidence thresholds: knowledge/diagnostics.rules [alignment].
std::vector<StepAlignment> align_steps(const std::vector<StepWindow>& windows, const std::vector<int64_t>& offset_ns,
                                       const knowledge::DiagnosticsRules& rules);

}  // namespace ascprof::analysis

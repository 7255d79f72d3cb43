#pragma once
/// Cross-rank step alignment (reference-analysis.md §2.7, step_time_overlap_v1): a rank's step and
/// the steps of other ranks that overlap it by at least 20 % of the shorter one form one alignment,
/// with skew, structure-mismatch and confidence. Beyond the reference, times are corrected by the
/// estimated clock offsets first, so ranks with skewed clocks still align. Plain function.
#include <cstdint>
#include <string>
#include <initializer_list>
#include <string_view>
#include <unordered_map>
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

/// One window of a StepWindows table, its strings viewing the table's (valid while it lives).
struct StepWindowView {
  std::string_view rank_id, segment_id, step_family;
  uint32_t main_layer_count = 0;
  int64_t start_ns = 0, end_ns = 0;
  uint32_t microbatch_count = 0;

  StepWindow window() const {
    return {std::string(rank_id), std::string(segment_id), std::string(step_family), main_layer_count, start_ns, end_ns,
            microbatch_count};
  }
};

/// Step windows stored by column: the rank ids and step families once each, the segment ids in one
/// buffer. ~60 bytes a window where a StepWindow takes ~176 (three strings, the segment id on the
/// heap): a root of 10,000 ranks × 228 steps holds 2.3 M windows on the coordinator (issue 22).
class StepWindows {
 public:
  StepWindows() = default;
  /// A table of these windows, in their order (a list of windows reads as its table).
  StepWindows(const std::vector<StepWindow>& windows);  // NOLINT(google-explicit-constructor)
  StepWindows(std::initializer_list<StepWindow> windows);  // NOLINT(google-explicit-constructor)
  void push_back(const StepWindow& w);
  /// Appends every window of `other` (its rank ids and families re-interned here).
  void append(const StepWindows& other);
  size_t size() const { return start_ns_.size(); }
  bool empty() const { return start_ns_.empty(); }
  StepWindowView operator[](size_t i) const;
  /// Bytes the table holds (its buffers' capacities; the name index not counted).
  uint64_t bytes() const;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & names_ & rank_ & family_ & main_layer_count_ & microbatch_count_ & start_ns_ & end_ns_ & segment_chars_ &
        segment_end_;
    if constexpr (Ar::is_loading::value) reindex();
  }

 private:
  uint32_t intern(std::string_view s);
  void reindex();

  std::vector<std::string> names_;  // rank ids and step families, each once
  std::unordered_map<std::string, uint32_t> index_;  // names_ -> position (rebuilt after a load)
  std::vector<uint32_t> rank_, family_, main_layer_count_, microbatch_count_;
  std::vector<int64_t> start_ns_, end_ns_;
  std::string segment_chars_;          // every segment id, one after the other
  std::vector<uint64_t> segment_end_;  // window i's id ends here (starts where i-1's ends)
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
std::vector<StepAlignment> align_steps(const StepWindows& windows, const std::vector<int64_t>& offset_ns,
                                       const knowledge::DiagnosticsRules& rules);

}  // namespace ascprof::analysis

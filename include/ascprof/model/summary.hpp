#pragma once
/// Summarize-stage results of one rank (reference-analysis.md §2.5, §2.6): window metrics of the
/// rank, its segments and layers, step anatomy, anomaly tags, and operator / HCCL / wait-anchor /
/// AICPU rows. Times are integer nanoseconds (the reference's µs/ms columns are derived when
/// written). Rows are kernel_details row indices, inclusive.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ascprof::model {

/// One idle gap between merged busy intervals of a window.
struct Bubble {
  uint32_t bubble_index = 0;  ///< position in the window's gap order (by start time)
  int64_t start_ns = 0, end_ns = 0;
  uint32_t before_row = 0;    ///< the row whose end opens the gap
  uint32_t after_row = 0;     ///< the row whose start closes it
};

/// Name -> count, sorted by name.
using Counts = std::vector<std::pair<std::string, uint64_t>>;

/// A name held by many summary rows (counter names: upper-cased task type, role, category, op type;
/// a block's top-op kernel name and task type), interned process-wide: 8 bytes, and equal names
/// share one string, so the ~100k windows of a big rank hold no copies. Names come from a bounded
/// vocabulary (the knowledge and the kernel names of the captures); the table only grows and is
/// safe to use from several threads. Compares equal by name; orders by name. Defined in
/// src/analysis/summarize.cpp.
class CountName {
 public:
  CountName();  ///< the empty name
  CountName(std::string_view name);  ///< implicit: counters are written as {"name", n}
  CountName(const char* name) : CountName(std::string_view(name)) {}
  CountName(const std::string& name) : CountName(std::string_view(name)) {}
  const std::string& str() const { return *name_; }
  operator std::string_view() const { return *name_; }
  friend bool operator==(const CountName& a, const CountName& b) { return a.name_ == b.name_; }
  friend bool operator<(const CountName& a, const CountName& b) { return *a.name_ < *b.name_; }

 private:
  const std::string* name_;  ///< the interned string (never freed)
};

/// Interned name -> count of a window, sorted by name (exactly as Counts, smaller).
using NameCounts = std::vector<std::pair<CountName, uint64_t>>;

/// §2.5.1 metrics of a set of events (a row range).
struct WindowMetrics {
  uint64_t event_count = 0;
  uint32_t row_start = 0, row_end = 0;
  int64_t start_ns = 0, end_ns = 0;   ///< min start / max end
  int64_t wall_ns = 0;                ///< end - start
  int64_t busy_union_ns = 0;          ///< union of [start, end) of events with end > start
  int64_t kernel_sum_ns = 0;          ///< sum of durations
  int64_t wait_sum_ns = 0;            ///< sum of waits
  int64_t total_cost_ns = 0;          ///< sum of duration + wait
  int64_t underfeed_ns = 0;           ///< wall - busy
  double underfeed_ratio = 0;         ///< underfeed / wall (0 when wall is 0)
  int64_t internal_bubble_total_ns = 0;
  int64_t largest_internal_bubble_ns = 0;
  uint32_t bubble_count = 0;
  uint32_t stream_count = 0;
  NameCounts task_type_counts, role_counts, category_counts;
  std::vector<Bubble> top_bubbles;    ///< largest first (duration desc, then start), at most N
};

/// One window of a step's anatomy (head / main / tail). Empty when row_end < row_start.
struct AnatomyWindow {
  bool empty = true;
  uint32_t row_start = 0, row_end = 0;
  int64_t start_ns = 0, end_ns = 0;
  int64_t wall_ns = 0, busy_ns = 0, bubble_ns = 0;
  uint64_t event_count = 0;
};

/// §2.5.3 step anatomy with a meaningful head and tail (the reference's are always empty): head =
/// the step's rows before its first layer; tail = from the step's last selection or sampling row
/// (argmax, top-k/top-p) after the last layer's last anchor to the step end; main = the rows between.
struct StepAnatomy {
  std::string anatomy_kind;           ///< full | head_only
  AnatomyWindow head, main, tail;
  double head_ratio = 0, main_ratio = 0, tail_ratio = 0, bubble_ratio = 0;
};

/// A segment row of step_summary.csv (every segment type).
struct SegmentSummary {
  uint32_t segment = 0;               ///< index into RankStructure::segments
  WindowMetrics metrics;
  std::vector<std::string> anomaly_tags;  ///< DEVICE_IDLE_GAP_HEAVY, INTERNAL_BUBBLE_HEAVY
  bool has_attention = false, has_moe = false, has_communication = false;
  uint64_t attention_event_count = 0, moe_event_count = 0, comm_event_count = 0;
  StepAnatomy anatomy;                ///< steps only (anatomy_kind "" otherwise)
};

/// A layer row of layer_summary.csv.
struct LayerSummary {
  uint32_t layer = 0;                 ///< index into RankStructure::layers
  WindowMetrics metrics;              ///< without top_bubbles
  bool has_attention = false, has_moe = false, has_communication = false;
};

/// §2.6 bound classification.
struct BoundClass {
  std::string bound_stage;            ///< a stage field name, or aicpu / dsa / communication / unknown
  std::string bound_family;           ///< cube, vector, aic_mte, aiv_mte, scalar, mixed, aicpu, communication, comm_aiv_mix, dsa, unknown
  std::string dominant_core;          ///< aic, aiv, mix, none
};

/// One operator of a rank (§2.5.4): key (name, task_type, roles).
struct OperatorRow {
  std::string name, task_type, roles, categories;  ///< roles / categories joined by ","
  uint64_t call_count = 0;
  int64_t duration_sum_ns = 0, wait_sum_ns = 0;
  uint32_t stream_count = 0;
  std::vector<std::pair<uint32_t, uint32_t>> row_ranges;  ///< contiguous row runs
  std::vector<uint32_t> sample_rows;  ///< first rows, at most SummarizeRules::operator_sample_event_ids
  std::string op_type;                ///< most common op_type of its events
  BoundClass bound;
  bool pipeline_signal = false;
  std::vector<double> pipeline_us;    ///< per PipelineRules::fields (µs sums); empty when no signal
};

/// HCCL rows of a rank (§2.5.5): key (hccl_op_kind, comm_aiv_fused).
struct HcclOpRow {
  std::string hccl_op_kind;
  bool comm_aiv_fused = false;
  uint64_t name_count = 0, call_count = 0;
  int64_t duration_sum_ns = 0, wait_sum_ns = 0;
  double duration_avg_us = 0, duration_min_us = 0, duration_p50_us = 0, duration_p90_us = 0, duration_max_us = 0;
  double wait_ratio = 0;

  template <class Ar>  // gathered whole to the coordinator for hccl_class_summary (RankOutcome::hccl)
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & hccl_op_kind & comm_aiv_fused & name_count & call_count & duration_sum_ns & wait_sum_ns & duration_avg_us &
        duration_min_us & duration_p50_us & duration_p90_us & duration_max_us & wait_ratio;
  }
};

/// §2.5.6 wait anchor.
struct WaitAnchorRow {
  uint32_t op = 0;                    ///< index into RankSummary::operators
  uint32_t total_cost_avg_rank = 0;   ///< 1 = highest average total cost of the rank
  double wait_ratio = 0;
  bool is_false_hotspot_risk = false;
};

/// §2.5.7 AICPU exposure of one AICPU kernel name.
struct AicpuRow {
  std::string name;
  uint64_t call_count = 0;
  int64_t duration_sum_ns = 0;
  int64_t overlap_with_ai_core_ns = 0;  ///< overlap with the *merged* AI-core intervals (never above duration)
  double masked_ratio = 0;
  std::string classification;           ///< AICPU_MASKED_BUT_UNDESIRABLE | AICPU_PARTIALLY_EXPOSED | AICPU_EXPOSED_NOT_ALLOWED
  std::vector<std::pair<uint32_t, uint32_t>> row_ranges;
  std::vector<uint32_t> sample_rows;
};

/// One operator class across ranks (operator_class_summary.csv): key (name, task_type, op_type, roles).
struct OperatorClassRow {
  std::string name, task_type, op_type, roles;
  uint32_t rank_count = 0;            ///< ranks holding a member row
  uint64_t call_count = 0;
  int64_t duration_sum_ns = 0, wait_sum_ns = 0;
  /// Spread of the members' per-rank duration sums (µs); skew = (max - min) / mean, 0 when mean is 0.
  double rank_duration_min_us = 0, rank_duration_max_us = 0, rank_duration_p50_us = 0, rank_duration_skew_ratio = 0;
  BoundClass bound;                   ///< recomputed on the summed pipeline
  bool pipeline_signal = false;       ///< any member had pipeline signal
  std::vector<double> pipeline_us;    ///< sums over members with signal; empty when none had signal
};

/// One HCCL class across ranks (hccl_class_summary.csv): key (hccl_op_kind, comm_aiv_fused).
struct HcclClassRow {
  std::string hccl_op_kind;
  bool comm_aiv_fused = false;
  uint32_t rank_count = 0;
  uint64_t call_count = 0;
  int64_t duration_sum_ns = 0, wait_sum_ns = 0;
  double duration_avg_us = 0;         ///< duration sum / call count
  /// Over the members' per-rank duration_avg_us; skew = (max - min) / mean, 0 when mean is 0.
  double rank_avg_min_us = 0, rank_avg_max_us = 0, rank_avg_mean_us = 0, rank_skew_ratio = 0;
  double duration_max_us = 0;         ///< largest member duration_max_us
};

/// A block row of block_summary.csv (§2.5.8): the block's rows with op-type mix, communication share,
/// summed pipeline and the "compute-first" bound. Role counts are metrics.role_counts.
struct BlockSummary {
  /// One (name, task_type) pair of the block; task_type upper-cased, "UNKNOWN" for an empty cell.
  struct TopOp {
    CountName name, task_type;        ///< interned: ~76k blocks of a big rank hold 5 each
    uint64_t call_count = 0;
    int64_t duration_sum_ns = 0;
  };
  uint32_t block = 0;                 ///< index into RankClasses::blocks
  WindowMetrics metrics;              ///< §2.5.1 over the block's rows, without top_bubbles
  NameCounts op_type_counts;          ///< events per op_type, sorted by name
  std::string dominant_op_type;       ///< most summed duration (ties: first seen); "unknown" when empty
  int64_t comm_duration_ns = 0;       ///< duration of events with op_type communication or mix_comm_aiv
  double comm_share = 0;              ///< comm_duration / kernel sum (0 when the kernel sum is 0)
  bool pipeline_signal = false;       ///< some event has stage signal
  std::vector<double> pipeline_us;    ///< per PipelineRules::fields (µs sums); empty when no signal
  BoundClass bound;                   ///< on pipeline_us when signal, else on dominant_op_type
  std::vector<TopOp> top_ops;         ///< at most 5, duration desc, ties first seen
  bool has_attention = false;         ///< role attention or attention_aux
  bool has_moe = false, has_communication = false;
};

/// Everything the summarize stage produces for one rank.
struct RankSummary {
  WindowMetrics rank;                 ///< the whole rank
  std::vector<SegmentSummary> segments;
  std::vector<LayerSummary> layers;
  std::vector<BlockSummary> blocks;   ///< one per RankClasses::blocks entry
  std::vector<OperatorRow> operators; ///< sorted by total cost desc, then name
  std::vector<HcclOpRow> hccl;
  std::vector<WaitAnchorRow> wait_anchors;
  std::vector<AicpuRow> aicpu;
};

}  // namespace ascprof::model

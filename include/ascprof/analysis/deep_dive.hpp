#pragma once
/// Operator deep dive (issue 9; reference-analysis.md §4): the hot operators of a root and of each
/// rank, one row per (kernel name, Accelerator Core, input shapes and dtypes), classified by the
/// rules of knowledge/operator_deep_dive.rules from the kernel_details metric columns, Block Dim,
/// Wait Time, op_statistic.csv and api_statistic.csv, with a shape-derived lower-bound check against
/// the chip peaks.
///
/// Plain functions: `operator_profiles` runs in the rank job while the kernel table is in memory and
/// keeps per-operator sums (serialised into the rank outcome); DeepDiveRootMerge folds them where
/// the ranks ran and merges up the processes; `build_deep_dive` runs on the coordinator. No I/O.
#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ascprof/analysis/normalize.hpp"
#include "ascprof/common/exact_sum.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/model/kernel_table.hpp"
#include "ascprof/model/op_statistics.hpp"

namespace ascprof::analysis {

/// Metric columns kept per operator, in this order (duration-weighted means later).
inline constexpr std::array<std::string_view, 12> kDeepDiveMetricColumns = {
    "aic_mac_ratio", "aic_scalar_ratio", "aic_mte1_ratio", "aic_mte2_ratio", "aic_fixpipe_ratio",
    "aic_icache_miss_rate", "aiv_vec_ratio", "aiv_scalar_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio",
    "aiv_icache_miss_rate", "cube_utilization(%)"};

/// One (kernel name, task type, input shapes, input dtypes) of a rank, summed over its calls.
struct OperatorProfile {
  std::string name, task_type, kernel_type;  ///< task_type upper-cased ("UNKNOWN" when empty)
  std::string op_class;                      ///< §2.6 op_type of its first call (aic, aiv, aicpu, ...)
  std::string categories;                    ///< taxonomy categories joined by ","
  std::string input_shapes, input_dtypes, output_shapes, output_dtypes;
  uint64_t calls = 0;
  int64_t dur_sum_ns = 0, dur_min_ns = 0, dur_max_ns = 0, wait_sum_ns = 0;
  int32_t block_dim_min = -1, block_dim_max = -1, mix_block_dim_max = -1;  ///< -1: column absent
  uint64_t hf32_known = 0, hf32_yes = 0;     ///< calls with a YES/NO HF32 cell, and YES among them
  std::array<double, kDeepDiveMetricColumns.size()> metric_weighted{};  ///< sum of value x duration (µs)
  std::array<double, kDeepDiveMetricColumns.size()> metric_weight{};    ///< sum of durations (µs) with a value
  std::vector<double> pipeline_us;           ///< per PipelineRules field (µs sums), for the bound family
  std::vector<uint32_t> sample_rows;         ///< first rows, at most DeepDiveRules::evidence_rows

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & name & task_type & kernel_type & op_class & categories & input_shapes & input_dtypes & output_shapes &
        output_dtypes & calls & dur_sum_ns & dur_min_ns & dur_max_ns & wait_sum_ns & block_dim_min & block_dim_max &
        mix_block_dim_max & hf32_known & hf32_yes & metric_weighted & metric_weight & pipeline_us & sample_rows;
  }
};

/// Everything the deep dive needs from one rank (kilobytes: one entry per distinct operator).
struct RankOperatorProfiles {
  std::vector<OperatorProfile> profiles;     ///< by total duration desc, then name, shapes, dtypes
  int64_t kernel_time_ns = 0;                ///< sum of all kernel durations of the rank
  int64_t span_ns = 0;                       ///< first kernel start to last kernel end
  bool has_metrics = false;                  ///< the capture has at least one of kDeepDiveMetricColumns
  bool op_statistic_present = false, api_statistic_present = false;
  std::vector<model::OpStatisticRow> op_stats;
  std::vector<model::ApiStatisticRow> api_stats;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & profiles & kernel_time_ns & span_ns & has_metrics & op_statistic_present & api_statistic_present & op_stats &
        api_stats;
  }
};

/// Sums the rank's kernels per operator. Pure; O(rows) with one hash lookup per row.
RankOperatorProfiles operator_profiles(const model::KernelTable& kernels, const NormalizedKernels& norm,
                                       const StringPool& pool, const knowledge::Knowledge& kb);

/// One classification of a row: the rule, the measured facts, and the rule's inference.
struct DeepDiveDetail {
  std::string id, title, severity;
  std::vector<std::string> facts;  ///< "aiv_scalar_ratio = 0.700 (test: aiv_scalar_ratio >= 0.4)"
  std::string inference, cause, suggestion;
};

/// One deep-dive row (see the operator_deep_dive.csv columns).
struct DeepDiveRow {
  std::string deep_dive_id, scope, rank_id;  ///< scope: root | rank
  uint32_t hot_rank = 0, rank_count = 0;
  std::string name, task_type, kernel_type, categories, shape_class, input_shapes, input_dtypes;
  /// Numeric features in knowledge::kDeepDiveNumbers order; NaN = not available.
  std::array<double, knowledge::kDeepDiveNumbers.size()> numbers{};
  double cumulative_share = 0;
  std::string bound_family, work_kind, achieved_unit;
  std::string host_api;                      ///< matched aclnn API ("" = none)
  double host_api_avg_us = 0;
  uint64_t host_api_count = 0;
  std::string slowest_rank_id;               ///< root rows
  double slowest_rank_avg_us = 0;
  std::vector<DeepDiveDetail> details;       ///< by severity (high first), then rule order
  std::string severity;                      ///< of details[0], "" when none
  std::vector<std::string> evidence_ids;     ///< evt_<rank ordinal>_<row>
  std::vector<std::string> gaps;
  /// The value of numeric feature `name` (NaN when absent or unknown).
  double number(std::string_view feature) const;
  /// "<title>: <cause> -> <suggestion>" of the first classification, or "no pathology found by the rules".
  std::string verdict() const;
};

/// A host API that a [host_rule] flags on a rank.
struct HostApiRow {
  std::string rank_id, level, api, rule, title, cause, suggestion;
  double time_us = 0, avg_us = 0, share_of_span = 0;
  uint64_t count = 0;
};

struct DeepDive {
  knowledge::ChipSpec chip;
  bool chip_assumed = true;
  std::vector<DeepDiveRow> rows;             ///< root rows, then each rank's rows (rank order)
  std::vector<HostApiRow> host_api;
  uint32_t ranks = 0, ranks_without_metrics = 0, ranks_without_op_statistic = 0, ranks_without_api_statistic = 0;
};

/// One rank's input to build_deep_dive.
struct RankProfilesRef {
  std::string rank_id;
  uint32_t rank_ordinal = 0;
  const RankOperatorProfiles* profiles = nullptr;
};

/// What the root scope reads of some of a root's ranks, merged exactly (issue 22): each process
/// folds its own ranks, the merges go up the processes' tree in any order and grouping, and the
/// root rows come out the same. Integer sums add, minima and maxima merge, metadata is the first
/// rank's (lowest ordinal), the double sums are ExactSum (correctly rounded, independent of order),
/// the evidence keeps the first rows in (rank, sample) order, the slowest rank ties to the lower.
struct DeepDiveRootMerge {
  struct Operator {
    OperatorProfile p;  ///< the first rank's identity and metadata; integer sums, minima, maxima (no samples)
    uint32_t first_rank = UINT32_MAX, first_position = 0;  ///< first seen: rank, then its profile's position
    uint32_t rank_count = 0;
    std::array<ExactSum, kDeepDiveMetricColumns.size()> metric_weighted, metric_weight;
    std::vector<ExactSum> pipeline_us;
    ExactSum avg_sum_us;  ///< the ranks' average durations, for the spread
    double slowest_avg_us = -1;
    uint32_t slowest_rank = UINT32_MAX;
    std::string slowest_rank_id;
    std::vector<std::array<uint32_t, 3>> evidence;  ///< (rank ordinal, sample position, row), the first evidence_rows

    template <class Ar>
    void serialize(Ar& ar, unsigned /*version*/) {
      ar & p & first_rank & first_position & rank_count & metric_weighted & metric_weight & pipeline_us & avg_sum_us &
          slowest_avg_us & slowest_rank & slowest_rank_id & evidence;
    }
  };
  std::vector<Operator> operators;                   ///< in any order (the rows are sorted, ties first seen)
  std::unordered_map<std::string, uint32_t> index;   ///< operator key -> operators (rebuilt after a load)
  uint32_t ranks = 0, ranks_without_metrics = 0, ranks_without_op_statistic = 0, ranks_without_api_statistic = 0;
  int64_t kernel_time_ns = 0;
  std::map<std::string, std::pair<ExactSum, uint64_t>> host_api;                        ///< API -> time (µs), count
  std::map<std::pair<std::string, std::string>, std::pair<ExactSum, ExactSum>> op_stats;  ///< (type, core) -> total, ratio

  /// Adds a rank (its ordinal: the rank order of the root).
  void fold(uint32_t ordinal, const std::string& rank_id, const RankOperatorProfiles& rank, size_t evidence_rows);
  /// Adds the merge of a disjoint set of the root's ranks.
  void merge(DeepDiveRootMerge&& other, size_t evidence_rows);

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & operators & ranks & ranks_without_metrics & ranks_without_op_statistic & ranks_without_api_statistic &
        kernel_time_ns & host_api & op_stats;
  }
};

/// Selects and classifies the hot operators of the root (from `root`, every rank's profiles
/// merged) and of every rank in `ranks` (a rank scope reads only the rank's first max_operators
/// profiles, its API and op statistics). `chip_name` empty = the rules' default chip (reported as
/// assumed).
DeepDive build_deep_dive(DeepDiveRootMerge root, std::span<const RankProfilesRef> ranks, const knowledge::Knowledge& kb,
                         const std::string& chip_name = "");

/// The same over ranks given whole: their profiles folded into the root merge first.
DeepDive build_deep_dive(std::span<const RankProfilesRef> ranks, const knowledge::Knowledge& kb,
                         const std::string& chip_name = "");

/// Work of one call from its shapes ("4096,7168;7168,2048"), or NaN when the shapes do not give it.
double matmul_flops(const std::string& input_shapes);
double grouped_matmul_flops(const std::string& input_shapes);
double tensor_bytes(const std::string& shapes, const std::string& dtypes, const knowledge::DeepDiveRules& rules);

}  // namespace ascprof::analysis

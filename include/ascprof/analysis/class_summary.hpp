#pragma once
/// Cross-rank block / layer / step class summaries (reference-analysis.md §2.5.8, second part:
/// block_class_summary.csv, layer_class_summary.csv, step_class_summary.csv).
///
/// Two steps, so that no process ever holds another rank's rows:
///  1. `class_partials` (per rank, where the rank was summarised) folds the rank's members of each
///     class into a compact ClassPartials: class metadata, one wall value per member (for exact
///     quantiles) and sums / counters / first-seen-ordered unions. No rows, no per-event data.
///  2. `merge_class_partials` merges the partials of the root's ranks, given in rank order, into the
///     class rows. Class ids are shape-strict hashes, identical on every rank for the same class, so
///     they are the merge key. It is ClassPartialsMerge (class_merge.hpp) over every rank: analyze
///     folds each process's ranks into one and merges those up the processes instead.
///
/// The result depends only on the partials and their order (rank order): sums of doubles are added
/// rank by rank, "first seen" means first in rank order then member order, exactly as the reference
/// sees its rows. No files, no MPI; every struct here is serialisable (`serialize(ar, version)`, only
/// arithmetic, std::string, std::vector and nested structs: boost's string.hpp and vector.hpp suffice).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/model/structure.hpp"
#include "ascprof/model/summary.hpp"

namespace ascprof::analysis {

/// One (name, task_type) operator pair summed over members' block top-5 lists.
struct ClassTopOp {
  std::string name, task_type;
  uint64_t call_count = 0;
  int64_t duration_sum_ns = 0;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & name & task_type & call_count & duration_sum_ns;
  }
};

/// A named counter / sum, kept in first-seen order inside partials.
struct NamedSum {
  std::string name;
  uint64_t count = 0;    ///< members (or events, for op_type_counts) contributing
  int64_t sum_ns = 0;    ///< summed wall (block kinds, layer classes); 0 for pure counters

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & name & count & sum_ns;
  }
};

/// One rank's members of one block class.
struct BlockClassPartial {
  std::string class_id, block_kind;
  bool companion_layer = false, has_unknown_shape = false;
  std::vector<int64_t> wall_ns;          ///< one per member, member order
  int64_t busy_sum_ns = 0, bubble_sum_ns = 0;  ///< bubble = underfeed (wall - busy), as the reference
  int64_t comm_duration_sum_ns = 0;
  double comm_share_sum = 0;
  bool pipeline_signal = false;          ///< some member had stage signal
  std::vector<double> pipeline_us;       ///< per PipelineRules field, summed over members with signal
  std::vector<NamedSum> bound_family_counts;  ///< members per bound_family, first seen
  std::vector<NamedSum> op_type_counts;       ///< events per op_type, first seen (members' name order)
  std::vector<ClassTopOp> top_ops;            ///< union of member top-5 lists, first seen, not cut

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & class_id & block_kind & companion_layer & has_unknown_shape & wall_ns & busy_sum_ns & bubble_sum_ns &
        comm_duration_sum_ns & comm_share_sum & pipeline_signal & pipeline_us & bound_family_counts & op_type_counts &
        top_ops;
  }
};

/// One rank's members of one layer class.
struct LayerClassPartial {
  std::string class_id, structure_signature;
  std::vector<std::string> block_kinds, block_class_ids;
  bool companion_layer = false, has_unknown_shape = false;
  std::vector<int64_t> wall_ns;
  int64_t busy_sum_ns = 0, bubble_sum_ns = 0;
  std::vector<NamedSum> block_kind_walls;  ///< per block kind: blocks and their summed wall, first seen
  std::vector<ClassTopOp> top_ops;         ///< from the member layers' blocks' top-5 lists

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & class_id & structure_signature & block_kinds & block_class_ids & companion_layer & has_unknown_shape &
        wall_ns & busy_sum_ns & bubble_sum_ns & block_kind_walls & top_ops;
  }
};

/// One rank's members of one step class.
struct StepClassPartial {
  std::string class_id, structure_signature, step_family;
  uint32_t main_layer_count = 0, layer_count = 0;
  bool has_unknown_shape = false;
  std::vector<int64_t> wall_ns;
  int64_t busy_sum_ns = 0, bubble_sum_ns = 0;
  uint64_t anatomy_count = 0;              ///< members with an anatomy (the head/main/tail means divide by it)
  int64_t head_sum_ns = 0, main_sum_ns = 0, tail_sum_ns = 0;
  double head_ratio_sum = 0, main_ratio_sum = 0, tail_ratio_sum = 0, bubble_ratio_sum = 0;
  std::vector<NamedSum> layer_class_walls; ///< per layer class id: layers and their summed wall, first seen
  std::vector<ClassTopOp> top_ops;         ///< from the steps' blocks' top-5 lists

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & class_id & structure_signature & step_family & main_layer_count & layer_count & has_unknown_shape & wall_ns &
        busy_sum_ns & bubble_sum_ns & anatomy_count & head_sum_ns & main_sum_ns & tail_sum_ns & head_ratio_sum &
        main_ratio_sum & tail_ratio_sum & bubble_ratio_sum & layer_class_walls & top_ops;
  }
};

/// Everything one rank contributes to the class summaries (classes in the rank's class order).
struct ClassPartials {
  std::string rank_id;
  std::vector<BlockClassPartial> blocks;
  std::vector<LayerClassPartial> layers;
  std::vector<StepClassPartial> steps;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & rank_id & blocks & layers & steps;
  }
};

/// Folds one rank's classes. Members are the classes' member lists; a member whose summary row is
/// missing (index out of range) is skipped. Blocks use RankSummary::blocks, layers
/// RankSummary::layers, steps RankSummary::segments (+ anatomy) and, for top_layer_classes / top_ops,
/// the step's layers and their blocks. Classes without any summarised member are left out.
ClassPartials class_partials(const model::RankStructure& structure, const model::RankClasses& classes,
                             const model::RankSummary& summary, const knowledge::Knowledge& kb);

/// block_class_summary.csv row (reference column order).
struct BlockClassSummaryRow {
  std::string block_class_id, block_kind;
  bool companion_layer = false;
  uint64_t member_count = 0;
  uint32_t rank_count = 0;               ///< distinct rank ids holding a member
  bool has_unknown_shape = false;
  double wall_ms_sum = 0, wall_ms_mean = 0, wall_ms_p50 = 0, wall_ms_p90 = 0;
  double busy_ms_sum = 0, busy_ms_mean = 0, bubble_ms_mean = 0;
  double comm_share_mean = 0, comm_duration_us_sum = 0;
  bool pipeline_signal = false;
  model::BoundClass bound;               ///< compute-first lens on the summed pipeline
  std::string dominant_op_type;          ///< most events over all members (ties: first seen); "unknown" when none
  model::Counts bound_family_member_histogram;  ///< sorted by name
  model::Counts op_type_counts;                 ///< sorted by name
  std::vector<ClassTopOp> top_ops;              ///< at most 10, duration desc, ties first seen
  std::vector<double> pipeline_us;              ///< per PipelineRules field; empty without signal
};

/// layer_class_summary.csv row.
struct LayerClassSummaryRow {
  std::string layer_class_id, structure_signature;
  std::vector<std::string> block_kinds, block_class_ids;
  bool companion_layer = false, has_unknown_shape = false;
  uint64_t member_count = 0;
  uint32_t rank_count = 0;
  double wall_ms_sum = 0, wall_ms_mean = 0, wall_ms_p50 = 0, wall_ms_p90 = 0;
  double busy_ms_mean = 0, bubble_ms_mean = 0;
  /// Per block kind (first seen): mean block wall; share = Σ block wall of the kind / Σ layer wall
  /// (empty when Σ layer wall is 0).
  std::vector<std::pair<std::string, double>> block_kind_wall_ms_mean, block_kind_wall_ms_share_mean;
  std::vector<ClassTopOp> top_ops;
};

/// One entry of step_class_summary.csv's top_layer_classes.
struct TopLayerClass {
  std::string layer_class_id;
  double wall_ms_sum = 0;
  uint64_t member_count = 0;
};

/// step_class_summary.csv row.
struct StepClassSummaryRow {
  std::string step_class_id, structure_signature, step_family;
  uint32_t main_layer_count = 0, layer_count = 0;
  bool has_unknown_shape = false;
  uint64_t member_count = 0;
  uint32_t rank_count = 0;
  double wall_ms_sum = 0, wall_ms_mean = 0, wall_ms_p50 = 0, wall_ms_p90 = 0;
  double busy_ms_mean = 0, bubble_ms_mean = 0;
  double head_ms_mean = 0, main_ms_mean = 0, tail_ms_mean = 0;
  double head_ratio_mean = 0, main_ratio_mean = 0, tail_ratio_mean = 0, bubble_ratio_mean = 0;
  std::vector<TopLayerClass> top_layer_classes;  ///< at most 5, wall desc, ties first seen
  std::vector<ClassTopOp> top_ops;               ///< at most 10
};

/// The three tables of a capture root.
struct ClassSummaries {
  std::vector<BlockClassSummaryRow> blocks;  ///< member_count desc, then block_kind, then class id
  std::vector<LayerClassSummaryRow> layers;  ///< member_count desc, then class id
  std::vector<StepClassSummaryRow> steps;    ///< member_count desc, then class id
};

/// Merges the partials of a root's ranks (`per_rank` in rank order). Class metadata comes from the
/// first partial holding the class. Wall quantiles use sorted_quantile over every member of every
/// rank; means divide sums by member counts; bound fields are recomputed on the summed pipeline
/// (op_type none when any stage signal, else dominant_op_type with is_aicpu = aicpu and
/// is_communication = communication, as the reference).
ClassSummaries merge_class_partials(const std::vector<ClassPartials>& per_rank, const knowledge::Knowledge& kb);

}  // namespace ascprof::analysis

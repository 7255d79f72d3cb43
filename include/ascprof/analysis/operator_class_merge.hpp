#pragma once
/// operator_class_summary and hccl_class_summary over any split of a root's ranks (issue 22): each
/// process folds its own ranks' operator and HCCL rows, the merges go up the processes' tree in any
/// order and grouping, and the finished rows equal merge_operator_classes / merge_hccl_classes over
/// every rank (summarize.hpp, which are this merge over every rank in rank order). Exact: integer
/// sums add; the per-member values the spread columns read (a member's duration sum, an HCCL
/// member's average) are kept, 8 bytes a member, and sorted at the finish as the single pass sorts
/// them; the pipeline sums are ExactSum (correctly rounded, independent of order); ties in the
/// operator order keep first seen (rank, then row), carried with each class. No MPI.
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "ascprof/common/exact_sum.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/model/summary.hpp"

namespace ascprof::analysis {

struct OperatorClassMerge {
  struct OperatorClass {
    std::string name, task_type, op_type, roles;
    uint32_t first_rank = UINT32_MAX, first_row = 0;  ///< first seen
    uint64_t call_count = 0;
    int64_t duration_sum_ns = 0, wait_sum_ns = 0;
    bool pipeline_signal = false;
    std::vector<int64_t> member_duration_ns;  ///< one per member row
    std::vector<uint32_t> ranks;              ///< ranks holding a member (distinct at the finish)
    std::vector<ExactSum> pipeline_us;        ///< over members with signal, per PipelineRules field

    template <class Ar>
    void serialize(Ar& ar, unsigned /*version*/) {
      ar & name & task_type & op_type & roles & first_rank & first_row & call_count & duration_sum_ns & wait_sum_ns &
          pipeline_signal & member_duration_ns & ranks & pipeline_us;
    }
  };
  struct HcclClass {
    std::string hccl_op_kind;
    bool comm_aiv_fused = false;
    uint64_t call_count = 0;
    int64_t duration_sum_ns = 0, wait_sum_ns = 0;
    double duration_max_us = 0;
    std::vector<double> member_avg_us;  ///< one per member row
    std::vector<uint32_t> ranks;

    template <class Ar>
    void serialize(Ar& ar, unsigned /*version*/) {
      ar & hccl_op_kind & comm_aiv_fused & call_count & duration_sum_ns & wait_sum_ns & duration_max_us & member_avg_us &
          ranks;
    }
  };
  std::vector<OperatorClass> operators;
  std::unordered_map<std::string, uint32_t> index;  ///< operator class key -> operators (rebuilt after a load)
  std::vector<HcclClass> hccl;

  /// Adds rank `rank`'s rows (its ordinal: the rank order of the root).
  void fold(uint32_t rank, std::span<const model::OperatorRow> rows, std::span<const model::HcclOpRow> hccl_rows,
            const knowledge::Knowledge& kb);
  /// Adds rank `rank`'s HCCL rows only (fold does it too).
  void fold_hccl(uint32_t rank, std::span<const model::HcclOpRow> hccl_rows);
  /// Adds the merge of a disjoint set of the root's ranks.
  void merge(OperatorClassMerge&& other);
  /// The operator_class_summary rows (sorted by total cost desc, ties first seen).
  std::vector<model::OperatorClassRow> finish_operators(const knowledge::Knowledge& kb) const;
  /// The hccl_class_summary rows (duration sum desc, then kind, fused first).
  std::vector<model::HcclClassRow> finish_hccl() const;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & operators & hccl;
  }
};

}  // namespace ascprof::analysis

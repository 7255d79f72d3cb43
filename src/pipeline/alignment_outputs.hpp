#pragma once
// cross_rank_alignment.csv / .json (reference-analysis.md §2.7): step rows first, then operator rows
// in (role, start) order, streamed to temporary files and renamed (a 64-rank root has millions of
// operator rows). Internal to the pipeline module.
#include <filesystem>
#include <string>
#include <vector>

#include "ascprof/analysis/align.hpp"
#include "ascprof/analysis/operator_align.hpp"
#include "ascprof/common/status.hpp"
#include "ascprof/knowledge/knowledge.hpp"

namespace ascprof::pipeline {

struct AlignmentTables {
  const std::vector<analysis::StepAlignment>* steps = nullptr;
  const std::vector<analysis::StepWindow>* windows = nullptr;  ///< what step members index
  const analysis::OperatorAlignments* operators = nullptr;
  const std::vector<const analysis::RankOperatorBuckets*>* per_rank = nullptr;  ///< what operator members index
  const std::vector<std::string>* rank_ids = nullptr;   ///< per_rank's rank ids
  const std::vector<uint32_t>* rank_ordinals = nullptr; ///< per_rank's ordinals (event ids)
  const knowledge::OperatorAlignmentRules* rules = nullptr;
  /// The clock offset each `per_rank` entry's buckets were folded with (0 where none was estimated;
  /// null: all 0). The reference's columns get raw times back (corrected + offset), the corrected
  /// ones go to the corrected_* columns; step rows take their raw times from `windows`.
  const std::vector<int64_t>* rank_offsets_ns = nullptr;
};

/// Writes both files into `out_dir`; appends their paths to `written`.
Status write_alignment_tables(const std::filesystem::path& out_dir, const AlignmentTables& t,
                              std::vector<std::string>* written);

}  // namespace ascprof::pipeline

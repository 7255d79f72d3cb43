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
  const analysis::StepWindows* windows = nullptr;  ///< what step members index
  const analysis::OperatorAlignments* operators = nullptr;
  const std::vector<std::string>* rank_ids = nullptr;   ///< by operator member position: rank id
  const std::vector<uint32_t>* rank_ordinals = nullptr; ///< by operator member position: ordinal (event ids)
  const knowledge::OperatorAlignmentRules* rules = nullptr;
  // Operator rows carry raw times (their members' offsets added back by the merge) for the
  // reference's columns and corrected ones for the corrected_* columns; step rows take their raw
  // times from `windows`.
};

/// Writes both files into `out_dir`; appends their paths to `written`.
Status write_alignment_tables(const std::filesystem::path& out_dir, const AlignmentTables& t,
                              std::vector<std::string>* written);

}  // namespace ascprof::pipeline

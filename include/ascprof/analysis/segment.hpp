#pragma once
/// The segment stage for one rank (reference-analysis.md §2.2, plus declared steps and training).
///
/// Inference: the reference's exact structural rules (anchors, layers, frames with exact repairs,
/// step plans with speculative tails, residual classification, hard errors); no timing heuristics.
/// When the capture declares steps (trace_view ProfilerStep#N ranges, else the kernel_details
/// `Step Id` column), step boundaries come from the declaration and the structural layers are placed
/// inside them; each declared step is checked against the structural result (StepBoundaryCheck).
/// Training (attention anchors with backward kernels, e.g. FlashAttentionScoreGrad): forward and
/// backward layers per microbatch inside each declared step, plus the optimizer tail.
///
/// Pure function: no files, no MPI. Never fails; odd input shows up as hard errors or counters.
#include <string>

#include "ascprof/analysis/normalize.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/model/kernel_table.hpp"
#include "ascprof/model/structure.hpp"
#include "ascprof/model/trace_tables.hpp"

namespace ascprof::analysis {

struct SegmentInput {
  const model::KernelTable* kernels = nullptr;       ///< required
  const NormalizedKernels* normalized = nullptr;      ///< required, parallel to kernels
  const StringPool* pool = nullptr;                   ///< required (names, name keys)
  const model::StepMarkerTable* profiler_steps = nullptr;  ///< optional ProfilerStep#N ranges
  std::string rank_id;
  bool use_declared_steps = true;  ///< false: the reference's structural steps only
};

/// Runs the segment stage over one rank.
model::RankStructure segment_rank(const SegmentInput& input, const knowledge::Knowledge& kb);

}  // namespace ascprof::analysis

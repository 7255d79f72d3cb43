#pragma once
/// The segment stage for one rank (reference-analysis.md §2.2, plus declared steps and training).
///
/// Inference: the reference's exact structural rules (anchors, layers, frames with exact repairs,
/// step plans with speculative tails, residual classification, hard errors); no timing heuristics.
/// Steps follow the reference's convention (a step runs from its first layer to the next plan, rows
/// before the first plan are a head segment). When the capture declares steps (trace_view
/// ProfilerStep#N ranges, else the kernel_details `Step Id` column), each step records the declared
/// step holding its first layer (StepSegment::declared_step) and each declared step is checked
/// against the structural result (StepBoundaryCheck). With use_declared_steps the declared windows
/// decide the boundaries instead and the structural layers are placed inside them.
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
  /// true: step boundaries from the declared steps (not the reference's; no CLI option sets it)
  bool use_declared_steps = false;
};

/// Runs the segment stage over one rank.
model::RankStructure segment_rank(const SegmentInput& input, const knowledge::Knowledge& kb);

}  // namespace ascprof::analysis

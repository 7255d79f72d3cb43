#pragma once
/// The summarize stage for one rank (reference-analysis.md §2.5, §2.6) as plain functions: window
/// metrics, segment / layer / rank rows with anomaly tags and step anatomy, operator rows with the
/// bound classification, HCCL rows, wait anchors and AICPU exposure. Thresholds come from
/// knowledge/summarize.rules. No files, no MPI.
#include <span>
#include <vector>

#include "ascprof/analysis/normalize.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/model/kernel_table.hpp"
#include "ascprof/model/structure.hpp"
#include "ascprof/model/summary.hpp"

namespace ascprof::analysis {

/// What every summarize function reads.
struct SummarizeInput {
  const model::KernelTable* kernels = nullptr;
  const NormalizedKernels* normalized = nullptr;
  const StringPool* pool = nullptr;
  const knowledge::Knowledge* kb = nullptr;
};

// ---- windows (summarize_windows.cpp) ----

/// §2.5.1 metrics of rows [row_start, row_end] (inclusive; clamped to the table). Keeps the
/// `top_bubbles` largest gaps. Linear in rows plus a sort of the window's intervals.
model::WindowMetrics window_metrics(const SummarizeInput& in, uint32_t row_start, uint32_t row_end, size_t top_bubbles);

/// window_metrics for many row ranges at once (the setup is shared; use it for thousands of windows).
/// Without `category_counts` the windows' category_counts stay empty (they are the largest counter).
std::vector<model::WindowMetrics> window_metrics_many(const SummarizeInput& in,
                                                     const std::vector<std::pair<uint32_t, uint32_t>>& ranges,
                                                     size_t top_bubbles, bool category_counts = true);

/// Segment rows (every segment, with anomaly tags and, for steps, anatomy), layer rows and the rank row.
void summarize_windows(const SummarizeInput& in, const model::RankStructure& structure, model::RankSummary& out);

// ---- operators (summarize_operators.cpp) ----

/// §2.6: classify a summed pipeline (µs per PipelineRules field, empty = no signal).
model::BoundClass bound_class(const std::vector<double>& pipeline_us, const std::string& op_type, bool is_aicpu,
                              bool is_communication, const knowledge::Knowledge& kb);

/// Operator rows, HCCL rows, wait anchors and AICPU exposure of the rank.
void summarize_operators(const SummarizeInput& in, model::RankSummary& out);

// ---- across ranks (summarize_operators_merge.cpp) ----

/// Linear-interpolation quantile of an ascending vector (position (n-1)q); 0 when empty.
double sorted_quantile(const std::vector<double>& ascending, double q);

/// operator_class_summary: merges per-rank operator rows (`per_rank[i]` = rank i's
/// RankSummary::operators). Bound fields are recomputed with is_aicpu = (op_type == aicpu) and
/// is_communication = op_type in {communication, mix_comm_aiv} and no pipeline signal. Sorted by
/// total cost (duration + wait) desc; ties keep first-seen order (rank order, then row order).
/// It is OperatorClassMerge (operator_class_merge.hpp) over every rank in rank order.
std::vector<model::OperatorClassRow> merge_operator_classes(std::span<const std::vector<model::OperatorRow>> per_rank,
                                                            const knowledge::Knowledge& kb);

/// hccl_class_summary: merges per-rank HCCL rows (`per_rank[i]` = rank i's RankSummary::hccl).
/// Sorted by duration sum desc, then kind, fused first.
std::vector<model::HcclClassRow> merge_hccl_classes(std::span<const std::vector<model::HcclOpRow>> per_rank);

// ---- the whole stage ----

/// Runs every part (windows, blocks, operators).
model::RankSummary summarize_rank(const SummarizeInput& in, const model::RankStructure& structure,
                                  const model::RankClasses& classes);

// ---- blocks (summarize_blocks.cpp) ----

/// block_summary.csv rows (§2.5.8), one per `c.blocks` entry in the same order (row i = block i).
/// Rows outside the table are clamped; a block with no rows left gets zero metrics, dominant_op_type
/// "unknown" and bound unknown. Empty when `in` lacks kernels, normalized kernels or knowledge.
/// One pass over each block's rows (no per-event allocation) after a per-taxon setup, plus one
/// window_metrics call per block (whose setup is O(distinct taxa) per call). `s` is not read yet.
std::vector<model::BlockSummary> summarize_blocks(const SummarizeInput& in, const model::RankStructure& s,
                                                  const model::RankClasses& c);

}  // namespace ascprof::analysis

#pragma once
/// The layout of OUT, named once (issue 18): every root's folder, each rank's files and every file
/// a root writes. Writers and readers (the stages, the report, checkpoints, sweeps) take names
/// from here, so a renamed file is one edit.
///   OUT/<root_slug(root)>/                 one capture root
///     <file>                               the root's tables and manifests (below)
///     ranks/<rank_id>.h5                   a rank's HDF5 tables (schema/model_tables.hpp, rank_tables.hpp)
///     ranks/<rank_id>.parts                its rows of the root's tables and its checkpoint record (a
///                                          part pack), merged by the root
///     report/                              report.md, report.xlsx, report.html, timeline.json, manifest.json
///   OUT/sweep_summary.json, OUT/sweep_class_rollup.csv, OUT/sweep_shards/   a sweep's
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ascprof::layout {

/// Readable, filesystem-safe, unique folder name for a root path:
/// the last 3 components of the absolute, lexically normal path (fewer if the path is shorter;
/// "root" for "/") joined with '_'; ASCII letters lower-cased; every run of characters other than
/// [a-z0-9.-] becomes one '_'; leading/trailing '_', '.' and '-' trimmed; at most the last 80
/// characters kept; then '-' and 8 hex digits of the FNV-1a 64-bit hash of the absolute normal
/// path (trailing separators removed), so different roots never share a slug.
/// Example: "/data/runs/job7/e2-cnn-level1" -> "runs_job7_e2-cnn-level1-<8 hex>".
std::string root_slug(const std::filesystem::path& root);

/// OUT/<root_slug(root)>.
std::filesystem::path root_dir(const std::filesystem::path& out, const std::filesystem::path& root);

/// A rank's two files, relative to its root's folder: ranks/<rank_id>.h5 and .parts.
std::string rank_h5(std::string_view rank_id);
std::string rank_parts(std::string_view rank_id);
/// What earlier layouts left per rank (ranks/<rank_id>.outcome, ranks/<rank_id>.summary/), removed
/// when the rank is redone into an old OUT.
std::vector<std::string> rank_legacy_files(std::string_view rank_id);
/// The report's folder in a root's folder.
inline constexpr char kReportDir[] = "report";
/// In a sweep's OUT: each shard's result, shard-<i>-of-<k>.json, merged by `sweep --rollup`.
inline constexpr char kSweepShardsDir[] = "sweep_shards";

// The files of a root's folder (and of its report folder, and of a sweep's OUT).
inline constexpr char kNormalizeManifestJson[] = "normalize_manifest.json";  ///< the normalize stage's manifest: ranks, their inputs and counts
inline constexpr char kSegmentManifestJson[] = "segment_manifest.json";  ///< the segment stage's manifest
inline constexpr char kClassifyManifestJson[] = "classify_manifest.json";  ///< the classify stage's manifest
inline constexpr char kSummaryManifestJson[] = "summary_manifest.json";  ///< the summarize stage's manifest
inline constexpr char kCrossRankManifestJson[] = "cross_rank_manifest.json";  ///< the cross-rank stage's manifest
inline constexpr char kManifestJson[] = "manifest.json";  ///< the root's manifest (written last), and the report folder's
inline constexpr char kSourceIndexJson[] = "source_index.json";  ///< every input file of every rank: path, size, fingerprint, row range
inline constexpr char kAnalysisH5[] = "analysis.h5";  ///< the rank index, with a link to every rank's HDF5 file
inline constexpr char kStepSegmentsJson[] = "step_segments.json";  ///< segments of every rank
inline constexpr char kLayerSegmentsJson[] = "layer_segments.json";  ///< layers of every rank
inline constexpr char kBlockSegmentsJson[] = "block_segments.json";  ///< blocks of every rank
inline constexpr char kClassSignaturesJson[] = "class_signatures.json";  ///< class ids of every member, and each class
inline constexpr char kStructureEvidenceGraphJson[] = "structure_evidence_graph.json";  ///< evidence records and structure observations
inline constexpr char kBubbleWindowsJsonl[] = "evidence/bubble_windows.jsonl";  ///< the steps' bubbles, one JSON object a line
inline constexpr char kEvidenceIndexCsv[] = "evidence_index.csv";  ///< every window's rows: steps, layers, top bubbles
inline constexpr char kRawKernelIndexCsv[] = "raw_kernel_index.csv";  ///< every kernel row of every rank
inline constexpr char kNormalizedEventIndexCsv[] = "normalized_event_index.csv";  ///< every kernel row as normalize classified it
inline constexpr char kRankSummaryCsv[] = "rank_summary.csv";  ///< one row per rank
inline constexpr char kStepSummaryCsv[] = "step_summary.csv";  ///< one row per segment
inline constexpr char kStepAnatomyCsv[] = "step_anatomy.csv";  ///< head, main and tail of every step
inline constexpr char kLayerSummaryCsv[] = "layer_summary.csv";  ///< one row per layer
inline constexpr char kBlockSummaryCsv[] = "block_summary.csv";  ///< one row per block
inline constexpr char kOperatorSummaryCsv[] = "operator_summary.csv";  ///< one row per (rank, operator)
inline constexpr char kHcclOpSummaryCsv[] = "hccl_op_summary.csv";  ///< one row per (rank, HCCL op kind)
inline constexpr char kWaitAnchorOpsCsv[] = "wait_anchor_ops.csv";  ///< wait anchors
inline constexpr char kAicpuSummaryCsv[] = "aicpu_summary.csv";  ///< AICPU exposure
inline constexpr char kStepClassSummaryCsv[] = "step_class_summary.csv";  ///< step classes across ranks
inline constexpr char kLayerClassSummaryCsv[] = "layer_class_summary.csv";  ///< layer classes across ranks
inline constexpr char kBlockClassSummaryCsv[] = "block_class_summary.csv";  ///< block classes across ranks
inline constexpr char kOperatorClassSummaryCsv[] = "operator_class_summary.csv";  ///< operator classes across ranks
inline constexpr char kHcclClassSummaryCsv[] = "hccl_class_summary.csv";  ///< HCCL classes across ranks
inline constexpr char kCrossRankAlignmentCsv[] = "cross_rank_alignment.csv";  ///< aligned steps and operators across ranks
inline constexpr char kCrossRankAlignmentJson[] = "cross_rank_alignment.json";  ///< the same as JSON
inline constexpr char kDiagnosisFindingsJson[] = "diagnosis_findings.json";  ///< the findings with their evidence
inline constexpr char kOperatorDeepDiveCsv[] = "operator_deep_dive.csv";  ///< the hot operators' classifications
inline constexpr char kOperatorDeepDiveJson[] = "operator_deep_dive.json";  ///< the same with facts, inference and gaps
inline constexpr char kCriticalPathCsv[] = "critical_path.csv";  ///< the critical path of every aligned step
inline constexpr char kCriticalPathStepsCsv[] = "critical_path_steps.csv";  ///< per step its critical path summary
inline constexpr char kCriticalPathRanksCsv[] = "critical_path_ranks.csv";  ///< per rank its share of the critical paths
inline constexpr char kModuleSummaryCsv[] = "module_summary.csv";  ///< the module breakdown per rank
inline constexpr char kModuleRanksCsv[] = "module_ranks.csv";  ///< modules per rank
inline constexpr char kModuleCompareCsv[] = "module_compare.csv";  ///< modules compared across ranks
inline constexpr char kMoeTraceCallsCsv[] = "moe_trace_calls.csv";  ///< in-kernel MoE trace calls
inline constexpr char kMoePhaseSummaryCsv[] = "moe_phase_summary.csv";  ///< MoE phases per call and core group
inline constexpr char kMoePhaseCompareCsv[] = "moe_phase_compare.csv";  ///< MoE phases compared across ranks
inline constexpr char kMoeBubbleSummaryCsv[] = "moe_bubble_summary.csv";  ///< MoE container bubbles
inline constexpr char kReportMd[] = "report.md";  ///< in report/: the Markdown report
inline constexpr char kReportXlsx[] = "report.xlsx";  ///< in report/: the workbook
inline constexpr char kReportHtml[] = "report.html";  ///< in report/: the single-file page
inline constexpr char kTimelineJson[] = "timeline.json";  ///< in report/: the Perfetto timeline
inline constexpr char kSweepSummaryJson[] = "sweep_summary.json";  ///< in a sweep's OUT: one entry per root
inline constexpr char kSweepClassRollupCsv[] = "sweep_class_rollup.csv";  ///< in a sweep's OUT: classes rolled up over roots

}  // namespace ascprof::layout

#pragma once
/// The summarize stage's tables as the reference writes them (reference-analysis.md §2.5): per rank,
/// the rank job renders its rows into CSV fragments, one section per table of the rank's part pack
/// next to its HDF5 file (`ranks/<rank_id>.parts`, store/part_pack.hpp; no header); the coordinator
/// concatenates the sections of a root in rank order under one header (the gathered outcome carries
/// only counts, the rows stay on disk) and writes summary_manifest.json.
///
/// Tables: step_summary.csv (every segment), step_anatomy.csv (steps), layer_summary.csv,
/// rank_summary.csv, operator_summary.csv, hccl_op_summary.csv, wait_anchor_ops.csv,
/// aicpu_summary.csv, evidence_index.csv, raw_kernel_index.csv (one row per kernel; its fragment is
/// written by write_raw_kernel_index_part). µs values have 3 decimals and ms values 6, as the reference rounds them; lists
/// and dicts are compact JSON cells; a table without rows is an empty file (no header), as in the
/// reference. Every file is written under a temporary name and renamed.
#include <cstdint>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "ascprof/common/status.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/model/finding.hpp"
#include "ascprof/model/kernel_table.hpp"
#include "ascprof/model/structure.hpp"
#include "ascprof/model/summary.hpp"
#include "ascprof/store/part_pack.hpp"

namespace ascprof::analysis {
struct NormalizedKernels;
}

namespace ascprof::pipeline {

/// The summary tables, in the order they are written.
const std::vector<std::string>& summary_tables();

/// Every section a rank's part pack holds once write_rank_summary_parts and the raw kernel index
/// have run (what the root reads, and what a checkpoint needs): one per table (named as the
/// table's file), the evidence_index sections, bubble_windows.jsonl and the evidence metrics.
const std::vector<std::string>& summary_part_sections();

/// The rank's evidence windows' metrics (the reference's `metrics` of structure_evidence_graph.json
/// records), one line per window: "<evidence id>\t<the object's members, without braces>".
inline constexpr const char* kEvidenceMetricsPart = "evidence_metrics";
/// The rank's bubble records of bubble_windows.jsonl: "<duration ns>\t<record>" lines, largest first.
inline constexpr const char* kBubbleWindowsPart = "bubble_windows.jsonl";

/// Adds one rank's fragments to `pack` (the caller commits it).
/// The largest bubbles of each segment that evidence_index.csv and bubble_windows.jsonl hold.
inline constexpr size_t kEvidenceBubbles = 5;

/// `events` holds the rendered kernel rows that bubble_windows.jsonl embeds as before_event /
/// after_event (bubble_event_records); a row missing from it is written as its event id alone.
/// Each of `findings` whose row_table names a table written here gains that row's columns in its
/// metrics, as the reference copies them (the CSV text of each cell; the finding's own figures kept).
/// `evidence_metrics`, when given, receives the kEvidenceMetricsPart lines (for the rank's structure rows).
using EventRecords = std::unordered_map<uint32_t, std::string>;
Status write_rank_summary_parts(store::PartPackWriter& pack, uint32_t rank_ordinal, const std::string& rank_id,
                                const model::RankStructure& structure, const model::RankClasses& classes,
                                const model::RankSummary& summary, const knowledge::Knowledge& kb,
                                const EventRecords& events = EventRecords{},
                                std::vector<model::Finding>* findings = nullptr,
                                std::string* evidence_metrics = nullptr);

/// The reference's event objects for bubble_windows.jsonl (accelerator_core, categories, duration_us,
/// event_id, name, rank_id, roles, row_idx, shape_signature, start_us, stream_id, task_type, wait_us)
/// of the rows on either side of each segment's top bubbles: a few rows per segment, rendered while
/// the kernel table is still in memory (the summary parts are written after it is freed).
EventRecords bubble_event_records(uint32_t rank_ordinal, const std::string& rank_id, const model::RankSummary& summary,
                                  const model::KernelTable& kernels, const analysis::NormalizedKernels& normalized,
                                  const StringPool& pool, const knowledge::Knowledge& kb);

/// Adds one rank's raw_kernel_index.csv fragment to `pack` (its raw_kernel_index.csv section, no
/// header; the caller commits the pack): one row per kernel_details row, in row
/// order: event_id (`evt_<rank_ordinal>_<row>`), rank_id, source_id (the kernel_details.csv entry of
/// source_index.json: stable_id("src", {rank_id, "kernel_details_csv", kernel_details_path}); pass the
/// path exactly as the rank job fingerprinted it), row_idx, name and task_type as written, start_us,
/// duration_us, wait_us (exact 3-decimal µs from integer ns), roles and categories (compact sorted JSON
/// lists of names), shape_signature ("" when none). Text cells are quoted and formula-guarded as
/// CsvRow does. Streams: rows go to the pack in ~4 MB chunks, so memory does not grow with the row
/// count. kInternal if `normalized` is not parallel to `kernels` (write failures surface at the
/// pack's commit, which then leaves nothing behind).
/// `source_kind` and `source_path` name the file the kernel rows came from (kernel_details_csv or
/// profiler_db, one of pipeline::kInputKinds), as its source id in source_index.json.
/// In the same pass, the normalized_event_index.csv section: the reference's normalized event rows
/// (reference-analysis.md §2.1) with `profile_id` (root_profile_id of the capture root).
Status write_raw_kernel_index_part(store::PartPackWriter& pack, uint32_t rank_ordinal, const std::string& rank_id,
                                   const char* source_kind, const std::string& source_path,
                                   const std::string& profile_id,
                                   const model::KernelTable& kernels,
                                   const analysis::NormalizedKernels& normalized, const StringPool& pool,
                                   const knowledge::Knowledge& kb);

/// "profile_<hex>": the id of a capture root (as given) in normalized_event_index.csv and
/// normalize_manifest.json.
std::string root_profile_id(const std::string& root);

/// One rank of a root for write_root_summary_outputs.
struct SummaryPart {
  std::filesystem::path pack;  ///< the rank's part pack
  std::string rank_id;
  uint64_t events_total = 0, events_with_pipeline_signal = 0;      ///< for pipeline_coverage
  uint64_t operators_total = 0, operators_with_pipeline_signal = 0;
};

/// Concatenates the ranks' fragments (in the given order) into `root_out/<table>`, merges their
/// bubble evidence into `root_out/evidence/bubble_windows.jsonl` (largest first, streaming), and
/// writes `root_out/summary_manifest.json` (files, row counts, class_summary_counts of the already
/// written `class_tables`, pipeline_coverage). Returns the files written. The ranks' sections are
/// placed by `run_copies` (all in this process when empty; the orchestration spreads them over
/// the processes), each table renamed into place once they all are.
Result<std::vector<std::filesystem::path>> write_root_summary_outputs(
    const std::filesystem::path& root_out, const std::vector<SummaryPart>& ranks, const knowledge::Knowledge& kb,
    const std::vector<std::filesystem::path>& class_tables = {}, const store::SectionCopyRunner& run_copies = {});

/// operator_class_summary.csv and hccl_class_summary.csv from every rank's rows (`per_rank[i]` is
/// rank i's, in rank order; row lists are not needed). Returns the files written.
Result<std::vector<std::filesystem::path>> write_root_class_summaries(
    const std::filesystem::path& root_out, const std::vector<std::vector<model::OperatorRow>>& operators_per_rank,
    const std::vector<std::vector<model::HcclOpRow>>& hccl_per_rank, const knowledge::Knowledge& kb);

/// The same from the rows already merged (analysis::OperatorClassMerge).
Result<std::vector<std::filesystem::path>> write_root_class_summaries(
    const std::filesystem::path& root_out, const std::vector<model::OperatorClassRow>& operator_classes,
    const std::vector<model::HcclClassRow>& hccl_classes, const knowledge::Knowledge& kb);

}  // namespace ascprof::pipeline

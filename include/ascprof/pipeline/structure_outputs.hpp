#pragma once
/// Root-level JSON outputs of the segment and classify stages (reference-analysis.md §2.2.6, §2.2.7,
/// §2.4), written for one capture root from the ranks' RankStructure / RankClasses:
///
///   segment stage:  step_segments.json, layer_segments.json, structure_evidence_graph.json,
///                   segment_manifest.json (the stage marker)
///   classify stage: block_segments.json, class_signatures.json, classify_manifest.json (marker)
///
/// Rendered where the rank is (issue 17: no serial tail): each rank job renders its rows of these
/// files into its part pack (write_rank_structure_parts: one section per array, its classes and its
/// manifest figures), and the coordinator only concatenates the sections in rank order
/// (add_rank_parts: inflated into the file, never parsed) and merges the classes and figures.
///
/// Streaming: segment, layer, block, evidence and observation rows go straight to temporary files
/// (`<file>.tmp.<pid>` and `structure_evidence_graph.json.{observations,evidence}.tmp.<pid>` in the
/// output folder), so a 1000-rank root never holds all ranks in memory. Kept in memory: the classes
/// merged by class_id (with their member lists), one summary per rank, hard errors and
/// boundary-check disagreements.
///
/// Atomicity: nothing appears under a final name before finish() has written every file
/// completely; finish() then checks that no final name is taken by a non-file, and renames the data
/// files first and the two manifests (stage markers) last. Any failure (or destruction without
/// finish()) removes every temporary file; a final file is then either absent or the previous one.
///
/// Conventions: times are µs from ns with exactly 3 decimals (1234.567); `-1` sentinels become
/// null; event ids are "evt_<rank ordinal>_<kernel_details row>"; evidence ids are
/// stable_id("evd", {segment or layer id, kind}) and, for the rank window, {rank_id, "rank_window"}.
/// Evidence windows carry the window's first <= 64 event ids and its row count (event_count); the
/// §2.5.1 event metrics are not included (they need the kernel table; summarize computes them).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ascprof/common/status.hpp"
#include "ascprof/model/structure.hpp"
#include "ascprof/store/part_pack.hpp"

namespace ascprof::pipeline {

/// Evidence id -> the members of that window's metrics object (the rank's kEvidenceMetricsPart
/// lines), written as each evidence record's `metrics`.
using EvidenceMetrics = std::unordered_map<std::string, std::string>;

/// Reads kEvidenceMetricsPart lines ("<evidence id>\t<members>") into a map.
EvidenceMetrics parse_evidence_metrics(std::string_view lines);

/// The part pack sections write_rank_structure_parts adds: what the root reads, and what a
/// checkpoint of a rank that ran the segment stage needs (`classify`: and the classify stage).
const std::vector<std::string>& structure_part_sections(bool classify);

/// Renders one rank's rows of the structure outputs into its part pack (the caller commits it):
/// rows of step_segments, layer_segments, the evidence graph's three arrays and, with `classify`,
/// block_segments (each row preceded by ",\n"), its classes with their members, and its manifest
/// figures. `rank_ordinal` is the rank's position in the root (event ids). kInternal, with nothing
/// added, if `s`/`c` are inconsistent (structure_inconsistency).
Status write_rank_structure_parts(store::PartPackWriter& pack, uint32_t rank_ordinal, const std::string& rank_id,
                                  const model::RankStructure& s, const model::RankClasses& c, bool classify,
                                  const EvidenceMetrics* metrics = nullptr);

/// Which files a StructureOutputWriter produces.
struct StructureOutputOptions {
  bool segment_files = true;   ///< step_segments, layer_segments, structure_evidence_graph, segment_manifest
  bool classify_files = true;  ///< block_segments, class_signatures, classify_manifest
  std::string root;            ///< capture root as given, recorded in the manifests ("" to omit)
  /// Places the ranks' row sections (add_rank_parts) at their offsets once every rank is added
  /// (finish); empty: each is copied as it is added. See store::SectionCopyRunner.
  store::SectionCopyRunner run_copies;
};

/// Totals over all ranks added so far (for the final stdout JSON and sweep summaries).
struct StructureTotals {
  uint64_t rank_count = 0, segment_count = 0, step_count = 0, layer_count = 0, block_count = 0;
  uint64_t evidence_count = 0, structure_observation_count = 0;
  uint64_t hard_error_count = 0;       ///< sum of the ranks' hard_errors
  uint64_t interior_island_total = 0;  ///< sum of the ranks' interior_unclassified_count
  uint64_t step_classes = 0, layer_classes = 0, block_classes = 0;  ///< merged across ranks by class_id
};

/// Rank `s`'s unclassified_island segments strictly between its first and last `step` segment
/// (§2.2.7 interior_unclassified_island), or its interior_unclassified_island hard errors when those
/// are more (with declared steps an island sits inside a declared step).
uint64_t interior_unclassified_count(const model::RankStructure& s);

/// Streaming writer of one capture root's structure outputs (see the file comment). Move-only.
class StructureOutputWriter {
 public:
  /// Creates `out_dir` if missing and opens the temporary files. kIo error naming the path if the
  /// folder cannot be created or a temporary file cannot be opened.
  static Result<StructureOutputWriter> create(const std::filesystem::path& out_dir,
                                              StructureOutputOptions options = {});

  StructureOutputWriter(StructureOutputWriter&& o) noexcept;
  StructureOutputWriter& operator=(StructureOutputWriter&& o) noexcept;
  StructureOutputWriter(const StructureOutputWriter&) = delete;
  StructureOutputWriter& operator=(const StructureOutputWriter&) = delete;
  /// Without a successful finish(): removes every temporary file.
  ~StructureOutputWriter();

  /// Appends one rank. `rank_ordinal` (the rank's position in the root, used in event ids) must
  /// increase from call to call; `rank_id` is written into every row (s.rank_id is not used).
  /// `c` may be empty (all vectors empty) when the rank was not classified. kInternal error,
  /// with nothing of the rank written, if the ordinal does not increase or `s`/`c` are inconsistent
  /// (structure_inconsistency); kIo on a temporary-file write failure. After any error the writer
  /// is failed: later calls return the first error.
  /// `metrics`, when given: see EvidenceMetrics. (Renders the rank through a temporary part pack in
  /// the output folder and adds that: the same path as add_rank_parts.)
  Status add_rank(uint32_t rank_ordinal, const std::string& rank_id, const model::RankStructure& s,
                  const model::RankClasses& c, const EvidenceMetrics* metrics = nullptr);

  /// Appends one rank from the sections write_rank_structure_parts put in its part pack (classify
  /// sections needed only when the classify files are written). kSchema naming the pack if a
  /// section is missing or its classes or figures do not parse; kIo on a read or write failure; the
  /// ordinal rule of add_rank.
  Status add_rank_parts(uint32_t rank_ordinal, const std::string& rank_id, const store::PartPackReader& pack);

  /// Completes and publishes the files (see the file comment). Returns the first error of any call;
  /// on error no temporary file is left. May be called once; later calls return kInternal.
  Status finish();

  /// Totals of the ranks added so far.
  const StructureTotals& totals() const;
  /// Final paths published by a successful finish() (empty before).
  const std::vector<std::filesystem::path>& outputs() const;

 private:
  struct Impl;
  explicit StructureOutputWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ascprof::pipeline

#pragma once
/// A capture root's plan (discovery result as serialisable tasks) and its root-level outputs:
/// normalize_manifest.json, source_index.json and analysis.h5 (external links to the rank files).
/// Plain functions: the MPI layer broadcasts plans and gathers outcomes around them.
#include <cstdint>
#include <string>
#include <vector>

#include "ascprof/analysis/class_merge.hpp"
#include "ascprof/analysis/deep_dive.hpp"
#include "ascprof/analysis/operator_class_merge.hpp"
#include "ascprof/common/stable_id.hpp"
#include "ascprof/common/status.hpp"
#include "ascprof/pipeline/rank_job.hpp"
#include "ascprof/pipeline/structure_outputs.hpp"
#include "ascprof/store/part_pack.hpp"

namespace ascprof::pipeline {

struct FailedFolder {
  std::string rank_id, rank_dir, path, error;
  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & rank_id & rank_dir & path & error;
  }
};

struct DuplicateFolder {
  std::string rank_id, kept, dropped, reason;
  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & rank_id & kept & dropped & reason;
  }
};

struct RootPlan {
  int32_t root_index = 0;
  std::string root;     ///< as given on the command line
  std::string slug;     ///< readable, unique folder name
  std::string out_dir;  ///< OUT/<slug>
  bool ok = true;       ///< false when the root itself could not be read (no tasks then)
  std::string error_class, error;
  std::vector<RankTask> tasks;
  std::vector<FailedFolder> failed;        ///< rank folders that could not be used
  std::vector<DuplicateFolder> duplicates; ///< folders that lost a duplicate-rank contest
  std::vector<int64_t> missing_rank_ids;
  std::vector<uint64_t> stat_counts;       ///< discovery counters (stats.def order)
  std::string stats_json;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & root_index & root & slug & out_dir & ok & error_class & error & tasks & failed & duplicates &
        missing_rank_ids & stat_counts & stats_json;
  }
};

/// Which export a rank is read from (--source): kAuto reads kernel_details.csv when the rank has a
/// non-empty one and its database otherwise; kText and kDb force one (a rank without it fails).
enum class SourceChoice : uint8_t { kAuto, kText, kDb };
/// "auto", "text", "db" -> the choice; false for any other text.
bool parse_source_choice(std::string_view text, SourceChoice* out);

/// Discovers `root` and turns it into tasks writing under `out / slug`. Never fails: a root that
/// cannot be read comes back with ok=false and the error.
/// `moe_trace_folder` (moe_trace.rules [trace] folder) is where a rank folder keeps its in-kernel
/// MoE traces; "" looks for none.
RootPlan plan_root(const std::string& root, const std::string& out, int32_t root_index,
                   SourceChoice source = SourceChoice::kAuto, std::string_view moe_trace_folder = {});

/// Per-root result for the final JSON line and sweep summaries.
struct RootSummary {
  std::string root, slug, out_dir;
  std::string status;  ///< ok | partial | failed
  std::string error;   ///< root-level error, if any
  uint64_t rank_count = 0, ranks_ok = 0, ranks_failed = 0;
  uint64_t event_count = 0, pipeline_event_count = 0, trace_events = 0;
  std::vector<std::string> failed_ranks;  ///< "rank_dir: error"
  /// The same ranks, with the error class (io, parse, schema, limit, internal; discovery for a
  /// folder that could not be used as a rank), in the same order.
  std::vector<std::string> failed_rank_classes;
  /// Ranks (folder names) analysed from communication data only: counted in ranks_ok, no kernel tables.
  std::vector<std::string> partial_ranks;
  std::vector<std::string> outputs;       ///< files written for this root
  StructureTotals structure;              ///< segment + classify totals (hard errors, classes)
  uint64_t finding_count = 0;             ///< diagnosis findings that passed the evidence gate
  uint64_t operator_alignment_count = 0, step_alignment_count = 0;
  /// Coordinator seconds per part of write_root_outputs (for stage_timings).
  double structure_seconds = 0, summary_seconds = 0, cross_rank_seconds = 0, diagnostics_seconds = 0;
  double rank_seconds = 0;    ///< the root's rank jobs, summed over its ranks (whichever process ran them)
  double report_seconds = 0;  ///< the report stage (set by the caller that runs it)
};

/// A root's ranks merged by the processes before process 0 writes the root (issue 22): the operator
/// buckets (analysis/operator_align.hpp), the block/layer/step class summaries
/// (analysis/class_merge.hpp), the operator and HCCL class summaries
/// (analysis/operator_class_merge.hpp) and the deep dive's root scope (analysis/deep_dive.hpp), each
/// exact; they go up the processes'
/// reduction tree as one message per root.
struct RootMerge {
  analysis::OperatorBucketMerge operators;
  analysis::ClassPartialsMerge classes;  ///< its wall quantiles set before write_root_outputs
  analysis::OperatorClassMerge operator_classes;
  analysis::DeepDiveRootMerge deep_dive;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & operators & classes & operator_classes & deep_dive;
  }
};

/// Folds what a rank that reached summarize (ok, with a part pack) gives its root's merges before
/// the gather: its class partials (moved out; their walls into `walls`, which stay on this process),
/// its operator and HCCL rows (moved out) and its operator profiles (all into the deep dive's root
/// scope; the outcome keeps only the first max_operators, all its own rank scope reads). Other
/// ranks add nothing.
void fold_rank_summaries(RankOutcome& o, RootMerge& into, analysis::ClassWalls& walls, const knowledge::Knowledge& kb);

/// Adds the merge of a disjoint set of the root's ranks (one step of the reduction tree).
void merge_root_merges(RootMerge& into, RootMerge&& from, const knowledge::Knowledge& kb);

/// Writes the root-level outputs of the rank-local stages from the gathered outcomes (of this root
/// only, any order): normalize_manifest.json, source_index.json, analysis.h5, and the segment and
/// classify files (structure_outputs.hpp, read back from the ranks' HDF5 files one at a time).
/// Files are written atomically. Returns the summary; write failures make it "failed".
/// Then the summarize, cross_rank and diagnostics outputs, with the rules of `kb`. The operator
/// alignments and the class summaries come from `merged` (the root's ranks merged over the
/// processes, consumed) or, when it is null, from the outcomes themselves (ranks analysed here:
/// their candidates or buckets, their class partials). The ranks' sections of the concatenated
/// structure files and summary tables are placed by `run_copies` (here when empty; see
/// write_root_summary_outputs and StructureOutputOptions).
RootSummary write_root_outputs(const RootPlan& plan, std::vector<RankOutcome> outcomes, const knowledge::Knowledge& kb,
                               RootMerge* merged = nullptr, const store::SectionCopyRunner& run_copies = {});

/// The clock offsets of a root's ranks (clock_offsets.hpp), the lowest rank as the reference.
std::vector<analysis::ClockOffset> root_clock_offsets(const std::vector<RankOutcome>& outcomes);

/// Per outcome (same order): the clock offset in ns to subtract, 0 when not estimated or failed.
/// The MPI run uses it to fold each rank's operator buckets where the rank was analysed.
std::vector<int64_t> clock_offsets_ns(const std::vector<RankOutcome>& outcomes);

using ascprof::stable_id;  ///< ids as the reference builds them (common/stable_id.hpp)

}  // namespace ascprof::pipeline

#pragma once
/// The MPI orchestration of `ascprof-mpi analyze` (the only place besides app/ that knows MPI).
///
/// Phases, each agreed collectively so one failing process never deadlocks the others:
///  1. every process loads knowledge/ (all must succeed, else configuration error);
///  2. process 0 checks OUT, discovers every root and broadcasts the plans;
///  3. (root, rank) tasks are assigned largest-input-first; each process runs its tasks as plain
///     function calls (pipeline::run_rank_stages) writing per-rank HDF5 files;
///  4. compact outcomes are gathered (Boost.MPI + Boost.Serialization) to process 0, which estimates
///     the clock offsets; each process then folds its ranks' operator buckets on the corrected clock
///     into one merge per root, and the merges go up a binomial tree of processes to process 0;
///  5. process 0 writes the root-level outputs (cross_rank, diagnostics), the report stage of each
///     root, and the final JSON result.
/// Works for any number of processes and ranks (N = 1, N < ranks, N > ranks).
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/pipeline/rank_job.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/report/report.hpp"

namespace boost::mpi {
class communicator;
}

namespace ascprof::parallel {

/// kBar: one redrawn line on process 0 (ranks done, MB/s, ETA); kLines: a line per finished rank.
enum class ProgressMode { kLines, kBar, kJson, kNone };

struct AnalyzeRequest {
  std::vector<std::string> roots;
  std::string out;
  std::string knowledge_dir;  ///< empty: knowledge::default_knowledge_dir()
  bool force = false;
  ProgressMode progress = ProgressMode::kLines;
  bool verbose = false;      ///< also print each rank's data-quality counters when it has warnings
  int32_t last_stage = pipeline::kStageSummarize;  ///< --to-stage stops earlier
  bool write_report = true;  ///< the report stage (report/ of each root) after diagnostics
  bool report_only = false;  ///< --from-stage report: only the report stage, from OUT's existing tables
  /// --from-stage cross_rank|diagnostics: the rank-local stages come from checkpoints only; a rank
  /// without a valid one fails (it is not redone).
  bool checkpoints_only = false;
  report::ReportOptions report;
  pipeline::InputLimits limits;  ///< size bounds of one CSV field/row and one trace event
  int32_t h5_deflate = 1;         ///< deflate level of the ranks' HDF5 files (0..9, --h5-deflate)
  pipeline::SourceChoice source = pipeline::SourceChoice::kAuto;  ///< --source: text or database export
  /// OUT's lock (parallel/out_folder.hpp) is already held by the caller (a sweep): run_analyze
  /// takes none; `out_lock_exclusive` says whether the caller's is the exclusive one.
  bool out_lock_held = false;
  bool out_lock_exclusive = true;
};

struct AnalyzeResult {
  int exit_code = 0;   ///< same on every process: 0 ok, 1 partial, 2 configuration, 3 nothing analysed,
                       ///< 4 analysed but the segment stage reported hard errors
  std::string json;    ///< the final result object (process 0 only)
  std::vector<pipeline::RootSummary> roots;  ///< per root, in request order (process 0 only)
};

AnalyzeResult run_analyze(boost::mpi::communicator& world, const AnalyzeRequest& request);

/// The stdout object of a run that stopped before analysing anything:
/// {"status":"error","command":…,"error_class":…,"error":…}.
std::string error_result_json(std::string_view command, std::string_view error_class, std::string_view message);

}  // namespace ascprof::parallel

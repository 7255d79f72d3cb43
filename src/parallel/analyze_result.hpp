#pragma once
// The stdout result object of `analyze` (process 0): what the run did, per root, and what it cost.
// Private to the parallel module; run_analyze fills AnalyzeFigures phase by phase.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/pipeline/stage.hpp"

namespace ascprof::parallel {

/// Figures of a finished run beyond the roots' summaries.
struct AnalyzeFigures {
  int processes = 1;
  std::vector<pipeline::Stage> stages;   ///< stages executed, in order
  bool reporting = false;                ///< the report stage ran
  std::string html_status;               ///< worst report.html status over the roots ("" none)
  const char* scheduling = "";
  // seconds
  double discover = 0, gather = 0, root_outputs = 0, report = 0, total = 0;
  double ingest_cpu = 0, normalize_cpu = 0, write_cpu = 0, segment_cpu = 0, classify_cpu = 0, summarize_cpu = 0;
  std::map<std::string, double> report_part_seconds;  ///< summed over roots
  std::vector<double> work_seconds, busy_seconds, report_busy;  ///< per process
  // the gather
  uint64_t outcome_count = 0, ranks_reused = 0;
  std::vector<uint64_t> payloads, bucket_payloads, deep_dive_payloads;  ///< per process
};

/// The run's status and exit code from its roots: "failed" (3) when no rank was analysed,
/// "partial" (1) when a rank or a root failed, "structure_errors" (4) when the structure has hard
/// errors or interior islands (everything written, as the reference's wrapper), else "ok" (0).
struct AnalyzeVerdict {
  const char* status = "ok";
  int exit_code = 0;
};
AnalyzeVerdict analyze_verdict(const std::vector<pipeline::RootSummary>& roots);

/// The result object of a finished run.
std::string analyze_result_json(const AnalyzeFigures& f, const std::vector<pipeline::RootSummary>& roots,
                                const std::string& out);

/// A rank as an interrupted run leaves it: done (checkpointed, a rerun reuses it), not done
/// (abandoned in flight or never started) or failed (with its own error).
struct RankEnd {
  enum Kind { kDone, kNotDone, kFailed } kind = kNotDone;
  std::string error;
};
using RankEnds = std::map<std::pair<int32_t, int32_t>, RankEnd>;  // (root_index, rank_index)
void note_rank_ends(const std::vector<pipeline::RankOutcome>& outcomes, RankEnds& ends);

/// The result object of an interrupted run: where the stop found it and every rank's end.
std::string interrupted_result_json(const std::vector<pipeline::RootPlan>& plans, const RankEnds& ends,
                                    std::string_view stage, int processes, const std::string& out, double seconds);

}  // namespace ascprof::parallel

#pragma once
/// The report stage of one capture root (reference-analysis.md §2.9, issue 5): reads the root's
/// output tables and writes OUT/<root>/report/: report.md, report.xlsx, report.html, timeline.json
/// and manifest.json. Plain functions, no MPI (the coordinator runs it per root).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ascprof/common/status.hpp"
#include "ascprof/knowledge/knowledge.hpp"

namespace ascprof::report {


/// The evidence-chain gate (reference §2.9): every finding's evidence ids (kernel rows within the
/// rank's table, windows in evidence_index.csv) and alignment ids (cross_rank_alignment.csv)
/// resolve; a finding with unresolved or no ids passes only on info confidence or limitations.
struct EvidenceChain {
  uint64_t findings_checked = 0, evidence_rows = 0, alignment_rows = 0, soft_warning_count = 0;
  std::vector<std::string> claim_ids;
  std::vector<std::string> failures;  ///< "claim_id (reason)"; the report is not written when any
};
Result<EvidenceChain> check_evidence_chain(const std::filesystem::path& root_out);

/// Options of the merged timeline.
struct TimelineOptions {
  uint32_t max_steps = 0;  ///< only kernels inside each rank's first N steps (0 = all; --timeline-steps)
};

/// report/timeline.json: the root's ranks in one Chrome-trace file (Perfetto / chrome://tracing):
/// one process per rank, one thread per task type, clock-offset corrected, findings as instant
/// events. Streams raw_kernel_index.csv. Returns its path.
Result<std::filesystem::path> write_timeline(const std::filesystem::path& root_out, const TimelineOptions& options = {});

/// report.md from the root's tables (reference §2.9 sections plus ours). Returns its path.
Result<std::filesystem::path> write_report_md(const std::filesystem::path& root_out);

struct ReportOptions {
  std::string mode = "full-raw";  ///< full-raw | summary (summary: no report.html, xlsx sheets capped at 50,000 rows)
  bool skip_html = false;
  TimelineOptions timeline;
};

struct ReportResult {
  std::vector<std::filesystem::path> files;
  std::string html_status;  ///< ok | skipped | error
  std::string html_error;
};

/// The whole report stage of one root. The evidence-chain gate runs first: a finding that cannot be
/// traced fails the stage (kSchema naming the claims) before anything is written. A failing page
/// does not fail the stage: html_status says "error" and manifest.json carries html_error.
Result<ReportResult> write_report(const std::filesystem::path& root_out, const ReportOptions& options = {});

}  // namespace ascprof::report

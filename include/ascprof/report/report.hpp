#pragma once
/// The report stage of one capture root (reference-analysis.md §2.9, issue 5): reads the root's
/// output tables and writes OUT/<root>/report/: report.md, report.xlsx, report.html, timeline.json
/// and manifest.json. Plain functions, no MPI (the coordinator runs it per root).
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "ascprof/common/status.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/report/xlsx_report.hpp"

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
/// The stage's error for a chain with failures: kSchema naming the first claims that failed.
Status evidence_chain_error(const std::filesystem::path& root_out, const EvidenceChain& chain);

/// Options of the merged timeline.
struct TimelineOptions {
  uint32_t max_steps = 0;  ///< only kernels inside each rank's first N steps (0 = all; --timeline-steps)
  /// at most N ranks (0 = all; --timeline-ranks): a person reads tens of tracks, not thousands, and
  /// a 4,096-rank root's timeline of every rank was 261 MB (issue 17: sized for its reader)
  uint32_t max_ranks = 64;
};

/// report/timeline.json: the root's ranks in one Chrome-trace file (Perfetto / chrome://tracing):
/// one process per rank, one thread per task type, clock-offset corrected, findings as instant
/// events. Streams raw_kernel_index.csv. With more ranks than max_ranks it shows the ranks the
/// findings suspect first, then the others in rank order, and says in otherData how many it left
/// out (raw_kernel_index.csv holds every rank's rows). Returns its path.
Result<std::filesystem::path> write_timeline(const std::filesystem::path& root_out, const TimelineOptions& options = {});

/// report.md from the root's tables (reference §2.9 sections plus ours). Returns its path.
Result<std::filesystem::path> write_report_md(const std::filesystem::path& root_out);

struct ReportOptions {
  /// bounded (xlsx sheets hold each table's 2,000 costliest rows) | full-raw (every row) |
  /// summary (no report.html, xlsx sheets capped at 50,000 rows)
  std::string mode = "bounded";
  bool skip_html = false;
  TimelineOptions timeline;
};

/// The parts of one root's report. Each reads only the root's tables and writes its own files, so
/// different processes can write the parts of one root at the same time.
enum class ReportPart : uint8_t { kMarkdown = 0, kWorkbook = 1, kTimeline = 2, kPage = 3 };
const char* report_part_name(ReportPart part);  ///< "md", "xlsx", "timeline", "html"

/// The parts `options` ask for, dearest first (the page only without skip_html and in full-raw mode).
std::vector<ReportPart> report_parts(const ReportOptions& options);

/// What one part wrote.
struct ReportPartResult {
  ReportPart part = ReportPart::kMarkdown;
  std::vector<std::filesystem::path> files;
  std::vector<XlsxSheet> sheets;  ///< the workbook's sheets (kWorkbook)
  std::string html_status;        ///< kPage: ok | error (a failing page fails nothing else)
  std::string html_error;
  double seconds = 0;
};

/// Writes one part. Run it only after check_evidence_chain passed for the root.
Result<ReportPartResult> write_report_part(const std::filesystem::path& root_out, ReportPart part,
                                           const ReportOptions& options);

struct ReportResult {
  std::vector<std::filesystem::path> files;
  std::string html_status;  ///< ok | skipped | error
  std::string html_error;
  std::vector<std::pair<std::string, double>> part_seconds;  ///< ("gate" | part name, seconds)
};

/// Writes report/manifest.json once every part of report_parts(options) is written: the files,
/// the sheet map, the gate's claims. `parts` in any order. Removes a report.html of an earlier run
/// when the page is not among the parts.
Result<ReportResult> finish_report(const std::filesystem::path& root_out, const ReportOptions& options,
                                   const EvidenceChain& chain, std::vector<ReportPartResult> parts);

/// The whole report stage of one root in this process: the evidence-chain gate first (a finding
/// that cannot be traced fails the stage with kSchema naming the claims before anything is
/// written), then every part, then the manifest. A failing page does not fail the stage:
/// html_status says "error" and manifest.json carries html_error.
Result<ReportResult> write_report(const std::filesystem::path& root_out, const ReportOptions& options = {});

}  // namespace ascprof::report

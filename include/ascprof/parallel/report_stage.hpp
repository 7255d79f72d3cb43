#pragma once
/// The report stage across processes (issue 7). A root's report is four parts (workbook,
/// timeline, page, markdown) that read only the root's tables, so after each root's evidence-chain
/// gate the parts of every root go on one work queue and run on whichever process is free; process
/// 0 then writes each root's manifest. With one root and two processes the workbook and the rest
/// run side by side instead of one after the other.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ascprof/parallel/analyze_run.hpp"
#include "ascprof/report/report.hpp"

namespace boost::mpi {
class communicator;
}

namespace ascprof::parallel {

/// One root's report as process 0 sees it when the stage is over.
struct RootReportDone {
  bool ok = false;
  std::string error;  ///< "report: <status>" when !ok
  std::string html_status;
  std::vector<std::string> files;
  double seconds = 0;  ///< busy seconds over all processes: gate + parts + manifest
  std::vector<std::pair<std::string, double>> part_seconds;  ///< ("gate" | part name, seconds)
};

/// Collective. `dirs` (root output folders) and `event_counts` (their sizes, for largest-first
/// scheduling) are read on process 0 only. Returns, on process 0, one entry per dir in its order
/// (empty elsewhere); `busy_seconds` is this process's time inside report work.
/// `progress`: how process 0 shows the parts finishing (stage_progress.hpp).
std::vector<RootReportDone> run_report_stage(boost::mpi::communicator& world, const std::vector<std::string>& dirs,
                                             const std::vector<uint64_t>& event_counts,
                                             const report::ReportOptions& options, double& busy_seconds,
                                             ProgressMode progress = ProgressMode::kNone);

}  // namespace ascprof::parallel

#include "ascprof/parallel/report_stage.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <functional>
#include <tuple>
#include <algorithm>
#include <mutex>
#include <string_view>

#include "ascprof/common/cores.hpp"
#include "ascprof/common/stopwatch.hpp"
#include "ascprof/common/interrupt.hpp"
#include "ascprof/parallel/stage_progress.hpp"
#include "ascprof/parallel/work_queue.hpp"

namespace boost::serialization {

template <class Ar>
void serialize(Ar& ar, ascprof::report::XlsxSheet& s, unsigned /*version*/) {
  ar & s.name & s.source & s.rows_written & s.rows_total & s.truncated;
}

}  // namespace boost::serialization

namespace ascprof::parallel {

namespace fs = std::filesystem;
namespace mpi = boost::mpi;

namespace {

using Clock = SteadyClock;

// The evidence-chain gate of one root, sent to process 0 (which writes the manifest from it).
struct GateDone {
  uint32_t root = 0;
  std::string error;  // empty: passed
  uint64_t findings_checked = 0, evidence_rows = 0, alignment_rows = 0, soft_warning_count = 0;
  std::vector<std::string> claim_ids;
  double seconds = 0;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & root & error & findings_checked & evidence_rows & alignment_rows & soft_warning_count & claim_ids & seconds;
  }
};

// One written part of one root.
struct PartDone {
  uint32_t root = 0;
  uint8_t part = 0;
  std::string error;  // empty: written
  std::vector<std::string> files;
  std::vector<report::XlsxSheet> sheets;
  std::string html_status, html_error;
  double seconds = 0;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & root & part & error & files & sheets & html_status & html_error & seconds;
  }
};

// Relative cost of the parts, for largest-first scheduling. Measured on the 8-rank, 1.3 GB
// benchmark root (one process, seconds): workbook 9.9, page 1.1, timeline 1.0, markdown 0.06.
uint64_t part_weight(report::ReportPart part) {
  switch (part) {
    case report::ReportPart::kWorkbook: return 100;
    case report::ReportPart::kPage: return 11;
    case report::ReportPart::kTimeline: return 10;
    case report::ReportPart::kMarkdown: return 1;
  }
  return 1;
}

template <class T>
std::vector<T> flatten(std::vector<std::vector<T>>& per_process) {
  std::vector<T> all;
  for (auto& v : per_process)
    for (auto& x : v) all.push_back(std::move(x));
  return all;
}

}  // namespace

std::vector<RootReportDone> run_report_stage(mpi::communicator& world, const std::vector<std::string>& dirs_in,
                                             const std::vector<uint64_t>& event_counts_in,
                                             const report::ReportOptions& options, double& busy_seconds,
                                             ProgressMode progress) {
  const bool coordinator = world.rank() == 0;
  std::vector<std::string> dirs = coordinator ? dirs_in : std::vector<std::string>{};
  std::vector<uint64_t> sizes = coordinator ? event_counts_in : std::vector<uint64_t>{};
  mpi::broadcast(world, dirs, 0);
  mpi::broadcast(world, sizes, 0);
  busy_seconds = 0;

  // 1. Each root's gate: nothing of a root is written unless its findings trace to its tables.
  std::vector<GateDone> my_gates;
  run_work_queue(world, sizes, [&](size_t i) {
    const auto t = Clock::now();
    GateDone g;
    g.root = static_cast<uint32_t>(i);
    auto chain = report::check_evidence_chain(dirs[i]);
    if (!chain.ok()) g.error = chain.status().to_string();
    else if (!chain->failures.empty()) g.error = report::evidence_chain_error(dirs[i], *chain).to_string();
    else {
      g.findings_checked = chain->findings_checked;
      g.evidence_rows = chain->evidence_rows;
      g.alignment_rows = chain->alignment_rows;
      g.soft_warning_count = chain->soft_warning_count;
      g.claim_ids = std::move(chain->claim_ids);
    }
    g.seconds = seconds_since(t);
    busy_seconds += g.seconds;
    my_gates.push_back(std::move(g));
  });
  std::vector<std::vector<GateDone>> gates_by_process;
  mpi::gather(world, my_gates, gates_by_process, 0);
  std::vector<GateDone> gates(dirs.size());
  for (auto& g : flatten(gates_by_process)) gates[g.root] = std::move(g);

  // 2. The parts of every root that passed, on one queue.
  const std::vector<report::ReportPart> parts = report::report_parts(options);
  std::vector<uint32_t> item_root;
  std::vector<uint8_t> item_part;
  std::vector<uint64_t> item_size;
  if (coordinator)
    for (size_t i = 0; i < dirs.size(); ++i)
      if (gates[i].error.empty())
        for (report::ReportPart p : parts) {
          item_root.push_back(static_cast<uint32_t>(i));
          item_part.push_back(static_cast<uint8_t>(p));
          item_size.push_back(std::max<uint64_t>(sizes[i], 1) * part_weight(p));
        }
  mpi::broadcast(world, item_root, 0);
  mpi::broadcast(world, item_part, 0);
  mpi::broadcast(world, item_size, 0);
  uint64_t total_weight = 0;
  for (const uint64_t w : item_size) total_weight += w;
  StageProgress shown(coordinator ? progress : ProgressMode::kNone, "report", item_size.size(), total_weight);
  std::vector<PartDone> my_parts;
  // A single process runs its parts on threads, up to 4 (each page or workbook holds its own
  // tables in memory; the workbook adds its sheet threads).
  std::mutex parts_mutex;
  double parts_busy = 0;
  const auto t_parts = Clock::now();
  const char* how = run_work_queue(world, item_size, [&](size_t k) {
    const auto t = Clock::now();
    PartDone d;
    d.root = item_root[k];
    d.part = item_part[k];
    auto r = report::write_report_part(dirs[d.root], static_cast<report::ReportPart>(d.part), options);
    if (!r.ok()) d.error = r.status().to_string();
    else {
      for (const auto& f : r->files) d.files.push_back(f.string());
      d.sheets = std::move(r->sheets);
      d.html_status = std::move(r->html_status);
      d.html_error = std::move(r->html_error);
    }
    d.seconds = seconds_since(t);
    std::lock_guard<std::mutex> lock(parts_mutex);
    parts_busy += d.seconds;
    my_parts.push_back(std::move(d));
  }, coordinator && progress != ProgressMode::kNone
         ? std::function<void(uint64_t, uint64_t)>([&shown](uint64_t done, uint64_t weight) { shown.advance(done, weight); })
         : nullptr,
     std::min(usable_cores(), 4u));
  // parts side by side on threads: the process was busy for the queue's wall time, not their sum
  busy_seconds += std::string_view(how) == "threads" ? seconds_since(t_parts) : parts_busy;
  shown.finish();
  std::vector<std::vector<PartDone>> parts_by_process;
  mpi::gather(world, my_parts, parts_by_process, 0);
  // A stop on any process: parts may be missing, so no root gets a manifest (it marks a finished
  // report, which a sweep's --reuse-existing trusts).
  const int stop = mpi::all_reduce(world, interrupt_signal(), mpi::maximum<int>());
  if (stop != 0) request_interrupt(stop);
  if (!coordinator) return {};
  if (stop != 0) {
    std::vector<RootReportDone> stopped(dirs.size());
    for (auto& r : stopped) r.error = "report: interrupted by " + std::string(signal_name(stop)) + " before it was complete";
    return stopped;
  }

  // 3. Process 0: each root's manifest from its gate and parts, or the first error.
  std::vector<std::vector<report::ReportPartResult>> by_root(dirs.size());
  std::vector<RootReportDone> done(dirs.size());
  for (size_t i = 0; i < dirs.size(); ++i) {
    done[i].error = gates[i].error.empty() ? "" : "report: " + gates[i].error;
    done[i].seconds = gates[i].seconds;
    done[i].part_seconds.emplace_back("gate", gates[i].seconds);
  }
  // in (root, part) order, so a root whose parts failed on several processes reports the same
  // first error whichever process ran which part
  std::vector<PartDone> all_parts = flatten(parts_by_process);
  std::sort(all_parts.begin(), all_parts.end(),
            [](const PartDone& a, const PartDone& b) { return std::tie(a.root, a.part) < std::tie(b.root, b.part); });
  for (auto& d : all_parts) {
    RootReportDone& root = done[d.root];
    root.seconds += d.seconds;
    if (!d.error.empty()) {
      if (root.error.empty()) root.error = "report: " + d.error;
      continue;
    }
    report::ReportPartResult p;
    p.part = static_cast<report::ReportPart>(d.part);
    for (const auto& f : d.files) p.files.emplace_back(f);
    p.sheets = std::move(d.sheets);
    p.html_status = std::move(d.html_status);
    p.html_error = std::move(d.html_error);
    p.seconds = d.seconds;
    by_root[d.root].push_back(std::move(p));
  }
  for (size_t i = 0; i < dirs.size(); ++i) {
    RootReportDone& root = done[i];
    if (!root.error.empty()) continue;
    const auto t = Clock::now();
    report::EvidenceChain chain;
    chain.findings_checked = gates[i].findings_checked;
    chain.evidence_rows = gates[i].evidence_rows;
    chain.alignment_rows = gates[i].alignment_rows;
    chain.soft_warning_count = gates[i].soft_warning_count;
    chain.claim_ids = std::move(gates[i].claim_ids);
    auto r = report::finish_report(dirs[i], options, chain, std::move(by_root[i]));
    const double manifest_seconds = seconds_since(t);
    busy_seconds += manifest_seconds;
    root.seconds += manifest_seconds;
    if (!r.ok()) {
      root.error = "report: " + r.status().to_string();
      continue;
    }
    root.ok = true;
    root.html_status = r->html_status;
    for (const auto& f : r->files) root.files.push_back(f.string());
    for (auto& ps : r->part_seconds) root.part_seconds.push_back(std::move(ps));
  }
  return done;
}

}  // namespace ascprof::parallel

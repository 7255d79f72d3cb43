#include "ascprof/parallel/sweep_run.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/array.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <filesystem>
#include <optional>

#include "ascprof/common/interrupt.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/parallel/out_folder.hpp"
#include "ascprof/common/stats.hpp"
#include "ascprof/common/stopwatch.hpp"
#include "ascprof/importers/discovery.hpp"
#include "ascprof/report/sweep.hpp"
#include "ascprof/layout/out_layout.hpp"

namespace ascprof::parallel {

namespace fs = std::filesystem;
namespace mpi = boost::mpi;

namespace {

using Clock = SteadyClock;

AnalyzeResult usage_error(mpi::communicator& world, const std::string& message, int code = 2) {
  AnalyzeResult r;
  r.exit_code = code;
  if (world.rank() == 0) r.json = error_result_json("sweep", code == 2 ? "invalid_argument" : "io", message);
  return r;
}

std::string result_json(const std::string& status, const std::vector<report::SweepRootRun>& runs, const fs::path& summary,
                        const fs::path& rollup, double seconds, uint64_t processes, const std::string& analysis,
                        const std::string& error = "") {
  JsonWriter w;
  w.begin_object();
  w.kv("status", status);
  w.kv("command", "sweep");
  if (!error.empty()) {  // the summary or rollup could not be written; the roots below were analysed
    w.kv("error_class", "io");
    w.kv("error", error);
  }
  w.kv("processes", processes);
  w.kv("root_count", static_cast<uint64_t>(runs.size()));
  uint64_t ok = 0, reused = 0;
  for (const auto& r : runs) {
    ok += r.status == "ok" ? 1 : 0;
    reused += r.reused ? 1 : 0;
  }
  w.kv("roots_ok", ok);
  w.kv("roots_failed", static_cast<uint64_t>(runs.size()) - ok);
  w.kv("roots_reused", reused);
  w.kv("seconds", seconds);
  w.kv("summary", summary.string());
  if (!rollup.empty()) w.kv("rollup", rollup.string());
  w.key("roots");
  w.begin_array();
  for (const auto& r : runs) {
    w.begin_object();
    w.kv("root", r.root);
    w.kv("output_dir", r.output_dir);
    w.kv("status", r.status);
    if (r.reused) w.kv("reused", true);
    if (!r.error.empty()) w.kv("error", r.error);
    w.end_object();
  }
  w.end_array();
  if (!analysis.empty()) {  // the analyze result of the roots not reused (stage timings, process busy time)
    w.key("analysis");
    w.raw(analysis);
  }
  w.end_object();
  return w.take();
}

}  // namespace

AnalyzeResult run_sweep(mpi::communicator& world, const SweepRequest& req) {
  const auto t0 = Clock::now();
  const fs::path out(req.analyze.out);
  // OUT's lock for the whole sweep (its summary and rollup are written after the roots): a shard
  // shares OUT with the other shards of its sweep, anything else holds it alone.
  std::optional<OutLock> out_lock;
  std::string claim_error, claim_class = "invalid_argument";
  const bool shard_run = req.shard_count > 0 && !req.rollup;
  if (world.rank() == 0) {
    claim_error = req.rollup ? std::string() : prepare_out(out.string(), req.analyze.force);
    if (claim_error.empty()) {
      const std::string shard = shard_run ? "shard-" + std::to_string(req.shard_index) + "-of-" + std::to_string(req.shard_count) : "";
      auto lock = OutLock::acquire(out, shard, req.rollup ? "sweep --rollup" : "sweep");
      if (lock.ok()) out_lock.emplace(std::move(*lock));
      else {
        claim_error = lock.status().message();
        claim_class = "out_locked";
      }
    }
  }
  mpi::broadcast(world, claim_error, 0);
  if (!claim_error.empty()) {
    AnalyzeResult r;
    r.exit_code = 2;
    if (world.rank() == 0) r.json = error_result_json("sweep", claim_class, claim_error);
    return r;
  }
  if (req.rollup) {  // merging shard files is file work on process 0 only
    AnalyzeResult r;
    if (world.rank() == 0) {
      auto counts = report::rollup_sweep_shards(out);
      if (!counts.ok()) {
        r.exit_code = 3;
        r.json = error_result_json("sweep", "io", counts.status().to_string());
      } else {
        r.exit_code = counts->failed == 0 ? 0 : (counts->failed == counts->roots ? 3 : 1);
        JsonWriter w;
        w.begin_object();
        w.kv("status", counts->failed == 0 ? "ok" : "partial");
        w.kv("command", "sweep");
        w.kv("rollup", true);
        w.kv("shards", counts->shards);
        w.kv("root_count", counts->roots);
        w.kv("roots_failed", counts->failed);
        w.kv("summary", (out / layout::kSweepSummaryJson).string());
        w.kv("rollup_csv", (out / layout::kSweepClassRollupCsv).string());
        w.end_object();
        r.json = w.take();
      }
    }
    mpi::broadcast(world, r.exit_code, 0);
    return r;
  }

  // Process 0 discovers; everyone learns the roots (or the error).
  std::vector<std::string> roots, reused;
  std::string error;
  if (world.rank() == 0) {
    Stats stats;
    std::vector<fs::path> search;
    for (const auto& s : req.search_roots) search.emplace_back(s);
    auto found = importers::discover_capture_roots(search, stats);
    if (!found.ok()) {
      error = found.status().to_string();
    } else {
      for (size_t j = 0; j < found->size(); ++j) {
        if (req.shard_count > 0 && j % req.shard_count != req.shard_index) continue;
        if (req.limit > 0 && static_cast<int64_t>(roots.size() + reused.size()) >= req.limit) break;
        const std::string root = (*found)[j].string();
        std::error_code ec;
        const fs::path done = layout::root_dir(out, root) / layout::kReportDir / layout::kManifestJson;
        if (req.reuse_existing && !req.analyze.force && fs::exists(done, ec)) reused.push_back(root);
        else roots.push_back(root);
      }
    }
  }
  mpi::broadcast(world, error, 0);
  if (!error.empty()) return usage_error(world, error, 3);
  mpi::broadcast(world, roots, 0);
  mpi::broadcast(world, reused, 0);

  AnalyzeResult analysed;
  if (!roots.empty()) {
    AnalyzeRequest a = req.analyze;
    a.roots = roots;
    a.out_lock_held = true;
    a.out_lock_exclusive = !shard_run;
    analysed = run_analyze(world, a);
    // OUT or knowledge unusable, or stopped by a signal: nothing to summarise (a requeued shard redoes
    // the roots not finished, from their ranks' checkpoints)
    if (analysed.exit_code == 2 || analysed.exit_code == kInterruptedExitCode) return analysed;
  }

  AnalyzeResult result;
  if (world.rank() == 0) {
    std::vector<report::SweepRootRun> runs;
    for (const auto& s : analysed.roots) {
      report::SweepRootRun r;
      r.root = s.root;
      r.output_dir = s.out_dir;
      // a root with some failed ranks was still analysed (its outputs say which ranks failed)
      r.status = s.status == "failed" ? "error" : "ok";
      r.error = s.error;
      if (r.error.empty() && s.status == "failed" && !s.failed_ranks.empty()) r.error = s.failed_ranks.front();
      r.elapsed_s = s.rank_seconds + s.structure_seconds + s.summary_seconds + s.cross_rank_seconds +
                    s.diagnostics_seconds + s.report_seconds;
      runs.push_back(std::move(r));
    }
    for (const auto& root : reused) {
      report::SweepRootRun r;
      r.root = root;
      r.output_dir = layout::root_dir(out, root).string();
      r.status = "ok";
      r.reused = true;
      runs.push_back(std::move(r));
    }
    std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.root < b.root; });
    report::SweepConfig c;
    c.search_roots = req.search_roots;
    c.output_dir = out.string();
    c.processes = static_cast<uint64_t>(world.size());
    c.skip_html = req.analyze.report.skip_html || req.analyze.report.mode == "summary";
    c.report_mode = req.analyze.report.mode;
    c.reuse_existing = req.reuse_existing;
    const bool sharded = req.shard_count > 0;
    if (sharded) c.shard = std::to_string(req.shard_index) + "/" + std::to_string(req.shard_count);
    const fs::path summary = sharded ? report::shard_file(out, req.shard_index, req.shard_count) : out / layout::kSweepSummaryJson;
    const fs::path rollup = sharded ? fs::path() : out / layout::kSweepClassRollupCsv;
    const Status st = report::write_sweep_summary(summary, rollup, c, runs, seconds_since(t0));
    uint64_t failed = 0;
    for (const auto& r : runs) failed += r.status == "ok" ? 0 : 1;
    const bool nothing = !runs.empty() && failed == runs.size();
    if (!st.ok()) {  // every root's own outputs stand: say which, and that the sweep files are missing
      result.exit_code = nothing ? 3 : 1;
      result.json = result_json(nothing ? "failed" : "partial", runs, summary, rollup, seconds_since(t0),
                                static_cast<uint64_t>(world.size()), analysed.json, st.to_string());
    } else {
      result.exit_code = nothing ? 3 : (failed > 0 ? 1 : 0);
      result.json = result_json(nothing ? "failed" : (failed > 0 ? "partial" : "ok"), runs, summary, rollup, seconds_since(t0),
                                static_cast<uint64_t>(world.size()), analysed.json);
    }
  }
  mpi::broadcast(world, result.exit_code, 0);
  return result;
}

}  // namespace ascprof::parallel

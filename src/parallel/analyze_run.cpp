#include "ascprof/parallel/analyze_run.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/packed_oarchive.hpp>
#include <boost/serialization/array.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <thread>

#include "ascprof/common/files.hpp"
#include "ascprof/common/interrupt.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/common/stopwatch.hpp"
#include "ascprof/importers/discovery.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/parallel/checkpoint.hpp"
#include "ascprof/parallel/gather_messages.hpp"
#include "ascprof/parallel/out_folder.hpp"
#include "ascprof/parallel/report_stage.hpp"
#include "ascprof/parallel/section_copies.hpp"
#include "ascprof/parallel/stage_progress.hpp"
#include "ascprof/parallel/work_queue.hpp"
#include "ascprof/pipeline/root_manifest.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/layout/out_layout.hpp"
#include "analyze_result.hpp"

namespace ascprof::parallel {

namespace fs = std::filesystem;
namespace mpi = boost::mpi;

namespace {

using Clock = SteadyClock;

// Every process learns whether all succeeded; process 0 gets the first error text.
std::string agree(mpi::communicator& world, const std::string& local_error) {
  std::vector<std::string> errors;
  mpi::gather(world, local_error, errors, 0);
  std::string first;
  if (world.rank() == 0)
    for (size_t p = 0; p < errors.size(); ++p)
      if (!errors[p].empty()) {
        first = "process " + std::to_string(p) + ": " + errors[p];
        break;
      }
  mpi::broadcast(world, first, 0);
  return first;
}

void progress_line(const AnalyzeRequest& req, int process, const pipeline::RankOutcome& o, const std::string& root,
                   uint64_t done_here, uint64_t total, uint64_t bytes) {
  const ProgressMode mode = req.progress;
  if (mode == ProgressMode::kNone) return;
  const std::string dir = escape_invalid_utf8(o.rank_dir);  // a folder name is bytes, stderr is read as UTF-8
  if (mode == ProgressMode::kBar) {  // the bar shows progress; only failures get a line of their own
    if (!o.ok) std::fprintf(stderr, "\n[process %d] rank %s (%s) FAILED: %s\n", process, o.rank_id.c_str(), dir.c_str(), o.error.c_str());
    return;
  }
  const double secs = o.ingest_seconds + o.normalize_seconds + o.write_seconds;
  if (mode == ProgressMode::kJson) {
    JsonWriter w;
    w.begin_object();
    w.kv("phase", "rank_done");
    w.kv("stage", "rank_jobs");
    w.kv("process", static_cast<int64_t>(process));
    w.kv("done_by_process", done_here);  // ranks this process finished so far
    w.kv("total", total);                // ranks of the whole run
    w.kv("bytes", bytes);                // input bytes of this rank
    w.kv("root", root);
    w.kv("rank_id", o.rank_id);
    w.kv("status", o.ok ? (o.reused ? "reused" : o.partial ? "partial" : "ok") : "failed");
    w.kv("kernel_rows", o.kernel_rows);
    w.kv("trace_events", o.trace_events);
    w.kv("seconds", secs);
    if (!o.ok) w.kv("error", o.error);
    if (req.verbose && o.data_loss_records + o.warning_records > 0) {
      w.key("data_quality");
      w.raw(o.stats_json);
    }
    w.end_object();
    std::fprintf(stderr, "%s\n", w.str().c_str());
  } else if (o.ok) {
    std::fprintf(stderr, "[process %d] rank %s (%s): %llu kernels, %llu trace events, %.2f s%s%s\n", process,
                 o.rank_id.c_str(), dir.c_str(), static_cast<unsigned long long>(o.kernel_rows),
                 static_cast<unsigned long long>(o.trace_events), secs, o.reused ? " (reused checkpoint)" : "",
                 o.partial ? " (partial: communication only, no kernel table)" : "");
    if (req.verbose && o.data_loss_records + o.warning_records > 0)
      std::fprintf(stderr, "[process %d] rank %s data quality: %s\n", process, o.rank_id.c_str(), o.stats_json.c_str());
  } else if (o.error_class == error_code_name(ErrorCode::kInterrupted)) {
    std::fprintf(stderr, "[process %d] rank %s (%s) abandoned: %s\n", process, o.rank_id.c_str(), dir.c_str(),
                 o.error.c_str());
  } else {
    std::fprintf(stderr, "[process %d] rank %s (%s) FAILED: %s\n", process, o.rank_id.c_str(), dir.c_str(),
                 o.error.c_str());
  }
}

// ASCPROF_DEBUG_RANK_DELAY_MS=N: after each rank it computed, a process waits N ms (a stop ends the
// wait). For tests that stop a run while ranks are in flight (tests/slurm): a rank then takes as
// long as the test needs to deliver its signal, however fast the machine and the tool are.
void debug_rank_delay() {
  static const long ms = [] {
    const char* v = std::getenv("ASCPROF_DEBUG_RANK_DELAY_MS");
    return v != nullptr ? std::max(0L, std::strtol(v, nullptr, 10)) : 0L;
  }();
  for (long waited = 0; waited < ms && !interrupted(); waited += 10)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

// Collective: the stop signal if any process was asked to stop (0 otherwise); every process then
// stops the same way, also those whose signal never came (e.g. `kill` of one process).
int agree_interrupt(mpi::communicator& world) {
  const int sig = mpi::all_reduce(world, interrupt_signal(), mpi::maximum<int>());
  if (sig != 0) request_interrupt(sig);
  return sig;
}

}  // namespace

std::string error_result_json(std::string_view command, std::string_view error_class, std::string_view message) {
  JsonWriter w;
  w.begin_object();
  w.kv("status", "error");
  w.kv("command", command);
  w.kv("error_class", error_class);
  w.kv("error", message);
  w.end_object();
  return w.take();
}

namespace {

// --from-stage report: the report stage alone, on process 0, from the tables an earlier run wrote
// into OUT/<root-slug>/ (they are the report's only input).
AnalyzeResult run_report_only(mpi::communicator& world, const AnalyzeRequest& req) {
  AnalyzeResult result;
  const auto t0 = Clock::now();
  // process 0: which roots can be reported (only into an output folder this tool wrote, never
  // into someone else's folder; only where the analysis stages left their tables)
  std::vector<std::string> refused(req.roots.size()), dirs;
  std::vector<uint64_t> sizes;
  std::vector<size_t> item_root;
  std::optional<OutLock> out_lock;  // the report parts are written into OUT: no other run may be
  std::string lock_error;
  if (world.rank() == 0 && fs::exists(fs::path(req.out) / kOutMarker)) {
    auto lock = OutLock::acquire(req.out, "", "analyze --from-stage report");
    if (lock.ok()) out_lock.emplace(std::move(*lock));
    else lock_error = lock.status().message();
  }
  mpi::broadcast(world, lock_error, 0);
  if (!lock_error.empty()) {
    result.exit_code = 2;
    if (world.rank() == 0) result.json = error_result_json("analyze", "out_locked", lock_error);
    return result;
  }
  if (world.rank() == 0)
    for (size_t i = 0; i < req.roots.size(); ++i) {
      const fs::path dir = layout::root_dir(req.out, req.roots[i]);
      std::error_code ec;
      if (!fs::exists(fs::path(req.out) / kOutMarker, ec))
        refused[i] = file_error(ErrorCode::kIo, req.out, "", "not an ascprof-mpi output folder").to_string();
      else if (!fs::exists(dir / layout::kStepSummaryCsv, ec))
        refused[i] = file_error(ErrorCode::kIo, dir.string(), "", "no analysis outputs here (run the analysis stages first)")
                         .to_string();
      else {
        dirs.push_back(dir.string());
        sizes.push_back(fs::file_size(dir / layout::kStepSummaryCsv, ec));
        item_root.push_back(i);
      }
    }
  double busy = 0;
  std::vector<RootReportDone> reports = run_report_stage(world, dirs, sizes, req.report, busy);
  if (world.rank() == 0) {
    std::vector<const RootReportDone*> by_root(req.roots.size(), nullptr);
    for (size_t k = 0; k < reports.size(); ++k) by_root[item_root[k]] = &reports[k];
    JsonWriter w;
    w.begin_object();
    uint64_t ok = 0;
    std::string html_status;
    std::map<std::string, double> part_seconds;
    JsonWriter roots;
    roots.begin_array();
    for (size_t i = 0; i < req.roots.size(); ++i) {
      const RootReportDone* rep = by_root[i];
      roots.begin_object();
      roots.kv("root", req.roots[i]);
      roots.kv("out_dir", layout::root_dir(req.out, req.roots[i]).string());
      const bool root_ok = rep != nullptr && rep->ok;
      roots.kv("status", root_ok ? "ok" : "failed");
      if (rep != nullptr)
        for (const auto& [part, secs] : rep->part_seconds) part_seconds[part] += secs;
      if (!root_ok) {
        // the stage's own error text, without the "report: " the full run puts before it
        std::string error = rep == nullptr ? refused[i] : rep->error;
        if (error.rfind("report: ", 0) == 0) error.erase(0, 8);
        roots.kv("error", error);
      } else {
        ++ok;
        if (html_status.empty() || rep->html_status != "ok") html_status = rep->html_status;
        roots.key("outputs");
        roots.begin_array();
        for (const auto& f : rep->files) roots.value(f);
        roots.end_array();
      }
      roots.end_object();
    }
    roots.end_array();
    const bool nothing = ok == 0, partial = !nothing && ok != req.roots.size();
    result.exit_code = nothing ? 3 : (partial ? 1 : 0);
    w.kv("status", nothing ? "failed" : (partial ? "partial" : "ok"));
    w.kv("command", "analyze");
    w.kv("processes", static_cast<int64_t>(world.size()));
    w.kv("root_count", static_cast<uint64_t>(req.roots.size()));
    w.key("stages_executed");
    w.begin_array();
    w.value(pipeline::stage_name(pipeline::Stage::kReport));
    w.end_array();
    w.kv("html_status", html_status.empty() ? "skipped" : html_status);
    w.key("stage_timings");
    w.begin_object();
    w.kv("report", seconds_since(t0));
    for (const auto& [part, secs] : part_seconds) w.kv("report_" + part + "_cpu", secs);
    w.end_object();
    w.key("roots");
    w.raw(roots.take());
    w.end_object();
    result.json = w.take();
  }
  mpi::broadcast(world, result.exit_code, 0);
  return result;
}

}  // namespace

namespace {

// ---- the phases of run_analyze, in order --------------------------------------------------------

// Phase 2 (process 0): OUT checked and locked, every root discovered and planned. An error (class
// and text) stops the run before any process writes.
struct PlanPhase {
  std::vector<pipeline::RootPlan> plans;
  std::optional<OutLock> out_lock;  // process 0 holds OUT's lock until the run returns
  std::string error, error_class = "invalid_argument";
};

PlanPhase plan_roots(const AnalyzeRequest& req, const knowledge::Knowledge& kb) {
  PlanPhase p;
  p.error = prepare_out(req.out, req.force);
  if (p.error.empty() && !req.out_lock_held) {
    auto lock = OutLock::acquire(req.out, "", "analyze");
    if (lock.ok()) p.out_lock.emplace(std::move(*lock));
    else {
      p.error = lock.status().message();
      p.error_class = "out_locked";
    }
  }
  if (!p.error.empty()) return p;
  // before any process writes: what runs killed earlier left behind
  clean_stale_temp_files(req.out, req.out_lock_held ? req.out_lock_exclusive : true);
  for (size_t i = 0; i < req.roots.size(); ++i) {
    try {
      p.plans.push_back(pipeline::plan_root(req.roots[i], req.out, static_cast<int32_t>(i), req.source, kb.moe_trace.folder));
    } catch (const std::exception& e) {  // a bug or an OS surprise must not stop the other roots
      pipeline::RootPlan failed;
      failed.root_index = static_cast<int32_t>(i);
      failed.root = req.roots[i];
      failed.ok = false;
      failed.error_class = "internal";
      failed.error = req.roots[i] + ": " + e.what();
      p.plans.push_back(std::move(failed));
    }
  }
  for (auto& plan : p.plans)
    for (auto& task : plan.tasks) {
      task.last_stage = req.last_stage;
      task.limits = req.limits;
      task.h5_deflate = req.h5_deflate;
    }
  return p;
}

// Phase 3: this process's share of the rank jobs, largest input first, from the dynamic queue; a
// rank finished by an earlier run (same inputs, rules and tool) is taken from its checkpoint.
struct RankPhase {
  std::vector<pipeline::RankOutcome> mine;
  // the mergeable parts of `mine` (classes, operator classes, deep dive), folded as each rank job
  // ends so a process never holds its ranks' raw partials together; the walls stay here
  std::map<int32_t, pipeline::RootMerge> merged;
  std::map<int32_t, analysis::ClassWalls> walls;
  double work_seconds = 0;  // the phase on this process
  double busy_seconds = 0;  // inside rank jobs (the rest of the phase is waiting for work)
  const char* scheduling = "";
};

RankPhase run_rank_jobs(mpi::communicator& world, const AnalyzeRequest& req, const std::vector<pipeline::RootPlan>& plans,
                        const knowledge::Knowledge& kb, const std::string& knowledge_hash) {
  RankPhase r;
  const int me = world.rank();
  const auto t = Clock::now();
  std::vector<const pipeline::RankTask*> tasks;
  std::vector<uint64_t> sizes;
  uint64_t total_bytes = 0;
  for (const auto& p : plans)
    for (const auto& task : p.tasks) {
      tasks.push_back(&task);
      sizes.push_back(task.input_bytes);
      total_bytes += task.input_bytes;
    }
  // the terminal bar: process 0 learns of every finished rank from the work queue
  auto bar = [&](uint64_t done, uint64_t bytes) {
    const double secs = std::max(1e-3, seconds_since(t));
    const double rate = static_cast<double>(bytes) / secs;
    const double eta = rate > 0 ? static_cast<double>(total_bytes - bytes) / rate : 0.0;
    std::fprintf(stderr, "\r[%-30s] ranks %llu/%zu  %.1f/%.1f GB  %.0f MB/s  ETA %.0f s   ",
                 std::string(static_cast<size_t>(30.0 * static_cast<double>(done) / std::max<size_t>(1, tasks.size())), '#').c_str(),
                 static_cast<unsigned long long>(done), tasks.size(), static_cast<double>(bytes) / 1e9,
                 static_cast<double>(total_bytes) / 1e9, rate / 1e6, eta);
    if (done == tasks.size()) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  };
  r.scheduling = run_work_queue(world, sizes, [&](size_t i) {
    const auto t_task = Clock::now();
    const auto& task = *tasks[i];
    std::optional<pipeline::RankOutcome> saved;
    if (!req.force || req.checkpoints_only) saved = load_checkpoint(task, knowledge_hash);
    pipeline::RankOutcome o;
    if (saved) {
      o = std::move(*saved);
    } else if (req.checkpoints_only) {
      o.rank_id = task.rank_id;
      o.rank_dir = task.rank_dir;
      o.rank_path = task.rank_path;
      o.root_index = task.root_index;
      o.rank_index = task.rank_index;
      o.error_class = "resume";
      o.error = checkpoint_path(task).string() +
                ": no valid checkpoint for this rank (absent, or its inputs, rules or tool changed); run from normalize";
    } else {
      o = pipeline::run_rank_stages(task, kb, checkpoint_sealer(task, knowledge_hash));
      remove_legacy_rank_files(task);
      debug_rank_delay();
    }
    o.process = me;
    progress_line(req, me, o, task.root, r.mine.size() + 1, tasks.size(), task.input_bytes);
    pipeline::fold_rank_summaries(o, r.merged[o.root_index], r.walls[o.root_index], kb);
    r.mine.push_back(std::move(o));
    r.busy_seconds += seconds_since(t_task);
  }, req.progress == ProgressMode::kBar && me == 0 ? std::function<void(uint64_t, uint64_t)>(bar) : nullptr);
  r.work_seconds = seconds_since(t);
  return r;
}

// Phase 4: each process has folded its ranks' class partials, operator and HCCL rows and operator
// profiles into one merge per root as their jobs ended (the class walls stay here); the outcomes
// (compact) go to process 0, by root; then the second round: process 0 estimates every root's clock offsets from
// the gathered collective marks, each process folds the operator candidates of its own ranks into
// bucket partials on the corrected clock and those into its merge, the merges go up a binomial
// tree of processes (the candidates and the walls never leave the process; process 0 receives one
// merge per root and child, not one per rank), and the classes' wall quantiles are selected over
// the processes. Fills the gather's figures in `f`.
struct Gathered {
  std::map<int32_t, std::vector<pipeline::RankOutcome>> by_root;
  std::map<int32_t, pipeline::RootMerge> merged;  // process 0: each root's ranks merged
};

Gathered gather_outcomes(mpi::communicator& world, RankPhase& ranks, const knowledge::Knowledge& kb, AnalyzeFigures& f) {
  const int me = world.rank();
  Gathered g;
  g.merged = std::move(ranks.merged);
  std::map<int32_t, analysis::ClassWalls> walls = std::move(ranks.walls);  // this process's ranks' class walls, by root
  // counted an outcome at a time: packing them all at once to count them held a second copy of
  // the payload (600 MB on each process at 10,000 ranks of 215k kernel rows on 2 processes)
  uint64_t my_payload = 0;
  uint64_t my_deep_dive_payload = 0;  // the operator profiles' share, reported on its own
  for (const auto& o : ranks.mine) {
    my_payload += packed_size(world, o);
    my_deep_dive_payload += packed_size(world, o.deep_dive);
  }
  std::vector<std::vector<pipeline::RankOutcome>> all;
  gather_rank_outcomes(world, ranks.mine, all);
  auto& by_root = g.by_root;
  if (me == 0)
    for (auto& per_process : all)
      for (auto& o : per_process) {
        ++f.outcome_count;
        f.ranks_reused += o.reused ? 1 : 0;  // taken from checkpoints of an earlier run
        f.ingest_cpu += o.ingest_seconds;
        f.normalize_cpu += o.normalize_seconds;
        f.write_cpu += o.write_seconds;
        f.segment_cpu += o.segment_seconds;
        f.classify_cpu += o.classify_seconds;
        f.summarize_cpu += o.summarize_seconds;
        by_root[o.root_index].push_back(std::move(o));
      }
  all.clear();

  std::vector<RankOffset> offsets;
  if (me == 0)
    for (const auto& [root, outcomes] : by_root) {
      const auto ns = pipeline::clock_offsets_ns(outcomes);
      for (size_t i = 0; i < outcomes.size(); ++i) offsets.push_back({root, outcomes[i].rank_index, ns[i]});
    }
  mpi::broadcast(world, offsets, 0);
  std::map<std::pair<int32_t, int32_t>, int64_t> offset_of;
  for (const auto& x : offsets) offset_of[{x.root_index, x.rank_index}] = x.offset_ns;
  for (auto& o : ranks.mine) {
    if (!pipeline::kernel_stages_ran(o)) continue;
    const auto it = offset_of.find({o.root_index, o.rank_index});
    const int64_t offset = it == offset_of.end() ? 0 : it->second;
    pipeline::fold_operator_buckets(o, offset, kb);
    analysis::fold_rank_buckets(g.merged[o.root_index].operators, static_cast<uint32_t>(o.rank_index), o.operator_buckets,
                                offset, kb.operator_alignment);
    o.operator_buckets = {};
  }
  ranks.mine.clear();
  const uint64_t my_bucket_payload = reduce_root_merges(world, g.merged, kb);
  set_class_wall_quantiles(world, g.merged, walls);
  my_payload += my_bucket_payload;
  mpi::gather(world, ranks.work_seconds, f.work_seconds, 0);
  mpi::gather(world, ranks.busy_seconds, f.busy_seconds, 0);
  mpi::gather(world, my_deep_dive_payload, f.deep_dive_payloads, 0);
  mpi::gather(world, my_payload, f.payloads, 0);
  mpi::gather(world, my_bucket_payload, f.bucket_payloads, 0);
  return g;
}

// Phase 5 (process 0): every root's tables, cross-rank stage and diagnostics, root by root; a
// root's outputs are written whole or not at all, so a stop ends the phase between roots.
std::vector<pipeline::RootSummary> write_roots(const AnalyzeRequest& req, const std::vector<pipeline::RootPlan>& plans,
                                               Gathered gathered, const knowledge::Knowledge& kb,
                                               const store::SectionCopyRunner& run_copies) {
  std::vector<pipeline::RootSummary> summaries;
  uint64_t plan_bytes = 0, bytes_done = 0;  // a root's outputs cost about what its input does
  for (const auto& p : plans)
    for (const auto& task : p.tasks) plan_bytes += task.input_bytes;
  StageProgress shown(req.progress, "root_outputs", plans.size(), plan_bytes);
  for (const auto& p : plans) {
    if (interrupted()) break;
    summaries.push_back(pipeline::write_root_outputs(p, std::move(gathered.by_root[p.root_index]), kb,
                                                     &gathered.merged[p.root_index], run_copies));
    for (const auto& task : p.tasks) bytes_done += task.input_bytes;
    shown.advance(summaries.size(), bytes_done);
  }
  shown.finish();
  return summaries;
}

// Phase 6: the report stage, one root per item on whichever process is free: it reads only the
// root's files in OUT (shared, as the ranks' HDF5 files already are), so a sweep's reports run in
// parallel. Process 0 folds each root's report into its summary and `f`.
void report_roots(mpi::communicator& world, const AnalyzeRequest& req, std::vector<pipeline::RootSummary>& summaries,
                  AnalyzeFigures& f) {
  const int me = world.rank();
  const auto t = Clock::now();
  std::vector<std::string> dirs;
  std::vector<uint64_t> sizes;
  std::vector<size_t> item_root;  // process 0: item -> index into summaries
  if (me == 0 && f.reporting)
    for (size_t i = 0; i < summaries.size(); ++i)
      if (summaries[i].status != "failed" && summaries[i].ranks_ok > 0) {  // a failed root has no tables
        dirs.push_back(summaries[i].out_dir);
        sizes.push_back(summaries[i].event_count);
        item_root.push_back(i);
      }
  double my_busy = 0;
  const std::vector<RootReportDone> reports =
      run_report_stage(world, dirs, sizes, req.report, my_busy, me == 0 ? req.progress : ProgressMode::kNone);
  f.report = seconds_since(t);
  mpi::gather(world, my_busy, f.report_busy, 0);
  if (me != 0) return;
  for (size_t i = 0; i < reports.size(); ++i) {
    const RootReportDone& d = reports[i];
    auto& s = summaries[item_root[i]];
    s.report_seconds = d.seconds;
    for (const auto& [part, secs] : d.part_seconds) f.report_part_seconds[part] += secs;
    if (!d.ok) {
      s.status = "failed";
      s.error = d.error;
      continue;
    }
    for (const auto& file : d.files) s.outputs.push_back(file);
    if (f.html_status.empty() || d.html_status != "ok") f.html_status = d.html_status;
  }
}

// The stages a run goes through, in order.
std::vector<pipeline::Stage> executed_stages(const AnalyzeRequest& req, bool reporting) {
  std::vector<pipeline::Stage> stages;
  for (int32_t i = 0; i <= req.last_stage && i <= pipeline::kStageSummarize; ++i) stages.push_back(static_cast<pipeline::Stage>(i));
  if (req.last_stage >= pipeline::kStageSummarize)
    stages.insert(stages.end(), {pipeline::Stage::kCrossRank, pipeline::Stage::kDiagnostics});
  if (reporting) stages.push_back(pipeline::Stage::kReport);
  return stages;
}

// Phase 7 (process 0): each root's manifest.json, last: the stages it went through, each stage's
// manifest inside.
void write_manifests(std::vector<pipeline::RootSummary>& summaries, const std::vector<pipeline::Stage>& stages) {
  for (auto& s : summaries) {
    if (s.ranks_ok == 0) continue;  // nothing was written for the root
    const Status st = pipeline::write_root_manifest(s.out_dir, s.root, stages);
    if (st.ok()) {
      s.outputs.push_back((fs::path(s.out_dir) / layout::kManifestJson).string());
    } else {  // the first failure is the cause (a full disk fails the report first): keep it first
      s.status = "failed";
      s.error = s.error.empty() ? st.to_string() : s.error + "; " + st.to_string();
    }
  }
}

}  // namespace

AnalyzeResult run_analyze(mpi::communicator& world, const AnalyzeRequest& req) {
  if (req.report_only) return run_report_only(world, req);
  AnalyzeResult result;
  const int me = world.rank();
  const auto t_start = Clock::now();
  AnalyzeFigures f;
  f.processes = world.size();
  auto stop = [&](std::string_view error_class, const std::string& error) {
    result.exit_code = 2;
    if (me == 0) result.json = error_result_json("analyze", error_class, error);
    return result;
  };

  // Phase 1: knowledge on every process.
  const fs::path kdir = req.knowledge_dir.empty() ? knowledge::default_knowledge_dir() : fs::path(req.knowledge_dir);
  auto kb = knowledge::Knowledge::load(kdir);
  if (const std::string err = agree(world, kb.ok() ? std::string() : kb.status().to_string()); !err.empty())
    return stop("knowledge", err);

  // Phase 2: output folder and discovery on process 0.
  auto t = Clock::now();
  PlanPhase planned;
  if (me == 0) planned = plan_roots(req, *kb);
  mpi::broadcast(world, planned.error, 0);
  if (!planned.error.empty()) return stop(planned.error_class, planned.error);
  std::vector<pipeline::RootPlan>& plans = planned.plans;
  mpi::broadcast(world, plans, 0);
  f.discover = seconds_since(t);

  // Phase 3: the rank jobs.
  RankPhase ranks = run_rank_jobs(world, req, plans, *kb, knowledge_fingerprint(kdir));
  f.scheduling = ranks.scheduling;  // dynamic: a process takes the next largest rank when it finishes
  // A SIGTERM/SIGINT anywhere: the ranks in flight were abandoned, the finished ones checkpointed.
  // Process 0 learns which are which, and nothing root-level is written from an incomplete set.
  auto interrupted_at = [&](std::string_view stage, const RankEnds& ends) {
    if (me == 0) result.json = interrupted_result_json(plans, ends, stage, world.size(), req.out, seconds_since(t_start));
    result.exit_code = kInterruptedExitCode;
    return result;
  };
  if (agree_interrupt(world) != 0) {
    std::vector<std::vector<pipeline::RankOutcome>> all;
    gather_rank_outcomes(world, ranks.mine, all);
    RankEnds ends;
    for (const auto& per_process : all) note_rank_ends(per_process, ends);
    return interrupted_at("rank_jobs", ends);
  }

  // Phase 4: the gather.
  t = Clock::now();
  StageProgress gather_shown(me == 0 ? req.progress : ProgressMode::kNone, "gather", 1, 1);
  Gathered gathered = gather_outcomes(world, ranks, *kb, f);
  f.gather = seconds_since(t);
  gather_shown.advance(1, 1);
  gather_shown.finish();
  RankEnds rank_ends;  // process 0: every rank is done or failed by now (for an interrupted result)
  for (const auto& [root, outcomes] : gathered.by_root) note_rank_ends(outcomes, rank_ends);

  // Phase 5: the roots' outputs (process 0), the concatenated tables' rank sections copied by
  // every process (section_copies.hpp).
  std::vector<pipeline::RootSummary> summaries;
  if (me == 0) {
    t = Clock::now();
    summaries = write_roots(req, plans, std::move(gathered), *kb, section_copies_on_all_processes(world));
    end_section_copies(world);
    f.root_outputs = seconds_since(t);
  } else {
    serve_section_copies(world);
  }
  if (agree_interrupt(world) != 0) return interrupted_at("root_outputs", rank_ends);

  // Phase 6: the reports, spread over the processes. A stop inside it: the roots' tables are
  // complete, their reports are not (no manifest is written, so a sweep's --reuse-existing redoes them).
  f.reporting = req.write_report && req.last_stage >= pipeline::kStageSummarize;
  report_roots(world, req, summaries, f);
  if (agree_interrupt(world) != 0) return interrupted_at("report", rank_ends);

  // Phase 7: the manifests and the result (process 0).
  if (me == 0) {
    f.stages = executed_stages(req, f.reporting);
    write_manifests(summaries, f.stages);
    result.exit_code = analyze_verdict(summaries).exit_code;
    f.total = seconds_since(t_start);
    result.json = analyze_result_json(f, summaries, req.out);
    result.roots = std::move(summaries);
  }
  mpi::broadcast(world, result.exit_code, 0);
  return result;
}

}  // namespace ascprof::parallel

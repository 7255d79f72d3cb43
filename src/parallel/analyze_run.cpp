#include "ascprof/parallel/analyze_run.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/packed_oarchive.hpp>
#include <boost/serialization/array.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

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
#include "ascprof/parallel/stage_progress.hpp"
#include "ascprof/parallel/work_queue.hpp"
#include "ascprof/pipeline/root_manifest.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/layout/out_layout.hpp"

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

// Collective: the stop signal if any process was asked to stop (0 otherwise); every process then
// stops the same way, also those whose signal never came (e.g. `kill` of one process).
int agree_interrupt(mpi::communicator& world) {
  const int sig = mpi::all_reduce(world, interrupt_signal(), mpi::maximum<int>());
  if (sig != 0) request_interrupt(sig);
  return sig;
}

// A rank as an interrupted run leaves it: done (checkpointed, a rerun reuses it), not done
// (abandoned in flight or never started) or failed (with its own error).
struct RankEnd {
  enum Kind { kDone, kNotDone, kFailed } kind = kNotDone;
  std::string error;
};
using RankEnds = std::map<std::pair<int32_t, int32_t>, RankEnd>;  // (root_index, rank_index)

void note_rank_ends(const std::vector<pipeline::RankOutcome>& outcomes, RankEnds& ends) {
  for (const auto& o : outcomes) {
    RankEnd e;
    if (o.ok) e.kind = RankEnd::kDone;
    else if (o.error_class != error_code_name(ErrorCode::kInterrupted)) e = {RankEnd::kFailed, o.error};
    ends[{o.root_index, o.rank_index}] = std::move(e);
  }
}

// The stdout object of an interrupted run (process 0).
std::string interrupted_result_json(const std::vector<pipeline::RootPlan>& plans, const RankEnds& ends,
                                    std::string_view stage, int processes, const std::string& out, double seconds) {
  JsonWriter w;
  w.begin_object();
  w.kv("status", "interrupted");
  w.kv("command", "analyze");
  w.kv("signal", signal_name(interrupt_signal()));
  w.kv("stage", stage);  // where the stop found the run
  w.kv("processes", static_cast<int64_t>(processes));
  w.kv("output_dir", out);
  w.kv("resume", "rerun the same command into the same output folder: finished ranks are taken from their checkpoints");
  uint64_t counts[3] = {0, 0, 0};
  JsonWriter lists[3];  // done, not done, failed
  for (auto& l : lists) l.begin_array();
  for (const auto& plan : plans)
    for (const auto& task : plan.tasks) {
      const auto it = ends.find({plan.root_index, task.rank_index});
      const RankEnd& e = it == ends.end() ? RankEnd{} : it->second;
      ++counts[e.kind];
      JsonWriter& l = lists[e.kind];
      l.begin_object();
      l.kv("root", plan.root);
      l.kv("rank_id", task.rank_id);
      l.kv("rank_dir", task.rank_dir);
      if (e.kind == RankEnd::kFailed) l.kv("error", e.error);
      l.end_object();
    }
  const char* const names[] = {"ranks_done", "ranks_not_done", "ranks_failed"};
  for (int i = 0; i < 3; ++i) w.kv(std::string(names[i]) + "_count", counts[i]);
  for (int i = 0; i < 3; ++i) {
    lists[i].end_array();
    w.key(names[i]);
    w.raw(lists[i].str());
  }
  w.key("stage_timings");
  w.begin_object();
  w.kv("total", seconds);
  w.end_object();
  w.end_object();
  return w.take();
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

AnalyzeResult run_analyze(mpi::communicator& world, const AnalyzeRequest& req) {
  if (req.report_only) return run_report_only(world, req);
  AnalyzeResult result;
  const int me = world.rank();
  const auto t_start = Clock::now();

  // Phase 1: knowledge on every process.
  const fs::path kdir = req.knowledge_dir.empty() ? knowledge::default_knowledge_dir() : fs::path(req.knowledge_dir);
  auto kb = knowledge::Knowledge::load(kdir);
  std::string err = agree(world, kb.ok() ? std::string() : kb.status().to_string());
  if (!err.empty()) {
    result.exit_code = 2;
    if (me == 0) result.json = error_result_json("analyze", "knowledge", err);
    return result;
  }

  // Phase 2: output folder and discovery on process 0.
  auto t = Clock::now();
  std::vector<pipeline::RootPlan> plans;
  std::string out_error, out_error_class = "invalid_argument";
  std::optional<OutLock> out_lock;  // process 0 holds OUT's lock until the run returns
  if (me == 0) {
    out_error = prepare_out(req.out, req.force);
    if (out_error.empty() && !req.out_lock_held) {
      auto lock = OutLock::acquire(req.out, "", "analyze");
      if (lock.ok()) out_lock.emplace(std::move(*lock));
      else {
        out_error = lock.status().message();
        out_error_class = "out_locked";
      }
    }
    // before any process writes: what runs killed earlier left behind
    if (out_error.empty()) clean_stale_temp_files(req.out, req.out_lock_held ? req.out_lock_exclusive : true);
    if (out_error.empty())
      for (size_t i = 0; i < req.roots.size(); ++i) {
        try {
          plans.push_back(pipeline::plan_root(req.roots[i], req.out, static_cast<int32_t>(i), req.source, kb->moe_trace.folder));
        } catch (const std::exception& e) {  // a bug or an OS surprise must not stop the other roots
          pipeline::RootPlan failed;
          failed.root_index = static_cast<int32_t>(i);
          failed.root = req.roots[i];
          failed.ok = false;
          failed.error_class = "internal";
          failed.error = req.roots[i] + ": " + e.what();
          plans.push_back(std::move(failed));
        }
      }
  }
  mpi::broadcast(world, out_error, 0);
  if (!out_error.empty()) {
    result.exit_code = 2;
    if (me == 0) result.json = error_result_json("analyze", out_error_class, out_error);
    return result;
  }
  for (auto& p : plans)
    for (auto& task : p.tasks) {
      task.last_stage = req.last_stage;
      task.limits = req.limits;
      task.h5_deflate = req.h5_deflate;
    }
  mpi::broadcast(world, plans, 0);
  const double discover_seconds = seconds_since(t);

  // Phase 3: run this process's share, largest input first.
  t = Clock::now();
  std::vector<const pipeline::RankTask*> tasks;
  std::vector<uint64_t> sizes;
  for (const auto& p : plans)
    for (const auto& task : p.tasks) {
      tasks.push_back(&task);
      sizes.push_back(task.input_bytes);
    }
  std::vector<pipeline::RankOutcome> mine;
  const std::string knowledge_hash = knowledge_fingerprint(kdir);
  uint64_t total_bytes = 0;
  for (const uint64_t b : sizes) total_bytes += b;
  const auto t_jobs = Clock::now();
  // the terminal bar: process 0 learns of every finished rank from the work queue
  auto bar = [&](uint64_t done, uint64_t bytes) {
    const double secs = std::max(1e-3, seconds_since(t_jobs));
    const double rate = static_cast<double>(bytes) / secs;
    const double eta = rate > 0 ? static_cast<double>(total_bytes - bytes) / rate : 0.0;
    std::fprintf(stderr, "\r[%-30s] ranks %llu/%zu  %.1f/%.1f GB  %.0f MB/s  ETA %.0f s   ",
                 std::string(static_cast<size_t>(30.0 * static_cast<double>(done) / std::max<size_t>(1, tasks.size())), '#').c_str(),
                 static_cast<unsigned long long>(done), tasks.size(), static_cast<double>(bytes) / 1e9,
                 static_cast<double>(total_bytes) / 1e9, rate / 1e6, eta);
    if (done == tasks.size()) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  };
  double my_busy_seconds = 0;  // inside rank jobs (the rest of the phase is waiting for work)
  const char* scheduling = run_work_queue(world, sizes, [&](size_t i) {
    const auto t_task = Clock::now();
    // a rank finished by an earlier run, with the same inputs, rules and tool, is not redone
    std::optional<pipeline::RankOutcome> saved;
    if (!req.force || req.checkpoints_only) saved = load_checkpoint(*tasks[i], knowledge_hash);
    pipeline::RankOutcome o;
    if (saved) {
      o = std::move(*saved);
    } else if (req.checkpoints_only) {
      const auto& task = *tasks[i];
      o.rank_id = task.rank_id;
      o.rank_dir = task.rank_dir;
      o.rank_path = task.rank_path;
      o.root_index = task.root_index;
      o.rank_index = task.rank_index;
      o.error_class = "resume";
      o.error = checkpoint_path(task).string() +
                ": no valid checkpoint for this rank (absent, or its inputs, rules or tool changed); run from normalize";
    } else {
      o = pipeline::run_rank_stages(*tasks[i], *kb);
    }
    o.process = me;
    if (!o.reused && o.ok) {
      if (const Status st = save_checkpoint(*tasks[i], o, knowledge_hash); !st.ok())  // the result stands; only a rerun redoes it
        std::fprintf(stderr, "ascprof-mpi: warning: checkpoint not saved: %s\n", st.to_string().c_str());
    }
    progress_line(req, me, o, tasks[i]->root, mine.size() + 1, tasks.size(), tasks[i]->input_bytes);
    mine.push_back(std::move(o));
    my_busy_seconds += seconds_since(t_task);
  }, req.progress == ProgressMode::kBar && me == 0 ? std::function<void(uint64_t, uint64_t)>(bar) : nullptr);
  const double my_work_seconds = seconds_since(t);

  // A SIGTERM/SIGINT anywhere: the ranks in flight were abandoned, the finished ones checkpointed.
  // Process 0 learns which are which, and nothing root-level is written from an incomplete set.
  if (agree_interrupt(world) != 0) {
    std::vector<std::vector<pipeline::RankOutcome>> all;
    mpi::gather(world, mine, all, 0);
    if (me == 0) {
      RankEnds ends;
      for (const auto& per_process : all) note_rank_ends(per_process, ends);
      result.json = interrupted_result_json(plans, ends, "rank_jobs", world.size(), req.out, seconds_since(t_start));
    }
    result.exit_code = kInterruptedExitCode;
    return result;
  }

  // Phase 4: gather outcomes (compact) and timings.
  t = Clock::now();
  StageProgress gather_shown(me == 0 ? req.progress : ProgressMode::kNone, "gather", 1, 1);
  uint64_t my_payload = packed_size(world, mine);
  uint64_t my_deep_dive_payload = 0;  // the operator profiles' share, reported on its own
  for (const auto& o : mine) my_deep_dive_payload += packed_size(world, o.deep_dive);
  std::vector<std::vector<pipeline::RankOutcome>> all;
  mpi::gather(world, mine, all, 0);
  std::map<int32_t, std::vector<pipeline::RankOutcome>> by_root;
  size_t outcome_count = 0;
  double segment_cpu = 0, classify_cpu = 0, summarize_cpu = 0, ingest_cpu = 0, normalize_cpu = 0, write_cpu = 0;
  uint64_t ranks_reused = 0;  // taken from checkpoints of an earlier run
  if (me == 0)
    for (auto& per_process : all)
      for (auto& o : per_process) {
        ++outcome_count;
        ranks_reused += o.reused ? 1 : 0;
        ingest_cpu += o.ingest_seconds;
        normalize_cpu += o.normalize_seconds;
        write_cpu += o.write_seconds;
        segment_cpu += o.segment_seconds;
        classify_cpu += o.classify_seconds;
        summarize_cpu += o.summarize_seconds;
        by_root[o.root_index].push_back(std::move(o));
      }
  all.clear();

  // Second round: the coordinator estimates every root's clock offsets from the gathered collective
  // marks; each process folds the operator candidates of its own ranks into bucket partials on the
  // corrected clock and sends only those (the candidates never leave the process).
  std::vector<RankOffset> offsets;
  if (me == 0)
    for (const auto& [root, outcomes] : by_root) {
      const auto ns = pipeline::clock_offsets_ns(outcomes);
      for (size_t i = 0; i < outcomes.size(); ++i) offsets.push_back({root, outcomes[i].rank_index, ns[i]});
    }
  mpi::broadcast(world, offsets, 0);
  std::map<std::pair<int32_t, int32_t>, int64_t> offset_of;
  for (const auto& x : offsets) offset_of[{x.root_index, x.rank_index}] = x.offset_ns;
  std::vector<RankBucketsMessage> my_buckets;
  for (auto& o : mine) {
    const auto it = offset_of.find({o.root_index, o.rank_index});
    pipeline::fold_operator_buckets(o, it == offset_of.end() ? 0 : it->second, *kb);
    if (o.operator_buckets.built) my_buckets.push_back({o.root_index, o.rank_index, analysis::pack_buckets(o.operator_buckets)});
  }
  mine.clear();
  const uint64_t my_bucket_payload = packed_size(world, my_buckets);
  my_payload += my_bucket_payload;
  std::vector<std::vector<RankBucketsMessage>> all_buckets;
  mpi::gather(world, my_buckets, all_buckets, 0);
  my_buckets.clear();
  if (me == 0) {
    std::map<std::pair<int32_t, int32_t>, pipeline::RankOutcome*> outcome_of;
    for (auto& [root, outcomes] : by_root)
      for (auto& o : outcomes) outcome_of[{root, o.rank_index}] = &o;
    for (auto& per_process : all_buckets)
      for (auto& m : per_process)
        if (auto it = outcome_of.find({m.root_index, m.rank_index}); it != outcome_of.end() &&
                                                                      !analysis::unpack_buckets(m.packed, &it->second->operator_buckets))
          std::fprintf(stderr, "ascprof-mpi: rank %s: damaged operator buckets in the gather; it takes no part in operator alignment\n",
                       it->second->rank_id.c_str());
  }
  all_buckets.clear();
  std::vector<double> work_seconds, busy_seconds;
  mpi::gather(world, my_work_seconds, work_seconds, 0);
  mpi::gather(world, my_busy_seconds, busy_seconds, 0);
  std::vector<uint64_t> payloads, bucket_payloads, deep_dive_payloads;
  mpi::gather(world, my_deep_dive_payload, deep_dive_payloads, 0);
  mpi::gather(world, my_payload, payloads, 0);
  mpi::gather(world, my_bucket_payload, bucket_payloads, 0);
  const double gather_seconds = seconds_since(t);
  gather_shown.advance(1, 1);
  gather_shown.finish();

  std::vector<pipeline::RootSummary> summaries;  // process 0
  double outputs_seconds = 0;
  RankEnds rank_ends;  // process 0: every rank is done or failed by now (for an interrupted result)
  if (me == 0) {
    t = Clock::now();
    for (const auto& [root, outcomes] : by_root) note_rank_ends(outcomes, rank_ends);
    uint64_t plan_bytes = 0, bytes_done = 0;  // a root's outputs cost about what its input does
    for (const auto& p : plans)
      for (const auto& task : p.tasks) plan_bytes += task.input_bytes;
    StageProgress shown(req.progress, "root_outputs", plans.size(), plan_bytes);
    for (const auto& p : plans) {
      if (interrupted()) break;  // a root's outputs are written whole or not at all
      summaries.push_back(pipeline::write_root_outputs(p, std::move(by_root[p.root_index]), *kb));
      for (const auto& task : p.tasks) bytes_done += task.input_bytes;
      shown.advance(summaries.size(), bytes_done);
    }
    shown.finish();
    outputs_seconds = seconds_since(t);
  }
  if (agree_interrupt(world) != 0) {
    if (me == 0)
      result.json = interrupted_result_json(plans, rank_ends, "root_outputs", world.size(), req.out, seconds_since(t_start));
    result.exit_code = kInterruptedExitCode;
    return result;
  }
  // The report stage, one root per item on whichever process is free: it reads only the root's
  // files in OUT (shared, as the ranks' HDF5 files already are), so a sweep's reports run in parallel.
  t = Clock::now();
  const bool reporting = req.write_report && req.last_stage >= pipeline::kStageSummarize;
  std::vector<std::string> report_dirs;
  std::vector<uint64_t> report_sizes;
  std::vector<size_t> report_root;  // process 0: item -> index into summaries
  if (me == 0 && reporting)
    for (size_t i = 0; i < summaries.size(); ++i)
      if (summaries[i].status != "failed" && summaries[i].ranks_ok > 0) {  // a failed root has no tables
        report_dirs.push_back(summaries[i].out_dir);
        report_sizes.push_back(summaries[i].event_count);
        report_root.push_back(i);
      }
  double my_report_busy = 0;
  std::vector<RootReportDone> reports =
      run_report_stage(world, report_dirs, report_sizes, req.report, my_report_busy, me == 0 ? req.progress : ProgressMode::kNone);
  const double report_seconds = seconds_since(t);
  std::vector<double> report_busy;
  mpi::gather(world, my_report_busy, report_busy, 0);
  // stopped inside the report stage: the roots' tables are complete, their reports are not (no
  // manifest was written for any root, so a sweep's --reuse-existing redoes them)
  if (agree_interrupt(world) != 0) {
    if (me == 0)
      result.json = interrupted_result_json(plans, rank_ends, "report", world.size(), req.out, seconds_since(t_start));
    result.exit_code = kInterruptedExitCode;
    return result;
  }

  if (me == 0) {
    std::string html_status;
    std::map<std::string, double> report_part_seconds;  // summed over roots
    for (size_t i = 0; i < reports.size(); ++i) {
      const RootReportDone& d = reports[i];
      auto& s = summaries[report_root[i]];
      s.report_seconds = d.seconds;
      for (const auto& [part, secs] : d.part_seconds) report_part_seconds[part] += secs;
      if (!d.ok) {
        s.status = "failed";
        s.error = d.error;
        continue;
      }
      for (const auto& f : d.files) s.outputs.push_back(f);
      if (html_status.empty() || d.html_status != "ok") html_status = d.html_status;
    }
    // each root's manifest.json: the stages it went through, each stage's manifest inside
    std::vector<pipeline::Stage> stages;
    for (int32_t i = 0; i <= req.last_stage && i <= pipeline::kStageSummarize; ++i)
      stages.push_back(static_cast<pipeline::Stage>(i));
    if (req.last_stage >= pipeline::kStageSummarize)
      stages.insert(stages.end(), {pipeline::Stage::kCrossRank, pipeline::Stage::kDiagnostics});
    if (reporting) stages.push_back(pipeline::Stage::kReport);
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

    uint64_t ranks_ok = 0, ranks_failed = 0, ranks_partial = 0, events = 0, trace_events = 0, roots_ok = 0, hard_errors = 0, islands = 0;
    std::map<std::string, uint64_t> status_counts;
    for (const auto& s : summaries) {
      ranks_ok += s.ranks_ok;
      ranks_failed += s.ranks_failed;
      ranks_partial += s.partial_ranks.size();
      events += s.event_count;
      trace_events += s.trace_events;
      hard_errors += s.structure.hard_error_count;
      islands += s.structure.interior_island_total;
      ++status_counts[s.status];
      if (s.status == "ok") ++roots_ok;
    }
    const bool nothing = ranks_ok == 0;
    const bool partial = !nothing && (ranks_failed > 0 || roots_ok != summaries.size());
    // Like the reference's wrapper, a structure with hard errors is not a clean result: everything is
    // written (segment_manifest.json lists the errors) but the exit code says so.
    const bool structure_errors = !nothing && !partial && (hard_errors > 0 || islands > 0);
    result.exit_code = nothing ? 3 : (partial ? 1 : (structure_errors ? 4 : 0));

    uint64_t payload_total = 0, bucket_total = 0;
    for (uint64_t b : payloads) payload_total += b;
    for (uint64_t b : bucket_payloads) bucket_total += b;
    uint64_t deep_dive_total = 0;
    for (uint64_t b : deep_dive_payloads) deep_dive_total += b;
    double work_max = 0;
    for (double s : work_seconds) work_max = std::max(work_max, s);

    JsonWriter w;
    w.begin_object();
    w.kv("status", nothing ? "failed" : (partial ? "partial" : (structure_errors ? "structure_errors" : "ok")));
    w.kv("command", "analyze");
    w.kv("processes", static_cast<int64_t>(world.size()));
    w.kv("root_count", static_cast<uint64_t>(summaries.size()));
    w.kv("rank_count", ranks_ok);
    w.kv("ranks_failed", ranks_failed);
    w.kv("ranks_partial", ranks_partial);
    w.kv("event_count", events);
    w.kv("trace_event_count", trace_events);
    w.kv("hard_error_count", hard_errors);
    w.kv("interior_island_total", islands);
    w.key("stages_executed");
    w.begin_array();
    for (const auto st : stages) w.value(pipeline::stage_name(st));
    w.end_array();
    w.key("stages_partial");  // written, but only part of the stage exists (see each file's stage_status)
    w.begin_array();
    w.end_array();
    w.key("stages_not_available");  // stages not built yet, said plainly (none today: resume works since issue 6)
    w.begin_array();
    w.end_array();
    if (reporting) w.kv("html_status", html_status.empty() ? "skipped" : html_status);
    w.key("stage_timings");
    w.begin_object();
    w.kv("discover", discover_seconds);
    w.kv("rank_jobs", work_max);         // slowest process: ingest + normalize + segment + classify + HDF5
    w.kv("ingest_cpu", ingest_cpu);      // summed over ranks: reading the input files
    w.kv("normalize_cpu", normalize_cpu);
    w.kv("write_cpu", write_cpu);        // HDF5 and CSV fragments of the ranks
    w.kv("segment_cpu", segment_cpu);    // summed over ranks
    w.kv("classify_cpu", classify_cpu);  // summed over ranks
    w.kv("summarize_cpu", summarize_cpu);  // summed over ranks
    w.kv("gather", gather_seconds);
    w.kv("root_outputs", outputs_seconds);  // coordinator, all roots; split below
    double structure = 0, summary = 0, cross = 0, diag = 0;
    for (const auto& r : summaries) {
      structure += r.structure_seconds;
      summary += r.summary_seconds;
      cross += r.cross_rank_seconds;
      diag += r.diagnostics_seconds;
    }
    w.kv("root_structure", structure);
    w.kv("root_summary", summary);
    w.kv("root_cross_rank", cross);
    w.kv("root_diagnostics", diag);
    w.kv("report", report_seconds);  // wall time of the report stage; its parts' busy seconds below
    for (const auto& [part, secs] : report_part_seconds) w.kv("report_" + part + "_cpu", secs);
    w.kv("total", seconds_since(t_start));
    w.end_object();
    w.key("gathered_bytes");
    w.begin_object();
    w.kv("total", payload_total);
    w.kv("per_rank", outcome_count ? static_cast<double>(payload_total) / static_cast<double>(outcome_count) : 0.0);
    w.kv("operator_buckets_per_rank",  // the second round's share of per_rank
         outcome_count ? static_cast<double>(bucket_total) / static_cast<double>(outcome_count) : 0.0);
    w.kv("deep_dive_per_rank",  // operator profiles inside the first round's outcomes
         outcome_count ? static_cast<double>(deep_dive_total) / static_cast<double>(outcome_count) : 0.0);
    w.end_object();
    w.kv("output_dir", req.out);
    w.kv("scheduling", scheduling);  // dynamic: a process takes the next largest rank when it finishes
    w.kv("ranks_reused", ranks_reused);
    // per process: seconds inside rank jobs, and that as a share of the slowest process's rank phase
    w.key("process_busy");
    w.begin_array();
    for (size_t p = 0; p < busy_seconds.size(); ++p) {
      w.begin_object();
      w.kv("process", static_cast<uint64_t>(p));
      w.kv("busy_s", busy_seconds[p]);
      w.kv("busy_share", work_max > 0 ? busy_seconds[p] / work_max : 0.0);
      w.kv("report_busy_s", p < report_busy.size() ? report_busy[p] : 0.0);  // reports it wrote
      w.kv("report_busy_share", report_seconds > 0 && p < report_busy.size() ? report_busy[p] / report_seconds : 0.0);
      w.end_object();
    }
    w.end_array();
    w.key("status_counts");
    w.begin_object();
    for (const auto& [k, v] : status_counts) w.kv(k, v);
    w.end_object();
    w.key("roots");
    w.begin_array();
    for (const auto& s : summaries) {
      w.begin_object();
      w.kv("root", s.root);
      w.kv("out_dir", s.out_dir);
      w.kv("status", s.status);
      if (!s.error.empty()) w.kv("error", s.error);
      w.kv("rank_count", s.rank_count);
      w.kv("ranks_ok", s.ranks_ok);
      w.kv("ranks_failed", s.ranks_failed);
      w.kv("event_count", s.event_count);
      w.kv("step_count", s.structure.step_count);
      w.kv("layer_count", s.structure.layer_count);
      w.kv("block_count", s.structure.block_count);
      w.kv("hard_error_count", s.structure.hard_error_count);
      w.kv("interior_island_total", s.structure.interior_island_total);
      w.kv("step_classes", s.structure.step_classes);
      w.kv("layer_classes", s.structure.layer_classes);
      w.kv("block_classes", s.structure.block_classes);
      w.kv("finding_count", s.finding_count);
      w.kv("step_alignment_count", s.step_alignment_count);
      w.kv("operator_alignment_count", s.operator_alignment_count);
      w.key("failed_ranks");
      w.begin_array();
      for (const auto& f : s.failed_ranks) w.value(f);
      w.end_array();
      w.key("failed_rank_classes");  // parallel to failed_ranks
      w.begin_array();
      for (const auto& c : s.failed_rank_classes) w.value(c);
      w.end_array();
      w.key("partial_ranks");  // analysed from communication data only (no kernel table)
      w.begin_array();
      for (const auto& f : s.partial_ranks) w.value(f);
      w.end_array();
      w.key("outputs");
      w.begin_array();
      for (const auto& f : s.outputs) w.value(f);
      w.end_array();
      w.end_object();
    }
    w.end_array();
    w.key("failed_roots");
    w.begin_array();
    for (const auto& s : summaries)
      if (s.status == "failed") w.value(s.root);
    w.end_array();
    w.end_object();
    result.json = w.take();
    result.roots = std::move(summaries);
  }
  mpi::broadcast(world, result.exit_code, 0);
  return result;
}

}  // namespace ascprof::parallel

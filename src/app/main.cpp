// ascprof-mpi entry point: parse the command line, then hand over to the orchestration layer.
// stdout carries exactly one JSON object (from process 0); humans read stderr.
#include <algorithm>
#include <chrono>
#include <boost/mpi/communicator.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include "ascprof/common/allocator.hpp"
#include "ascprof/common/interrupt.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/parallel/analyze_run.hpp"
#include "ascprof/parallel/mpi_environment.hpp"
#include "ascprof/parallel/sweep_run.hpp"
#include "ascprof/pipeline/stage.hpp"
#include "ascprof/store/h5_handle.hpp"
#include "ascprof/store/table_index.hpp"
#include "ascprof/synth/synth.hpp"
#include "ascprof/common/files.hpp"
#include "cli.hpp"

namespace {

// `ascprof-mpi table PATH`: the root table PATH to stdout, byte for byte: the file, or the header
// and the ranks' ranges its index lists when the root kept it as <table>.parts.json.
int run_table(const std::string& table) {
  namespace fs = std::filesystem;
  auto put = [](std::string_view bytes) { return std::fwrite(bytes.data(), 1, bytes.size(), stdout) == bytes.size(); };
  auto fail = [](const ascprof::Status& st) {
    std::fprintf(stderr, "ascprof-mpi table: %s\n", st.to_string().c_str());
    return 3;
  };
  std::error_code ec;
  if (fs::exists(table, ec)) {
    auto file = ascprof::MappedFile::open(table);
    if (!file.ok()) return fail(file.status());
    return put(file->data()) && std::fflush(stdout) == 0 ? 0 : fail(ascprof::Status(ascprof::ErrorCode::kIo, "stdout: write failed"));
  }
  auto index = ascprof::store::read_table_index(table);
  if (!index.ok()) return fail(index.status());
  bool ok = put(index->header);
  std::string part;
  for (const auto& p : index->parts) {
    if (!ok) break;
    const ascprof::Status st = ascprof::store::read_table_part(fs::path(table).parent_path(), p, part);
    if (!st.ok()) return fail(st);
    ok = put(part);
  }
  return ok && std::fflush(stdout) == 0 ? 0 : fail(ascprof::Status(ascprof::ErrorCode::kIo, "stdout: write failed"));
}

int run_synth(const ascprof::app::CliOptions& o) {
  ascprof::synth::SynthOptions so;
  so.scenario = o.scenario;
  so.out_dir = o.out;
  so.ranks = o.ranks;
  so.steps = o.steps;
  so.scale = o.scale;
  so.seed = o.seed;
  so.faults = o.faults;
  so.layers = o.layers;
  so.split_attention = o.split_attention;
  so.pp = o.pp;
  so.microbatches = o.microbatches;
  so.export_format = o.export_format;
  so.moe_trace = o.moe_trace;
  so.with_modules = o.with_modules;
  so.force = o.force;
  if (!o.dummy_ranks.empty()) {
    auto d = ascprof::synth::parse_rank_list(o.dummy_ranks);
    if (!d.ok()) {
      std::fprintf(stderr, "ascprof-mpi: %s\n", d.status().message().c_str());
      std::printf("%s\n", ascprof::parallel::error_result_json("synth", "invalid_argument", d.status().message()).c_str());
      return 2;
    }
    so.dummy_ranks = *d;
  }
  auto r = ascprof::synth::generate_capture(so);
  if (!r.ok()) {
    const bool usage = r.status().code() == ascprof::ErrorCode::kInvalidArgument;
    std::fprintf(stderr, "ascprof-mpi synth: %s\n", r.status().message().c_str());
    std::printf("%s\n", ascprof::parallel::error_result_json("synth", ascprof::error_code_name(r.status().code()), r.status().message()).c_str());
    return usage ? 2 : 3;
  }
  ascprof::JsonWriter w;
  w.begin_object();
  w.kv("status", "ok");
  w.kv("command", "synth");
  w.kv("scenario", o.scenario);
  w.kv("root", r->root.string());
  w.kv("ground_truth", r->ground_truth.string());
  w.kv("steps", static_cast<int64_t>(r->steps));
  w.kv("rank_count", static_cast<uint64_t>(r->ranks.size()));
  uint64_t rows = 0, events = 0;
  for (const auto& rk : r->ranks) {
    rows += rk.kernel_rows;
    events += rk.trace_events;
  }
  w.kv("kernel_rows", rows);
  w.kv("trace_events", events);
  w.kv("total_bytes", r->total_bytes);
  w.end_object();
  std::printf("%s\n", w.str().c_str());
  std::fprintf(stderr, "ascprof-mpi synth: wrote %zu ranks (%.1f MB) to %s\n", r->ranks.size(),
               static_cast<double>(r->total_bytes) / 1e6, r->root.string().c_str());
  return 0;
}

// The last lines a person at a terminal reads: how it ended and where the report is (the output
// folder's name carries a hash, so it is named here rather than left to be dug out of the JSON).
void say_summary(const ascprof::parallel::AnalyzeResult& result, double seconds) {
  if (isatty(STDERR_FILENO) == 0 || result.roots.empty()) return;
  uint64_t ranks = 0, failed = 0, findings = 0;
  for (const auto& r : result.roots) {
    ranks += r.ranks_ok;
    failed += r.ranks_failed;
    findings += r.finding_count;
  }
  static const char* const kEnding[] = {"ok", "partial (some ranks or roots failed)", "usage error",
                                        "nothing could be analysed", "structure errors (see segment_manifest.json)",
                                        "interrupted"};
  const int code = result.exit_code;
  std::fprintf(stderr, "ascprof-mpi: %s: %zu root(s), %llu rank(s) analysed, %llu failed, %llu finding(s), %.1f s\n",
               code >= 0 && code <= 5 ? kEnding[code] : "ended", result.roots.size(), static_cast<unsigned long long>(ranks),
               static_cast<unsigned long long>(failed), static_cast<unsigned long long>(findings), seconds);
  for (const auto& r : result.roots) {
    std::string report;
    for (const std::string& f : r.outputs)  // the page when there is one, else the Markdown
      if (f.ends_with("report/report.html") || (report.empty() && f.ends_with("report/report.md"))) report = f;
    const std::string where = ascprof::escape_invalid_utf8(report.empty() ? r.out_dir + " (no report: " + r.status + ")" : report);
    std::fprintf(stderr, "  %s -> %s\n", ascprof::escape_invalid_utf8(r.root).c_str(), where.c_str());
  }
}

void say_if_interrupted(int exit_code) {
  if (exit_code != ascprof::kInterruptedExitCode) return;
  std::fprintf(stderr, "ascprof-mpi: interrupted by %s: finished ranks are checkpointed; rerun the same command into the "
                       "same output folder to resume (the JSON on stdout lists the ranks done and not done)\n",
               std::string(ascprof::signal_name(ascprof::interrupt_signal())).c_str());
}

}  // namespace

// --max-field-mb / --max-event-mb: bounds on one input record (0 is taken as 1 MiB, the smallest).
ascprof::pipeline::InputLimits input_limits(const ascprof::app::CliOptions& o) {
  ascprof::pipeline::InputLimits l;
  l.max_field_bytes = uint64_t{std::max<uint32_t>(o.max_field_mb, 1)} << 20;
  l.max_event_bytes = uint64_t{std::max<uint32_t>(o.max_event_mb, 1)} << 20;
  return l;
}

// --progress: "auto" draws the bar on a terminal and stays quiet in batch logs (a Slurm job asks
// for json explicitly); "bar" draws it whatever stderr is; "lines" prints a line per rank.
ascprof::parallel::ProgressMode progress_mode(const std::string& p) {
  using ascprof::parallel::ProgressMode;
  if (p == "json") return ProgressMode::kJson;
  if (p == "none") return ProgressMode::kNone;
  if (p == "lines") return ProgressMode::kLines;
  if (p == "auto" && isatty(STDERR_FILENO) == 0) return ProgressMode::kNone;
  return ProgressMode::kBar;
}

int main(int argc, char** argv) {
  ascprof::store::skip_hdf5_shutdown_at_exit();  // before any HDF5 call
  ascprof::keep_freed_heap_for_reuse();

  // --help, --version, usage errors and synth are one process's work and need no MPI: MPI_Init
  // costs ~0.3 s, and a broken MPI set-up must not stop them. Under a launcher the other processes
  // leave at once (the launcher's rank, from its environment, says which one is first).
  const auto parsed = ascprof::app::parse_command_line(argc, argv);
  const bool first_process = ascprof::app::launcher_rank() <= 0;
  if (parsed.help) {
    if (first_process) std::fputs(parsed.message.c_str(), parsed.ok ? stdout : stderr);
    return parsed.ok ? 0 : 2;
  }
  if (!parsed.ok) {
    if (first_process) {
      std::fprintf(stderr, "ascprof-mpi: %s\n", parsed.message.c_str());
      std::printf("%s\n", ascprof::parallel::error_result_json(parsed.options.command, "invalid_argument", parsed.message).c_str());
    }
    return 2;
  }
  const auto& o = parsed.options;
  if (o.command == "synth") return first_process ? run_synth(o) : 0;
  if (o.command == "table") return first_process ? run_table(o.roots.front()) : 0;

  // Started without a launcher, the process is a singleton MPI job of one: no daemon to spawn and no
  // network transport to open. Open MPI's defaults spend ~0.3 s of MPI_Init on both (UCX/OFI probing
  // and an orted); these two settings take a bare MPI_Init + MPI_Finalize from 0.33 to 0.02 s here.
  // A user's own OMPI_MCA_* settings win (setenv does not overwrite).
  if (ascprof::app::launcher_rank() < 0) {
    setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
    setenv("OMPI_MCA_pml", "ob1", 0);
  }
  const ascprof::parallel::MpiEnvironment env(argc, argv);
  ascprof::install_interrupt_handlers();  // after MPI_Init, so ours are the SIGTERM/SIGINT handlers
  boost::mpi::communicator world;
  const bool root = world.rank() == 0;
  if (o.command == "sweep") {
    ascprof::parallel::SweepRequest req;
    req.search_roots = o.search_roots;
    req.limit = o.limit;
    req.reuse_existing = o.reuse_existing;
    req.rollup = o.rollup;
    if (!o.shard.empty()) std::sscanf(o.shard.c_str(), "%u/%u", &req.shard_index, &req.shard_count);
    req.analyze.out = o.out;
    req.analyze.knowledge_dir = o.knowledge;
    req.analyze.force = o.force;
    req.analyze.verbose = o.verbose;
    req.analyze.progress = progress_mode(o.progress);
    // as the reference's sweep: no page per root and the light workbook, unless asked
    req.analyze.report.mode = o.render_html ? o.report_mode : "summary";
    req.analyze.report.skip_html = !o.render_html || o.skip_html;
    req.analyze.report.timeline.max_steps = o.timeline_steps;
    req.analyze.report.timeline.max_ranks = o.timeline_ranks;
    req.analyze.limits = input_limits(o);
    req.analyze.h5_deflate = o.h5_deflate;
    ascprof::pipeline::parse_source_choice(o.source, &req.analyze.source);  // validated by the CLI
    const auto result = ascprof::parallel::run_sweep(world, req);
    if (root) {
      std::printf("%s\n", result.json.c_str());
      std::fflush(stdout);
      say_if_interrupted(result.exit_code);
    }
    world.barrier();  // see below
    return result.exit_code;
  }
  // analyze: the rank-local stages (normalize to summarize) run in one pass per rank, checkpointed as
  // one; a rerun can start at cross_rank or diagnostics (from those checkpoints) or at report (from
  // the tables in OUT), not inside the rank-local pass.
  // stage names were checked by the parser against pipeline/stage.hpp
  using ascprof::pipeline::Stage;
  const std::string& first_name = !o.only_stage.empty() ? o.only_stage : o.from_stage;
  const std::string& last_name = !o.only_stage.empty() ? o.only_stage : o.to_stage;
  const Stage first = first_name.empty() ? Stage::kNormalize : *ascprof::pipeline::stage_from_name(first_name);
  const Stage last = last_name.empty() ? Stage::kReport : *ascprof::pipeline::stage_from_name(last_name);
  if (first == Stage::kSegment || first == Stage::kClassify || first == Stage::kSummarize) {
    const std::string msg = "starting at stage '" + first_name +
                            "' is not available: the rank-local stages (normalize to summarize) run as one pass; run from normalize, or "
        "from cross_rank, diagnostics (rank checkpoints) or report (OUT's tables)";
    if (root) {
      std::fprintf(stderr, "ascprof-mpi: %s\n", msg.c_str());
      std::printf("%s\n", ascprof::parallel::error_result_json("analyze", "invalid_argument", msg).c_str());
    }
    return 2;
  }
  // Options of the product contract whose stages are not built yet are said to do nothing, not ignored silently.
  if (root) {
    if (o.reuse_existing)
      std::fprintf(stderr, "ascprof-mpi: note: --reuse-existing applies to sweep; analyze reuses valid rank checkpoints "
                           "on its own (--force redoes everything)\n");
    if (o.limit > 0) std::fprintf(stderr, "ascprof-mpi: note: --limit applies to sweep only\n");
  }
  ascprof::parallel::AnalyzeRequest req;
  req.roots = o.roots;
  req.out = o.out;
  req.knowledge_dir = o.knowledge;
  req.force = o.force;
  req.verbose = o.verbose;
  // a rank job stops after its last stage; cross_rank and diagnostics run with summarize (their
  // inputs are gathered then), the report last
  if (last < Stage::kSummarize) req.last_stage = static_cast<int32_t>(last);
  req.write_report = last == Stage::kReport;
  req.report_only = first == Stage::kReport;  // the report from OUT's tables of an earlier run
  req.checkpoints_only = first == Stage::kCrossRank || first == Stage::kDiagnostics;  // ranks from their checkpoints
  req.report.mode = o.report_mode;
  req.report.skip_html = o.skip_html;
  req.report.timeline.max_steps = o.timeline_steps;
  req.report.timeline.max_ranks = o.timeline_ranks;
  req.progress = progress_mode(o.progress);
  req.limits = input_limits(o);
  req.h5_deflate = o.h5_deflate;
  ascprof::pipeline::parse_source_choice(o.source, &req.source);  // validated by the CLI
  const auto started = std::chrono::steady_clock::now();
  const auto result = ascprof::parallel::run_analyze(world, req);
  if (root) {
    std::printf("%s\n", result.json.c_str());
    std::fflush(stdout);
    say_if_interrupted(result.exit_code);
    say_summary(result, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  // No process exits before process 0 has written the result: srun --kill-on-bad-exit signals the
  // tasks still running as soon as one exits non-zero (an interrupted run exits 5 everywhere).
  world.barrier();
  return result.exit_code;
}

#include "cli.hpp"

#include "ascprof/pipeline/root_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <boost/program_options.hpp>
#include <fstream>
#include <sstream>

#include "ascprof/pipeline/stage.hpp"

namespace ascprof::app {

namespace po = boost::program_options;

namespace {

const char* kUsage =
    "usage:\n"
    "  mpirun -np N ascprof-mpi analyze ROOT [ROOT ...] -o OUT [options]\n"
    "  mpirun -np N ascprof-mpi sweep --search-root DIR [--search-root DIR ...] -o OUT [options]\n"
    "  ascprof-mpi synth --scenario NAME -o DIR [--ranks R] [--steps S] [--scale K] [--seed X] [--fault F] [--export text|db|both]\n"
    "                    [--moe-trace skill|umdk|array] [--with-modules]\n"
    "  ascprof-mpi table OUT/<root>/<table>.csv   (a root table to stdout, also one kept as <table>.csv.parts.json)\n";

po::options_description make_options(CliOptions& o) {
  po::options_description d("options");
  d.add_options()
      ("help,h", "show this help")
      ("version", "print the version")
      ("out,o", po::value(&o.out), "output folder")
      ("config", po::value(&o.config), "read options from this file (INI: key = value)")
      ("knowledge", po::value(&o.knowledge), "knowledge/ rules folder (default: the installed one)")
      ("search-root", po::value(&o.search_roots)->composing(), "sweep: folder to search for capture roots")
      ("from-stage", po::value(&o.from_stage), "first stage to run")
      ("to-stage", po::value(&o.to_stage), "last stage to run")
      ("only-stage", po::value(&o.only_stage), "run just this stage")
      ("reuse-existing", po::bool_switch(&o.reuse_existing), "skip roots whose outputs are complete")
      ("force", po::bool_switch(&o.force), "redo everything; allow writing into a non-empty OUT")
      ("skip-html", po::bool_switch(&o.skip_html), "do not write report.html")
      ("report-mode", po::value(&o.report_mode), "bounded (default: xlsx sheets hold each table's 2,000 costliest rows) | full-raw (every row) | summary (no report.html, 50,000 rows)")
      ("timeline-steps", po::value(&o.timeline_steps), "report/timeline.json: only each rank's first N steps (0 = all)")
      ("timeline-ranks", po::value(&o.timeline_ranks),
       "report/timeline.json: at most N ranks (64), the findings' suspects first, then rank order (0 = all)")
      ("max-field-mb", po::value(&o.max_field_mb), "largest CSV field or row accepted, MiB (default 16); larger fails the rank")
      ("max-event-mb", po::value(&o.max_event_mb), "largest trace_view.json event accepted, MiB (default 64); larger fails the rank")
      ("source", po::value(&o.source), "auto (default: kernel_details.csv when a rank has one, else its ascend_pytorch_profiler_N.db) | text | db")
      ("h5-deflate", po::value(&o.h5_deflate), "deflate level of the ranks' HDF5 files, 0 (none: fastest, ~3.8x the bytes) to 9 (default 1)")
      ("progress", po::value(&o.progress), "auto (bar on a terminal, else quiet) | bar | lines | json | none (stderr)")
      ("limit", po::value(&o.limit), "sweep: analyse at most N roots")
      ("shard", po::value(&o.shard), "sweep: analyse shard I of K of the roots, e.g. 0/4 (Slurm job arrays)")
      ("rollup", po::bool_switch(&o.rollup), "sweep: merge the shard results in OUT into one sweep summary")
      ("render-html", po::bool_switch(&o.render_html), "sweep: also write report.html for every root")
      ("verbose,v", po::bool_switch(&o.verbose), "more detail on stderr")
      ("scenario", po::value(&o.scenario), "synth: scenario name")
      ("ranks", po::value(&o.ranks), "synth: number of profiling ranks")
      ("steps", po::value(&o.steps), "synth: steps per rank")
      ("scale", po::value(&o.scale), "synth: size multiplier (K ~ 1000 gives GB-sized ranks)")
      ("seed", po::value(&o.seed), "synth: random seed")
      ("fault", po::value(&o.faults)->composing(), "synth: inject a fault NAME[:RANK[:MAGNITUDE]], e.g. slow_rank:3 (repeatable)")
      ("dummy-ranks", po::value(&o.dummy_ranks), "synth: ranks without attention work, e.g. 1,3 or 2-4")
      ("layers", po::value(&o.layers), "synth: main layers per step (0 = scenario default)")
      ("split-attention", po::bool_switch(&o.split_attention),
       "synth: moe_mla_decode with two attention anchors (MlaProlog + MlaPreprocess) per layer")
      ("pp", po::value(&o.pp), "synth: training with P pipeline stages (1F1B, P2P send/receive between stages)")
      ("microbatches", po::value(&o.microbatches), "synth: training microbatches per step (0 = scenario default, 2)")
      ("export", po::value(&o.export_format), "synth: text (default) | db (the SQLite exports only) | both")
      ("moe-trace", po::value(&o.moe_trace),
       "synth: moe_mla_decode as an instrumented build: FusedDeepMoe kernels and per rank the MoeTracing in-kernel "
       "trace of its last call (moe_trace/trace_call<K>.json), as the skill | umdk collector writes it, or a bare "
       "X-event array; enables the faults moe_slow_expert and moe_recv_starved")
      ("with-modules", po::bool_switch(&o.with_modules),
       "synth: training captured with with_modules=True: nn.Module ranges (Model_0/Layer_<n>/Attention_<n>, MLP_<n>) "
       "on the Python thread, their exact device time in ground_truth.json");
  return d;
}

std::string check(const CliOptions& o) {
  for (const std::string* s : {&o.from_stage, &o.to_stage, &o.only_stage})
    if (!s->empty() && !pipeline::stage_from_name(*s))
      return "unknown stage '" + *s + "' (stages: " + pipeline::stage_name_list() + ")";
  if (!o.only_stage.empty() && (!o.from_stage.empty() || !o.to_stage.empty()))
    return "--only-stage cannot be combined with --from-stage/--to-stage";
  if (o.report_mode != "bounded" && o.report_mode != "summary" && o.report_mode != "full-raw")
    return "--report-mode must be bounded, full-raw or summary";
  if (o.progress != "auto" && o.progress != "bar" && o.progress != "lines" && o.progress != "json" && o.progress != "none")
    return "--progress must be auto, bar, lines, json or none";
  if (o.limit < 0) return "--limit must be >= 0";
  if (o.h5_deflate < 0 || o.h5_deflate > 9) return "--h5-deflate must be 0 to 9";
  if (ascprof::pipeline::SourceChoice c; !ascprof::pipeline::parse_source_choice(o.source, &c))
    return "--source must be auto, text or db";
  if (o.command == "analyze") {
    if (o.roots.empty()) return "analyze needs at least one capture ROOT";
    if (o.out.empty()) return "analyze needs -o OUT";
  } else if (o.command == "sweep") {
    if (o.out.empty()) return "sweep needs -o OUT";
    if (o.rollup) return o.shard.empty() ? "" : "--rollup merges every shard; it takes no --shard";
    if (o.search_roots.empty()) return "sweep needs --search-root DIR";
    if (!o.shard.empty()) {
      unsigned i = 0, k = 0;
      char extra = 0;
      if (std::sscanf(o.shard.c_str(), "%u/%u%c", &i, &k, &extra) != 2 || k == 0 || i >= k)
        return "--shard must be I/K with 0 <= I < K, e.g. 0/4";
    }
  } else if (o.command == "synth") {
    if (o.scenario.empty()) return "synth needs --scenario NAME";
    if (o.out.empty()) return "synth needs -o DIR";
    if (o.ranks < 1 || o.ranks > 100000) return "--ranks must be between 1 and 100000";
    if (o.steps < 1 || o.steps > 1000000) return "--steps must be between 1 and 1000000";
    if (!(o.scale > 0) || o.scale > 1e6) return "--scale must be > 0";
  } else if (o.command == "table") {
    if (o.roots.size() != 1) return "table needs one table path, e.g. OUT/<root>/evidence_index.csv";
  } else {
    return "unknown command '" + o.command + "' (expected analyze, sweep, synth or table)";
  }
  return {};
}

}  // namespace

ParseOutcome parse_command_line(int argc, const char* const* argv) {
  ParseOutcome out;
  CliOptions& o = out.options;
  po::options_description visible = make_options(o);
  po::options_description all = visible;
  all.add_options()("command", po::value(&o.command))("inputs", po::value<std::vector<std::string>>()->composing());
  po::positional_options_description pos;
  pos.add("command", 1).add("inputs", -1);
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    if (vm.count("help") || argc <= 1) {
      std::ostringstream s;
      s << kUsage << visible;
      out.help = true;
      out.ok = vm.count("help") > 0;
      out.message = s.str();
      return out;
    }
    if (vm.count("version")) {
      out.help = true;
      out.ok = true;
      out.message = std::string("ascprof-mpi ") + ASCPROF_VERSION + "\n";
      return out;
    }
    if (vm.count("config")) {
      const std::string path = vm["config"].as<std::string>();
      std::ifstream in(path);
      if (!in) {
        out.message = "cannot read config file '" + path + "'";
        return out;
      }
      po::store(po::parse_config_file(in, visible), vm);  // command line values stored first win
    }
    po::notify(vm);
    if (vm.count("inputs")) o.roots = vm["inputs"].as<std::vector<std::string>>();
    if (vm.count("moe-trace") && o.command != "synth") {
      out.message = "--moe-trace applies to synth only\n" + std::string(kUsage);
      return out;
    }
    if (o.with_modules && o.command != "synth") {
      out.message = "--with-modules applies to synth only\n" + std::string(kUsage);
      return out;
    }
  } catch (const std::exception& e) {
    out.message = e.what();
    return out;
  }
  out.message = check(o);
  out.ok = out.message.empty();
  if (!out.ok) out.message += "\n" + std::string(kUsage);
  return out;
}

int launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') return std::atoi(v);
  // a batch script has SLURM_PROCID=0 without srun; only a step started by srun has SLURM_STEP_ID
  // (the batch step's is "batch"/4294967294, which is not an srun step of ours)
  const char* step = std::getenv("SLURM_STEP_ID");
  const char* procid = std::getenv("SLURM_PROCID");
  if (step != nullptr && procid != nullptr && std::string_view(step) != "4294967294" && std::string_view(step) != "batch")
    return std::atoi(procid);
  return -1;
}

}  // namespace ascprof::app

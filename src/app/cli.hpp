#pragma once
// Command line of ascprof-mpi (Boost.Program_options). Every option can also come from a config
// file (--config FILE, program_options INI format, e.g. jobs/*.ini); the command line wins.
#include <cstdint>
#include <string>
#include <vector>

namespace ascprof::app {

struct CliOptions {
  std::string command;                 // analyze | sweep | synth | table
  std::vector<std::string> roots;      // analyze: capture roots
  std::vector<std::string> search_roots;  // sweep
  std::string out;
  std::string config;
  std::string knowledge;
  std::string from_stage, to_stage, only_stage;
  bool reuse_existing = false;
  bool force = false;
  bool skip_html = false;
  std::string report_mode = "bounded";
  uint32_t max_field_mb = 16;          // CSV: largest field / raw row (MiB) before a kLimit error
  std::string source = "auto";         // --source: which export ranks are read from (auto | text | db)
  int32_t h5_deflate = 1;              // deflate level of the ranks' HDF5 files (0 = none, fastest)
  uint32_t max_event_mb = 64;          // trace_view.json: largest event (MiB) before a kLimit error
  uint32_t timeline_steps = 0;         // report/timeline.json: only each rank's first N steps (0 = all)
  uint32_t timeline_ranks = 64;        // report/timeline.json: at most N ranks, suspects first (0 = all)
  std::string progress = "auto";       // auto | bar | json | none
  int64_t limit = 0;
  std::string shard;                   // sweep: "I/K", this job's share of the roots
  bool rollup = false;                 // sweep: merge OUT/sweep_shards/*.json
  bool render_html = false;            // sweep: write report.html per root (off by default, as the reference)
  bool verbose = false;
  // synth
  std::string scenario;
  int ranks = 4;
  int steps = 4;
  double scale = 1.0;
  uint64_t seed = 1;
  std::vector<std::string> faults;
  std::string dummy_ranks;             // "1,3" or "2-4"
  int layers = 0;                      // 0 = scenario default
  bool split_attention = false;        // moe_mla_decode: two attention anchors per layer
  int pp = 0;                          // training: pipeline stages (0/1 = none)
  int microbatches = 0;                // training: microbatches per step (0 = scenario default)
  std::string export_format = "text";  // text | db | both
  std::string moe_trace;               // synth: "" | skill | umdk | array
  bool with_modules = false;           // synth training: nn.Module ranges (with_modules=True)
};

struct ParseOutcome {
  bool ok = false;
  bool help = false;        // --help / --version printed: exit 0
  std::string message;      // usage error or help text
  CliOptions options;
};

/// Parses argv (and --config). Never throws: usage errors come back as !ok with a message.
ParseOutcome parse_command_line(int argc, const char* const* argv);

/// The rank the MPI launcher gave this process, from the variables launchers set (Open MPI's
/// mpirun/mpiexec: OMPI_COMM_WORLD_RANK; PMIx: PMIX_RANK; MPICH/Hydra and PMI-1/2: PMI_RANK;
/// srun: SLURM_PROCID, only when srun started this very step, i.e. SLURM_STEP_ID is set too);
/// -1 when no launcher started it.
int launcher_rank();

}  // namespace ascprof::app

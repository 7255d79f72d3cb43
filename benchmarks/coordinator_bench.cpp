// Coordinator benchmark by simulation (issue 22): what process 0 costs at thousands of ranks, measured
// on the code `ascprof-mpi analyze` runs (the class partials, operator profiles and operator buckets
// folded per process and merged up a binomial tree of processes, the class walls' quantiles selected
// over the processes, the rest of the outcomes gathered, then write_root_outputs on process 0).
// Nothing here is a new algorithm: the same functions analyze_run calls, on fabricated ranks.
//
//   coordinator_bench prepare --capture ROOT --work DIR [--knowledge DIR]
//       (any number of MPI processes) runs the real rank job (pipeline::run_rank_stages) on every rank
//       of a generated capture and saves each outcome with parallel::add_checkpoint (in its part pack) under
//       DIR/src_out/<slug>/ranks/, as `ascprof-mpi analyze` does (a valid checkpoint is kept). One
//       line per rank on stderr.
//   mpiexec -n 2 coordinator_bench run --capture ROOT --work DIR --ranks N [options]
//       every process loads those template outcomes (parallel::load_checkpoint), fabricates its half
//       of N rank outcomes (renumbered, clock-shifted, jittered; a few planted slow ranks copied from
//       the capture's slow rank), then both go through analyze_run's gather and reduction and process 0 runs
//       the coordinator's post-gather work into DIR/out_<N>/. Prints one JSON object (process 0).
//
// run options:
//   --slow-template N    the capture's slow rank (synth fault slow_rank:N:1.4; its rank id is rank<N>); default 3
//   --planted a,b,c      fabricated ranks that are copies of the slow template (default: 3 ranks at
//                        13 %, 52 % and 91 % of N, so both processes hold one)
//   --jitter F           per-value duration jitter, uniform +-F (default 0.03)
//   --clock-skew-us U    per-rank clock shift, uniform +-U us (default 2000; rank 0 is the reference)
//   --start-noise-us U   per-kernel start noise of the alignment candidates, +-U us (default 5)
//   --seed S             (default 22)
//   --detail 0|1|2       also time parts of write_root_outputs' cross_rank and diagnostics on their
//                        own before it (which redoes them): 1 clock offsets, operator alignment and
//                        the detectors; 2 also step alignment (quadratic in ranks: minutes at 1,024);
//                        default 2
//   --tables light|full  light (default): the fabricated ranks' per-entity summary fragments (one row
//                        per kernel / block / layer / step) are emptied and the segment / classify root
//                        files skipped, so the root tables that grow with ranks x rows are not written
//                        (see light_parts); full: the real ones (use on a few ranks, then scale)
//   --root-outputs 0|1   0: stop before write_root_outputs (default 1)
//   --keep               keep DIR/out_<N>/ (removed after the run otherwise)
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/packed_oarchive.hpp>
#include <boost/serialization/array.hpp>
#include <boost/serialization/map.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <simdjson.h>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <string>
#include <vector>

#include "ascprof/analysis/align.hpp"
#include "ascprof/analysis/clock_offsets.hpp"
#include "ascprof/analysis/critical_path.hpp"
#include "ascprof/analysis/diagnose.hpp"
#include "ascprof/analysis/operator_align.hpp"
#include "ascprof/common/allocator.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/common/stable_id.hpp"
#include "ascprof/common/stopwatch.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/model/finding.hpp"
#include "ascprof/parallel/checkpoint.hpp"
#include "ascprof/parallel/gather_messages.hpp"
#include "ascprof/parallel/mpi_environment.hpp"
#include "ascprof/pipeline/rank_job.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/pipeline/stage.hpp"
#include "ascprof/pipeline/summary_outputs.hpp"
#include "ascprof/store/part_pack.hpp"
// Internal to the pipeline module (src/pipeline): the detector list write_root_outputs runs, used by
// --detail to time the diagnostics on their own (benchmarks/CMakeLists.txt adds the folder).
#include "detectors.hpp"

namespace fs = std::filesystem;
namespace mpi = boost::mpi;
using namespace ascprof;
// the messages analyze_run moves, from its own header
using parallel::gather_rank_outcomes;
using parallel::packed_size;
using parallel::reduce_root_merges;
using parallel::set_class_wall_quantiles;
using parallel::RankOffset;

namespace {

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

struct Args {
  std::string mode, capture, work, knowledge_dir, slow_template = "3", planted;
  uint64_t ranks = 0, seed = 22;
  int detail = 2;
  double jitter = 0.03, clock_skew_us = 2000, start_noise_us = 5;
  bool full_tables = false, keep = false, root_outputs = true;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "coordinator_bench: %s\nusage: coordinator_bench prepare --capture ROOT --work DIR [--knowledge DIR]\n"
               "       mpiexec -n 2 coordinator_bench run --capture ROOT --work DIR --ranks N [--slow-template ID]\n"
               "              [--planted a,b,c] [--jitter F] [--clock-skew-us U] [--start-noise-us U] [--seed S]\n"
               "              [--detail 0|1|2] [--tables light|full] [--root-outputs 0|1]\n"
               "              [--keep]\n"
               "              [--knowledge DIR]\n",
               why);
  std::exit(2);
}

Args parse_args(int argc, char** argv) {
  Args a;
  if (argc < 2) usage("no mode");
  a.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value of " + k).c_str());
      return argv[++i];
    };
    if (k == "--capture") a.capture = next();
    else if (k == "--work") a.work = next();
    else if (k == "--knowledge") a.knowledge_dir = next();
    else if (k == "--ranks") a.ranks = std::stoull(next());
    else if (k == "--slow-template") a.slow_template = next();
    else if (k == "--planted") a.planted = next();
    else if (k == "--jitter") a.jitter = std::stod(next());
    else if (k == "--clock-skew-us") a.clock_skew_us = std::stod(next());
    else if (k == "--start-noise-us") a.start_noise_us = std::stod(next());
    else if (k == "--seed") a.seed = std::stoull(next());
    else if (k == "--detail") a.detail = std::stoi(next());
    else if (k == "--tables") {
      const std::string v = next();
      if (v != "light" && v != "full") usage("--tables light|full");
      a.full_tables = v == "full";
    } else if (k == "--root-outputs") a.root_outputs = next() != "0";
    else if (k == "--keep") a.keep = true;
    else usage(("unknown option " + k).c_str());
  }
  if (a.mode != "prepare" && a.mode != "run") usage("mode must be prepare or run");
  if (a.capture.empty() || a.work.empty()) usage("--capture and --work are required");
  if (a.mode == "run" && a.ranks < 2) usage("--ranks N (N >= 2) is required");
  return a;
}

// splitmix64: a deterministic value per (seed, a, b), so both processes fabricate the same world.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
// Uniform in [-1, 1).
double unit(uint64_t seed, uint64_t a, uint64_t b) {
  const uint64_t h = mix(seed ^ mix(a * 0x100000001B3ull + 0x632BE59BD9B4E019ull) ^ mix(b + 0xD1B54A32D192ED03ull));
  return static_cast<double>(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}
int64_t scaled(int64_t ns, double f) { return static_cast<int64_t>(static_cast<double>(ns) * f + 0.5); }

// Peak RSS of this process so far (getrusage ru_maxrss, KiB on Linux) and the current RSS.
uint64_t peak_rss_bytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_maxrss) * 1024;
}
// CPU seconds (user + system) of this process so far: on a shared machine the wall time of a phase
// includes waiting for the CPU, its CPU time does not.
double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}
// Bytes malloc has handed out and not had back (glibc mallinfo2): RSS minus this is memory the
// allocator keeps (freed chunks, fragmentation) or that does not come from malloc at all.
uint64_t heap_in_use_bytes() {
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}
uint64_t current_rss_bytes() {
  std::ifstream in("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// Per phase: wall seconds and RSS at its end, on every process.
struct Phase {
  std::string name;
  double seconds = 0;
  uint64_t rss_end = 0, peak_end = 0;
  double cpu_seconds = -1;  // -1: not measured (the parts write_root_outputs reports itself)
  uint64_t heap_end = 0;    // malloc's bytes in use at its end
  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & name & seconds & rss_end & peak_end & cpu_seconds & heap_end;
  }
};

struct ProcessReport {
  int process = 0;
  uint64_t ranks_fabricated = 0;
  uint64_t round1_bytes = 0, round2_bytes = 0;  // what this process sent (packed sizes, as analyze_run counts)
  uint64_t peak_rss = 0;
  std::vector<Phase> phases;
  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & process & ranks_fabricated & round1_bytes & round2_bytes & peak_rss & phases;
  }
};

class PhaseClock {
 public:
  explicit PhaseClock(ProcessReport& r) : r_(r), t_(SteadyClock::now()), cpu_(cpu_seconds()) {}
  void restart() {
    t_ = SteadyClock::now();
    cpu_ = cpu_seconds();
  }
  double end(const std::string& name) {
    const double s = seconds_since(t_);
    const double cpu = cpu_seconds();
    r_.phases.push_back({name, s, current_rss_bytes(), peak_rss_bytes(), cpu - cpu_, heap_in_use_bytes()});
    restart();
    return s;
  }
  /// A part of the phase just ended, timed by the caller (wall seconds; no RSS or CPU of its own).
  void add(const std::string& name, double seconds) {
    r_.phases.push_back({name, seconds, current_rss_bytes(), peak_rss_bytes(), seconds, heap_in_use_bytes()});
  }

 private:
  ProcessReport& r_;
  SteadyClock::time_point t_;
  double cpu_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Templates: the real outcomes of the generated capture's ranks
// ---------------------------------------------------------------------------------------------

struct Template {
  pipeline::RankOutcome outcome;  // real, as the rank job returned it (candidates included)
  std::string h5_path;            // absolute
  std::string parts_file;         // absolute: the light copy of the part pack the fabricated ranks concatenate
};

pipeline::RootPlan template_plan(const Args& a, const knowledge::Knowledge& kb) {
  return pipeline::plan_root(a.capture, (fs::path(a.work) / "src_out").string(), 0, pipeline::SourceChoice::kAuto,
                             kb.moe_trace.folder);
}

// The summary fragments the fabricated ranks point at. --tables full: the template rank's own
// fragments. --tables light: a copy in which every fragment with one row per kernel, block, layer,
// step or evidence window is emptied (raw_kernel_index, block/layer/step summaries, step_anatomy,
// evidence_index, bubble windows: ~111 MB per 215k-row rank, so 1,024 ranks would write ~114 GB of
// root CSV here); the per-rank tables (rank, operator, HCCL, wait anchors, AICPU) stay real. What
// the emptied ones cost per rank is measured with --tables full on a few ranks and scaled.
const std::set<std::string>& per_entity_fragments() {
  static const std::set<std::string> names = {"raw_kernel_index.csv", "normalized_event_index.csv", "block_summary.csv",
                                              "layer_summary.csv",    "step_summary.csv",           "step_anatomy.csv",
                                              "evidence_index.csv",   "bubble_windows.jsonl"};
  return names;
}

std::string light_parts(const Args& a, const pipeline::RootPlan& plan, const pipeline::RankOutcome& o) {
  const fs::path src = fs::path(plan.tasks.front().root_out) / o.parts_file;
  if (a.full_tables) return fs::absolute(src).string();
  const fs::path dst = fs::absolute(fs::path(a.work) / "light_summary" / (o.rank_id + ".light-v3.parts"));
  // the name says which sections are emptied (a rule change renames it); a copy that no longer opens
  // (a pack of an older layout) is made again
  if (!fs::exists(dst) || !store::PartPackReader::open(dst).ok()) {
    auto in = store::PartPackReader::open(src);
    if (!in.ok()) throw std::runtime_error(in.status().to_string());
    store::PartPackWriter out;
    fs::create_directories(dst.parent_path());
    if (const Status st = out.open(dst); !st.ok()) throw std::runtime_error(st.to_string());
    for (const auto& section : pipeline::summary_part_sections()) {
      auto text = in->read(section);
      if (!text.ok()) throw std::runtime_error(text.status().to_string());
      const auto segs = in->section_segments(section);
      if (!segs.empty() && !segs.front().zlib) out.store_raw(section);  // as the rank job stored it
      out.add(section, per_entity_fragments().count(section) ? std::string_view() : std::string_view(*text));
    }
    if (const Status st = out.commit(); !st.ok()) throw std::runtime_error(st.to_string());
  }
  return dst.string();
}

// ---------------------------------------------------------------------------------------------
// Fabrication
// ---------------------------------------------------------------------------------------------

struct World {
  uint64_t n = 0;
  std::vector<Template> templates;
  size_t slow = 0;              // index of the slow template
  std::vector<size_t> normal;   // the other templates
  std::set<uint64_t> planted;   // fabricated ranks copied from the slow template
  uint64_t seed = 0;
  double jitter = 0, skew_ns = 0, start_noise_ns = 0;

  size_t template_of(uint64_t f) const { return planted.count(f) ? slow : normal[f % normal.size()]; }
  // The rank's clock minus the reference clock (rank 0's), in ns.
  int64_t clock_shift(uint64_t f) const { return f == 0 ? 0 : static_cast<int64_t>(unit(seed, f, 1) * skew_ns); }
  // A rank-level speed factor (+-0.3 x jitter) so that no two ranks are copies of each other.
  double rank_factor(uint64_t f) const { return 1.0 + 0.3 * jitter * unit(seed, f, 2); }
};

// evt_<from>_<row> (model::event_id) -> evt_<to>_<row>; other ids unchanged.
std::string renumber_event_id(const std::string& id, uint32_t from, uint32_t to) {
  const std::string prefix = model::event_id(from, 0).substr(0, model::event_id(from, 0).size() - 1);  // "evt_<from>_"
  if (id.rfind(prefix, 0) != 0) return id;
  const std::string row = id.substr(prefix.size());
  if (row.empty() || row.find_first_not_of("0123456789") != std::string::npos) return id;
  return model::event_id(to, std::stoull(row));
}

// One fabricated rank outcome: the template's, renumbered, its clock shifted and its times jittered,
// consistently (collective marks end together on the true clock, step windows stay where the
// template's were, every duration scaled by the rank factor and a per-value jitter).
pipeline::RankOutcome fabricate(const World& w, uint64_t f, int process) {
  const Template& t = w.templates[w.template_of(f)];
  const pipeline::RankOutcome& src = t.outcome;
  pipeline::RankOutcome o = src;
  o.candidates.reset();  // built at fold time (fold_candidates), as a process keeps them until then
  o.operator_buckets = {};
  const std::string id = std::to_string(f);
  const uint32_t ord = static_cast<uint32_t>(f);
  const uint32_t src_ord = static_cast<uint32_t>(src.rank_index);
  o.rank_id = id;
  o.rank_dir = "fab_" + id + "_ascend_pt";
  o.rank_path = "/simulated/" + o.rank_dir;
  o.rank_id_source = "simulated";
  o.root_index = 0;
  o.rank_index = static_cast<int32_t>(f);
  o.device_id = static_cast<int32_t>(f % 16);
  o.h5_file = t.h5_path;          // absolute: fs::path(out_dir) / h5_file is this file
  o.parts_file = t.parts_file;  // absolute, likewise
  o.process = process;
  o.reused = false;
  const int64_t shift = w.clock_shift(f);
  const double rf = w.rank_factor(f);
  uint64_t k = 0;  // value counter for the jitter stream
  auto jit = [&](double scale) { return rf * (1.0 + scale * w.jitter * unit(w.seed ^ 0xA5A5u, f, ++k)); };
  o.start_ns += shift;
  o.end_ns += shift;
  for (auto& m : o.collectives.marks) m.end_ns += shift + static_cast<int64_t>(500.0 * unit(w.seed, f, 1000000 + m.seq));
  analysis::StepWindows windows;
  for (size_t i = 0; i < o.step_windows.size(); ++i) {
    analysis::StepWindow sw = o.step_windows[i].window();
    sw.rank_id = id;
    sw.segment_id = stable_id("seg", {id, sw.segment_id});
    sw.start_ns += shift;
    sw.end_ns += shift;
    windows.push_back(sw);
  }
  o.step_windows = std::move(windows);
  for (auto& c : o.comm_times) {
    c.elapse_ms *= jit(1.0);
    if (c.transit_ms == c.transit_ms) c.transit_ms *= jit(1.0);
  }
  o.facts.rank_id = id;
  o.facts.rank_ordinal = ord;
  o.facts.wall_ns = scaled(o.facts.wall_ns, jit(0.2));
  o.facts.comm_aiv_ns = scaled(o.facts.comm_aiv_ns, jit(1.0));
  o.facts.alltoall_mb *= jit(0.5);
  o.class_partials.rank_id = id;
  for (auto& b : o.class_partials.blocks)
    for (auto& v : b.wall_ns) v = scaled(v, jit(1.0));
  for (auto& l : o.class_partials.layers)
    for (auto& v : l.wall_ns) v = scaled(v, jit(1.0));
  for (auto& s : o.class_partials.steps)
    for (auto& v : s.wall_ns) v = scaled(v, jit(0.2));
  for (auto& op : o.operators) {
    op.duration_sum_ns = scaled(op.duration_sum_ns, jit(1.0));
    op.wait_sum_ns = scaled(op.wait_sum_ns, jit(1.0));
  }
  for (auto& h : o.hccl) {
    const double j = jit(1.0);
    h.duration_sum_ns = scaled(h.duration_sum_ns, j);
    h.wait_sum_ns = scaled(h.wait_sum_ns, j);
    h.duration_avg_us *= j;
    h.duration_min_us *= j;
    h.duration_p50_us *= j;
    h.duration_p90_us *= j;
    h.duration_max_us *= j;
  }
  for (auto& p : o.deep_dive.profiles) {
    const double j = jit(1.0);
    p.dur_sum_ns = scaled(p.dur_sum_ns, j);
    p.dur_min_ns = scaled(p.dur_min_ns, j);
    p.dur_max_ns = scaled(p.dur_max_ns, j);
    p.wait_sum_ns = scaled(p.wait_sum_ns, j);
  }
  o.deep_dive.kernel_time_ns = scaled(o.deep_dive.kernel_time_ns, rf);
  o.host_bound.idle_ns = scaled(o.host_bound.idle_ns, jit(1.0));
  o.host_bound.host_bound_ns = scaled(o.host_bound.host_bound_ns, jit(1.0));
  for (auto& st : o.paths.steps) {  // critical-path skeletons: same step ids as the windows, same clock
    st.segment_id = stable_id("seg", {id, st.segment_id});
    st.start_ns += shift;
    st.end_ns += shift;
    st.tail.start_ns += shift;
    for (auto& op : st.ops) {
      op.start_ns += shift;
      op.end_ns += shift;
      op.before.start_ns += shift;
      if (op.wait_ns > 0) op.wait_ns = scaled(op.wait_ns, jit(1.0));
    }
  }
  for (auto& fd : o.findings) {  // rank-local findings: this rank's ids and event ids
    for (auto* list : {&fd.rank_ids, &fd.suspected_ranks})
      for (auto& r : *list)
        if (r == src.rank_id) r = id;
    for (auto* list : {&fd.evidence_ids, &fd.counter_evidence_ids})
      for (auto& e : *list) e = renumber_event_id(e, src_ord, ord);
    analysis::set_claim_id(fd);
  }
  return o;
}

// The rank's alignment candidates: the template's kernels on this rank's clock (shift), each start
// moved by a little noise and each duration / wait jittered.
std::shared_ptr<const analysis::OperatorCandidates> fold_candidates(const World& w, uint64_t f) {
  const auto& src = *w.templates[w.template_of(f)].outcome.candidates;
  auto c = std::make_shared<analysis::OperatorCandidates>();
  c->keys = src.keys;
  c->key = src.key;
  c->row = src.row;
  const size_t n = src.size();
  c->start_ns.resize(n);
  c->dur_ns.resize(n);
  c->wait_ns.resize(n);
  const int64_t shift = w.clock_shift(f);
  const double rf = w.rank_factor(f);
  uint64_t state = mix(w.seed ^ mix(f + 77));
  auto next = [&state]() {  // [-1, 1)
    state = mix(state);
    return static_cast<double>(state >> 11) * (2.0 / 9007199254740992.0) - 1.0;
  };
  for (size_t i = 0; i < n; ++i) {
    c->start_ns[i] = src.start_ns[i] + shift + static_cast<int64_t>(w.start_noise_ns * next());
    c->dur_ns[i] = scaled(src.dur_ns[i], rf * (1.0 + w.jitter * next()));
    c->wait_ns[i] = scaled(src.wait_ns[i], rf * (1.0 + w.jitter * next()));
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// Approximate in-memory bytes of what process 0 holds (capacities of the big vectors + strings)
// ---------------------------------------------------------------------------------------------

template <class T>
uint64_t vec_bytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}
uint64_t str_bytes(const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; }

struct MemoryBreakdown {
  uint64_t class_partials = 0, deep_dive = 0, operators_hccl = 0, collectives = 0, comm_times = 0, step_windows = 0,
           findings = 0, other = 0, buckets = 0, bucket_rows = 0, paths = 0, facts = 0;
  uint64_t bucket_count = 0;
};

void add_outcome_bytes(const pipeline::RankOutcome& o, MemoryBreakdown& m) {
  m.other += sizeof(pipeline::RankOutcome) + str_bytes(o.stats_json) + vec_bytes(o.stat_counts) + vec_bytes(o.sources) +
             vec_bytes(o.step_class_ids) + vec_bytes(o.layer_inventory);
  for (const auto& s : o.sources) m.other += str_bytes(s.path);
  auto tops = [](const std::vector<analysis::ClassTopOp>& v) {
    uint64_t b = vec_bytes(v);
    for (const auto& x : v) b += str_bytes(x.name) + str_bytes(x.task_type);
    return b;
  };
  auto named = [](const std::vector<analysis::NamedSum>& v) {
    uint64_t b = vec_bytes(v);
    for (const auto& x : v) b += str_bytes(x.name);
    return b;
  };
  const auto& cp = o.class_partials;
  m.class_partials += vec_bytes(cp.blocks) + vec_bytes(cp.layers) + vec_bytes(cp.steps);
  for (const auto& b : cp.blocks)
    m.class_partials += vec_bytes(b.wall_ns) + vec_bytes(b.pipeline_us) + named(b.bound_family_counts) +
                        named(b.op_type_counts) + tops(b.top_ops) + str_bytes(b.class_id);
  for (const auto& l : cp.layers)
    m.class_partials += vec_bytes(l.wall_ns) + named(l.block_kind_walls) + tops(l.top_ops) + str_bytes(l.class_id) +
                        str_bytes(l.structure_signature) + vec_bytes(l.block_kinds) + vec_bytes(l.block_class_ids);
  for (const auto& s : cp.steps)
    m.class_partials += vec_bytes(s.wall_ns) + named(s.layer_class_walls) + tops(s.top_ops) + str_bytes(s.class_id) +
                        str_bytes(s.structure_signature);
  m.deep_dive += vec_bytes(o.deep_dive.profiles) + vec_bytes(o.deep_dive.op_stats) + vec_bytes(o.deep_dive.api_stats);
  for (const auto& p : o.deep_dive.profiles)
    m.deep_dive += str_bytes(p.name) + str_bytes(p.input_shapes) + str_bytes(p.output_shapes) + str_bytes(p.input_dtypes) +
                   str_bytes(p.output_dtypes) + str_bytes(p.categories) + vec_bytes(p.pipeline_us) + vec_bytes(p.sample_rows);
  m.operators_hccl += vec_bytes(o.operators) + vec_bytes(o.hccl);
  for (const auto& op : o.operators)
    m.operators_hccl += str_bytes(op.name) + str_bytes(op.roles) + str_bytes(op.categories) + vec_bytes(op.pipeline_us);
  m.collectives += vec_bytes(o.collectives.marks) + vec_bytes(o.collectives.groups);
  for (const auto& g : o.collectives.groups) m.collectives += str_bytes(g);
  m.comm_times += vec_bytes(o.comm_times);
  m.step_windows += o.step_windows.bytes();
  m.paths += vec_bytes(o.paths.groups) + vec_bytes(o.paths.names) + vec_bytes(o.paths.steps);
  for (const auto& g : o.paths.groups) m.paths += str_bytes(g);
  for (const auto& n : o.paths.names) m.paths += str_bytes(n);
  for (const auto& st : o.paths.steps) m.paths += str_bytes(st.segment_id) + vec_bytes(st.ops);
  m.facts += vec_bytes(o.facts.comm_aiv_rows) + vec_bytes(o.facts.alltoall_rows) + str_bytes(o.facts.rank_id);
  m.findings += vec_bytes(o.findings);
  for (const auto& f : o.findings) m.findings += str_bytes(f.summary) + str_bytes(f.metrics_json) + 64 * f.evidence_ids.size();
}

// What process 0 holds of the merged operator buckets.
void add_merged_bytes(const analysis::OperatorBucketMerge& merged, MemoryBreakdown& m) {
  m.buckets += vec_bytes(merged.buckets) + vec_bytes(merged.keys);
  for (const auto& k : merged.keys) m.buckets += str_bytes(k.name_key) + str_bytes(k.shape);
  for (const auto& b : merged.buckets) {
    m.bucket_rows += vec_bytes(b.ranges) + vec_bytes(b.events);
    for (const auto& rows : b.outlier_rows) m.bucket_rows += vec_bytes(rows);
  }
  m.bucket_count += merged.buckets.size();
}

// ---------------------------------------------------------------------------------------------
// prepare: the real rank jobs on the capture's ranks, saved as checkpoints
// ---------------------------------------------------------------------------------------------

int run_prepare(mpi::communicator& world, const Args& a, const knowledge::Knowledge& kb, const fs::path& kdir) {
  pipeline::RootPlan plan;
  if (world.rank() == 0) {
    plan = template_plan(a, kb);
    if (!plan.ok || plan.tasks.empty()) {
      std::fprintf(stderr, "coordinator_bench: capture %s: %s\n", a.capture.c_str(),
                   plan.ok ? "no ranks" : plan.error.c_str());
      plan.tasks.clear();
    }
  }
  mpi::broadcast(world, plan, 0);
  if (plan.tasks.empty()) return 3;
  const std::string hash = parallel::knowledge_fingerprint(kdir);
  int failed = 0;
  for (size_t i = static_cast<size_t>(world.rank()); i < plan.tasks.size(); i += static_cast<size_t>(world.size())) {
    auto task = plan.tasks[i];
    task.last_stage = pipeline::kStageSummarize;
    if (auto saved = parallel::load_checkpoint(task, hash)) {
      std::fprintf(stderr, "[process %d] rank %s: valid checkpoint kept (%" PRIu64 " kernel rows)\n", world.rank(),
                   task.rank_id.c_str(), saved->kernel_rows);
      continue;
    }
    const auto t0 = SteadyClock::now();
    Status st;  // the checkpoint record's, added to the rank's part pack as analyze does
    pipeline::RankOutcome o = pipeline::run_rank_stages(
        task, kb, [&](const pipeline::RankOutcome& done, store::PartPackWriter& pack) { st = parallel::add_checkpoint(pack, task, done, hash); });
    const double secs = seconds_since(t0);
    if (!o.ok) {
      std::fprintf(stderr, "[process %d] rank %s FAILED: %s\n", world.rank(), task.rank_id.c_str(), o.error.c_str());
      ++failed;
      continue;
    }
    if (!st.ok()) {
      std::fprintf(stderr, "[process %d] rank %s: checkpoint not saved: %s\n", world.rank(), task.rank_id.c_str(),
                   st.to_string().c_str());
      ++failed;
      continue;
    }
    std::fprintf(stderr, "[process %d] rank %s: %" PRIu64 " kernel rows, %zu alignment candidates, %.1f s\n", world.rank(),
                 task.rank_id.c_str(), o.kernel_rows, o.candidates ? o.candidates->size() : size_t{0}, secs);
  }
  failed = mpi::all_reduce(world, failed, std::plus<int>());
  return failed == 0 ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------
// run: fabricate, gather twice, coordinate
// ---------------------------------------------------------------------------------------------

std::vector<uint64_t> parse_list(const std::string& s) {
  std::vector<uint64_t> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(std::stoull(item));
  return out;
}

struct FindingCheck {
  bool pass = false;
  std::map<std::string, std::vector<std::string>> planted_named_by;  // planted rank -> finding types naming it
  std::vector<std::string> other_suspects;                           // non-planted ranks any finding suspects
  std::map<std::string, uint64_t> by_type;
  uint64_t finding_count = 0;
  std::string error;
};

// Reads the diagnosis_findings.json write_root_outputs wrote. PASS: every planted rank is a suspected
// rank of some finding (on the real template capture the tool names its slow rank with
// ep_load_imbalance_suspected / communication_collective_slow, "the others wait for rank 3, which
// arrives last": moe_mla_decode's MC2 kernels absorb the wait, so the communication.json vote has no
// outlier), and no other rank is suspected by any finding.
FindingCheck check_findings(const fs::path& file, const std::set<uint64_t>& planted) {
  FindingCheck c;
  simdjson::ondemand::parser parser;
  simdjson::padded_string json;
  if (simdjson::padded_string::load(file.string()).get(json)) {
    c.error = "cannot read " + file.string();
    return c;
  }
  std::set<std::string> planted_ids;
  for (uint64_t p : planted) planted_ids.insert(std::to_string(p));
  std::set<std::string> others;
  try {
    simdjson::ondemand::document doc = parser.iterate(json);
    for (auto f : doc["diagnosis_findings"].get_array()) {
      std::string type(std::string_view(f["finding_type"].get_string()));
      ++c.by_type[type];
      ++c.finding_count;
      for (auto r : f["suspected_ranks"].get_array()) {
        const std::string id(std::string_view(r.get_string()));
        if (planted_ids.count(id)) {
          auto& v = c.planted_named_by[id];
          if (std::find(v.begin(), v.end(), type) == v.end()) v.push_back(type);
        } else {
          others.insert(id);
        }
      }
    }
  } catch (const simdjson::simdjson_error& e) {
    c.error = std::string("diagnosis_findings.json: ") + e.what();
    return c;
  }
  c.other_suspects.assign(others.begin(), others.end());
  c.pass = others.empty();
  for (const auto& id : planted_ids)
    if (!c.planted_named_by.count(id)) c.pass = false;
  return c;
}

// Who stands out in the skewed operator alignments, per (role, rank, pattern): hits, the role's
// alignments the rank is in, their share and the time at stake, as diagnose_operator_alignments
// (src/analysis/operator_findings.cpp) groups them before its share / excess tests. A copy of its
// grouping, for the report only: it shows why a planted rank is or is not named.
struct StandOut {
  std::string role, rank_id, pattern;
  uint64_t hits = 0, member_of = 0;
  double excess_ms = 0;
};

std::vector<StandOut> standing_out(const pipeline::CrossRank& cr, const knowledge::Knowledge& kb) {
  const auto& al = cr.operators;
  const auto& d = kb.diagnostics;
  const auto& rules = kb.operator_alignment;
  std::map<std::tuple<uint32_t, uint32_t, bool>, std::pair<uint64_t, double>> groups;
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> member_of;
  for (const auto& a : al.alignments) {
    const auto& key = al.keys[a.key];
    if (key.role >= rules.roles.size() || rules.roles[key.role].finding.empty()) continue;
    const auto& role = rules.roles[key.role];
    for (uint32_t r = 0; r < a.range_count; ++r)
      for (uint32_t rank = al.ranges[a.first_range + r].first; rank < al.ranges[a.first_range + r].end; ++rank)
        ++member_of[{key.role, rank}];
    if (role.start_skew_trigger) {
      if (static_cast<double>(a.start_skew_ns) / 1000.0 < d.cross_rank_skew_us) continue;
      auto& g = groups[{key.role, a.latest_start_rank, true}];
      ++g.first;
      g.second += static_cast<double>(a.start_skew_ns);
      continue;
    }
    const int64_t spread = a.dur_max_ns - a.dur_min_ns;
    if (a.duration_ratio < d.cross_rank_skew_ratio && static_cast<double>(spread) / 1000.0 < d.cross_rank_skew_us) continue;
    const bool late = a.start_skew_ns > a.end_skew_ns;
    auto& g = groups[{key.role, late ? a.latest_start_rank : a.latest_end_rank, late}];
    ++g.first;
    g.second += static_cast<double>(spread);
  }
  std::vector<StandOut> out;
  for (const auto& [k, g] : groups) {
    const auto& [role, rank, late] = k;
    out.push_back({rules.roles[role].name, cr.rank_ids[rank], late ? "late_arrival" : "slow_finish", g.first,
                   member_of[{role, rank}], g.second / 1e6});
  }
  std::stable_sort(out.begin(), out.end(), [](const StandOut& x, const StandOut& y) { return x.hits > y.hits; });
  if (out.size() > 12) out.resize(12);
  return out;
}

int run_bench(mpi::communicator& world, const Args& a, const knowledge::Knowledge& kb, const fs::path& kdir) {
  const int me = world.rank();
  const int np = world.size();
  ProcessReport rep;
  rep.process = me;
  PhaseClock clock(rep);

  // --- templates (every process: the real outcomes of the capture's ranks, from their checkpoints)
  pipeline::RootPlan tplan;
  if (me == 0) tplan = template_plan(a, kb);
  mpi::broadcast(world, tplan, 0);
  const std::string hash = parallel::knowledge_fingerprint(kdir);
  World w;
  w.n = a.ranks;
  w.seed = a.seed;
  w.jitter = a.jitter;
  w.skew_ns = a.clock_skew_us * 1000.0;
  w.start_noise_ns = a.start_noise_us * 1000.0;
  std::string load_error;
  for (auto task : tplan.tasks) {
    task.last_stage = pipeline::kStageSummarize;
    auto saved = parallel::load_checkpoint(task, hash);
    if (!saved || !saved->ok || saved->candidates == nullptr) {
      load_error = "rank " + task.rank_id + ": no valid checkpoint with candidates under " + task.root_out +
                   " (run `coordinator_bench prepare` first)";
      break;
    }
    Template t;
    t.outcome = std::move(*saved);
    t.h5_path = fs::absolute(fs::path(task.root_out) / t.outcome.h5_file).string();
    w.templates.push_back(std::move(t));
  }
  if (load_error.empty() && w.templates.size() < 2) load_error = "the capture needs at least 2 ranks";
  if (load_error.empty()) {
    std::sort(w.templates.begin(), w.templates.end(),
              [](const Template& x, const Template& y) { return x.outcome.rank_index < y.outcome.rank_index; });
    bool found = false;
    for (size_t i = 0; i < w.templates.size(); ++i) {
      if (w.templates[i].outcome.rank_id == "rank" + a.slow_template) {  // rank ids are rank<N> (issue 23)
        w.slow = i;
        found = true;
      } else {
        w.normal.push_back(i);
      }
    }
    if (!found) load_error = "--slow-template " + a.slow_template + " is not a rank of the capture";
  }
  std::vector<std::string> errors;
  mpi::gather(world, load_error, errors, 0);
  int bad = 0;
  if (me == 0)
    for (const auto& e : errors)
      if (!e.empty()) {
        std::fprintf(stderr, "coordinator_bench: %s\n", e.c_str());
        bad = 1;
      }
  mpi::broadcast(world, bad, 0);
  if (bad) return 3;
  // light summary folders: process 0 makes them, the others wait
  if (me == 0)
    for (auto& t : w.templates) t.parts_file = light_parts(a, tplan, t.outcome);
  for (auto& t : w.templates) mpi::broadcast(world, t.parts_file, 0);
  if (a.planted.empty()) {
    for (const double share : {0.13, 0.52, 0.91}) w.planted.insert(static_cast<uint64_t>(share * static_cast<double>(w.n)));
  } else {
    for (uint64_t p : parse_list(a.planted))
      if (p < w.n) w.planted.insert(p);
  }
  uint64_t template_rows = 0, template_candidates = 0;
  for (const auto& t : w.templates) {
    template_rows += t.outcome.kernel_rows;
    template_candidates += t.outcome.candidates->size();
  }
  const fs::path out_root = fs::absolute(fs::path(a.work) / ("out_" + std::to_string(w.n)));
  if (me == 0) {
    std::error_code ec;
    fs::remove_all(out_root, ec);
    fs::create_directories(out_root / "fab_root");
  }
  world.barrier();
  clock.end("load_templates");

  // --- fabricate this process's share (contiguous: process p holds [p N / P, (p+1) N / P))
  const uint64_t lo = w.n * static_cast<uint64_t>(me) / static_cast<uint64_t>(np);
  const uint64_t hi = w.n * static_cast<uint64_t>(me + 1) / static_cast<uint64_t>(np);
  // As analyze_run's rank jobs: each outcome's class partials, operator and HCCL rows and operator
  // profiles are folded into the process's merge as the rank's job ends (the class walls stay here,
  // compact), so the raw partials of all the process's ranks are never held together.
  std::vector<pipeline::RankOutcome> mine;
  mine.reserve(hi - lo);
  std::map<int32_t, pipeline::RootMerge> merges;  // root 0: this process's ranks merged
  std::map<int32_t, analysis::ClassWalls> walls;
  double summaries_seconds = 0;
  for (uint64_t f = lo; f < hi; ++f) {
    mine.push_back(fabricate(w, f, me));
    const auto t_fold = SteadyClock::now();
    pipeline::fold_rank_summaries(mine.back(), merges[0], walls[0], kb);
    summaries_seconds += seconds_since(t_fold);
  }
  rep.ranks_fabricated = mine.size();
  clock.end("fabricate + fold as each rank job ends (simulation setup)");
  clock.add("fold class partials + deep dive (each process, its own ranks)", summaries_seconds);
  world.barrier();
  clock.restart();
  for (const auto& o : mine) rep.round1_bytes += packed_size(world, o);  // as analyze_run: one at a time
  clock.end("round1: packed_size (analyze_run counts the payload)");
  world.barrier();
  clock.restart();
  std::vector<pipeline::RankOutcome> outcomes;  // process 0: every rank
  {
    std::vector<std::vector<pipeline::RankOutcome>> all;
    gather_rank_outcomes(world, mine, all);
    clock.end("round1: gather outcomes");
    if (me == 0) {
      outcomes.reserve(w.n);
      for (auto& per_process : all)
        for (auto& o : per_process) outcomes.push_back(std::move(o));
    }
  }

  // --- clock offsets on process 0, broadcast; each process folds its ranks' buckets into one merge;
  // the merges go up the binomial tree
  std::vector<RankOffset> offsets;
  if (me == 0) {
    const auto ns = pipeline::clock_offsets_ns(outcomes);
    for (size_t i = 0; i < outcomes.size(); ++i) offsets.push_back({0, outcomes[i].rank_index, ns[i]});
  }
  mpi::broadcast(world, offsets, 0);
  clock.end("clock offsets (process 0) + broadcast");
  std::map<int32_t, int64_t> offset_of;
  for (const auto& x : offsets) offset_of[x.rank_index] = x.offset_ns;
  double fold_seconds = 0, merge_seconds = 0;  // rank side (candidates to buckets) and the local merge
  for (auto& o : mine) {
    const auto t0 = SteadyClock::now();
    o.candidates = fold_candidates(w, static_cast<uint64_t>(o.rank_index));
    const auto it = offset_of.find(o.rank_index);
    const int64_t offset = it == offset_of.end() ? 0 : it->second;
    pipeline::fold_operator_buckets(o, offset, kb);
    const auto t1 = SteadyClock::now();
    analysis::fold_rank_buckets(merges[0].operators, static_cast<uint32_t>(o.rank_index), o.operator_buckets, offset,
                                kb.operator_alignment);
    o.operator_buckets = {};
    fold_seconds += std::chrono::duration<double>(t1 - t0).count();
    merge_seconds += seconds_since(t1);
  }
  mine.clear();
  mine.shrink_to_fit();
  clock.end("fold + merge buckets (each process, its own ranks)");
  clock.add("  of which candidates -> buckets [rank side]", fold_seconds);
  clock.add("  of which buckets -> the process's merge", merge_seconds);
  world.barrier();
  clock.restart();
  rep.round2_bytes = reduce_root_merges(world, merges, kb);
  clock.end("round2: reduce root merges (binomial tree)");
  set_class_wall_quantiles(world, merges, walls);
  walls.clear();
  clock.end("class wall quantiles (all processes)");
  pipeline::RootMerge merged = std::move(merges[0]);  // process 0: every rank's buckets and classes

  // --- process 0: the coordinator's post-gather work
  JsonWriter out;
  MemoryBreakdown mem;
  uint64_t step_alignments = 0, operator_alignments = 0, operator_members = 0, operator_ranges = 0, step_members = 0,
           windows = 0;
  double offsets_estimated = 0;
  std::vector<StandOut> stand_out;
  uint64_t kernel_rows_simulated = 0;
  uint64_t detail_findings = 0;
  FindingCheck check;
  pipeline::RootSummary summary;
  double root_outputs_seconds = 0;
  if (me == 0) {
    std::sort(outcomes.begin(), outcomes.end(),
              [](const pipeline::RankOutcome& x, const pipeline::RankOutcome& y) { return x.rank_index < y.rank_index; });
    for (const auto& o : outcomes) {
      add_outcome_bytes(o, mem);
      kernel_rows_simulated += o.kernel_rows;
    }
    add_merged_bytes(merged.operators, mem);
    mem.class_partials += packed_size(world, merged.classes);  // the root's classes merged (walls stayed on their processes)
    mem.deep_dive += packed_size(world, merged.deep_dive);     // the deep dive's root scope merged
    clock.end("sort + measure (bench bookkeeping)");
    if (a.detail >= 1) {
      // the parts of write_root_outputs' cross_rank and diagnostics, timed on their own
      const auto clock_offsets = pipeline::root_clock_offsets(outcomes);
      clock.end("detail: root_clock_offsets");
      std::map<std::string, int64_t> offset_by_id;
      for (const auto& c : clock_offsets)
        if (c.estimated) {
          offset_by_id[c.rank_id] = static_cast<int64_t>(c.offset_us * 1000.0);
          offsets_estimated += 1;
        }
      pipeline::CrossRank cr;
      std::vector<int64_t> window_offset;
      for (const auto& o : outcomes)
        if (o.ok && !o.parts_file.empty())
        {
          cr.windows.append(o.step_windows);
          const auto it = offset_by_id.find(o.rank_id);
          window_offset.insert(window_offset.end(), o.step_windows.size(), it == offset_by_id.end() ? 0 : it->second);
        }
      if (a.detail >= 2) {
        cr.steps = analysis::align_steps(cr.windows, window_offset, kb.diagnostics);
        clock.end("detail: align_steps");
      }
      for (const auto& o : outcomes) {  // by member position (rank_index), as write_root_outputs names them
        const auto pos = static_cast<size_t>(o.rank_index);
        if (cr.rank_ids.size() <= pos) {
          cr.rank_ids.resize(pos + 1);
          cr.rank_ordinals.resize(pos + 1);
        }
        cr.rank_ids[pos] = o.rank_id;
        cr.rank_ordinals[pos] = static_cast<uint32_t>(pos);
      }
      analysis::OperatorBucketMerge copy = merged.operators;  // write_root_outputs consumes the original below
      clock.end("detail: copy the merged buckets (bench bookkeeping)");
      cr.operators = analysis::finish_alignments(std::move(copy), kb.operator_alignment);
      clock.end("detail: finish_alignments");
      if (a.detail >= 2) {  // the critical paths walk the step alignments
        std::vector<analysis::PathRankView> path_ranks;
        for (const auto& o : outcomes)
          if (pipeline::kernel_stages_ran(o) && !o.paths.empty()) {
            const auto it = offset_by_id.find(o.rank_id);
            path_ranks.push_back({o.rank_id, static_cast<uint32_t>(o.rank_index), it == offset_by_id.end() ? 0 : it->second, &o.paths});
          }
        cr.paths = analysis::walk_critical_paths(path_ranks, cr.windows, cr.steps, kb.diagnostics);
        clock.end("detail: walk_critical_paths");
      }
      windows = cr.windows.size();
      step_alignments = cr.steps.size();
      for (const auto& s : cr.steps) step_members += s.members.size();
      operator_alignments = cr.operators.alignments.size();
      for (const auto& al : cr.operators.alignments) operator_members += al.member_ranks;
      operator_ranges = cr.operators.ranges.size();
      const auto findings = pipeline::run_detectors(outcomes, kb, cr);
      detail_findings = findings.size();
      clock.end("detail: run_detectors");
      stand_out = standing_out(cr, kb);
    }
    // the real thing: everything analyze_run's process 0 does after the gathers, for this root
    pipeline::RootPlan plan;
    plan.root_index = 0;
    plan.root = a.capture;
    plan.slug = "fab_root";
    plan.out_dir = (out_root / "fab_root").string();
    pipeline::RankTask task;
    // --tables light: no segment / classify root files (step_segments.json, block_segments.json, ...:
    // ~44 MB per 215k-row rank, copied from each rank's part pack); write_root_outputs skips them for a
    // plan whose ranks stopped before segment. Everything else runs.
    task.last_stage = a.full_tables ? pipeline::kStageSummarize : pipeline::kStageNormalize;
    plan.tasks.push_back(task);
    const auto t0 = SteadyClock::now();
    if (a.root_outputs) summary = pipeline::write_root_outputs(plan, std::move(outcomes), kb, &merged);
    root_outputs_seconds = seconds_since(t0);
    outcomes = {};
    if (a.root_outputs) {
      const double other = root_outputs_seconds - summary.structure_seconds - summary.summary_seconds -
                           summary.cross_rank_seconds - summary.diagnostics_seconds;
      rep.phases.push_back({"write_root_outputs: manifests + analysis.h5", other, 0, 0, -1});
      rep.phases.push_back({"write_root_outputs: structure files", summary.structure_seconds, 0, 0, -1});
      rep.phases.push_back({"write_root_outputs: summary + class + deep dive", summary.summary_seconds, 0, 0, -1});
      rep.phases.push_back({"write_root_outputs: cross_rank", summary.cross_rank_seconds, 0, 0, -1});
      rep.phases.push_back({"write_root_outputs: diagnostics", summary.diagnostics_seconds, 0, 0, -1});
      clock.end("write_root_outputs (total)");
    }
    if (a.root_outputs) check = check_findings(out_root / "fab_root" / "diagnosis_findings.json", w.planted);
    else check.error = "--root-outputs 0: no diagnosis_findings.json";
  }
  rep.peak_rss = peak_rss_bytes();
  std::vector<ProcessReport> reports;
  mpi::gather(world, rep, reports, 0);

  if (me == 0) {
    uint64_t out_bytes = 0, out_files = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(out_root, ec); it != fs::recursive_directory_iterator(); ++it)
      if (it->is_regular_file()) {
        out_bytes += it->file_size();
        ++out_files;
      }
    uint64_t r1 = 0, r2 = 0;
    for (const auto& r : reports) {
      r1 += r.round1_bytes;
      r2 += r.round2_bytes;
    }
    out.begin_object();
    out.kv("ranks", w.n);
    out.kv("processes", static_cast<int64_t>(np));
    out.kv("status", a.root_outputs ? summary.status : std::string("root_outputs_skipped"));
    out.kv("tables", a.full_tables ? "full" : "light");
    if (!summary.error.empty()) out.kv("error", summary.error);
    out.key("template");
    out.begin_object();
    out.kv("capture", a.capture);
    out.kv("ranks", static_cast<uint64_t>(w.templates.size()));
    out.kv("slow_rank", a.slow_template);
    out.kv("kernel_rows_per_rank", template_rows / w.templates.size());
    out.kv("alignment_candidates_per_rank", template_candidates / w.templates.size());
    out.end_object();
    out.key("planted_slow_ranks");
    out.begin_array();
    for (uint64_t p : w.planted) out.value(std::to_string(p));
    out.end_array();
    out.kv("kernel_rows_simulated", kernel_rows_simulated);
    out.key("gathered_bytes");
    out.begin_object();
    out.kv("round1_total", r1);
    out.kv("round2_total", r2);
    out.kv("per_rank", static_cast<double>(r1 + r2) / static_cast<double>(w.n));
    out.kv("round1_per_rank", static_cast<double>(r1) / static_cast<double>(w.n));
    out.kv("round2_per_rank", static_cast<double>(r2) / static_cast<double>(w.n));
    out.kv("per_kernel_row", kernel_rows_simulated ? static_cast<double>(r1 + r2) / static_cast<double>(kernel_rows_simulated) : 0.0);
    out.end_object();
    out.key("process0_memory_estimate");  // capacities of what process 0 holds after the gathers
    out.begin_object();
    out.kv("class_partials", mem.class_partials);
    out.kv("deep_dive_profiles", mem.deep_dive);
    out.kv("operators_hccl", mem.operators_hccl);
    out.kv("collective_marks", mem.collectives);
    out.kv("comm_times", mem.comm_times);
    out.kv("step_windows", mem.step_windows);
    out.kv("findings", mem.findings);
    out.kv("critical_path_skeletons", mem.paths);
    out.kv("rank_facts_vectors", mem.facts);
    out.kv("outcome_other", mem.other);
    out.kv("operator_buckets", mem.buckets);
    out.kv("operator_bucket_rows", mem.bucket_rows);
    out.kv("operator_bucket_count", mem.bucket_count);
    out.kv("operator_alignment_ranges_bytes", operator_ranges * sizeof(analysis::RankRange));
    out.kv("operator_alignments_bytes", operator_alignments * sizeof(analysis::OperatorAlignment));
    out.kv("step_alignment_members_bytes", step_members * sizeof(size_t));
    out.end_object();
    out.key("cross_rank");
    out.begin_object();
    out.kv("clock_offsets_estimated", offsets_estimated);
    out.kv("step_windows", windows);
    out.kv("step_alignments", step_alignments);
    out.kv("step_alignment_members", step_members);
    out.kv("operator_alignments", operator_alignments);
    out.kv("operator_alignment_members", operator_members);
    out.kv("root_step_alignment_count", summary.step_alignment_count);
    out.kv("root_operator_alignment_count", summary.operator_alignment_count);
    out.end_object();
    out.key("outputs");
    out.begin_object();
    out.kv("files", out_files);
    out.kv("bytes", out_bytes);
    out.kv("write_root_outputs_seconds", root_outputs_seconds);
    out.end_object();
    out.key("findings");
    out.begin_object();
    out.kv("check", check.pass ? "PASS" : "FAIL");
    if (!check.error.empty()) out.kv("error", check.error);
    out.kv("finding_count", check.finding_count);
    out.kv("detail_run_detectors_count", detail_findings);
    out.key("by_type");
    out.begin_object();
    for (const auto& [t, n] : check.by_type) out.kv(t, n);
    out.end_object();
    out.key("planted_named_by");
    out.begin_object();
    for (uint64_t p : w.planted) {
      out.key(std::to_string(p));
      out.begin_array();
      const auto it = check.planted_named_by.find(std::to_string(p));
      if (it != check.planted_named_by.end())
        for (const auto& t : it->second) out.value(t);
      out.end_array();
    }
    out.end_object();
    out.key("standing_out");  // --detail: the most frequent (role, rank, pattern) of skewed alignments
    out.begin_array();
    for (const auto& so : stand_out) {
      out.begin_object();
      out.kv("role", so.role);
      out.kv("rank_id", so.rank_id);
      out.kv("pattern", so.pattern);
      out.kv("hits", so.hits);
      out.kv("alignments_of_rank", so.member_of);
      out.kv("share", so.member_of ? static_cast<double>(so.hits) / static_cast<double>(so.member_of) : 0.0);
      out.kv("excess_ms", so.excess_ms);
      out.end_object();
    }
    out.end_array();
    out.key("other_suspects");
    out.begin_array();
    for (const auto& s : check.other_suspects) out.value(s);
    out.end_array();
    out.end_object();
    out.key("processes_detail");
    out.begin_array();
    for (const auto& r : reports) {
      out.begin_object();
      out.kv("process", static_cast<int64_t>(r.process));
      out.kv("ranks_fabricated", r.ranks_fabricated);
      out.kv("peak_rss_bytes", r.peak_rss);
      out.kv("round1_sent_bytes", r.round1_bytes);
      out.kv("round2_sent_bytes", r.round2_bytes);
      out.key("phases");
      out.begin_array();
      for (const auto& ph : r.phases) {
        out.begin_object();
        out.kv("name", ph.name);
        out.kv("seconds", ph.seconds);
        if (ph.rss_end) out.kv("rss_end_bytes", ph.rss_end);
        if (ph.peak_end) out.kv("peak_rss_end_bytes", ph.peak_end);
        if (ph.heap_end) out.kv("heap_in_use_end_bytes", ph.heap_end);
        if (ph.cpu_seconds >= 0) out.kv("cpu_seconds", ph.cpu_seconds);
        out.end_object();
      }
      out.end_array();
      out.end_object();
    }
    out.end_array();
    out.end_object();
    std::printf("%s\n", out.str().c_str());
    std::fflush(stdout);
    if (!a.keep) fs::remove_all(out_root, ec);
  }
  int code = 0;
  if (me == 0) code = a.root_outputs && summary.status == "failed" ? 1 : 0;
  mpi::broadcast(world, code, 0);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  ascprof::keep_freed_heap_for_reuse();  // the allocator settings of the tool (app/main.cpp)
  parallel::MpiEnvironment env(argc, argv);
  mpi::communicator world;
  const Args a = parse_args(argc, argv);
  const fs::path kdir = a.knowledge_dir.empty() ? knowledge::default_knowledge_dir() : fs::path(a.knowledge_dir);
  auto kb = knowledge::Knowledge::load(kdir);
  if (!kb.ok()) {
    if (world.rank() == 0) std::fprintf(stderr, "coordinator_bench: knowledge: %s\n", kb.status().to_string().c_str());
    return 2;
  }
  try {
    return a.mode == "prepare" ? run_prepare(world, a, *kb, kdir) : run_bench(world, a, *kb, kdir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "coordinator_bench [process %d]: %s\n", world.rank(), e.what());
    world.abort(4);
  }
  return 4;
}

#include "ascprof/synth/synth.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <thread>

#include "ascprof/common/files.hpp"
#include "ascprof/common/json_writer.hpp"
#include "moe_trace_writer.hpp"
#include "rank_writer.hpp"
#include "scenario.hpp"
#include "simulate.hpp"

#ifndef ASCPROF_VERSION
#define ASCPROF_VERSION "0.0.0"
#endif

namespace ascprof::synth {

namespace fs = std::filesystem;

namespace {

// Cycles of the 50 MHz counter as microseconds with exactly two decimals (exact: 1 cycle = 0.02 us).
std::string cycles_us(int64_t cycles) {
  const int64_t h = cycles * (100 / kMoeCyclesPerUs);
  char buf[40];
  const int len = std::snprintf(buf, sizeof buf, "%lld.%02lld", static_cast<long long>(h / 100), static_cast<long long>(h % 100));
  return std::string(buf, static_cast<size_t>(len));
}
std::string ns_us2(int64_t ns) { return cycles_us(ns / kMoeNsPerCycle); }  // ns a multiple of 20

std::string us_text(int64_t ns) {  // exact "%.3f" of ns/1000
  const bool neg = ns < 0;
  const uint64_t u = neg ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  char buf[40];
  const int len = std::snprintf(buf, sizeof buf, "%s%llu.%03u", neg ? "-" : "", static_cast<unsigned long long>(u / 1000),
                                static_cast<unsigned>(u % 1000));
  return std::string(buf, static_cast<size_t>(len));
}

struct FaultDoc {
  const char* description;
  std::vector<const char*> findings;
};

FaultDoc fault_doc(FaultKind k) {
  switch (k) {
    case FaultKind::kSlowRank:
      return {"every compute kernel of the rank is MAGNITUDE x longer; peers wait for it at each sync point",
              {"slow_rank_suspected"}};
    case FaultKind::kEpImbalance:
      return {"expert GroupedMatmul kernels of the rank are MAGNITUDE x longer; peers' MoeDistributeCombine waits",
              {"ep_load_imbalance_suspected"}};
    case FaultKind::kSlowCollective:
      return {"the rank's hcom collectives finish max(1.5 ms, (MAGNITUDE-1) x transit) late on that rank (slow link)",
              {"communication_collective_slow", "slow_link_suspected"}};
    case FaultKind::kIdleBubble:
      return {"the rank's host stalls MAGNITUDE us before the middle segment of the step; the device idles",
              {"device_idle_bubble"}};
    case FaultKind::kExposedAicpu:
      return {"an AI_CPU kernel of MAGNITUDE us runs at the start of every layer with nothing overlapping it",
              {"aicpu_exposed"}};
    case FaultKind::kHostBound:
      return {"the rank's host launch cost per operator is MAGNITUDE x larger; the device waits for launches",
              {"host_dispatch_bound", "device_idle_bubble"}};
    case FaultKind::kClockOffset:
      return {"every timestamp of the rank is shifted by MAGNITUDE us; the physical timeline is unchanged", {}};
    case FaultKind::kVectorScalarHeavy:
      return {"one hot AI_VECTOR_CORE kernel name of the rank has aiv_scalar_ratio 0.70 and aiv_vec_ratio 0.10 on every call",
              {"vector_scalar_heavy"}};
    case FaultKind::kCubeUnderused:
      return {"one hot AI_CORE matmul kernel name of the rank has cube_utilization(%) 20, aic_mac_ratio 0.18 and "
              "aic_mte2_ratio 0.72 on every call",
              {"cube_low_utilization", "aic_memory_bound"}};
    case FaultKind::kAicpuFallback:
      return {"an IndexPut that normally runs on the AI cores runs on the AI CPU (AICPU kernel, ~300 us) once per layer, "
              "right after the layer's first kernel",
              {"aicpu_fallback"}};
    case FaultKind::kBlockDimOne:
      return {"one hot AI_VECTOR_CORE kernel name of the rank is launched with Block Dim 1 on every call and takes 8 x longer",
              {"block_dim_low"}};
    case FaultKind::kThrottledCores:
      return {"the rank's AI Core Freq counter reads MAGNITUDE MHz (1800 elsewhere) and its compute kernels take "
              "1800 / MAGNITUDE x longer; peers wait for it at each sync point",
              {"aicore_frequency_reduced", "slow_rank_suspected"}};
    case FaultKind::kHostSyncHeavy:
      return {"api_statistic.csv StreamSynchronize of the rank totals 40 % of its kernel span (first kernel_details row start "
              "to last row end); the timeline is unchanged",
              {"sync_heavy"}};
    case FaultKind::kMoeSlowExpert:
      return {"the rank's cube cores' dispatch-gmm1 moe-process #0 takes MAGNITUDE x longer in every FusedDeepMoe call; "
              "its combine is late by the call's lengthening, which every other rank waits in its vector_send "
              "gmm2-combine combine-wait-status (their FusedDeepMoe rows grow by the same delay)",
              {"moe_in_kernel_ep_imbalance", "moe_combine_wait"}};
    case FaultKind::kMoeRecvStarved:
      return {"the rank's vector_recv dispatch-gmm1 recv-token takes MAGNITUDE x longer in every FusedDeepMoe call "
              "(tokens arrive late) and the paired cube core's dispatch-gmm1 wait-moe-token #0 grows by the same "
              "time; the rank's FusedDeepMoe rows grow accordingly, other ranks are unchanged",
              {"moe_in_kernel_ep_imbalance"}};
    case FaultKind::kInteriorIsland:
      return {"in the middle step the rank runs a foreign layer-like fragment (block head + anchor + kernels of roles no "
              "layer has) after its last main layer, before the end-of-body epilogue; it belongs to no layer",
              {}};
  }
  return {"", {}};
}

// Expected blocks of every layer of a program; with a pipeline each layer is decomposed on its stage.
std::vector<std::vector<std::string>> expected_blocks(const Scenario& sc, int program, bool dummy, bool aicpu,
                                                     bool fallback = false) {
  if (sc.topo.pp <= 1) return layer_blocks(sc, program, dummy, aicpu, -1, fallback);
  const auto& layers = sc.programs[static_cast<size_t>(program)].layers;
  std::vector<std::vector<std::string>> out(layers.size());
  for (int s = 0; s < sc.topo.pp; ++s) {
    auto b = layer_blocks(sc, program, dummy, aicpu, s, fallback);
    for (size_t l = 0; l < layers.size(); ++l)
      if (layers[l].stage == s) out[l] = std::move(b[l]);
  }
  return out;
}

void write_blocks(JsonWriter& w, const std::vector<std::string>& blocks) {
  w.begin_array();
  for (const auto& b : blocks) w.value(b);
  w.end_array();
}

void write_counts(JsonWriter& w, const RankCounts& c, bool db) {
  w.key("counts");
  w.begin_object();
  w.kv("kernel_rows", c.kernel_rows);
  w.kv("kernel_rows_compute", c.kernel_rows_compute);
  w.kv("kernel_rows_communication", c.kernel_rows_comm);
  w.kv("kernel_rows_aicpu", c.kernel_rows_aicpu);
  w.kv("trace_events", c.events);
  w.key("trace_by_ph");
  w.begin_object();
  static const char* const kPh[] = {"X", "M", "s", "f", "C"};
  for (size_t i = 0; i < 5; ++i) w.kv(kPh[i], c.by_ph[i]);
  w.end_object();
  w.key("trace_by_table");
  w.begin_object();
  w.kv("host_ops", c.python_ops + c.cann_ops);
  w.kv("python_ops", c.python_ops);
  w.kv("profiler_steps", c.profiler_steps);
  w.kv("cann_ops", c.cann_ops);
  w.kv("device_tasks", c.device_tasks);
  w.kv("device_tasks_kernels", c.device_tasks_kernels);
  w.kv("comm_ops", c.comm_ops);
  w.kv("plane_tasks", c.plane_tasks);
  w.kv("overlap", c.overlap[0] + c.overlap[1] + c.overlap[2] + c.overlap[3]);
  w.key("overlap_by_kind");
  w.begin_object();
  w.kv("Computing", c.overlap[0]);
  w.kv("Communication", c.overlap[1]);
  w.kv("Communication(Not Overlapped)", c.overlap[2]);
  w.kv("Free", c.overlap[3]);
  w.end_object();
  w.kv("flows", c.flows_host_to_device + c.flows_async_npu);
  w.key("flows_by_cat");
  w.begin_object();
  w.kv("HostToDevice", c.flows_host_to_device);
  w.kv("async_npu", c.flows_async_npu);
  w.end_object();
  w.kv("counters", c.counter_events);
  w.kv("metadata", c.metadata_events);
  w.end_object();
  w.kv("communication_json_ops", c.comm_json_ops);
  w.kv("step_trace_rows", c.step_trace_rows);
  w.end_object();
  w.key("bytes");
  w.begin_object();
  w.kv("kernel_details.csv", c.bytes_kernel_details);
  w.kv("trace_view.json", c.bytes_trace_view);
  w.kv("communication.json", c.bytes_communication);
  w.kv("step_trace_time.csv", c.bytes_step_trace);
  w.kv("profiler_info.json", c.bytes_profiler_info);
  w.kv("profiler_metadata.json", c.bytes_metadata);
  w.kv("op_statistic.csv", c.bytes_op_statistic);
  w.kv("api_statistic.csv", c.bytes_api_statistic);
  if (db) {
    w.kv("ascend_pytorch_profiler.db", c.bytes_profiler_db);
    w.kv("analysis.db", c.bytes_analysis_db);
  }
  w.end_object();
}

// ground_truth.json "moe_trace": what each rank's in-kernel trace holds, in exact cycles.
void write_moe_truth(JsonWriter& w, const Scenario& sc, const std::vector<RankCounts>& counts) {
  w.key("moe_trace");
  w.begin_object();
  w.kv("variant", sc.moe_trace);
  w.kv("kernel_name", kMoeKernelName);
  w.kv("kernel_type", "FusedDeepMoe");
  w.key("overhead_us");
  w.raw(ns_us2(kMoeOverheadNs));
  w.key("entry_us");
  w.raw(ns_us2(kMoeEntryNs));
  w.key("clock_divisor");
  w.raw("50.0");
  w.kv("cores_per_group", kMoeCoresPerGroup);
  w.key("ranks");
  w.begin_array();
  for (size_t r = 0; r < counts.size(); ++r) {
    const MoeTraceSummary& m = counts[r].moe;
    if (!m.written) continue;
    w.begin_object();
    w.kv("rank_id", std::to_string(r));
    w.kv("file", m.file);
    w.kv("kernel_row_index", m.kernel_row_index);
    w.key("kernel_duration_us");
    w.raw(ns_us2(m.kernel_dur_ns));
    w.key("span_us");
    w.raw(cycles_us(m.span_cycles));
    w.kv("step", sc.first_step + m.step_index);
    w.kv("call_in_step", m.call);
    w.key("phases");
    w.begin_array();
    for (const MoePhaseStat& p : m.phases) {
      w.begin_object();
      w.kv("label", moe_label_name(p.label));
      w.kv("core_group", moe_core_group_name(p.group));
      w.kv("count", p.count);
      w.key("total_us");
      w.raw(cycles_us(p.total));
      w.key("union_us");
      w.raw(cycles_us(p.union_len));
      w.key("max_core_us");
      w.raw(cycles_us(p.max_core));
      w.end_object();
    }
    w.end_array();
    w.key("bubbles");
    w.begin_array();
    for (const MoeBubbleStat& b : m.bubbles) {
      w.begin_object();
      w.kv("container", moe_label_name(b.container));
      w.kv("core_group", moe_core_group_name(b.group));
      w.key("total_us");
      w.raw(cycles_us(b.total));
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

// ground_truth.json "modules": per rank the nn.Module paths with their exact device time (with_modules).
void write_module_truth(JsonWriter& w, const std::vector<RankCounts>& counts) {
  w.key("modules");
  w.begin_object();
  w.kv("prefix", "nn.Module: ");
  w.key("ranks");
  w.begin_array();
  for (size_t r = 0; r < counts.size(); ++r) {
    const ModuleTruth& m = counts[r].modules;
    w.begin_object();
    w.kv("rank_id", std::to_string(r));
    w.kv("ranges", m.ranges);
    w.kv("tasks", m.tasks);
    w.kv("device_ns", m.device_ns);
    w.kv("module_tasks", m.module_tasks);
    w.kv("module_ns", m.module_ns);
    w.kv("outside_tasks", m.outside_tasks);
    w.kv("outside_ns", m.outside_ns);
    w.kv("unlaunched_tasks", m.unlaunched_tasks);
    w.kv("unlaunched_ns", m.unlaunched_ns);
    w.key("modules");
    w.begin_array();
    for (const ModuleTruth::Row& row : m.rows) {
      w.begin_object();
      w.kv("path", row.path);
      w.kv("calls", row.calls);
      w.kv("host_ns", row.host_ns);
      w.kv("self_device_ns", row.self_device_ns);
      w.kv("total_device_ns", row.total_device_ns);
      w.kv("self_tasks", row.self_tasks);
      w.kv("tasks", row.tasks);
      w.kv("self_wait_ns", row.self_wait_ns);
      w.kv("total_wait_ns", row.total_wait_ns);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

// faults[k].in_kernel of a moe fault: which phases of the traced call it lengthens and by how much.
void write_moe_fault(JsonWriter& w, const Scenario& sc, const Fault& f, const std::vector<RankCounts>& counts) {
  const MoeTraceSummary& m = counts[static_cast<size_t>(f.rank)].moe;
  const bool slow = f.kind == FaultKind::kMoeSlowExpert;
  w.key("in_kernel");
  w.begin_object();
  w.kv("label", slow ? "dispatch-gmm1 moe-process" : "dispatch-gmm1 recv-token");
  w.kv("index", 0);
  w.kv("core_group", slow ? "cube" : "vector_recv");
  w.kv("factor", f.magnitude);
  if (!slow) {
    w.kv("paired_label", "dispatch-gmm1 wait-moe-token");
    w.kv("paired_index", 0);
    w.kv("paired_core_group", "cube");
  } else {
    w.kv("peer_label", "gmm2-combine combine-wait-status");
    w.kv("peer_core_group", "vector_send");
    // every rank's traced call is the same (step, call); D_R of that call
    w.key("traced_call_delay_us");
    w.raw(cycles_us(moe_combine_delay(sc, f.rank, m.step_index, m.call)));
  }
  w.kv("all_calls", true);
  w.end_object();
}

// ground_truth.json "collectives": for every collective (communicator, sequence number as the trace's
// group thread numbers it) the rank that arrived last (the others waited for it) and how long the first
// arrival waited, in physical time. Collectives of a communicator that also carries pipeline P2P
// transfers are left out: there the members number their ops differently.
void collectives_json(JsonWriter& w, const Scenario& sc, const SyncTable& table) {
  std::vector<uint8_t> p2p(sc.topo.groups.size(), 0);
  for (const auto& prog : sc.programs)
    for (const auto& seg : prog.segments)
      if (seg.sync.kind == SyncSpec::Kind::kCollective && seg.sync.p2p_from >= 0)
        for (const int g : sc.topo.kind_groups[static_cast<size_t>(seg.sync.group)]) p2p[static_cast<size_t>(g)] = 1;
  std::vector<uint32_t> seq(sc.topo.groups.size(), 0);
  w.key("collectives");
  w.begin_array();
  for (int s = 0; s < sc.steps; ++s) {
    const int prog = s == 0 ? sc.first_program : sc.rest_program;
    const auto& segs = sc.programs[static_cast<size_t>(prog)].segments;
    for (size_t seg = 0; seg < segs.size(); ++seg) {
      if (segs[seg].sync.kind != SyncSpec::Kind::kCollective) continue;
      const auto& groups = sc.topo.kind_groups[static_cast<size_t>(segs[seg].sync.group)];
      for (size_t slot = 0; slot < groups.size(); ++slot) {
        const size_t at = table.index(s, prog, static_cast<int>(seg), static_cast<int>(slot));
        const int g = groups[slot];
        if (table.last_rank[at] < 0) continue;  // no member took part (a group of one)
        const uint32_t n = seq[static_cast<size_t>(g)]++;
        if (p2p[static_cast<size_t>(g)]) continue;
        w.begin_object();
        w.kv("step", sc.first_step + s);
        w.kv("group", sc.topo.groups[static_cast<size_t>(g)].comm_name);
        w.kv("seq", uint64_t{n});
        w.kv("last_rank", std::to_string(table.last_rank[at]));
        w.kv("first_waited_us", static_cast<double>(table.max_arrival[at] - table.min_arrival[at]) / 1e3);
        w.end_object();
      }
    }
  }
  w.end_array();
}

std::string ground_truth_json(const SynthOptions& o, const Scenario& sc, const SyncTable& table,
                              const std::vector<RankLayout>& layouts, const std::vector<RankCounts>& counts) {
  JsonWriter w(true);
  w.begin_object();
  w.kv("generator", "ascprof-mpi synth");
  w.kv("version", ASCPROF_VERSION);
  w.kv("format_era", "E3");
  w.kv("export_format", o.export_format);
  w.kv("profiler_level", "Level1");
  w.kv("scenario", sc.name);
  w.kv("seed", sc.seed);
  w.kv("requested_steps", o.steps);
  w.kv("scale", o.scale);
  w.kv("steps_per_rank", sc.steps);
  w.kv("first_step", sc.first_step);
  w.kv("rank_count", sc.topo.ranks);
  w.key("parallel");
  w.begin_object();
  w.kv("tp", sc.topo.tp);
  w.kv("dp", sc.topo.dp);
  w.kv("ep", sc.topo.ep);
  w.kv("pp", sc.topo.pp);
  w.end_object();
  w.key("notes");
  w.begin_array();
  w.value("kernel_details rows = compute rows + COMMUNICATION rows; every compute row has an Ascend Hardware X event "
          "with identical Name, ts and dur text, every COMMUNICATION row a Group-thread X event in the Communication "
          "process");
  w.value("device_tasks also include one EVENT_RECORD task per step that has no kernel_details row, and every "
          "plane task again (plane_tasks of them): an Ascend Hardware X event on Stream 5 named by its task type");
  w.value("host_ops = python_ops (ProfilerStep#N + aten/c10d ops) + cann_ops (AscendCL@*, Node@launch)");
  w.value("layer_first_row / layer_anchor_row are 0-based kernel_details data rows, given for the first 8 steps; -1 = none");
  w.value("steps[].layers[].blocks: expected block kinds (reference classify, attention/ffn/moe/aicpu) of the layer on "
          "a rank with attention; ranks[].steps[].layer_blocks (first 8 steps) lists every layer's blocks on ranks whose "
          "blocks differ (dummy ranks). A layer spans its first row to the next layer's first row - 1; interior_island "
          "rows are not part of any layer");
  w.value("pipeline training (parallel.pp > 1): steps[].layers lists every stage's layers (stage-major, each with stage "
          "and model_layer); ranks[].layers lists the rank's own stage's layers in row order (index = position in "
          "steps[].layers, role, microbatch, model_layer) and ranks[].steps[].layer_first_row / layer_anchor_row / "
          "layer_blocks follow that list; main_layers counts one stage's layers");
  w.value("ASCEND_PROFILER_OUTPUT also holds op_statistic.csv (one row per (Type, Accelerator Core) of the compute rows, "
          "exactly aggregated from kernel_details.csv) and api_statistic.csv (host: Level acl per aclnn API = kernel name "
          "up to the first '_', runtime KernelLaunch = one per compute row, runtime StreamSynchronize = one per step)");
  w.value("faults[].kernel (vector_scalar_heavy, cube_underused, aicpu_fallback, block_dim_one): the one kernel name the "
          "fault changes or inserts on its rank (name, type, accelerator_core, calls = rows on that rank) and the "
          "injected values; every other row keeps its values (durations of kernels that wait for peers aside)");
  w.value("faults[].injected_island (interior_island): rank, step (ProfilerStep number), step_index (0-based), "
          "first_row / last_row (0-based kernel_details data rows on that rank, inclusive), kernels (names in row order)");
  if (!sc.moe_trace.empty())
    w.value("moe_trace: per rank the in-kernel trace of its last FusedDeepMoe call (file relative to the rank folder; "
            "kernel_row_index K = that row's 0-based index among the rank's FusedDeepMoe rows in kernel_details "
            "order; kernel_duration_us = span_us + overhead_us). Times are integer 50 MHz cycles (exact with 2 "
            "decimals) on each core's own time axis (ts from the core's T0; every core's processing starts at 0). "
            "phases[]: per (label, core_group) count, total_us = sum of durations, union_us = length of the union of "
            "the label's intervals over the group's cores, max_core_us = largest per-core sum. bubbles[]: per "
            "(container, core_group) the sum over the cores of (container duration - length of the union of its "
            "direct children on that core); processing's direct children are dispatch-gmm1 and gmm2-combine. "
            "faults[].in_kernel (moe_slow_expert, moe_recv_starved): the traced call's lengthened phases and delays");
  if (sc.with_modules)
    w.value("modules (with_modules): per rank every nn.Module path (Model_0, Model_0/Layer_<n>, Model_0/Layer_<n>/"
            "Attention_<n> and .../MLP_<n>, n = the model layer) with its calls (ranges, one per microbatch forward), "
            "host_ns (sum of the ranges' durations), self_device_ns / self_tasks (device tasks launched inside the "
            "module and no deeper one) and total_device_ns / tasks (itself and below); self_wait_ns / total_wait_ns: "
            "the part of them in Notify_Wait plane tasks. A kernel is one task, a collective its plane tasks on Stream 5; tasks launched outside every module (get_batch, loss, backward, "
            "optimizer) are outside_*, the step's EVENT_RECORD (no launch) unlaunched_*. The ranges are python_function "
            "X events on the Python thread (python_ops counts them)");
  w.end_array();

  w.key("groups");
  w.begin_array();
  for (const CommGroup& g : sc.topo.groups) {
    w.begin_object();
    w.kv("comm_name", g.comm_name);
    w.kv("group_name", g.group_name);
    w.kv("hash", g.hash);
    w.key("global_ranks");
    w.begin_array();
    for (const int r : g.ranks) w.value(r);
    w.end_array();
    w.end_object();
  }
  w.end_array();

  // expected blocks per program on a rank with attention, and per rank where they differ
  std::vector<std::vector<std::vector<std::string>>> base_blocks;
  for (size_t p = 0; p < sc.programs.size(); ++p) base_blocks.push_back(expected_blocks(sc, static_cast<int>(p), false, false));
  auto program_of = [&](int step_index) { return step_index == 0 ? sc.first_program : sc.rest_program; };

  w.key("steps");
  w.begin_array();
  for (int s = 0; s < sc.steps; ++s) {
    const StepProgram& p = sc.program(s);
    const auto& blocks = base_blocks[static_cast<size_t>(program_of(s))];
    w.begin_object();
    w.kv("step", sc.first_step + s);
    w.kv("kind", p.kind);
    w.kv("layer_count", static_cast<int64_t>(p.layers.size()));
    w.kv("main_layers", p.main_layers);
    w.kv("speculative_layers", p.speculative_layers);
    w.key("layers");
    w.begin_array();
    for (size_t i = 0; i < p.layers.size(); ++i) {
      const LayerInfo& l = p.layers[i];
      w.begin_object();
      w.kv("index", static_cast<int64_t>(i));
      w.kv("role", l.role);
      w.kv("kind", l.kind);
      if (l.microbatch >= 0) w.kv("microbatch", l.microbatch);
      if (l.stage >= 0) {
        w.kv("stage", l.stage);
        w.kv("model_layer", l.model_layer);
      }
      w.key("blocks");
      write_blocks(w, blocks[i]);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();

  w.key("ranks");
  w.begin_array();
  for (size_t r = 0; r < layouts.size(); ++r) {
    const RankLayout& l = layouts[r];
    const RankCounts& c = counts[r];
    const bool dummy = sc.dummy[r] != 0;
    bool aicpu = false, fallback = false;
    for (const Fault& f : sc.faults) {
      if (f.kind == FaultKind::kExposedAicpu && f.rank == static_cast<int>(r)) aicpu = true;
      if (f.kind == FaultKind::kAicpuFallback && f.rank == static_cast<int>(r)) fallback = true;
    }
    std::vector<std::vector<std::vector<std::string>>> rank_blocks;
    std::vector<uint8_t> differs(sc.programs.size(), 0);
    if (dummy || aicpu || fallback)
      for (size_t p = 0; p < sc.programs.size(); ++p) {
        rank_blocks.push_back(expected_blocks(sc, static_cast<int>(p), dummy, aicpu, fallback));
        differs[p] = rank_blocks.back() != base_blocks[p];
      }
    // the layers this rank runs: all, or its pipeline stage's (in row order)
    const int stage = sc.topo.stage[r];
    std::vector<size_t> mine;
    const auto& all_layers = sc.programs[static_cast<size_t>(sc.rest_program)].layers;
    for (size_t i = 0; i < all_layers.size(); ++i)
      if (all_layers[i].stage < 0 || all_layers[i].stage == stage) mine.push_back(i);
    w.begin_object();
    w.kv("rank_id", l.rank);
    w.kv("device_id", l.device);
    w.kv("folder", l.folder_name);
    w.kv("host_pid", l.host_pid);
    w.kv("dummy", dummy);
    w.kv("has_attention", !dummy);
    w.kv("clock_offset_us", static_cast<double>(l.clock_offset_ns) / 1000.0);
    write_counts(w, c, o.export_format != "text");
    if (sc.topo.pp > 1) {
      w.kv("pp_stage", stage);
      w.kv("layer_count", static_cast<int64_t>(mine.size()));
      w.key("layers");
      w.begin_array();
      for (const size_t i : mine) {
        const LayerInfo& li = all_layers[i];
        w.begin_object();
        w.kv("index", static_cast<int64_t>(i));
        w.kv("role", li.role);
        w.kv("microbatch", li.microbatch);
        w.kv("model_layer", li.model_layer);
        w.end_object();
      }
      w.end_array();
    }
    w.key("steps");
    w.begin_array();
    for (size_t si = 0; si < c.steps.size(); ++si) {
      const StepCounts& s = c.steps[si];
      const auto prog = static_cast<size_t>(program_of(static_cast<int>(si)));
      std::vector<size_t> ids = mine;  // without a pipeline: every layer of this step's program
      if (sc.topo.pp <= 1) {
        ids.resize(sc.programs[prog].layers.size());
        for (size_t i = 0; i < ids.size(); ++i) ids[i] = i;
      }
      w.begin_object();
      w.kv("step", s.step);
      w.kv("kernel_rows", s.kernel_rows);
      w.kv("comm_ops", s.comm_ops);
      w.kv("start_us", us_text(s.start_ns));
      w.kv("end_us", us_text(s.end_ns));
      if (!s.layer_first_row.empty()) {
        w.key("layer_first_row");
        w.begin_array();
        for (const size_t i : ids) w.value(s.layer_first_row[i]);
        w.end_array();
        w.key("layer_anchor_row");
        w.begin_array();
        for (const size_t i : ids) w.value(s.layer_anchor_row[i]);
        w.end_array();
        if (differs[prog]) {
          w.key("layer_blocks");
          w.begin_array();
          for (const size_t i : ids) write_blocks(w, rank_blocks[prog][i]);
          w.end_array();
        }
      }
      if (s.island_first_row >= 0) {
        w.key("injected_island_rows");
        w.begin_array();
        w.value(s.island_first_row);
        w.value(s.island_last_row);
        w.end_array();
      }
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();

  w.key("dummy_ranks");
  w.begin_array();
  for (size_t r = 0; r < sc.dummy.size(); ++r)
    if (sc.dummy[r]) w.value(static_cast<int64_t>(r));
  w.end_array();

  collectives_json(w, sc, table);

  w.key("faults");
  w.begin_array();
  for (const Fault& f : sc.faults) {
    const FaultDoc doc = fault_doc(f.kind);
    w.begin_object();
    w.kv("name", f.name);
    w.kv("rank", f.rank);
    w.key("ranks");
    w.begin_array();
    w.value(f.rank);
    w.end_array();
    w.kv("magnitude", f.magnitude);
    w.key("steps");
    w.begin_array();
    if (f.steps.empty()) {
      for (int s = 0; s < sc.steps && s < 100000; ++s) w.value(sc.first_step + s);
    } else {
      for (const int s : f.steps) w.value(sc.first_step + s);
    }
    w.end_array();
    w.kv("all_steps", f.steps.empty());
    w.key("ops");
    w.begin_array();
    uint64_t op_count = 0;
    switch (f.kind) {
      case FaultKind::kEpImbalance:
        w.value("aclnnGroupedMatmulV4_GroupedMatmul_GroupedMatmul");
        op_count = 1;
        break;
      case FaultKind::kExposedAicpu:
        w.value(sc.kernels[static_cast<size_t>(sc.aicpu_kernel)].name);
        op_count = counts[static_cast<size_t>(f.rank)].kernel_rows_aicpu - counts[static_cast<size_t>(f.rank)].island_aicpu_rows;
        break;
      case FaultKind::kMoeSlowExpert:
      case FaultKind::kMoeRecvStarved:  // every FusedDeepMoe row of the rank (K + 1 of them)
        w.value(kMoeKernelName);
        op_count = static_cast<uint64_t>(counts[static_cast<size_t>(f.rank)].moe.kernel_row_index + 1);
        break;
      case FaultKind::kSlowCollective:
        for (const auto& n : counts[static_cast<size_t>(f.rank)].slow_ops) w.value(n);
        op_count = counts[static_cast<size_t>(f.rank)].slow_op_count;
        break;
      case FaultKind::kVectorScalarHeavy:
      case FaultKind::kCubeUnderused:
      case FaultKind::kAicpuFallback:
      case FaultKind::kBlockDimOne: {
        w.value(f.target);
        const auto& calls = counts[static_cast<size_t>(f.rank)].fault_kernel_calls;
        const auto it = calls.find(f.target);
        op_count = it == calls.end() ? 0 : it->second;
        break;
      }
      default: break;
    }
    w.end_array();
    w.kv("op_count", op_count);
    w.key("expected_findings");
    w.begin_array();
    for (const char* e : doc.findings) w.value(e);
    w.end_array();
    w.kv("description", doc.description);
    if (!f.target.empty()) {
      // the one kernel name the fault changes (or inserts) on its rank, and the values it writes
      w.key("kernel");
      w.begin_object();
      w.kv("name", f.target);
      w.kv("type", f.target_type);
      w.kv("accelerator_core", core_name(f.target_core));
      w.kv("calls", op_count);
      w.key("values");
      w.begin_object();
      switch (f.kind) {
        case FaultKind::kVectorScalarHeavy:
          w.kv("aiv_scalar_ratio", kScalarHeavyScalar / 1000.0);
          w.kv("aiv_vec_ratio", kScalarHeavyVec / 1000.0);
          break;
        case FaultKind::kCubeUnderused:
          w.kv("cube_utilization(%)", static_cast<double>(kUnderusedCubeUtilMilli) / 1000.0);
          w.kv("aic_mac_ratio", kUnderusedMac / 1000.0);
          w.kv("aic_mte2_ratio", kUnderusedMte2 / 1000.0);
          break;
        case FaultKind::kAicpuFallback:
          w.kv("nominal_duration_us", static_cast<double>(kAicpuFallbackUs));
          w.kv("block_dim", 1);
          w.kv("per_layer", 1);
          w.kv("metrics", "N/A");
          break;
        case FaultKind::kBlockDimOne:
          w.kv("block_dim", 1);
          w.kv("duration_factor", kBlockDimOneFactor);
          break;
        default: break;
      }
      w.end_object();
      w.end_object();
    }
    if (f.kind == FaultKind::kHostSyncHeavy) {
      const RankCounts& rc = counts[static_cast<size_t>(f.rank)];
      w.key("api");
      w.begin_object();
      w.kv("file", "api_statistic.csv");
      w.kv("level", "runtime");
      w.kv("name", "StreamSynchronize");
      w.kv("count", sc.steps);
      w.kv("total_us", us_text(rc.stream_sync_ns));
      w.kv("kernel_span_us", us_text(rc.kernel_span_ns));
      w.kv("share_of_kernel_span", kHostSyncShare);
      w.end_object();
    }
    if (f.kind == FaultKind::kInteriorIsland) {
      const RankCounts& rc = counts[static_cast<size_t>(f.rank)];
      const int si = f.steps.empty() ? sc.steps / 2 : f.steps.front();
      const StepCounts& st = rc.steps[static_cast<size_t>(si)];
      w.key("injected_island");
      w.begin_object();
      w.kv("rank", f.rank);
      w.kv("step", sc.first_step + si);
      w.kv("step_index", si);
      w.kv("first_row", st.island_first_row);
      w.kv("last_row", st.island_last_row);
      w.key("kernels");
      w.begin_array();
      for (const int k : sc.dummy[static_cast<size_t>(f.rank)] ? sc.island_kernels_dummy : sc.island_kernels)
        w.value(sc.kernels[static_cast<size_t>(k)].name);
      w.end_array();
      w.end_object();
      w.key("expected_hard_errors");
      w.begin_array();
      w.value("interior_template_residual");
      w.value("interior_unclassified_island");
      w.end_array();
    }
    if (f.kind == FaultKind::kMoeSlowExpert || f.kind == FaultKind::kMoeRecvStarved)
      write_moe_fault(w, sc, f, counts);
    w.end_object();
  }
  w.end_array();
  if (!sc.moe_trace.empty()) write_moe_truth(w, sc, counts);
  if (sc.with_modules) write_module_truth(w, counts);
  w.end_object();
  std::string out = w.take();
  out += '\n';
  return out;
}

bool is_rank_folder(const fs::path& p) {
  const std::string n = p.filename().string();
  return n.size() > 10 && n.compare(n.size() - 10, 10, "_ascend_pt") == 0;
}

Status prepare_root(const SynthOptions& o) {
  std::error_code ec;
  if (o.out_dir.empty()) return Status(ErrorCode::kInvalidArgument, "output folder (-o) is required");
  if (fs::exists(o.out_dir, ec) && !fs::is_directory(o.out_dir, ec))
    return file_error(ErrorCode::kInvalidArgument, o.out_dir.string(), "", "exists and is not a folder");
  if (fs::is_directory(o.out_dir, ec)) {
    std::vector<fs::path> ours, other;
    for (const auto& e : fs::directory_iterator(o.out_dir, ec)) {
      if ((e.is_directory() && is_rank_folder(e.path())) || e.path().filename() == "ground_truth.json")
        ours.push_back(e.path());
      else
        other.push_back(e.path());
    }
    if (ec) return file_error(ErrorCode::kIo, o.out_dir.string(), "", "cannot list: " + ec.message());
    if (!ours.empty() || !other.empty()) {
      if (!o.force)
        return file_error(ErrorCode::kInvalidArgument, o.out_dir.string(), "",
                          "output folder is not empty (use --force to replace an earlier synthetic capture)");
      if (!other.empty())
        return file_error(ErrorCode::kInvalidArgument, o.out_dir.string(), "",
                          "output folder holds files that are not a synthetic capture (e.g. " +
                              other.front().filename().string() + "); refusing to write into it");
      for (const auto& p : ours) {
        fs::remove_all(p, ec);
        if (ec) return file_error(ErrorCode::kIo, p.string(), "", "cannot remove: " + ec.message());
      }
    }
  }
  fs::create_directories(o.out_dir, ec);
  if (ec) return file_error(ErrorCode::kIo, o.out_dir.string(), "", "cannot create folder: " + ec.message());
  return {};
}

}  // namespace

Result<SynthSummary> generate_capture(const SynthOptions& options) {
  ExportKinds exports;
  if (options.export_format == "db") exports = {false, true};
  else if (options.export_format == "both") exports = {true, true};
  else if (options.export_format != "text")
    return Status(ErrorCode::kInvalidArgument,
                  "unknown export format '" + options.export_format + "' (expected text, db or both)");
  auto built = build_scenario(options);
  if (!built.ok()) return built.status();
  const Scenario& sc = built.value();
  ASCPROF_RETURN_IF_ERROR(prepare_root(options));
  std::error_code ec;
  const fs::path root = fs::absolute(options.out_dir, ec);
  if (ec) return file_error(ErrorCode::kIo, options.out_dir.string(), "", ec.message());

  const SyncTable table = simulate_cluster(sc);

  const int n = sc.topo.ranks;
  std::vector<RankLayout> layouts;
  layouts.reserve(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) layouts.push_back(rank_layout(sc, r));
  std::vector<RankCounts> counts(static_cast<size_t>(n));
  std::vector<Status> status(static_cast<size_t>(n));
  std::atomic<int> next{0};
  std::atomic<bool> failed{false};
  auto work = [&]() {
    for (int r = next++; r < n; r = next++) {
      if (failed.load()) return;
      status[static_cast<size_t>(r)] =
          write_rank(sc, table, layouts[static_cast<size_t>(r)], root, &counts[static_cast<size_t>(r)], exports);
      if (!status[static_cast<size_t>(r)].ok()) failed = true;
    }
  };
  const int threads = std::clamp(options.threads, 1, std::max(1, std::min(n, 64)));
  if (threads == 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
  }
  for (int r = 0; r < n; ++r) {
    if (status[static_cast<size_t>(r)].ok()) continue;
    for (const RankLayout& l : layouts) fs::remove_all(root / l.folder_name, ec);
    return status[static_cast<size_t>(r)];
  }

  SynthSummary summary;
  summary.root = root;
  summary.ground_truth = root / "ground_truth.json";
  summary.steps = sc.steps;
  const std::string gt = ground_truth_json(options, sc, table, layouts, counts);
  if (Status st = write_file_atomic(summary.ground_truth, gt); !st.ok()) {
    for (const RankLayout& l : layouts) fs::remove_all(root / l.folder_name, ec);
    return st;
  }
  summary.total_bytes = gt.size();
  for (int r = 0; r < n; ++r) {
    const RankCounts& c = counts[static_cast<size_t>(r)];
    RankSummary rs;
    rs.rank_id = r;
    rs.device_id = layouts[static_cast<size_t>(r)].device;
    rs.folder = root / layouts[static_cast<size_t>(r)].folder_name;
    rs.kernel_rows = c.kernel_rows;
    rs.trace_events = c.events;
    rs.bytes = c.total_bytes();
    if (c.moe.written) rs.moe_trace = rs.folder / c.moe.file;
    summary.total_bytes += rs.bytes;
    summary.ranks.push_back(std::move(rs));
  }
  return summary;
}

}  // namespace ascprof::synth

#include "simulate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "moe_trace_writer.hpp"

namespace ascprof::synth {

namespace {
constexpr int64_t kLaunchLatencyNs = 3000;  // Node@launch start -> earliest device start
constexpr int64_t kNodeLaunchLeadNs = 3000; // Node@launch starts this long before the host op ends
constexpr int64_t kHostGapNs = 400;
constexpr int64_t kMinKernelNs = 500;

int64_t scaled(int64_t ns, double f) { return std::max<int64_t>(kMinKernelNs, std::llround(static_cast<double>(ns) * f)); }
}  // namespace

double rank_speed(const Scenario& sc, int rank) {
  return unit_range(hash_of(sc.seed, 0x5eed, static_cast<uint64_t>(rank), 77), 0.985, 1.015);
}

double slow_factor(const Scenario& sc, int rank) {
  double f = 1.0;
  for (const Fault& x : sc.faults) {
    if (x.rank != rank) continue;
    if (x.kind == FaultKind::kSlowRank) f *= x.magnitude;
    // compute kernels stretch as the clock drops (their cycles stay the same)
    if (x.kind == FaultKind::kThrottledCores) f *= kNominalAicoreMhz / x.magnitude;
  }
  return f;
}

RankSim::RankSim(const Scenario& sc, int rank) : sc_(sc), rank_(rank) {
  dummy_ = sc.dummy[static_cast<size_t>(rank)] != 0;
  stage_ = sc.topo.stage[static_cast<size_t>(rank)];
  rank_speed_ = rank_speed(sc, rank);
  slow_factor_ = slow_factor(sc, rank);
  for (const Fault& f : sc.faults) {
    if (f.rank != rank) continue;
    switch (f.kind) {
      case FaultKind::kSlowRank:
      case FaultKind::kThrottledCores: break;  // slow_factor()
      case FaultKind::kEpImbalance: expert_factor_ *= f.magnitude; break;
      case FaultKind::kSlowCollective: slow_link_factor_ *= f.magnitude; break;
      case FaultKind::kIdleBubble:
        bubble_step_ = f.steps.empty() ? sc.steps / 2 : f.steps.front();
        bubble_ns_ = std::llround(f.magnitude * 1000.0);
        break;
      case FaultKind::kExposedAicpu: aicpu_ns_ = std::llround(f.magnitude * 1000.0); break;
      case FaultKind::kHostBound: host_factor_ *= f.magnitude; break;
      case FaultKind::kClockOffset: break;  // applied by the writer only
      case FaultKind::kInteriorIsland: island_step_ = f.steps.empty() ? sc.steps / 2 : f.steps.front(); break;
      case FaultKind::kAicpuFallback: fallback_ = true; break;
      case FaultKind::kBlockDimOne:
        block_dim_one_.resize(sc.kernels.size(), 0);
        for (size_t k = 0; k < sc.kernels.size(); ++k)
          if (sc.kernels[k].name == f.target) block_dim_one_[k] = 1;
        break;
      case FaultKind::kVectorScalarHeavy:
      case FaultKind::kCubeUnderused:
      case FaultKind::kHostSyncHeavy: break;  // written by the writer only; the timeline is unchanged
      case FaultKind::kMoeSlowExpert:
      case FaultKind::kMoeRecvStarved: break;  // inside the FusedDeepMoe trace model (moe_trace_writer.hpp)
    }
  }
  th_ = sc.base_time_ns + static_cast<int64_t>(hash_of(sc.seed, 0x57a7, static_cast<uint64_t>(rank)) % 40000);
  td_ = tcomm_ = th_;
}

int64_t RankSim::kernel_ns(int spec, int op_index) const {
  const KernelSpec& k = sc_.kernels[static_cast<size_t>(spec)];
  double f = rank_speed_ * slow_factor_ *
             unit_range(hash_of(sc_.seed, static_cast<uint64_t>(rank_), static_cast<uint64_t>(step_),
                                static_cast<uint64_t>(op_index)),
                        0.93, 1.07);
  if (k.expert) f *= expert_factor_ * (dummy_ ? 0.25 : 1.0);
  if (!block_dim_one_.empty() && block_dim_one_[static_cast<size_t>(spec)]) f *= kBlockDimOneFactor;
  return scaled(k.base_ns, f);
}

int64_t RankSim::host_cost(int op_index) const {
  const double j = unit_range(hash_of(sc_.seed ^ 0x4057, static_cast<uint64_t>(rank_), static_cast<uint64_t>(step_),
                                      static_cast<uint64_t>(op_index)),
                              0.8, 1.25);
  return std::max<int64_t>(2 * kNodeLaunchLeadNs, std::llround(static_cast<double>(sc_.host_op_ns) * j * host_factor_));
}

int64_t RankSim::transit_ns(int seg, int group) const {
  const SyncSpec& s = sc_.program(step_).segments[static_cast<size_t>(seg)].sync;
  const double j = unit_range(hash_of(sc_.seed ^ 0xc011, static_cast<uint64_t>(step_), static_cast<uint64_t>(seg),
                                      static_cast<uint64_t>(group)),
                              0.92, 1.10);
  return std::max<int64_t>(1000, std::llround(static_cast<double>(s.base_ns) * j));
}

void RankSim::launch(OpRec& op, bool extra) {
  // A fault-inserted kernel draws from its own index range and leaves op_index_ alone, so every other
  // kernel of the rank keeps its jitter (durations, host costs, metrics) whether the fault is on or not.
  const int idx = extra ? (1 << 24) + static_cast<int>(extra_index_) : op_index_;
  op.jkey = static_cast<uint32_t>(idx);
  const int64_t cost = host_cost(idx);
  op.host_start = th_;
  op.host_dur = cost;
  op.launch = th_ + cost - kNodeLaunchLeadNs;
  op.cid = cid_;
  cid_ += 2;  // AscendCL call gets cid, Node@launch / the device task cid + 1
  th_ += cost + kHostGapNs;
  if (extra) ++extra_index_;
  else ++op_index_;
}

void RankSim::emit_kernel(int spec, int16_t layer, int64_t dur_ns, ModulePart module, bool island, bool extra) {
  OpRec op;
  op.kind = OpRec::Kind::kKernel;
  op.spec = spec;
  op.layer = layer;
  op.module = module;
  op.island = island;
  const int64_t gap = 600 + static_cast<int64_t>(hash_of(sc_.seed ^ 0x9a9, static_cast<uint64_t>(rank_),
                                                         static_cast<uint64_t>(step_), static_cast<uint64_t>(op_index_)) %
                                               1200);
  launch(op, extra);
  op.start = std::max(td_ + gap, op.launch + kLaunchLatencyNs);
  op.dur = dur_ns;
  op.task_id = next_task_id();
  td_ = op.start + op.dur;
  if (rec_ != nullptr) rec_->ops.push_back(op);
}

void RankSim::emit_island() {
  // on a dummy rank the fragment's anchor is of the rank's fallback kind, not attention
  for (const int k : dummy_ ? sc_.island_kernels_dummy : sc_.island_kernels) {
    emit_kernel(k, -1, kernel_ns(k, op_index_), ModulePart::kNone, /*island=*/true);
  }
}

void RankSim::begin_step(int s, StepRec* rec) {
  step_ = s;
  program_ = s == 0 ? sc_.first_program : sc_.rest_program;
  rec_ = rec;
  op_index_ = 0;
  extra_index_ = 0;
  moe_call_ = 0;
  const int64_t step_start = th_;
  th_ += 30000;  // ProfilerStep opens a little before the first operator
  if (rec_ != nullptr) {
    rec_->index = s;
    rec_->host_start = step_start;
    rec_->ops.clear();
  }
}

int RankSim::participating_slot(int seg) const {
  const SyncSpec& s = sc_.programs[static_cast<size_t>(program_)].segments[static_cast<size_t>(seg)].sync;
  if (s.kind == SyncSpec::Kind::kNone) return -1;
  if (!takes_part(program_, seg)) return -1;
  const int g = sc_.topo.group_of[static_cast<size_t>(s.group)][static_cast<size_t>(rank_)];
  if (g < 0 || sc_.topo.groups[static_cast<size_t>(g)].ranks.size() <= 1) return -1;
  return sc_.topo.slot[static_cast<size_t>(g)];
}

bool RankSim::takes_part(int program, int seg) const {
  const Segment& sg = sc_.programs[static_cast<size_t>(program)].segments[static_cast<size_t>(seg)];
  if (sg.stage >= 0 && sg.stage != stage_) return false;
  return sg.sync.p2p_from < 0 || sg.sync.p2p_from == stage_ || sg.sync.p2p_to == stage_;
}

int64_t RankSim::run_segment(int seg) {
  const StepProgram& prog = sc_.programs[static_cast<size_t>(program_)];
  const Segment& sg = prog.segments[static_cast<size_t>(seg)];
  if (step_ == bubble_step_ && seg == static_cast<int>(prog.segments.size()) / 2) {
    th_ = std::max({th_, td_, tcomm_}) + bubble_ns_;  // host waits for the device (e.g. .item()), then stalls
  }
  if (!takes_part(program_, seg)) {  // another pipeline stage's work
    pending_valid_ = false;
    return -1;
  }
  if (sg.drain_comm) td_ = std::max(td_, tcomm_);
  const bool island_here = step_ == island_step_ && seg == prog.island_seg;
  for (size_t i = 0; i < sg.kernels.size(); ++i) {
    if (island_here && static_cast<int>(i) == prog.island_pos) emit_island();
    const int k = sg.kernels[i];
    const KernelSpec& spec = sc_.kernels[static_cast<size_t>(k)];
    if (aicpu_ns_ > 0 && spec.layer_first) emit_kernel(sc_.aicpu_kernel, spec.layer, aicpu_ns_, spec.module);
    if (spec.fused_moe) {
      // the row lasts exactly its in-kernel trace's span plus the entry/exit overhead
      const int call = moe_call_++;
      emit_kernel(k, spec.layer, moe_call_span(sc_, rank_, step_, call) * kMoeNsPerCycle + kMoeOverheadNs, spec.module);
      if (rec_ != nullptr) rec_->ops.back().moe_call = static_cast<int16_t>(call);
    } else if (!(dummy_ && spec.attention)) {
      emit_kernel(k, spec.layer, kernel_ns(k, op_index_), spec.module);
    }
    if (fallback_ && spec.layer_first) {
      const KernelSpec& fb = sc_.kernels[static_cast<size_t>(sc_.fallback_kernel)];
      const double j = unit_range(hash_of(sc_.seed ^ 0xfb, static_cast<uint64_t>(rank_), static_cast<uint64_t>(step_),
                                          extra_index_),
                                  0.93, 1.07);
      emit_kernel(sc_.fallback_kernel, spec.layer, scaled(fb.base_ns, rank_speed_ * slow_factor_ * j), spec.module, false,
                  true);
    }
  }
  if (island_here && prog.island_pos >= static_cast<int>(sg.kernels.size())) emit_island();
  pending_valid_ = false;
  const SyncSpec& s = sg.sync;
  if (s.kind == SyncSpec::Kind::kNone) return -1;
  const int g = sc_.topo.group_of[static_cast<size_t>(s.group)][static_cast<size_t>(rank_)];
  const bool alone = g < 0 || sc_.topo.groups[static_cast<size_t>(g)].ranks.size() <= 1;
  OpRec op;
  op.seg = seg;
  op.layer = s.layer;
  op.module = s.kind == SyncSpec::Kind::kSyncKernel ? sc_.kernels[static_cast<size_t>(s.kernel)].module : s.module;
  if (s.kind == SyncSpec::Kind::kSyncKernel) {
    op.kind = OpRec::Kind::kKernel;
    op.spec = s.kernel;
    launch(op);
    op.start = std::max(td_ + 800, op.launch + kLaunchLatencyNs);
    if (alone) {
      op.dur = transit_ns(seg, g);
      op.task_id = next_task_id();
      td_ = op.start + op.dur;
      if (rec_ != nullptr) rec_->ops.push_back(op);
      return -1;
    }
    pending_ = op;
    pending_valid_ = true;
    return op.start;
  }
  if (alone) return -1;
  op.kind = OpRec::Kind::kComm;
  op.group = g;
  op.seq = seq_[static_cast<size_t>(s.group)]++;
  launch(op);
  op.start = std::max({td_, tcomm_, op.launch + kLaunchLatencyNs});
  pending_ = op;
  pending_valid_ = true;
  return op.start;
}

void RankSim::finish_segment(int seg, int64_t max_arrival) {
  if (!pending_valid_) return;
  pending_valid_ = false;
  OpRec op = pending_;
  const SyncSpec& s = sc_.programs[static_cast<size_t>(program_)].segments[static_cast<size_t>(seg)].sync;
  const int g = sc_.topo.group_of[static_cast<size_t>(s.group)][static_cast<size_t>(rank_)];
  const int64_t arrival = std::max(max_arrival, op.start);  // defensive: never end before we arrived
  op.wait = arrival - op.start;
  if (s.kind == SyncSpec::Kind::kSyncKernel) {
    const int64_t end = arrival + transit_ns(seg, g);
    op.dur = end - op.start;
    op.task_id = next_task_id();
    td_ = end;
  } else {
    const int64_t tr = transit_ns(seg, g);
    int64_t extra = 0;
    if (slow_link_factor_ > 1.0)
      extra = std::max<int64_t>(1500000, std::llround(static_cast<double>(tr) * (slow_link_factor_ - 1.0)));
    op.transit = tr + extra;
    const int64_t end = arrival + op.transit;
    op.dur = end - op.start;
    if (s.async) {
      tcomm_ = end;
    } else {
      td_ = end;
      tcomm_ = std::max(tcomm_, end);
    }
  }
  if (rec_ != nullptr) rec_->ops.push_back(op);
}

void RankSim::end_step() {
  const int64_t dev_end_ops = std::max(td_, tcomm_);
  OpRec aux;
  aux.kind = OpRec::Kind::kAux;
  aux.start = dev_end_ops + 1000;
  aux.dur = 1000;
  aux.task_id = next_task_id();
  const int64_t dev_end = aux.start + aux.dur;
  td_ = tcomm_ = dev_end;
  const int64_t sync_start = th_ + 2000;
  th_ = std::max(sync_start + 4000, dev_end + 6000);
  const int64_t host_end = th_ + 10000;
  if (rec_ != nullptr) {
    rec_->ops.push_back(aux);
    rec_->sync_start = sync_start;
    rec_->host_end = host_end;
  }
  th_ = host_end + 60000 +
        static_cast<int64_t>(hash_of(sc_.seed ^ 0x57e9, static_cast<uint64_t>(rank_), static_cast<uint64_t>(step_)) % 80000);
}

SyncTable simulate_cluster(const Scenario& sc) {
  SyncTable t;
  std::vector<size_t> per_program(sc.programs.size(), 0);
  t.segment_offset.resize(sc.programs.size());
  for (size_t p = 0; p < sc.programs.size(); ++p) {
    size_t off = 0;
    for (const Segment& seg : sc.programs[p].segments) {
      t.segment_offset[p].push_back(off);
      if (seg.sync.kind != SyncSpec::Kind::kNone) off += sc.topo.kind_groups[static_cast<size_t>(seg.sync.group)].size();
    }
    per_program[p] = off;
  }
  size_t total = 0;
  t.step_offset.resize(static_cast<size_t>(sc.steps));
  for (int s = 0; s < sc.steps; ++s) {
    t.step_offset[static_cast<size_t>(s)] = total;
    total += per_program[static_cast<size_t>(s == 0 ? sc.first_program : sc.rest_program)];
  }
  t.max_arrival.assign(total, std::numeric_limits<int64_t>::min());
  t.last_rank.assign(total, -1);
  t.min_arrival.assign(total, std::numeric_limits<int64_t>::max());

  std::vector<RankSim> sims;
  sims.reserve(static_cast<size_t>(sc.topo.ranks));
  for (int r = 0; r < sc.topo.ranks; ++r) sims.emplace_back(sc, r);
  std::vector<int64_t> arrival(static_cast<size_t>(sc.topo.ranks));
  for (int s = 0; s < sc.steps; ++s) {
    for (auto& sim : sims) sim.begin_step(s, nullptr);
    const int prog = s == 0 ? sc.first_program : sc.rest_program;
    const int nseg = static_cast<int>(sc.programs[static_cast<size_t>(prog)].segments.size());
    for (int seg = 0; seg < nseg; ++seg) {
      for (int r = 0; r < sc.topo.ranks; ++r) {
        const int64_t a = sims[static_cast<size_t>(r)].run_segment(seg);
        arrival[static_cast<size_t>(r)] = a;
        if (a >= 0) {
          const size_t at = t.index(s, prog, seg, sims[static_cast<size_t>(r)].participating_slot(seg));
          if (a > t.max_arrival[at]) {
            t.max_arrival[at] = a;
            t.last_rank[at] = r;
          }
          t.min_arrival[at] = std::min(t.min_arrival[at], a);
        }
      }
      for (int r = 0; r < sc.topo.ranks; ++r)
        if (arrival[static_cast<size_t>(r)] >= 0)
          sims[static_cast<size_t>(r)].finish_segment(
              seg, t.max_arrival[t.index(s, prog, seg, sims[static_cast<size_t>(r)].participating_slot(seg))]);
    }
    for (auto& sim : sims) sim.end_step();
  }
  return t;
}

}  // namespace ascprof::synth

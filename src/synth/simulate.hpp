#pragma once
/// Timeline simulation of the synthetic workload (internal to the synth module).
///
/// Pass 1 (simulate_cluster) runs every rank in lockstep, segment by segment, and records for each
/// synchronisation point and communicator the latest member arrival. Pass 2 re-runs one rank alone
/// with RankSim, reading those arrivals from the SyncTable, and records its operations step by step
/// for the writers. Both passes share RankSim, so a rank's own timeline is identical in both.
#include <array>
#include <cstdint>
#include <vector>

#include "scenario.hpp"

namespace ascprof::synth {

/// One operation of one rank in one step.
struct OpRec {
  enum class Kind : uint8_t { kKernel, kComm, kAux };
  Kind kind = Kind::kKernel;
  int16_t layer = -1;        ///< StepProgram layer index (-1 outside layers)
  int spec = -1;             ///< KernelSpec (kKernel)
  int seg = -1;              ///< segment whose sync this is (kComm, sync kernels)
  int group = -1;            ///< communicator index (kComm)
  int64_t seq = 0;           ///< per-communicator op counter (kComm)
  int64_t host_start = 0;    ///< Python op start (ns, physical clock)
  int64_t host_dur = 0;
  int64_t launch = 0;        ///< Node@launch / AscendCL start
  int64_t start = 0;         ///< device start
  int64_t dur = 0;
  int64_t wait = 0;          ///< kComm: time waiting for the last member
  int64_t transit = 0;       ///< kComm: data movement on this rank (incl. slow-link extra)
  uint32_t cid = 0;          ///< connection id of the launch
  uint32_t task_id = 0;
  /// Per-step key of the op's jitter draws (its launch index; fault-inserted kernels get their own range so
  /// the other kernels of the rank keep their values).
  uint32_t jkey = 0;
  bool island = false;       ///< kKernel of the interior_island fragment (belongs to no layer)
  int16_t moe_call = -1;     ///< FusedDeepMoe kernel: its call index within the step (moe_trace)
  ModulePart module = ModulePart::kNone;  ///< the nn.Module it runs in (with_modules)
};

struct StepRec {
  int index = 0;             ///< 0-based step index
  int64_t host_start = 0;    ///< ProfilerStep range
  int64_t host_end = 0;
  int64_t sync_start = 0;    ///< host synchronize call at the step end
  std::vector<OpRec> ops;    ///< in issue order
};

/// Latest arrival per (step, segment with a sync, communicator slot of the sync's kind).
struct SyncTable {
  std::vector<int64_t> max_arrival;
  std::vector<int32_t> last_rank;     ///< the member that arrived last (lowest rank on a tie; -1: none)
  std::vector<int64_t> min_arrival;   ///< the first member's arrival
  std::vector<size_t> step_offset;                  ///< per step
  std::vector<std::vector<size_t>> segment_offset;  ///< per program, per segment (relative)
  size_t index(int step, int program, int seg, int slot) const {
    return step_offset[static_cast<size_t>(step)] + segment_offset[static_cast<size_t>(program)][static_cast<size_t>(seg)] +
           static_cast<size_t>(slot);
  }
};

/// The seeded per-rank speed spread (0.985..1.015) and the rank's slow_rank / throttled_cores slow-down:
/// every compute kernel's duration scales with both (the FusedDeepMoe trace model uses them too).
double rank_speed(const Scenario& sc, int rank);
double slow_factor(const Scenario& sc, int rank);

class RankSim {
 public:
  RankSim(const Scenario& sc, int rank);

  /// Starts step `s`; ops are recorded into `rec` when non-null.
  void begin_step(int s, StepRec* rec);
  /// Runs segment `seg`'s kernels and launches its sync. Returns this rank's arrival at the sync, or
  /// -1 when the rank does not take part (no sync, or a communicator of size 1).
  int64_t run_segment(int seg);
  /// Completes the sync of `seg` given the latest arrival of the communicator.
  void finish_segment(int seg, int64_t max_arrival);
  void end_step();

  int program() const { return program_; }
  int participating_slot(int seg) const;  ///< slot of this rank's communicator for seg's sync, or -1
  /// Whether the rank runs segment `seg` of `program` (its pipeline stage, or a P2P transfer of its stage).
  bool takes_part(int program, int seg) const;

 private:
  int64_t kernel_ns(int spec, int op_index) const;
  int64_t host_cost(int op_index) const;
  void launch(OpRec& op, bool extra = false);
  /// `module`: the nn.Module part of the kernel the op stands beside (a fault-inserted kernel runs in
  /// the module of the kernel that triggered it); kNone for an island kernel.
  void emit_kernel(int spec, int16_t layer, int64_t dur_ns, ModulePart module, bool island = false, bool extra = false);
  void emit_island();
  int64_t transit_ns(int seg, int group) const;
  uint32_t next_task_id() {  // 16-bit like the runtime's task ids: joins must survive the wrap
    const uint32_t id = task_id_;
    task_id_ = task_id_ % 65535 + 1;
    return id;
  }

  const Scenario& sc_;
  int rank_;
  int step_ = 0, program_ = 0;
  StepRec* rec_ = nullptr;
  int64_t th_ = 0, td_ = 0, tcomm_ = 0;  // host, compute stream, comm stream clocks
  uint32_t cid_ = 1000;
  uint32_t task_id_ = 1;
  int op_index_ = 0;
  int moe_call_ = 0;         // FusedDeepMoe calls of the step so far (moe_trace)
  std::array<int64_t, kGroupKindCount> seq_{};  // per communicator (a rank is in one group per kind)
  // pending sync of the current segment
  OpRec pending_;
  bool pending_valid_ = false;
  // faults resolved for this rank
  double slow_factor_ = 1.0, expert_factor_ = 1.0, host_factor_ = 1.0, slow_link_factor_ = 1.0;
  int64_t aicpu_ns_ = 0;
  bool fallback_ = false;              // aicpu_fallback on this rank
  uint32_t extra_index_ = 0;           // fault-inserted kernels of the step
  std::vector<uint8_t> block_dim_one_; // per KernelSpec: block_dim_one target on this rank (empty = none)
  int bubble_step_ = -1;
  int island_step_ = -1;
  int64_t bubble_ns_ = 0;
  double rank_speed_ = 1.0;
  bool dummy_ = false;
  int stage_ = 0;            // pipeline stage
};

/// Pass 1: simulates all ranks together and returns the sync table.
SyncTable simulate_cluster(const Scenario& sc);

}  // namespace ascprof::synth

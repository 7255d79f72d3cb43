#pragma once
/// The instrumented FusedDeepMoe of `SynthOptions::moe_trace` (internal to the synth module): the
/// in-kernel timeline of every call (what MoeTracing would record on each of the 72 cores) and the
/// Chrome trace file trace_collector.py writes from it (../shared/spec/moe-tracing.md §4), in the
/// skill, UMDK or bare-array variant.
///
/// A call's timeline is a pure function of (seed, rank, step, call index within the step) and the
/// rank's faults, so the simulator (the kernel row's duration = span + kMoeOverheadNs) and the writer
/// (the trace of the rank's last call) compute the same numbers without sharing state. Times are
/// integer cycles of the 50 MHz system counter (1 cycle = 20 ns) relative to each core's own T0;
/// every core's `processing` starts at 0, so the span W is the latest end over the cores.
///
/// Per core: processing [0, W_core] holds dispatch-gmm1 then gmm2-combine with a few cycles between
/// them (bubbles); each container holds its core group's phases back to back, a few cycles apart:
///  - cube (type 0): per expert group g: dispatch-gmm1 wait-moe-token #g, dispatch-gmm1 moe-process #g;
///    then gmm2-combine moe-gmm2 #g.
///  - vector_recv (type 1): dispatch-gmm1 recv-token, dispatch-gmm1 moe-quant #g; gmm2-combine
///    block-epilogue group #g, gmm2-combine combine-recv.
///  - vector_send (type 2): dispatch-gmm1 moe-dispatch-send #g; gmm2-combine combine-send,
///    gmm2-combine combine-wait-status (until the core's gmm2-combine ends).
/// vector_send cores end last on a clean rank (the combine completes when every peer's data is in), so
/// a peer delay added to their combine-wait-status lengthens the span by exactly that delay.
/// Faults (every call of the rank):
///  - moe_slow_expert (R, M): R's cube moe-process #0 takes M x longer; R's combine is late by
///    D_R = span(R with the fault) - span(R without it), and every other rank's vector_send
///    combine-wait-status grows by the largest D of the other slow ranks.
///  - moe_recv_starved (R, M): R's vector_recv recv-token takes M x longer; the paired cube core's
///    wait-moe-token #0 (cube k pairs with AIV 2k / 2k+1, i.e. vector_recv and vector_send core k)
///    grows by the same cycles.
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ascprof/common/status.hpp"
#include "scenario.hpp"

namespace ascprof::synth {

inline constexpr int kMoeCoreGroups = 3;          ///< cube, vector_recv, vector_send (1C2V)
inline constexpr int kMoeCoresPerGroup = 24;      ///< AIC blocks of the instrumented build
inline constexpr int kMoeCores = kMoeCoreGroups * kMoeCoresPerGroup;
inline constexpr int kMoeExpertGroups = 4;
inline constexpr int64_t kMoeCyclesPerUs = 50;    ///< GetSystemCycle() rate, the collector's clock_divisor
inline constexpr int64_t kMoeNsPerCycle = 1000 / kMoeCyclesPerUs;
inline constexpr int64_t kMoeEntryNs = 2000;      ///< kernel row start -> the cores' T0
inline constexpr int64_t kMoeOverheadNs = 4000;   ///< row duration - trace span (entry + exit)
inline constexpr const char* kMoeKernelName = "aclnnFusedDeepMoe_FusedDeepMoe_FusedDeepMoe";
inline constexpr const char* kMoeTraceFolder = "moe_trace";

/// Trace labels; the first three are containers.
enum MoeLabel : uint8_t {
  kMoeProcessing, kMoeDispatchGmm1, kMoeGmm2Combine,
  kMoeWaitMoeToken, kMoeProcess, kMoeGmm2,
  kMoeRecvToken, kMoeQuant, kMoeBlockEpilogue, kMoeCombineRecv,
  kMoeDispatchSend, kMoeCombineSend, kMoeCombineWaitStatus,
  kMoeLabelCount
};
const char* moe_label_name(int label);
const char* moe_core_group_name(int group);  ///< cube | vector_recv | vector_send

/// One interval on one core, cycles from the core's T0.
struct MoeSpan {
  int64_t b = 0, e = 0;
  uint8_t label = 0;
  uint8_t index = 0;  ///< expert group (the "#s" of the name); 0 for labels without one
};

/// One call on every core: cores 0..23 cube, 24..47 vector_recv, 48..71 vector_send (core_id = c % 24).
struct MoeCallLayout {
  std::vector<MoeSpan> spans;                     ///< core by core, each core's in start order
  std::array<uint32_t, kMoeCores + 1> core_begin{};
  int64_t span = 0;                               ///< W (cycles): latest end over the cores
};

/// W (cycles) of `rank`'s FusedDeepMoe call `call` (0-based within step `step`), faults applied.
int64_t moe_call_span(const Scenario& sc, int rank, int step, int call);
/// The same call's intervals (reuses `out`'s storage).
void moe_call_layout(const Scenario& sc, int rank, int step, int call, MoeCallLayout* out);
/// D_R: how late the rank's combine is in that call because of its moe_slow_expert (0 without one).
int64_t moe_combine_delay(const Scenario& sc, int rank, int step, int call);

/// Ground truth of one label on one core group (cycles).
struct MoePhaseStat {
  uint8_t label = 0, group = 0;
  int64_t count = 0, total = 0, union_len = 0, max_core = 0;
};
/// Container time not covered by its direct children, summed over a core group's cores (cycles).
struct MoeBubbleStat {
  uint8_t container = 0, group = 0;
  int64_t total = 0;
};
/// What write_moe_trace wrote for one rank (ground_truth.json "moe_trace").
struct MoeTraceSummary {
  bool written = false;
  std::string file;                   ///< relative to the rank folder
  int64_t kernel_row_index = -1;      ///< K: the row among the rank's FusedDeepMoe rows
  int64_t kernel_dur_ns = 0;
  int64_t span_cycles = 0;
  int step_index = 0, call = 0;       ///< the traced call
  std::vector<MoePhaseStat> phases;   ///< group by group, labels in first-seen order
  std::vector<MoeBubbleStat> bubbles;
  uint64_t bytes = 0;
};

/// Where the traced call's kernel row ran.
struct MoeTracedCall {
  int step_index = 0;
  int call = 0;
  int64_t row_index = 0;     ///< K
  int64_t row_start_ns = 0;  ///< as simulated (no clock offset)
  int64_t row_dur_ns = 0;
};

/// Writes `<rank_dir>/moe_trace/trace_call<K>.json` (temp name + rename) for `call` and fills `summary`.
/// kInternal when the row's duration is not the trace's span + kMoeOverheadNs (a model mismatch).
Status write_moe_trace(const Scenario& sc, int rank, const MoeTracedCall& call, const std::filesystem::path& rank_dir,
                       MoeTraceSummary* summary);

}  // namespace ascprof::synth

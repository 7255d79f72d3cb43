#pragma once
/// Synthetic multi-rank Ascend PyTorch profiler captures (late-2025 "E3" layout) with ground truth.
///
/// `generate_capture` writes a capture root that looks like a real cluster capture: one
/// `<worker>_<pid>_<YYYYmmddHHMMSSfff>_ascend_pt/` folder per rank holding profiler_info_<rank>.json,
/// profiler_metadata.json and ASCEND_PROFILER_OUTPUT/{kernel_details.csv, trace_view.json,
/// communication.json, step_trace_time.csv}, plus `ground_truth.json` at the root listing what was
/// generated (exact per-rank row/event counts, layers per step, injected faults).
///
/// The ranks are simulated together (collectives complete when the last member arrives, so early
/// arrivers wait), then written one rank at a time, streaming in large buffered chunks: memory stays
/// bounded by one profiler step per rank whatever the scale. Output is a pure function of the options
/// (byte-identical for the same seed).
///
/// Scenarios (see scenario_names()):
///  - `moe_mla_decode`: DeepSeek-like decode with DP attention and EP MoE. Per layer an AddRmsNorm
///    block head, MlaPreprocess + FusedInferAttentionScore + TransposeBatchMatMul attention, MoE
///    layers with MoeGatingTopK, MoeDistributeDispatchV2/CombineV2 (MC2 kernels that synchronise the
///    EP group) and GroupedMatmul experts; dense prefix layers; an ArgMaxV2 selection kernel ends the
///    main body and each of the speculative MTP layers. One hcom allGather per step on the world group.
///  - `dense_gqa`: TP x DP dense model; step 1 is a prefill (FlashAttentionScore), later steps decode
///    (FusedInferAttentionScore); two TP allReduces per layer, a TP broadcast per step, ArgMax at the end.
///  - `training`: TP x DP training; per microbatch forward then backward layers (FlashAttentionScore /
///    FlashAttentionScoreGrad), TP allReduces, async DP reduceScatter of gradient buckets overlapping
///    the last backward, optimizer kernels and a DP allGather; one ProfilerStep per step.
///
/// Faults (`SynthOptions::faults`, each `NAME[:RANK[:MAGNITUDE]]`, RANK defaults to 1 (0 with one
/// rank), MAGNITUDE to the value in brackets). They apply to every step unless noted:
///  - `slow_rank[:R[:2.0]]`: every compute kernel on R takes MAGNITUDE x longer; peers wait for R at
///    each collective / MC2 kernel (R shows the shortest comm times).
///  - `ep_imbalance[:R[:4.0]]`: expert GroupedMatmul kernels on R take MAGNITUDE x longer (hot
///    experts); the other ranks' MoeDistributeCombine kernels wait for R. moe_mla_decode only.
///  - `slow_collective[:R[:8.0]]`: every hcom collective of R completes late on R by
///    max(1.5 ms, (MAGNITUDE-1) x transit): R's Transit Time grows and its bandwidth drops.
///  - `idle_bubble[:R[:US]]`: in the middle step, the host of R synchronises with the device and then
///    stalls US microseconds before the middle segment, leaving the device idle (a large internal
///    bubble). Default: max(5000, 30 % of the nominal step time).
///  - `exposed_aicpu[:R[:120]]`: R runs one AI_CPU kernel `aclnnNonzero_NonZero_NonZero` of
///    MAGNITUDE us at the start of every layer, on the compute stream (nothing overlaps it).
///  - `host_bound[:R[:F]]`: R's host launch cost per operator is F x larger, so the device waits for
///    launches (large gaps between kernels). Default F: max(8, enough to exceed 3x the mean kernel).
///  - `clock_offset[:R[:20000]]`: every timestamp R writes is shifted by MAGNITUDE us (clock skew;
///    the physical timeline is unchanged).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/common/double_hash.hpp"
#include "ascprof/common/status.hpp"

namespace ascprof::synth {

/// What to generate. Zero/empty values mean "scenario default" where noted.
struct SynthOptions {
  std::string scenario;               ///< one of scenario_names()
  std::filesystem::path out_dir;      ///< capture root; created if missing
  int ranks = 4;                      ///< number of profiling ranks (1..4096)
  int steps = 3;                      ///< profiled steps before scaling (>= 1)
  double scale = 1.0;                 ///< multiplies the step count (effective steps = max(1, round(steps*scale)))
  uint64_t seed = 1;                  ///< every value derives from it
  std::vector<std::string> faults;    ///< "NAME[:RANK[:MAGNITUDE]]", see the file comment
  std::vector<int> dummy_ranks;       ///< ranks that run without attention work (reduced/dummy DP ranks)
  int layers = 0;                     ///< main layers per forward (0 = scenario default; MoE: incl. dense prefix)
  int tp = 0;                         ///< tensor-parallel size for dense_gqa / training (0 = default 2, or 1)
  int microbatches = 0;               ///< training microbatches per step (0 = default 2)
  int first_step = 1;                 ///< N of the first ProfilerStep#N
  int threads = 1;                    ///< ranks written in parallel (output identical for any value)
  bool force = false;                 ///< allow a non-empty out_dir: replaces earlier *_ascend_pt folders and ground_truth.json
};

/// What was written for one rank.
struct RankSummary {
  int rank_id = 0;
  int device_id = 0;
  std::filesystem::path folder;       ///< absolute path of the rank's *_ascend_pt folder
  uint64_t kernel_rows = 0;           ///< data rows of kernel_details.csv
  uint64_t trace_events = 0;          ///< elements of the trace_view.json array
  uint64_t bytes = 0;                 ///< all files of the rank
};

/// What generate_capture wrote.
struct SynthSummary {
  std::filesystem::path root;         ///< the capture root (out_dir)
  std::filesystem::path ground_truth; ///< root/ground_truth.json
  int steps = 0;                      ///< effective profiled steps
  std::vector<RankSummary> ranks;
  uint64_t total_bytes = 0;           ///< every file written, ground truth included
};

/// Writes a synthetic capture. Errors: kInvalidArgument (unknown scenario/fault, bad sizes, non-empty
/// out_dir without force), kIo (a file could not be written; partial files are removed).
Result<SynthSummary> generate_capture(const SynthOptions& options);

/// The scenario names generate_capture accepts, sorted.
std::vector<std::string> scenario_names();

/// The fault names accepted in SynthOptions::faults, sorted.
std::vector<std::string> fault_names();

/// Parses "1,3,5" / "2-4" / "" into a sorted rank list; kInvalidArgument on junk or negative values.
Result<std::vector<int>> parse_rank_list(std::string_view text);

}  // namespace ascprof::synth

#pragma once
/// Synthetic multi-rank Ascend PyTorch profiler captures (late-2025 "E3" layout) with ground truth.
///
/// `generate_capture` writes a capture root that looks like a real cluster capture: one
/// `<worker>_<pid>_<YYYYmmddHHMMSSfff>_ascend_pt/` folder per rank holding profiler_info_<rank>.json,
/// profiler_metadata.json and ASCEND_PROFILER_OUTPUT/{kernel_details.csv, trace_view.json,
/// communication.json, step_trace_time.csv, op_statistic.csv, api_statistic.csv}, plus
/// `ground_truth.json` at the root listing what was
/// generated (exact per-rank row/event counts, layers per step, injected faults).
///
/// `SynthOptions::export_format` "db" or "both" also writes, per rank, the SQLite exports of torch_npu
/// (export_type db): ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_<rank>.db and analysis.db, holding
/// the same data as the text files (same timeline, faults and ground truth; integer ns = the text's us
/// x 1000). "db" writes no kernel_details.csv, trace_view.json, communication.json, step_trace_time.csv,
/// op_statistic.csv, api_statistic.csv or profiler_metadata.json (its parallel_group_info /
/// distributed_args are META_DATA rows); profiler_info_<rank>.json says _export_type ["db"]. "both"
/// leaves the text files byte-identical to "text". Mapping, per rank database:
///  - STRING_IDS: every text value once (CANN strings from 0, torch framework strings from 1 << 28);
///    META_DATA: SCHEMA_VERSION 1.2.0 (+ _MAJOR/_MINOR/_MICRO), ENV_VARIABLES, distributed_args,
///    parallel_group_info (profiler_metadata.json's JSON); RANK_DEVICE_MAP, NPU_INFO, HOST_INFO,
///    SESSION_TIME_INFO, the ENUM_* tables of a real export; STEP_TIME = the ProfilerStep#N windows;
///    AICORE_FREQ = the "AI Core Freq" counters.
///  - compute row of kernel_details -> TASK (globalTaskId in row order, connectionId = the device task's,
///    taskType = its trace Task Type) + COMPUTE_TASK_INFO (shapes in one pair of double quotes) +
///    TASK_PMU_INFO (one row per metric cell that is not N/A; "(us)" columns in ns, others the printed
///    number; aicore_time / aiv_time as aic_total_time / aiv_total_time);
///  - COMMUNICATION row -> COMMUNICATION_OP (opId in row order); Plane k tasks -> TASK (streamId 5,
///    contextId 4294967295, connectionId = the op's) + COMMUNICATION_TASK_INFO (with bandwidth GB/s);
///    other device tasks (EVENT_RECORD) -> TASK;
///  - Python cpu_op events -> PYTORCH_API (type 50001; ns as TEXT) with CONNECTION_IDS rows for the
///    torch_to_npu flows; CANN events -> CANN_API (AscendCL 20000, Node@launch 10000 with the device
///    task's connection id; events without a connection id get fresh ids above the largest);
///  - analysis.db: CommAnalyzerTime (one row per communication.json op), CommAnalyzerBandwidth (one row
///    per op, transport with traffic and size bin; a transport with traffic but no size distribution,
///    SDMA, one row with package_size 0 and count 0; transports without traffic none, as in real files),
///    CommAnalyzerMatrix (empty), StepTraceTime (us, as step_trace_time.csv). The Overlap Analysis
///    events, op_statistic and api_statistic have no table.
/// The .db files are a pure function of the options as well (byte-identical for the same seed).
/// ground_truth.json names the "export_format" and, with the databases, their sizes per rank.
///
/// trace_view.json writes each HCCL plane task (Notify_Wait, Memcpy / Reduce_Inline, Notify_Record of a
/// collective or P2P op) twice, as real captures do: on its "Plane k" thread of the Communication
/// process (with the link args) and as an "Ascend Hardware" X event on the thread "Stream 5" (the
/// stream all plane tasks run on), named by its task type, with args Model Id, Task Type (= the
/// plane task type, the TASK row's taskType), Physic Stream Id 5, Task Id, Batch Id 0, Subtask Id
/// 4294967295 and connection_id (the op's, as the TASK row's connectionId) and the same start and
/// duration. So both exports hold the same device tasks: the compute kernels, the EVENT_RECORD tasks and
/// the plane tasks. ground_truth's device_tasks counts all of them (plane_tasks counts the Plane k events).
/// Like a kernel, an HCCL op is launched by an AscendCL call (connection id cid) and a Node@launch
/// (item_id = the op type, cid + 1, over the same span as the AscendCL call, as torch_npu writes it) where
/// its HostToDevice flow to the Group-thread op starts; cid + 1 is the connection id of the op and of
/// its plane tasks (the database: CANN_API rows 20000 and 10000 "launch").
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
///  - `glm5_mtp`: GLM5-like W8A8 decode with DP attention and EP MoE over all ranks (topology as
///    moe_mla_decode). Default 78 main layers = 3 dense prefix + 75 MoE (`layers` overrides the main
///    count; 3 dense prefix layers when it is >= 8, else layers/5) and 3 speculative MTP layers. Per
///    layer: block head (RmsNorm for the very first layer, else AddRmsNorm), MlaPrologV3 (attention.mla,
///    the anchor), LightningIndexer, KvQuantSparseFlashAttention, BatchMatMulTransposeV2 (V up-projection;
///    named so its folded text holds "batchmatmultranspose" but not "transposebatchmatmul"),
///    DynamicQuant + QuantBatchMatmul output projection, AddRmsNorm; dense MLP = DynamicQuant + QBMM,
///    SwiGlu, DynamicQuant + QBMM; MoE MLP = MoeGatingTopK, MoeDistributeDispatchV2, GroupedMatmul,
///    SwiGlu, DynamicQuant, GroupedMatmul, MoeDistributeCombineV2, W8A8 shared expert. An ArgMaxV2 ends
///    the main body and each MTP layer.
///  - `training`: TP x DP training; per microbatch a TP broadcast of the batch (tp > 1), forward then
///    backward layers (FlashAttentionScore /
///    FlashAttentionScoreGrad), TP allReduces, async DP reduceScatter of gradient buckets overlapping
///    the last backward, optimizer kernels and a DP allGather; one ProfilerStep per step.
///    With `pp` = P > 1 (pipeline parallel, 1F1B): ranks = tp x dp x P (Megatron order: TP fastest,
///    then DP, then the stage), each stage holds layers/P consecutive layers (default layers: 4
///    rounded up to a multiple of P). Per step every stage runs min(P-stage-1, M) warm-up forwards,
///    the steady 1F1B part and the cool-down backwards; activations / gradients move between
///    neighbouring stages as P2P pairs on the `pp` communicator (hcom_send_ on the sender,
///    hcom_receive_ on the receiver, both finish when the later side arrives; communication.json
///    "p2p" section; step_trace Bubble = receive time). Stage 0 embeds, the last stage computes the
///    loss; every stage ends with its optimizer and DP allGather.
///
/// `SynthOptions::split_attention` (moe_mla_decode only): every layer's attention is emitted as two
/// attention sub-units, each with its own attention.mla anchor and a different name key, separated by
/// a block head: [norm, MlaPrologV2 (kv path), AddRmsNorm, MlaPreprocess (q path), FusedInferAttentionScore,
/// TransposeBatchMatMul, MatMul, AddRmsNorm, MLP...]. Ground truth still has one layer per real layer.
///
/// `SynthOptions::moe_trace` (moe_mla_decode only; "skill", "umdk" or "array"): the capture of an
/// instrumented build with MoeTracing in-kernel traces (../shared/spec/moe-tracing.md). In every MoE
/// layer (MTP layers included) MoeDistributeDispatchV2, both GroupedMatmul, the routed SwiGlu between
/// them and MoeDistributeCombineV2 become ONE kernel row aclnnFusedDeepMoe_FusedDeepMoe_FusedDeepMoe (Type
/// FusedDeepMoe, MIX_AIC, Block Dim 24, Mix Block Dim 48; both exports), whose duration is its in-kernel
/// trace's span W plus 4.00 us (the cores' T0 is 2.00 us after the row's start). It is not a sync point:
/// the EP coupling lives in its trace model (src/synth/moe_trace_writer.hpp). For the last FusedDeepMoe
/// call of the last step, each rank folder gets moe_trace/trace_call<K>.json (K = that row's 0-based
/// index among the rank's FusedDeepMoe rows in kernel_details order): the Chrome trace trace_collector.py
/// writes for that rank only (pid 0, args.rank_id = the rank id), 1C2V = 24 cube (type0), 24 vector_recv
/// (type1), 24 vector_send (type2) cores, ts = 50 MHz cycles / 50 with exactly two decimals (integer
/// cycles: parsing ts to ns is exact), names "<label> [extra:0] #<expert group or 0>":
///  - skill: {"traceEvents", "displayTimeUnit", "otherData"} of the skill collector, metadata first, then
///    per thread and per name a B immediately followed by its E (not in ts order);
///  - umdk: the same with the UMDK collector's args (combined_id, raw_timestamp / initial_timestamp in
///    absolute cycles, event_id, begin/end file and line, extra_id = low 8 bits, extra_raw) and otherData;
///  - array: a bare JSON array, one X event (ts, dur) per interval, metadata included, in a seeded
///    shuffled order.
/// Labels per core: processing [0, W_core] > dispatch-gmm1 then gmm2-combine (a few cycles apart:
/// bubbles) > cube: wait-moe-token #g, moe-process #g (g = 0..3), moe-gmm2 #g; vector_recv: recv-token,
/// moe-quant #g, block-epilogue group #g, combine-recv; vector_send: moe-dispatch-send #g, combine-send,
/// combine-wait-status (to the end of the core's gmm2-combine). On a clean rank no phase covers more
/// than ~44 % of the span and combine-wait-status ~14 %. ground_truth.json "moe_trace" lists per rank the
/// file, K, the row's duration, the span and per (label, core group) count / total / union / max per core
/// and per (container, core group) the bubble total (see "notes" there).
///
/// `SynthOptions::with_modules` (training only): the capture of torch_npu's with_modules=True. Per
/// microbatch forward, python_function X events "nn.Module: <name>" on the Python thread (args Python id,
/// Python parent id, Python module id): Model_0 from the embedding's host op to the last forward layer's,
/// per layer Layer_<n> (n = the model layer; the norms are its own work) holding Attention_<n> (QKV
/// projection .. its TP allReduce) and MLP_<n> (up projection .. its allReduce); a range runs from its
/// first op's host start to its last op's host end, and every op's launch lies inside its own host op.
/// Database: PYTORCH_API rows of type trace (50003). profiler_info says with_modules true; every other
/// file is byte-identical to the capture without modules. ground_truth.json "modules" lists per rank every
/// module path with calls, host ns, self / total device ns and tasks (a kernel is one task, a collective
/// its plane tasks) and their Notify_Wait part, and the tasks outside every module / without a launch.
///
/// Faults (`SynthOptions::faults`, each `NAME[:RANK[:MAGNITUDE]]`, RANK defaults to 1 (0 with one
/// rank), MAGNITUDE to the value in brackets). They apply to every step unless noted:
///  - `slow_rank[:R[:2.0]]`: every compute kernel on R takes MAGNITUDE x longer; peers wait for R at
///    each collective / MC2 kernel (R shows the shortest comm times).
///  - `ep_imbalance[:R[:4.0]]`: expert GroupedMatmul kernels on R take MAGNITUDE x longer (hot
///    experts); the other ranks' MoeDistributeCombine kernels wait for R. MoE scenarios only.
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
///  - `interior_island[:R]` (dense_gqa, moe_mla_decode, glm5_mtp; MAGNITUDE unused): in the middle step
///    (steps/2) R runs one foreign layer-like fragment right after its last main layer and before the
///    end-of-body epilogue (final norm, lm head, ArgMax): AddRmsNorm + an anchor kernel of the rank's
///    anchor kind (MlaPreprocess for MLA scenarios, FusedInferAttentionScore for dense_gqa; on a dummy
///    rank MoeGatingTopK / MatMul) + kernels with roles no normal layer has (MLA scenarios:
///    ApplyTopKTopP sampling + AI_CPU NonZero; dense_gqa: AI_CPU NonZero + MoeGatingTopK). The fragment
///    belongs to no ground-truth layer; ground truth records its rows ("injected_island").
///  Operator faults (MAGNITUDE unused). Each changes one kernel name on R only; the kernel is picked
///  per rank as the one whose largest (name, input shapes) group has the largest nominal total time
///  in the steady program (so it is among the rank's hot operators). Other rows keep their values.
///  - `vector_scalar_heavy[:R]`: that AI_VECTOR_CORE kernel has aiv_scalar_ratio 0.700 and aiv_vec_ratio
///    0.100 on every call (duration unchanged).
///  - `cube_underused[:R]`: that AI_CORE matmul has cube_utilization(%) 20.000, aic_mac_ratio 0.180 and
///    aic_mte2_ratio 0.720 on every call (duration unchanged).
///  - `aicpu_fallback[:R]`: an AI_CPU kernel `aclnnIndexPut_IndexPutAiCpu_IndexPut` (Type IndexPut,
///    Block Dim 1, metric columns N/A like every AI_CPU row, ~300 us) runs once per layer right after the
///    layer's first kernel (an index_put that normally runs on the AI cores, fallen back to the AI CPU).
///  - `block_dim_one[:R]`: that AI_VECTOR_CORE kernel is launched with Block Dim 1 and takes 8 x longer.
///  - `host_sync_heavy[:R]`: api_statistic.csv StreamSynchronize of R (Count = steps) totals 40 % of R's
///    kernel span (first kernel_details row start to last row end); nothing else changes.
///  In-kernel faults (moe_trace only; every FusedDeepMoe call of the rank; ep_imbalance is refused with
///  moe_trace, use moe_slow_expert):
///  - `moe_slow_expert[:R[:3.0]]`: R's cube cores' dispatch-gmm1 moe-process #0 take MAGNITUDE x longer, so
///    R's call (and row) ends later by D = its span with the fault - its span without; every other rank's
///    vector_send gmm2-combine combine-wait-status grows by D (they wait for R's combine), and so do their
///    spans and rows. R's own combine-wait-status stays nominal.
///  - `moe_recv_starved[:R[:4.0]]`: R's vector_recv dispatch-gmm1 recv-token takes MAGNITUDE x longer and
///    the paired cube core's dispatch-gmm1 wait-moe-token #0 grows by the same cycles; R's call and row
///    grow accordingly, other ranks are unchanged.
///  Healthy baseline (every other kernel): cube kernels (AI_CORE, MIX_AIC) cube_utilization 55..90 %,
///  aic_mac_ratio >= 0.5, aic_mte2_ratio <= 0.5, aic_scalar_ratio <= 0.2; vector kernels (AI_VECTOR_CORE,
///  MIX_AIV) aiv_vec_ratio >= 0.3, aiv_scalar_ratio <= 0.25, aiv_mte2_ratio <= 0.5; Block Dim 20 on
///  AI_CORE / MIX_AIC / MIX_AIV, 40 on AI_VECTOR_CORE, Mix Block Dim 40 on MIX kernels, 0 otherwise.
///
/// op_statistic.csv (E3, leading Device_id): one row per (Type, Accelerator Core) of the compute rows of
/// kernel_details.csv, sums exact to the written durations, sorted by Total Time desc. api_statistic.csv
/// (Device_id `host`): Level `acl` per aclnn API (kernel name up to the first '_'; the AscendCL@ durations
/// of trace_view.json), `runtime` KernelLaunch (one per compute row) and StreamSynchronize (one per step).
///
/// Ground truth (root/ground_truth.json) beyond the counts: "steps"[i].layers[j] has role, kind,
/// microbatch (training) and "blocks" (the block kinds the reference's §2.4 decomposition gives the
/// layer on a rank with attention: ["attention","ffn"], ["attention","moe"], ...; island rows excluded);
/// "ranks"[r].steps[i] (first 8 steps) has layer_first_row / layer_anchor_row and, only where the
/// rank's blocks differ from steps[i] (dummy ranks: ["moe"] / ["ffn"]), "layer_blocks" (one array of
/// block kinds per layer); "faults"[k] of an operator fault has "kernel" {name, type, accelerator_core,
/// calls, values}, of host_sync_heavy "api" {file, level, name, count, total_us, kernel_span_us,
/// share_of_kernel_span}; "faults"[k] of interior_island has "injected_island" {rank, step, step_index,
/// first_row, last_row, kernels} and "expected_hard_errors" (["interior_template_residual",
/// "interior_unclassified_island"]); that rank's step entry also has "injected_island_rows"
/// [first, last]. With a pipeline (parallel.pp > 1)
/// steps[i].layers lists every stage's layers (stage-major, each with "stage" and "model_layer"),
/// main_layers counts one stage's layers, and ranks[r] has "pp_stage", "layer_count" and "layers"
/// (its stage's layers in row order: index into steps[i].layers, role, microbatch, model_layer); the
/// rank's layer_first_row / layer_anchor_row / layer_blocks follow that list.
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
  int pp = 0;                         ///< training pipeline stages (0/1 = none; see the file comment)
  int first_step = 1;                 ///< N of the first ProfilerStep#N
  int threads = 1;                    ///< ranks written in parallel (output identical for any value)
  bool force = false;                 ///< allow a non-empty out_dir: replaces earlier *_ascend_pt folders and ground_truth.json
  bool split_attention = false;       ///< moe_mla_decode: two attention anchors per layer (see the file comment)
  std::string export_format = "text"; ///< "text" | "db" | "both" (see the file comment)
  std::string moe_trace;              ///< "" (off) | "skill" | "umdk" | "array": instrumented FusedDeepMoe (file comment)
  bool with_modules = false;          ///< training only: nn.Module ranges on the Python thread (file comment)
};

/// What was written for one rank.
struct RankSummary {
  int rank_id = 0;
  int device_id = 0;
  std::filesystem::path folder;       ///< absolute path of the rank's *_ascend_pt folder
  uint64_t kernel_rows = 0;           ///< data rows of kernel_details.csv
  uint64_t trace_events = 0;          ///< elements of the trace_view.json array
  uint64_t bytes = 0;                 ///< all files of the rank
  std::filesystem::path moe_trace;    ///< the rank's in-kernel trace file (moe_trace), else empty
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

#pragma once
/// The synthetic workload model behind generate_capture: kernels, synchronisation points, step
/// programs, communicator topology and faults. Internal to the synth module (exposed for its tests).
///
/// A step program is a list of segments. Every rank runs the same segments (SPMD); a segment is a run
/// of compute kernels (rank-specific: dummy ranks skip attention, faults insert or stretch kernels)
/// followed by one synchronisation point shared by a communicator group: an hcom collective or an MC2
/// kernel (MoeDistributeDispatch/Combine) that completes when the last member arrives.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ascprof/common/status.hpp"
#include "ascprof/synth/synth.hpp"

namespace ascprof::synth {

/// Accelerator Core of a compute kernel.
enum class Core : uint8_t { kAiCore, kAiVectorCore, kMixAic, kMixAiv, kAiCpu };
const char* core_name(Core c);

/// Communicator families. kWorld is the default group.
enum class GroupKind : uint8_t { kWorld = 0, kTp, kDp, kEp, kPp, kCount };
inline constexpr size_t kGroupKindCount = static_cast<size_t>(GroupKind::kCount);

/// hcom collective kinds (camelCase names as in op names).
/// kSend / kReceive are the two sides of a pipeline P2P transfer (SyncSpec::p2p_from >= 0).
enum class CommKind : uint8_t { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kAllToAllV, kSend, kReceive };
const char* comm_kind_name(CommKind k);       ///< "allReduce"
const char* comm_torch_op(CommKind k);        ///< "c10d::allreduce_"

/// The nn.Module a kernel or collective runs in, for captures with module ranges (with_modules): the
/// model's own work (the embedding), a decoder layer's own work (its norms), its attention or its MLP.
/// kNone: outside every module (get_batch, loss, backward, optimizer).
enum class ModulePart : uint8_t { kNone = 0, kModel, kLayer, kAttention, kMlp };

/// One compute kernel as it appears in kernel_details.csv (Name, Type, core, shapes) plus the host op
/// that launches it and its nominal duration.
struct KernelSpec {
  std::string name;         ///< kernel_details Name, e.g. aclnnMatmul_MatMulV3Common_MatMulV3
  std::string type;         ///< kernel_details Type (OP Type), e.g. MatMulV3
  std::string aten;         ///< Python cpu_op that launches it, e.g. aten::mm
  std::string acl;          ///< AscendCL API, e.g. aclnnMatmul
  Core core = Core::kAiCore;
  int64_t base_ns = 10000;  ///< nominal duration
  int block_dim = 40;
  int mix_block_dim = 0;
  std::string in_shapes, in_dtypes, in_formats, out_shapes, out_dtypes, out_formats;
  /// Pipeline ratios in thousandths (aic: mac, scalar, mte1, mte2, fixpipe; aiv: vec, scalar, mte2, mte3).
  std::array<int16_t, 5> aic_ratio{};
  std::array<int16_t, 4> aiv_ratio{};
  bool attention = false;   ///< attention work: skipped on dummy ranks
  bool expert = false;      ///< routed-expert GEMM: stretched by ep_imbalance, shrunk on dummy ranks
  bool matmul = false;
  bool anchor = false;      ///< the layer's structural anchor (MlaPreprocess / attention score kernel)
  bool layer_first = false; ///< first kernel of its layer (exposed_aicpu inserts before it)
  bool fused_moe = false;   ///< the instrumented FusedDeepMoe kernel (moe_trace): duration from moe_trace_writer.hpp
  int16_t layer = -1;       ///< index into StepProgram::layers (-1 = outside any layer)
  ModulePart module = ModulePart::kNone;  ///< its nn.Module (with_modules)
};

/// The synchronisation point ending a segment.
struct SyncSpec {
  enum class Kind : uint8_t { kNone, kCollective, kSyncKernel };
  Kind kind = Kind::kNone;
  GroupKind group = GroupKind::kWorld;
  CommKind comm = CommKind::kAllReduce;
  bool async = false;       ///< collective runs on the comm stream without blocking compute
  int64_t bytes = 0;        ///< collective payload
  int64_t base_ns = 0;      ///< transit (collective) or work after the last arrival (sync kernel)
  int kernel = -1;          ///< KernelSpec index for kSyncKernel
  int16_t layer = -1;
  /// Pipeline P2P transfer (kCollective on the kPp group): sender and receiver stage; only the ranks
  /// of these two stages take part (send on the sender, receive on the receiver). -1 = not P2P.
  int16_t p2p_from = -1, p2p_to = -1;
  ModulePart module = ModulePart::kNone;  ///< its nn.Module (with_modules)
};

struct Segment {
  std::vector<int> kernels;  ///< KernelSpec indices, in order
  SyncSpec sync;
  bool drain_comm = false;   ///< wait for outstanding async collectives before the kernels
  int16_t stage = -1;        ///< pipeline stage whose ranks run the kernels and sync (-1 = every rank)
};

/// Ground truth for one layer of a step.
struct LayerInfo {
  std::string role;          ///< main | speculative | forward | backward
  std::string kind;          ///< dense | moe | mtp | prefill | decode | train
  int microbatch = -1;       ///< training only
  int stage = -1;            ///< pipeline stage holding the layer (-1 = every rank, no pipeline)
  int model_layer = -1;      ///< layer of the model (pipeline training only)
};

struct StepProgram {
  std::string kind;          ///< decode | prefill | train
  std::vector<Segment> segments;
  std::vector<LayerInfo> layers;
  int main_layers = 0;
  int speculative_layers = 0;
  /// Where interior_island inserts its fragment: before kernel island_pos of segment island_seg (right
  /// after the last main layer, before the end-of-body epilogue). -1 = the program has no such point.
  int island_seg = -1, island_pos = -1;
};

/// One HCCL communicator: a key of profiler_metadata.json parallel_group_info.
struct CommGroup {
  std::string comm_name;     ///< "group_name_<k>"
  std::string group_name;    ///< default_group | tp | dp | ep
  GroupKind kind = GroupKind::kWorld;
  std::vector<int> ranks;    ///< global ranks, sorted
  uint64_t hash = 0;         ///< double_hash(comm_name)
};

struct Topology {
  int ranks = 1, tp = 1, dp = 1, ep = 1, pp = 1;
  std::vector<int> stage;    ///< pipeline stage of each rank (all 0 without pipeline)
  std::vector<CommGroup> groups;
  /// group_of[kind][rank] = index into groups.
  std::array<std::vector<int>, kGroupKindCount> group_of;
  /// groups of each kind, in index order; a group's position here is its "slot" for the kind.
  std::array<std::vector<int>, kGroupKindCount> kind_groups;
  std::vector<int> slot;     ///< slot[group index] = position in kind_groups[kind]
};

enum class FaultKind : uint8_t {
  kSlowRank, kEpImbalance, kSlowCollective, kIdleBubble, kExposedAicpu, kHostBound, kClockOffset, kInteriorIsland,
  kVectorScalarHeavy, kCubeUnderused, kAicpuFallback, kBlockDimOne, kHostSyncHeavy, kThrottledCores,
  kMoeSlowExpert, kMoeRecvStarved  ///< in-kernel faults of the traced FusedDeepMoe (moe_trace only)
};

/// The AI Core clock every rank runs at (its AI Core Freq counter), unless throttled_cores lowers it.
inline constexpr double kNominalAicoreMhz = 1800;

/// Injected metric values of the operator faults (thousandths; cube utilisation in thousandths of a percent).
inline constexpr int16_t kScalarHeavyScalar = 700, kScalarHeavyVec = 100;
inline constexpr int16_t kUnderusedMac = 180, kUnderusedMte2 = 720;
inline constexpr int64_t kUnderusedCubeUtilMilli = 20000;
inline constexpr int kBlockDimOneFactor = 8;      ///< block_dim_one: duration multiplier
inline constexpr int64_t kAicpuFallbackUs = 300;  ///< aicpu_fallback: nominal duration per call
inline constexpr double kHostSyncShare = 0.4;     ///< host_sync_heavy: StreamSynchronize / kernel span

struct Fault {
  FaultKind kind;
  std::string name;
  int rank = 0;
  double magnitude = 0;
  bool magnitude_given = false;  ///< false: a default was used (some defaults depend on the scenario)
  std::vector<int> steps;    ///< step indices (0-based) it applies to; empty = all
  /// Operator faults (vector_scalar_heavy, cube_underused, block_dim_one, aicpu_fallback): the kernel
  /// name they change or insert on `rank` (resolved by build_scenario), its Type and core.
  std::string target, target_type;
  Core target_core = Core::kAiCore;
};

/// Everything generate_capture needs, derived from SynthOptions.
struct Scenario {
  std::string name;
  uint64_t seed = 1;
  int steps = 1;             ///< effective step count
  int first_step = 1;
  Topology topo;
  std::vector<KernelSpec> kernels;
  std::vector<StepProgram> programs;
  int first_program = 0;     ///< program of step 0
  int rest_program = 0;      ///< program of later steps
  std::vector<uint8_t> dummy;       ///< per rank
  std::vector<Fault> faults;
  int aicpu_kernel = -1;     ///< KernelSpec of the exposed_aicpu kernel
  int fallback_kernel = -1;  ///< KernelSpec of the aicpu_fallback kernel (-1 = fault absent)
  std::vector<int> island_kernels;        ///< interior_island fragment on a rank with attention
  std::vector<int> island_kernels_dummy;  ///< ... on a dummy rank (anchor of the rank's fallback kind)
  bool split_attention = false;
  std::string moe_trace;            ///< MoeTracing variant (skill | umdk | array); empty = no instrumented kernel
  bool with_modules = false;        ///< nn.Module ranges on the Python thread (training only)
  int64_t host_op_ns = 14000;       ///< nominal host cost per launched operator
  int64_t base_time_ns = 0;         ///< wall clock of the capture start (ns since epoch)
  int host_pid_base = 0;

  const StepProgram& program(int step) const { return programs[step == 0 ? first_program : rest_program]; }
};

/// Block-kind roles of a kernel per the reference taxonomy (§2.3) as §2.4 uses them.
struct BlockRoles {
  bool attention = false;    ///< role attention or attention_aux
  bool moe = false;          ///< role moe (or a MIX_AIV communication-like kernel)
  bool aicpu = false;
};
BlockRoles block_roles(const KernelSpec& k);

/// Expected §2.4 block kinds ("attention", "ffn", "moe", "aicpu") of every layer of `program` on a
/// rank: `dummy` skips attention kernels, `aicpu_per_layer` adds the exposed_aicpu kernel at each layer
/// start. A layer's rows run from its first kernel to the next layer's first kernel (epilogue rows and
/// outside-layer kernels in between count, the interior_island fragment does not).
/// `stage` >= 0 restricts to the segments of that pipeline stage (layers of other stages stay empty).
/// `fallback_per_layer` adds the aicpu_fallback kernel right after each layer's first kernel.
std::vector<std::vector<std::string>> layer_blocks(const Scenario& sc, int program, bool dummy, bool aicpu_per_layer,
                                                   int stage = -1, bool fallback_per_layer = false);

/// The kernel name an operator fault picks on `rank`: among the kernels the rank runs in the steady
/// program (pipeline stage, dummy rank without attention), the one whose largest (name, input shapes)
/// group has the largest nominal total time; `vector` = AI_VECTOR_CORE kernels, else AI_CORE matmuls.
/// Empty when the rank runs no such kernel.
std::string pick_hot_kernel(const Scenario& sc, int rank, bool vector);

/// Builds and validates the scenario. kInvalidArgument with a user-facing reason on bad options.
Result<Scenario> build_scenario(const SynthOptions& options);

/// Parses one fault spec against the scenario shape (rank range, step count).
Result<Fault> parse_fault(std::string_view spec, int ranks, int steps);

/// Stateless 64-bit mixing (splitmix64 finaliser) used for every random choice.
inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
inline uint64_t hash_of(uint64_t a, uint64_t b, uint64_t c = 0, uint64_t d = 0) {
  return mix64(mix64(mix64(mix64(a) ^ b) ^ c) ^ d);
}
/// Uniform in [lo, hi] from a hash.
inline double unit_range(uint64_t h, double lo, double hi) {
  return lo + (hi - lo) * (static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0));
}

}  // namespace ascprof::synth

#include "scenario.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <string>

namespace ascprof::synth {

const char* core_name(Core c) {
  switch (c) {
    case Core::kAiCore: return "AI_CORE";
    case Core::kAiVectorCore: return "AI_VECTOR_CORE";
    case Core::kMixAic: return "MIX_AIC";
    case Core::kMixAiv: return "MIX_AIV";
    case Core::kAiCpu: return "AI_CPU";
  }
  return "AI_CORE";
}

const char* comm_kind_name(CommKind k) {
  switch (k) {
    case CommKind::kAllReduce: return "allReduce";
    case CommKind::kAllGather: return "allGather";
    case CommKind::kReduceScatter: return "reduceScatter";
    case CommKind::kBroadcast: return "broadcast";
    case CommKind::kAllToAllV: return "alltoallv";
    case CommKind::kSend: return "send";
    case CommKind::kReceive: return "receive";
  }
  return "allReduce";
}

const char* comm_torch_op(CommKind k) {
  switch (k) {
    case CommKind::kAllReduce: return "c10d::allreduce_";
    case CommKind::kAllGather: return "c10d::_allgather_base_";
    case CommKind::kReduceScatter: return "c10d::_reduce_scatter_base_";
    case CommKind::kBroadcast: return "c10d::broadcast_";
    case CommKind::kAllToAllV: return "c10d::alltoall_base_";
    case CommKind::kSend: return "c10d::send";
    case CommKind::kReceive: return "c10d::recv_";
  }
  return "c10d::allreduce_";
}

namespace {

constexpr int64_t kUs = 1000;

std::string rep(std::string_view item, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    if (i) s += ';';
    s += item;
  }
  return s;
}

int tensor_count(const std::string& shapes) {
  return static_cast<int>(std::count(shapes.begin(), shapes.end(), ';')) + 1;
}

std::string S(int64_t v) { return std::to_string(v); }

/// Pipeline profiles (thousandths): cube-bound, vector-bound, mixed.
enum class Profile { kCube, kVector, kMix, kCpu };

KernelSpec make_kernel(std::string name, std::string type, std::string aten, std::string acl, Core core, double us,
                       std::string in_shapes, std::string out_shapes, Profile profile) {
  KernelSpec k;
  k.name = std::move(name);
  k.type = std::move(type);
  k.aten = std::move(aten);
  k.acl = std::move(acl);
  k.core = core;
  k.base_ns = std::llround(us * kUs);
  k.in_shapes = std::move(in_shapes);
  k.out_shapes = std::move(out_shapes);
  k.in_dtypes = rep("DT_BF16", tensor_count(k.in_shapes));
  k.in_formats = rep("ND", tensor_count(k.in_shapes));
  k.out_dtypes = rep("DT_BF16", tensor_count(k.out_shapes));
  k.out_formats = rep("ND", tensor_count(k.out_shapes));
  switch (core) {
    case Core::kAiCore: k.block_dim = 20; k.mix_block_dim = 0; break;
    case Core::kAiVectorCore: k.block_dim = 40; k.mix_block_dim = 0; break;
    case Core::kMixAic: k.block_dim = 20; k.mix_block_dim = 40; break;
    case Core::kMixAiv: k.block_dim = 20; k.mix_block_dim = 40; break;
    case Core::kAiCpu: k.block_dim = 1; k.mix_block_dim = 0; break;
  }
  switch (profile) {
    // Healthy baselines (the writer jitters each ratio by +-30): cube kernels mac >= 0.5, mte2 <= 0.5,
    // scalar <= 0.2 (cube utilisation = mac ratio in %, 55..90); vector kernels vec >= 0.3, scalar <= 0.25,
    // mte2 <= 0.5. The operator faults inject values far outside these.
    case Profile::kCube: k.aic_ratio = {700, 60, 300, 380, 120}; break;
    case Profile::kVector: k.aiv_ratio = {520, 160, 410, 260}; break;
    case Profile::kMix:
      k.aic_ratio = {620, 80, 260, 400, 100};
      k.aiv_ratio = {450, 120, 350, 200};
      break;
    case Profile::kCpu: break;
  }
  return k;
}

// ---- the kernel vocabulary (names chosen to hit the reference taxonomy rules, §2.3) ----

KernelSpec rms_norm(int64_t t, int h, double us) {
  return make_kernel("aclnnRmsNorm_RmsNorm_RmsNorm", "RmsNorm", "npu::npu_rms_norm", "aclnnRmsNorm",
                     Core::kAiVectorCore, us, S(t) + "," + S(h) + ";" + S(h), S(t) + "," + S(h) + ";" + S(t),
                     Profile::kVector);
}
KernelSpec add_rms_norm(int64_t t, int h, double us) {
  auto k = make_kernel("aclnnAddRmsNorm_AddRmsNorm_AddRmsNorm", "AddRmsNorm", "npu::npu_add_rms_norm",
                       "aclnnAddRmsNorm", Core::kAiVectorCore, us,
                       S(t) + "," + S(h) + ";" + S(t) + "," + S(h) + ";" + S(h),
                       S(t) + "," + S(h) + ";" + S(t) + ";" + S(t) + "," + S(h), Profile::kVector);
  k.out_dtypes = "DT_BF16;FLOAT;DT_BF16";
  return k;
}
KernelSpec matmul(int64_t m, int64_t k_, int64_t n, double us) {
  auto k = make_kernel("aclnnMatmul_MatMulV3Common_MatMulV3", "MatMulV3", "aten::mm", "aclnnMatmul", Core::kAiCore, us,
                       S(m) + "," + S(k_) + ";" + S(k_) + "," + S(n), S(m) + "," + S(n), Profile::kCube);
  k.matmul = true;
  return k;
}
KernelSpec embedding(int64_t t, int h, int vocab, double us) {
  auto k = make_kernel("aclnnEmbedding_GatherV2_GatherV2", "GatherV2", "aten::embedding", "aclnnEmbedding",
                       Core::kAiVectorCore, us, S(vocab) + "," + S(h) + ";" + S(t), S(t) + "," + S(h), Profile::kVector);
  k.in_dtypes = "DT_BF16;INT64";
  return k;
}
KernelSpec swiglu(int64_t t, int64_t f, double us) {
  return make_kernel("aclnnSwiGlu_SwiGlu_SwiGlu", "SwiGlu", "npu::npu_swiglu", "aclnnSwiGlu", Core::kAiVectorCore, us,
                     S(t) + "," + S(2 * f), S(t) + "," + S(f), Profile::kVector);
}
KernelSpec argmax(int64_t t, int vocab, double us) {
  auto k = make_kernel("aclnnArgMax_ArgMaxV2_ArgMaxV2", "ArgMaxV2", "aten::argmax", "aclnnArgMax", Core::kAiVectorCore,
                       us, S(t) + "," + S(vocab), S(t), Profile::kVector);
  k.out_dtypes = "INT32";
  return k;
}
KernelSpec rope(int64_t t, int heads, int dim, double us) {
  auto k = make_kernel("aclnnRotaryPositionEmbedding_RotaryMul_RotaryMul", "RotaryMul", "npu::npu_rotary_mul",
                       "aclnnRotaryPositionEmbedding", Core::kAiVectorCore, us,
                       S(t) + "," + S(heads) + "," + S(dim) + ";" + S(t) + ",1," + S(dim) + ";" + S(t) + ",1," + S(dim),
                       S(t) + "," + S(heads) + "," + S(dim), Profile::kVector);
  k.attention = true;
  return k;
}
KernelSpec flash_attention(int64_t t, int heads, int kv_heads, int dim, double us) {
  auto k = make_kernel("aclnnFlashAttentionScore_FlashAttentionScore_FlashAttentionScore", "FlashAttentionScore",
                       "npu::npu_fusion_attention", "aclnnFlashAttentionScore", Core::kMixAic, us,
                       "1," + S(heads) + "," + S(t) + "," + S(dim) + ";1," + S(kv_heads) + "," + S(t) + "," + S(dim) +
                           ";1," + S(kv_heads) + "," + S(t) + "," + S(dim),
                       "1," + S(heads) + "," + S(t) + "," + S(dim) + ";1," + S(heads) + "," + S(t) + ",8", Profile::kMix);
  k.out_dtypes = "DT_BF16;FLOAT";
  k.attention = true;
  k.anchor = true;
  return k;
}
KernelSpec flash_attention_grad(int64_t t, int heads, int kv_heads, int dim, double us) {
  auto k = make_kernel("aclnnFlashAttentionScoreGrad_FlashAttentionScoreGrad_FlashAttentionScoreGrad",
                       "FlashAttentionScoreGrad", "npu::npu_fusion_attention_grad", "aclnnFlashAttentionScoreGrad",
                       Core::kMixAic, us,
                       "1," + S(heads) + "," + S(t) + "," + S(dim) + ";1," + S(kv_heads) + "," + S(t) + "," + S(dim) +
                           ";1," + S(kv_heads) + "," + S(t) + "," + S(dim) + ";1," + S(heads) + "," + S(t) + "," + S(dim),
                       "1," + S(heads) + "," + S(t) + "," + S(dim) + ";1," + S(kv_heads) + "," + S(t) + "," + S(dim) +
                           ";1," + S(kv_heads) + "," + S(t) + "," + S(dim),
                       Profile::kMix);
  k.attention = true;
  k.anchor = true;
  return k;
}
KernelSpec fused_infer_attention(int64_t t, int heads, int kv_heads, int dim, double us) {
  auto k = make_kernel("aclnnFusedInferAttentionScore_FusedInferAttentionScore_FusedInferAttentionScore",
                       "FusedInferAttentionScore", "npu::npu_fused_infer_attention_score",
                       "aclnnFusedInferAttentionScore", Core::kMixAic, us,
                       S(t) + "," + S(heads) + "," + S(dim) + ";2048,128," + S(kv_heads * dim) + ";2048,128," +
                           S(kv_heads * dim) + ";" + S(t) + ";" + S(t) + ",64",
                       S(t) + "," + S(heads) + "," + S(dim), Profile::kMix);
  k.in_dtypes = "DT_BF16;DT_BF16;DT_BF16;INT64;INT32";
  k.attention = true;
  k.anchor = true;
  return k;
}

struct MoeDims {
  int64_t t = 16;         // tokens per DP rank
  int h = 7168;
  int vocab = 129280;
  int experts_local = 8;  // routed experts per EP rank
  int topk = 8;
};

KernelSpec mla_preprocess(const MoeDims& d, double us) {
  auto k = make_kernel("aclnnMlaPreprocess_MlaPreprocess_MlaPreprocess", "MlaPreprocess", "npu::npu_mla_preprocess",
                       "aclnnMlaPreprocess", Core::kMixAic, us,
                       S(d.t) + "," + S(d.h) + ";" + S(d.h) + ";" + S(d.h) + ",2112;1536;1536,24576;" + S(d.t) +
                           ",64;" + S(d.t) + ",64;" + S(d.t),
                       S(d.t) + ",128,512;" + S(d.t) + ",128,64;2048,128,1,512;2048,128,1,64", Profile::kMix);
  k.in_dtypes = "DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_BF16;INT32";
  k.attention = true;
  k.anchor = true;
  return k;
}
KernelSpec mla_attention(const MoeDims& d, double us) {
  auto k = make_kernel("aclnnFusedInferAttentionScore_FusedInferAttentionScore_FusedInferAttentionScore",
                       "FusedInferAttentionScore", "npu::npu_fused_infer_attention_score",
                       "aclnnFusedInferAttentionScore", Core::kMixAic, us,
                       S(d.t) + ",128,512;2048,128,1,512;" + S(d.t) + ",128,64;2048,128,1,64;" + S(d.t),
                       S(d.t) + ",128,512", Profile::kMix);
  k.in_dtypes = "DT_BF16;DT_BF16;DT_BF16;DT_BF16;INT32";
  k.attention = true;
  return k;
}
KernelSpec transpose_bmm(const MoeDims& d, double us) {
  auto k = make_kernel("aclnnTransposeBatchMatMul_TransposeBatchMatMul_TransposeBatchMatMul", "TransposeBatchMatMul",
                       "npu::npu_transpose_batchmatmul", "aclnnTransposeBatchMatMul", Core::kAiCore, us,
                       S(d.t) + ",128,512;128,512,128", S(d.t) + ",128,128", Profile::kCube);
  k.attention = true;
  k.matmul = true;
  return k;
}
KernelSpec moe_gating(const MoeDims& d, double us) {
  auto k = make_kernel("aclnnMoeGatingTopK_MoeGatingTopK_MoeGatingTopK", "MoeGatingTopK", "npu::npu_moe_gating_top_k",
                       "aclnnMoeGatingTopK", Core::kAiVectorCore, us, S(d.t) + ",256;256",
                       S(d.t) + "," + S(d.topk) + ";" + S(d.t) + "," + S(d.topk) + ";" + S(d.t) + ",256", Profile::kVector);
  k.out_dtypes = "DT_BF16;INT32;FLOAT";
  return k;
}
KernelSpec moe_dispatch(const MoeDims& d) {
  auto k = make_kernel("aclnnMoeDistributeDispatchV2_MoeDistributeDispatchV2_MoeDistributeDispatchV2",
                       "MoeDistributeDispatchV2", "npu::npu_moe_distribute_dispatch_v2", "aclnnMoeDistributeDispatchV2",
                       Core::kMixAiv, 0, S(d.t) + "," + S(d.h) + ";" + S(d.t) + "," + S(d.topk),
                       S(d.t * d.topk) + "," + S(d.h) + ";" + S(d.t * d.topk) + ";" + S(d.experts_local), Profile::kMix);
  k.in_dtypes = "DT_BF16;INT32";
  k.out_dtypes = "DT_BF16;INT32;INT64";
  return k;
}
KernelSpec moe_combine(const MoeDims& d) {
  auto k = make_kernel("aclnnMoeDistributeCombineV2_MoeDistributeCombineV2_MoeDistributeCombineV2",
                       "MoeDistributeCombineV2", "npu::npu_moe_distribute_combine_v2", "aclnnMoeDistributeCombineV2",
                       Core::kMixAiv, 0, S(d.t * d.topk) + "," + S(d.h) + ";" + S(d.t) + "," + S(d.topk) + ";" + S(d.t * d.topk),
                       S(d.t) + "," + S(d.h), Profile::kMix);
  k.in_dtypes = "DT_BF16;INT32;INT32";
  return k;
}
KernelSpec grouped_matmul(const MoeDims& d, int64_t k_, int64_t n, double us) {
  auto k = make_kernel("aclnnGroupedMatmulV4_GroupedMatmul_GroupedMatmul", "GroupedMatmul", "npu::npu_grouped_matmul",
                       "aclnnGroupedMatmulV4", Core::kAiCore, us,
                       S(d.t * d.topk) + "," + S(k_) + ";" + S(d.experts_local) + "," + S(k_) + "," + S(n) + ";" +
                           S(d.experts_local),
                       S(d.t * d.topk) + "," + S(n), Profile::kCube);
  k.in_dtypes = "DT_BF16;DT_BF16;INT64";
  k.expert = true;
  k.matmul = true;
  return k;
}

// The UMDK/CAM FusedDeepMoe (moe_trace): dispatch, GMM1 + SwiGlu + quant, GMM2 and combine in one MC2
// launch of 24 AIC + 48 AIV blocks (1C2V), the kernel the MoeTracing instrumentation targets. Its
// duration comes from the in-kernel trace model (moe_trace_writer.hpp), not from base_ns.
KernelSpec fused_deep_moe(const MoeDims& d) {
  const int64_t el = d.experts_local;
  auto k = make_kernel("aclnnFusedDeepMoe_FusedDeepMoe_FusedDeepMoe", "FusedDeepMoe", "umdk::fused_deep_moe",
                       "aclnnFusedDeepMoe", Core::kMixAic, 0,
                       S(d.t) + "," + S(d.h) + ";" + S(d.t) + "," + S(d.topk) + ";" + S(el) + "," + S(d.h) + ",4096;" +
                           S(el) + ",4096;" + S(el) + ",2048," + S(d.h) + ";" + S(el) + "," + S(d.h) + ";" + S(d.t) + "," +
                           S(d.topk),
                       S(d.t) + "," + S(d.h) + ";" + S(el), Profile::kMix);
  k.in_dtypes = "DT_BF16;INT32;INT8;FLOAT;INT8;FLOAT;FLOAT";
  k.out_dtypes = "DT_BF16;INT64";
  k.block_dim = 24;  // the instrumented build's 24 AIC blocks, 48 AIV (what the 72 trace rows assume)
  k.mix_block_dim = 48;
  k.fused_moe = true;
  return k;
}

KernelSpec mla_prolog_v2(const MoeDims& d, double us) {  // split attention: the kv path as its own anchor
  auto k = make_kernel("aclnnMlaProlog_MlaPrologV2_MlaPrologV2", "MlaPrologV2", "npu::npu_mla_prolog_v2", "aclnnMlaProlog",
                       Core::kMixAic, us, S(d.t) + "," + S(d.h) + ";" + S(d.h) + ",576;2048,128,1,512;2048,128,1,64;" + S(d.t),
                       "2048,128,1,512;2048,128,1,64", Profile::kMix);
  k.in_dtypes = "DT_BF16;DT_BF16;DT_BF16;DT_BF16;INT64";
  k.attention = true;
  k.anchor = true;
  return k;
}

// ---- GLM5-like W8A8 vocabulary ----

KernelSpec dynamic_quant(int64_t t, int64_t h, double us) {
  auto k = make_kernel("aclnnDynamicQuant_DynamicQuant_DynamicQuant", "DynamicQuant", "npu::npu_dynamic_quant",
                       "aclnnDynamicQuant", Core::kAiVectorCore, us, S(t) + "," + S(h), S(t) + "," + S(h) + ";" + S(t),
                       Profile::kVector);
  k.out_dtypes = "INT8;FLOAT";
  return k;
}
KernelSpec quant_matmul(int64_t m, int64_t k_, int64_t n, double us) {
  auto k = make_kernel("aclnnQuantMatmulV4_QuantBatchMatmulV3_QuantBatchMatmulV3", "QuantBatchMatmulV3",
                       "npu::npu_quant_matmul", "aclnnQuantMatmulV4", Core::kAiCore, us,
                       S(m) + "," + S(k_) + ";" + S(k_) + "," + S(n) + ";" + S(n) + ";" + S(m), S(m) + "," + S(n),
                       Profile::kCube);
  k.in_dtypes = "INT8;INT8;FLOAT;FLOAT";
  k.matmul = true;
  return k;
}
KernelSpec mla_prolog_v3(const MoeDims& d, double us) {
  auto k = make_kernel("aclnnMlaPrologV3WeightNz_MlaPrologV3_MlaPrologV3", "MlaPrologV3", "npu::npu_mla_prolog_v3",
                       "aclnnMlaPrologV3WeightNz", Core::kMixAic, us,
                       S(d.t) + "," + S(d.h) + ";" + S(d.h) + ",2112;1536,24576;2048,128,1,512;2048,128,1,64;" + S(d.t),
                       S(d.t) + ",64,512;" + S(d.t) + ",64,64;" + S(d.t) + ",64;" + S(d.t) + ",1536", Profile::kMix);
  k.in_dtypes = "INT8;INT8;INT8;DT_BF16;DT_BF16;INT64";
  k.attention = true;
  k.anchor = true;
  return k;
}
KernelSpec lightning_indexer(const MoeDims& d, double us) {
  auto k = make_kernel("aclnnLightningIndexer_LightningIndexer_LightningIndexer", "LightningIndexer",
                       "npu::npu_lightning_indexer", "aclnnLightningIndexer", Core::kMixAic, us,
                       S(d.t) + ",64,128;2048,128,1,128;" + S(d.t) + ",64;" + S(d.t), S(d.t) + ",1,2048", Profile::kMix);
  k.in_dtypes = "DT_BF16;DT_BF16;DT_BF16;INT32";
  k.out_dtypes = "INT32";
  k.attention = true;
  return k;
}
KernelSpec kv_quant_sparse_fa(const MoeDims& d, double us) {
  auto k = make_kernel("aclnnKvQuantSparseFlashAttention_KvQuantSparseFlashAttention_KvQuantSparseFlashAttention",
                       "KvQuantSparseFlashAttention", "npu::npu_kv_quant_sparse_flash_attention",
                       "aclnnKvQuantSparseFlashAttention", Core::kMixAic, us,
                       S(d.t) + ",64,576;2048,128,1,656;" + S(d.t) + ",1,2048;" + S(d.t), S(d.t) + ",64,512", Profile::kMix);
  k.in_dtypes = "DT_BF16;INT8;INT32;INT32";
  k.attention = true;
  return k;
}
// Named so that the folded text never contains "transposebatchmatmul" (that token would also add
// attention.mla.v_up_proj): the category is attention.sparse_attn.v_up_proj only.
KernelSpec bmm_transpose(const MoeDims& d, double us) {
  auto k = make_kernel("aclnnBatchMatMulTransposeV2_BatchMatMulTransposeV2_BatchMatMulTransposeV2",
                       "BatchMatMulTransposeV2", "npu::npu_batch_matmul_transpose", "aclnnBatchMatMulTransposeV2",
                       Core::kAiCore, us, S(d.t) + ",64,512;64,512,128", S(d.t) + ",64,128", Profile::kCube);
  k.attention = true;
  k.matmul = true;
  return k;
}

// ---- interior_island fragment kernels ----

KernelSpec apply_top_k_top_p(int64_t t, int vocab, double us) {
  auto k = make_kernel("aclnnApplyTopKTopP_ApplyTopKTopP_ApplyTopKTopP", "ApplyTopKTopP", "npu::npu_apply_top_k_top_p",
                       "aclnnApplyTopKTopP", Core::kAiVectorCore, us, S(t) + "," + S(vocab) + ";" + S(t) + ";" + S(t),
                       S(t) + "," + S(vocab), Profile::kVector);
  k.in_dtypes = "DT_BF16;INT32;DT_BF16";
  return k;
}

// ---- program builder ----

class Builder {
 public:
  Builder(std::vector<KernelSpec>& kernels, StepProgram& p) : kernels_(kernels), p_(p) { p_.segments.emplace_back(); }

  void begin_layer(std::string role, std::string kind, int microbatch = -1) {
    p_.layers.push_back({std::move(role), std::move(kind), microbatch});
    layer_ = static_cast<int16_t>(p_.layers.size() - 1);
    first_ = true;
  }
  /// Later kernels stay in the current layer (epilogue rows belong to the last layer) until the next begin_layer.
  void outside_layers() { layer_ = -1; }
  /// Later kernels and collectives run in nn.Module part `m` (with_modules), until the next call.
  void module(ModulePart m) { module_ = m; }
  void kernel(KernelSpec k, double scale = 1.0) {
    k.layer = layer_;
    k.module = module_;
    k.layer_first = layer_ >= 0 && first_;
    if (layer_ >= 0) first_ = false;
    k.base_ns = std::llround(static_cast<double>(k.base_ns) * scale);
    kernels_.push_back(std::move(k));
    p_.segments.back().kernels.push_back(static_cast<int>(kernels_.size() - 1));
  }
  void collective(GroupKind g, CommKind c, int64_t bytes, double transit_us, bool async = false) {
    SyncSpec s;
    s.kind = SyncSpec::Kind::kCollective;
    s.group = g;
    s.comm = c;
    s.async = async;
    s.bytes = bytes;
    s.base_ns = std::llround(transit_us * kUs);
    s.layer = layer_;
    s.module = module_;
    close(s);
  }
  void sync_kernel(KernelSpec k, GroupKind g, double work_us) {
    k.layer = layer_;
    k.layer_first = false;
    kernels_.push_back(std::move(k));
    SyncSpec s;
    s.kind = SyncSpec::Kind::kSyncKernel;
    s.group = g;
    s.kernel = static_cast<int>(kernels_.size() - 1);
    s.base_ns = std::llround(work_us * kUs);
    s.layer = layer_;
    close(s);
  }
  void drain() {
    if (!p_.segments.back().kernels.empty() || p_.segments.back().sync.kind != SyncSpec::Kind::kNone) p_.segments.emplace_back();
    p_.segments.back().drain_comm = true;
  }
  void finish() {
    if (p_.segments.size() > 1 && p_.segments.back().kernels.empty() && !p_.segments.back().drain_comm)
      p_.segments.pop_back();
  }
  /// Ends the segment with a pipeline P2P transfer from stage `from` to stage `to` (pp communicator).
  void p2p(int from, int to, int64_t bytes, double transit_us) {
    SyncSpec s;
    s.kind = SyncSpec::Kind::kCollective;
    s.group = GroupKind::kPp;
    s.comm = CommKind::kSend;
    s.bytes = bytes;
    s.base_ns = std::llround(transit_us * kUs);
    s.layer = layer_;
    s.p2p_from = static_cast<int16_t>(from);
    s.p2p_to = static_cast<int16_t>(to);
    close(s);
  }
  /// Records the pipeline stage and model layer of the current layer.
  void tag_layer(int stage, int model_layer) {
    p_.layers.back().stage = stage;
    p_.layers.back().model_layer = model_layer;
  }
  /// interior_island inserts its fragment here (before the next kernel added).
  void island_point() {
    p_.island_seg = static_cast<int>(p_.segments.size()) - 1;
    p_.island_pos = static_cast<int>(p_.segments.back().kernels.size());
  }

 private:
  void close(const SyncSpec& s) {
    p_.segments.back().sync = s;
    p_.segments.emplace_back();
  }
  std::vector<KernelSpec>& kernels_;
  StepProgram& p_;
  ModulePart module_ = ModulePart::kNone;
  int16_t layer_ = -1;
  bool first_ = false;
};

// ---- scenarios ----

// The end of a decode step with MTP: the final norm, lm head and ArgMax close the main body (those
// rows stay in the last main layer, the reference's layer-end rule), then each MTP layer (enorm,
// hnorm, eh_proj, one transformer layer, its own head and ArgMax).
void finish_mtp_program(Scenario& sc, Builder& b, StepProgram& p, const MoeDims& d, int main_layers, int n_mtp,
                        const std::function<void(bool)>& attention, const std::function<void()>& moe_mlp) {
  b.island_point();
  b.kernel(add_rms_norm(d.t, d.h, 7));
  b.kernel(matmul(d.t, d.h, d.vocab, 70));
  b.kernel(argmax(d.t, d.vocab, 9));
  for (int m = 0; m < n_mtp; ++m) {
    b.begin_layer("speculative", "mtp");
    b.kernel(rms_norm(d.t, d.h, 5));
    b.kernel(rms_norm(d.t, d.h, 5));
    b.kernel(matmul(d.t, 2 * d.h, d.h, 20));  // eh_proj
    attention(true);
    moe_mlp();
    b.kernel(add_rms_norm(d.t, d.h, 7));
    b.kernel(matmul(d.t, d.h, d.vocab, 70));
    b.kernel(argmax(d.t, d.vocab, 9));
  }
  b.finish();
  p.main_layers = main_layers;
  p.speculative_layers = n_mtp;
  sc.programs.push_back(std::move(p));
  sc.first_program = sc.rest_program = 0;
}

void build_moe_mla_decode(Scenario& sc, int layers) {
  const int n_dense = std::min(3, layers / 5);
  const int n_moe = layers - n_dense;
  const int n_mtp = 2;
  MoeDims d;
  d.experts_local = std::max(1, 256 / std::max(1, sc.topo.ep));
  StepProgram p;
  p.kind = "decode";
  Builder b(sc.kernels, p);
  b.collective(GroupKind::kWorld, CommKind::kAllGather, 4096 * sc.topo.ranks, 18);  // DP metadata sync
  b.kernel(embedding(d.t, d.h, d.vocab, 6));

  auto attention = [&](bool first_layer) {
    if (first_layer) b.kernel(rms_norm(d.t, d.h, 6));
    else b.kernel(add_rms_norm(d.t, d.h, 7));
    if (sc.split_attention) {  // kv path, then the q path behind its own block head
      b.kernel(mla_prolog_v2(d, 18));
      auto head = add_rms_norm(d.t, d.h, 5);
      head.attention = true;
      b.kernel(head);
      b.kernel(mla_preprocess(d, 30));
    } else {
      b.kernel(mla_preprocess(d, 42));
    }
    b.kernel(mla_attention(d, 31));
    b.kernel(transpose_bmm(d, 10));
    b.kernel(matmul(d.t, 16384, d.h, 24));
    b.kernel(add_rms_norm(d.t, d.h, 7));
  };
  auto moe_mlp = [&]() {
    b.kernel(moe_gating(d, 9));
    if (!sc.moe_trace.empty()) {
      // the instrumented build: one FusedDeepMoe row replaces dispatch, both expert GEMMs, the routed
      // SwiGlu (fused into GMM1) and combine. Not a sync point of the simulator: the EP coupling it has
      // (peers waiting in the combine for a late rank) is part of its in-kernel trace model.
      b.kernel(fused_deep_moe(d));
      b.kernel(matmul(d.t, d.h, 4096, 14));  // shared expert
      b.kernel(swiglu(d.t, 2048, 4));
      b.kernel(matmul(d.t, 2048, d.h, 11));
      return;
    }
    b.sync_kernel(moe_dispatch(d), GroupKind::kEp, 26);
    b.kernel(grouped_matmul(d, d.h, 4096, 48));
    b.kernel(swiglu(d.t * d.topk, 2048, 5));
    b.kernel(grouped_matmul(d, 2048, d.h, 36));
    b.sync_kernel(moe_combine(d), GroupKind::kEp, 28);
    b.kernel(matmul(d.t, d.h, 4096, 14));  // shared expert
    b.kernel(swiglu(d.t, 2048, 4));
    b.kernel(matmul(d.t, 2048, d.h, 11));
  };
  for (int l = 0; l < n_dense; ++l) {
    b.begin_layer("main", "dense");
    attention(l == 0);
    b.kernel(matmul(d.t, d.h, 36864, 55));
    b.kernel(swiglu(d.t, 18432, 8));
    b.kernel(matmul(d.t, 18432, d.h, 40));
  }
  for (int l = 0; l < n_moe; ++l) {
    b.begin_layer("main", "moe");
    attention(n_dense == 0 && l == 0);
    moe_mlp();
  }
  finish_mtp_program(sc, b, p, d, n_dense + n_moe, n_mtp, attention, moe_mlp);
}

void build_glm5_mtp(Scenario& sc, int layers) {
  const int n_dense = layers >= 8 ? 3 : layers / 5;
  const int n_moe = layers - n_dense;
  const int n_mtp = 3;
  MoeDims d;
  d.h = 6144;
  d.vocab = 154880;
  d.experts_local = std::max(1, 256 / std::max(1, sc.topo.ep));
  StepProgram p;
  p.kind = "decode";
  Builder b(sc.kernels, p);
  b.collective(GroupKind::kWorld, CommKind::kAllGather, 4096 * sc.topo.ranks, 18);  // DP metadata sync
  b.kernel(embedding(d.t, d.h, d.vocab, 6));

  auto attention = [&](bool first_layer) {
    if (first_layer) b.kernel(rms_norm(d.t, d.h, 6));
    else b.kernel(add_rms_norm(d.t, d.h, 7));
    b.kernel(dynamic_quant(d.t, d.h, 4));
    b.kernel(mla_prolog_v3(d, 45));
    b.kernel(lightning_indexer(d, 18));
    b.kernel(kv_quant_sparse_fa(d, 30));
    b.kernel(bmm_transpose(d, 10));
    b.kernel(dynamic_quant(d.t, 8192, 4));
    b.kernel(quant_matmul(d.t, 8192, d.h, 20));  // o_proj
    b.kernel(add_rms_norm(d.t, d.h, 7));
  };
  auto moe_mlp = [&]() {
    b.kernel(moe_gating(d, 9));
    b.sync_kernel(moe_dispatch(d), GroupKind::kEp, 26);  // quantises the tokens (W8A8)
    b.kernel(grouped_matmul(d, d.h, 4096, 44));
    b.kernel(swiglu(d.t * d.topk, 2048, 5));
    b.kernel(dynamic_quant(d.t * d.topk, 2048, 4));
    b.kernel(grouped_matmul(d, 2048, d.h, 32));
    b.sync_kernel(moe_combine(d), GroupKind::kEp, 28);
    b.kernel(dynamic_quant(d.t, d.h, 3));  // shared expert
    b.kernel(quant_matmul(d.t, d.h, 4096, 10));
    b.kernel(swiglu(d.t, 2048, 4));
    b.kernel(dynamic_quant(d.t, 2048, 3));
    b.kernel(quant_matmul(d.t, 2048, d.h, 8));
  };
  for (int l = 0; l < n_dense; ++l) {
    b.begin_layer("main", "dense");
    attention(l == 0);
    b.kernel(dynamic_quant(d.t, d.h, 4));
    b.kernel(quant_matmul(d.t, d.h, 24576, 40));
    b.kernel(swiglu(d.t, 12288, 8));
    b.kernel(dynamic_quant(d.t, 12288, 4));
    b.kernel(quant_matmul(d.t, 12288, d.h, 30));
  }
  for (int l = 0; l < n_moe; ++l) {
    b.begin_layer("main", "moe");
    attention(n_dense == 0 && l == 0);
    moe_mlp();
  }
  finish_mtp_program(sc, b, p, d, n_dense + n_moe, n_mtp, attention, moe_mlp);
}

void build_dense_program(Scenario& sc, int layers, bool prefill) {
  const int tp = sc.topo.tp;
  const int h = 4096, heads = 32 / tp, kv = std::max(1, 8 / tp), dim = 128, vocab = 152064;
  const int64_t ffn = 12288 / tp;
  const int64_t t = prefill ? 2048 : 32;
  const double s = prefill ? 22.0 : 1.0;  // compute grows with tokens
  StepProgram p;
  p.kind = prefill ? "prefill" : "decode";
  Builder b(sc.kernels, p);
  b.collective(GroupKind::kTp, CommKind::kBroadcast, 4096, 14);  // scheduler metadata from TP rank 0
  b.kernel(embedding(t, h, vocab, 5), prefill ? 8.0 : 1.0);
  const int64_t ar_bytes = t * h * 2;
  const double ar_us = 8 + static_cast<double>(ar_bytes) / 1.0e6 * 40;  // ~25 GB/s effective
  for (int l = 0; l < layers; ++l) {
    b.begin_layer("main", p.kind);
    if (l == 0) b.kernel(rms_norm(t, h, 6), prefill ? 12.0 : 1.0);
    else b.kernel(add_rms_norm(t, h, 6), prefill ? 12.0 : 1.0);
    b.kernel(matmul(t, h, (heads + 2 * kv) * dim, 16), s);
    b.kernel(rope(t, heads + kv, dim, 5), prefill ? 10.0 : 1.0);
    if (prefill) b.kernel(flash_attention(t, heads, kv, dim, 760));
    else b.kernel(fused_infer_attention(t, heads, kv, dim, 25));
    b.kernel(matmul(t, heads * dim, h, 12), s);
    b.collective(GroupKind::kTp, CommKind::kAllReduce, ar_bytes, ar_us);
    b.kernel(add_rms_norm(t, h, 6), prefill ? 12.0 : 1.0);
    b.kernel(matmul(t, h, 2 * ffn, 28), s);
    b.kernel(swiglu(t, ffn, 5), prefill ? 14.0 : 1.0);
    b.kernel(matmul(t, ffn, h, 20), s);
    b.collective(GroupKind::kTp, CommKind::kAllReduce, ar_bytes, ar_us);
  }
  b.island_point();
  b.kernel(add_rms_norm(t, h, 6), prefill ? 12.0 : 1.0);
  b.kernel(matmul(prefill ? 1 : t, h, vocab / tp, 45));
  b.kernel(argmax(prefill ? 1 : t, vocab / tp, 8));
  b.finish();
  p.main_layers = layers;
  sc.programs.push_back(std::move(p));
}

// Training layer bodies shared by the plain and the pipeline-parallel programs.
struct TrainModel {
  int tp = 1;
  bool has_dp = false;
  int h = 4096, heads = 32, kv = 8, dim = 128, vocab = 151936;
  int64_t t = 4096, ffn = 11008;
  int64_t ar_bytes = 0;
  double ar_us = 0;
  int64_t bucket_bytes = int64_t{48} << 20;  // gradient bucket per layer

  explicit TrainModel(const Topology& topo) : tp(topo.tp), has_dp(topo.dp > 1) {
    heads = 32 / tp;
    kv = std::max(1, 8 / tp);
    ffn = 11008 / tp;
    ar_bytes = t * h * 2;
    ar_us = 40 + static_cast<double>(ar_bytes) / 1.0e6 * 22;  // ~45 GB/s effective
  }
  // Megatron's get_batch broadcasts the microbatch over the TP group before the embedding; the row also
  // takes the device gap at a step start, so the first kernel of a step does not look starved.
  void embed(Builder& b) const {
    if (tp > 1) b.collective(GroupKind::kTp, CommKind::kBroadcast, t * 8 * 4, 14);
    b.module(ModulePart::kModel);  // the model's forward starts at its embedding (get_batch is outside)
    b.kernel(embedding(t, h, vocab, 60));
  }
  // Module parts (with_modules): the norms are the layer's own, attention from the QKV projection to
  // its TP allReduce (Megatron's row-parallel output), the MLP from the up projection to its allReduce.
  void forward_layer(Builder& b, bool first_layer) const {
    b.module(ModulePart::kLayer);
    if (first_layer) b.kernel(rms_norm(t, h, 70));
    else b.kernel(add_rms_norm(t, h, 80));
    b.module(ModulePart::kAttention);
    b.kernel(matmul(t, h, (heads + 2 * kv) * dim, 420));
    b.kernel(rope(t, heads + kv, dim, 60));
    b.kernel(flash_attention(t, heads, kv, dim, 950));
    b.kernel(matmul(t, heads * dim, h, 280));
    b.collective(GroupKind::kTp, CommKind::kAllReduce, ar_bytes, ar_us);
    b.module(ModulePart::kLayer);
    b.kernel(add_rms_norm(t, h, 80));
    b.module(ModulePart::kMlp);
    b.kernel(matmul(t, h, 2 * ffn, 700));
    b.kernel(swiglu(t, ffn, 120));
    b.kernel(matmul(t, ffn, h, 650));
    b.collective(GroupKind::kTp, CommKind::kAllReduce, ar_bytes, ar_us);
    b.module(ModulePart::kNone);  // what follows the last layer (final norm, loss) is outside the modules
  }
  void loss(Builder& b) const {  // final norm, lm head, loss and the lm head's gradients
    b.kernel(rms_norm(t, h, 70));
    b.kernel(matmul(t, h, vocab / tp, 900));
    b.kernel(make_kernel("aclnnCrossEntropyLoss_SoftmaxCrossEntropyWithLogits_SoftmaxCrossEntropyWithLogits",
                         "SoftmaxCrossEntropyWithLogits", "aten::cross_entropy_loss", "aclnnCrossEntropyLoss",
                         Core::kAiVectorCore, 200, S(t) + "," + S(vocab / tp) + ";" + S(t), S(t) + ";" + S(t) + "," + S(vocab / tp),
                         Profile::kVector));
    b.kernel(matmul(t, vocab / tp, h, 900));  // lm_head dgrad
    b.kernel(matmul(h, t, vocab / tp, 900));  // lm_head wgrad
  }
  KernelSpec rms_norm_grad() const {
    return make_kernel("aclnnRmsNormGrad_RmsNormGrad_RmsNormGrad", "RmsNormGrad", "npu::npu_rms_norm_backward",
                       "aclnnRmsNormGrad", Core::kAiVectorCore, 120,
                       S(t) + "," + S(h) + ";" + S(t) + "," + S(h) + ";" + S(t) + ";" + S(h), S(t) + "," + S(h) + ";" + S(h),
                       Profile::kVector);
  }
  void backward_layer(Builder& b, bool reduce_bucket) const {
    b.kernel(rms_norm(t, h, 30));  // recomputed norm input of the MLP block
    b.kernel(matmul(t, h, ffn, 650));
    b.kernel(matmul(ffn, t, h, 650));
    b.kernel(make_kernel("aclnnSwiGluGrad_SwiGluGrad_SwiGluGrad", "SwiGluGrad", "npu::npu_swiglu_backward",
                         "aclnnSwiGluGrad", Core::kAiVectorCore, 150, S(t) + "," + S(ffn) + ";" + S(t) + "," + S(2 * ffn),
                         S(t) + "," + S(2 * ffn), Profile::kVector));
    b.kernel(matmul(t, 2 * ffn, h, 700));
    b.kernel(matmul(h, t, 2 * ffn, 700));
    b.collective(GroupKind::kTp, CommKind::kAllReduce, ar_bytes, ar_us);
    b.kernel(rms_norm_grad());
    b.kernel(matmul(t, h, heads * dim, 280));
    b.kernel(matmul(heads * dim, t, h, 280));
    b.kernel(flash_attention_grad(t, heads, kv, dim, 1800));
    auto rg = rope(t, heads + kv, dim, 60);
    rg.name = "aclnnRotaryPositionEmbeddingGrad_RotaryMulGrad_RotaryMulGrad";
    rg.type = "RotaryMulGrad";
    rg.aten = "npu::npu_rotary_mul_backward";
    rg.acl = "aclnnRotaryPositionEmbeddingGrad";
    b.kernel(rg);
    b.kernel(matmul(t, (heads + 2 * kv) * dim, h, 420));
    b.kernel(matmul(h, t, (heads + 2 * kv) * dim, 420));
    b.collective(GroupKind::kTp, CommKind::kAllReduce, ar_bytes, ar_us);
    b.kernel(rms_norm_grad());
    if (reduce_bucket && has_dp)  // gradient bucket of this layer is ready: reduce it behind the next layers' backward
      b.collective(GroupKind::kDp, CommKind::kReduceScatter, bucket_bytes, 60 + static_cast<double>(bucket_bytes) / 1.0e6 * 30,
                   /*async=*/true);
  }
  void optimizer(Builder& b, int layers) const {
    b.outside_layers();
    b.drain();
    for (int l = 0; l <= layers; ++l)
      b.kernel(make_kernel("aclnnApplyAdamWV2_ApplyAdamWV2_ApplyAdamWV2", "ApplyAdamWV2", "npu::npu_apply_adam_w",
                           "aclnnApplyAdamWV2", Core::kAiVectorCore, 260, "25165824;25165824;25165824;25165824;1",
                           "25165824;25165824;25165824", Profile::kVector));
    if (has_dp)
      b.collective(GroupKind::kDp, CommKind::kAllGather, bucket_bytes * layers,
                   80 + static_cast<double>(bucket_bytes * layers) / 1.0e6 * 25);
  }
};

void build_training(Scenario& sc, int layers, int microbatches) {
  const TrainModel m(sc.topo);
  StepProgram p;
  p.kind = "train";
  Builder b(sc.kernels, p);
  for (int mb = 0; mb < microbatches; ++mb) {
    b.outside_layers();
    m.embed(b);
    for (int l = 0; l < layers; ++l) {
      b.begin_layer("forward", "train", mb);
      m.forward_layer(b, l == 0);
    }
    m.loss(b);
    const bool last_mb = mb + 1 == microbatches;
    for (int l = layers - 1; l >= 0; --l) {
      b.begin_layer("backward", "train", mb);
      m.backward_layer(b, last_mb);
    }
  }
  m.optimizer(b, layers);
  b.finish();
  p.main_layers = 2 * layers * microbatches;
  sc.programs.push_back(std::move(p));
  sc.first_program = sc.rest_program = 0;
}

// Pipeline-parallel training (1F1B). Each stage's program is built on its own, in execution order,
// with its P2P transfers as sync points; the stage programs are then merged into the one global
// segment list the simulator runs (a segment belongs to one stage; a P2P segment to two), in an
// order that respects every stage's own order and meets each transfer on both sides at once.
// Combined ops (send_forward_recv_backward, send_backward_recv_forward) may complete in any order,
// like the batched isend/irecv they are, which keeps the merge deadlock-free.
Status build_training_pp(Scenario& sc, int layers, int microbatches) {
  const TrainModel m(sc.topo);
  const int P = sc.topo.pp, M = microbatches, L = layers / P;
  const int64_t act_bytes = m.t * m.h * 2;
  const double act_us = 30 + static_cast<double>(act_bytes) / 1.0e6 * 20;
  struct Transfer {
    int id = -1;     // F(s, mb) = (0 * P + s) * M + mb, B(s, mb) = (1 * P + s) * M + mb: the link s <-> s+1
    int batch = -1;  // transfers of one combined op share a batch number
  };
  struct StageProgram {
    StepProgram prog;
    std::vector<Transfer> transfer;  // per segment
  };
  std::vector<StageProgram> stages(static_cast<size_t>(P));
  for (int s = 0; s < P; ++s) {
    StageProgram& st = stages[static_cast<size_t>(s)];
    Builder b(sc.kernels, st.prog);
    int batch = 0;
    auto p2p = [&](bool forward, bool send, int mb, bool same_batch) {
      const int from = forward ? (send ? s : s - 1) : (send ? s : s + 1);
      const int to = forward ? from + 1 : from - 1;
      const int link = std::min(from, to);
      st.transfer.resize(st.prog.segments.size());
      if (!same_batch) ++batch;
      st.transfer.back() = {((forward ? 0 : 1) * P + link) * M + mb, batch};
      b.p2p(from, to, act_bytes, act_us);
    };
    auto forward = [&](int mb) {
      if (s == 0) {
        b.outside_layers();
        m.embed(b);
      }
      for (int l = s * L; l < (s + 1) * L; ++l) {
        b.begin_layer("forward", "train", mb);
        b.tag_layer(s, l);
        m.forward_layer(b, l == 0);
      }
      if (s == P - 1) m.loss(b);
    };
    auto backward = [&](int mb) {
      for (int l = (s + 1) * L - 1; l >= s * L; --l) {
        b.begin_layer("backward", "train", mb);
        b.tag_layer(s, l);
        m.backward_layer(b, mb + 1 == M);
      }
    };
    const bool first = s == 0, last = s == P - 1;
    const int warmup = std::min(P - s - 1, M), remaining = M - warmup;
    for (int i = 0; i < warmup; ++i) {
      if (!first) p2p(true, false, i, false);  // recv_forward
      forward(i);
      if (!last) p2p(true, true, i, false);    // send_forward
    }
    if (remaining > 0 && !first) p2p(true, false, warmup, false);
    for (int j = 0; j < remaining; ++j) {
      forward(warmup + j);
      if (!last) {  // send_forward_recv_backward
        p2p(true, true, warmup + j, false);
        p2p(false, false, j, true);
      }
      backward(j);
      if (!first) {
        p2p(false, true, j, false);                                          // send_backward ...
        if (j + 1 < remaining) p2p(true, false, warmup + j + 1, true);       // ... recv_forward
      }
    }
    for (int i = remaining; i < M; ++i) {
      if (!last) p2p(false, false, i, false);  // recv_backward
      backward(i);
      if (!first) p2p(false, true, i, false);  // send_backward
    }
    m.optimizer(b, L);
    b.finish();
    st.transfer.resize(st.prog.segments.size());
  }

  // layer indices: stage-major, each stage's layers in its execution (= row) order
  StepProgram p;
  p.kind = "train";
  std::vector<int> offset(static_cast<size_t>(P), 0);
  for (int s = 0; s < P; ++s) {
    offset[static_cast<size_t>(s)] = static_cast<int>(p.layers.size());
    for (const LayerInfo& l : stages[static_cast<size_t>(s)].prog.layers) p.layers.push_back(l);
  }
  auto remap = [&](Segment& seg, int s) {
    const auto off = static_cast<int16_t>(offset[static_cast<size_t>(s)]);
    for (const int k : seg.kernels)
      if (sc.kernels[static_cast<size_t>(k)].layer >= 0) sc.kernels[static_cast<size_t>(k)].layer += off;
    if (seg.sync.kind == SyncSpec::Kind::kSyncKernel && sc.kernels[static_cast<size_t>(seg.sync.kernel)].layer >= 0)
      sc.kernels[static_cast<size_t>(seg.sync.kernel)].layer += off;
    if (seg.sync.layer >= 0) seg.sync.layer += off;
  };
  for (int s = 0; s < P; ++s)
    for (Segment& seg : stages[static_cast<size_t>(s)].prog.segments) remap(seg, s);

  std::vector<size_t> pos(static_cast<size_t>(P), 0);
  auto is_p2p = [&](int s, size_t i) {
    return stages[static_cast<size_t>(s)].transfer[i].id >= 0;
  };
  auto done = [&]() {
    for (int s = 0; s < P; ++s)
      if (pos[static_cast<size_t>(s)] < stages[static_cast<size_t>(s)].prog.segments.size()) return false;
    return true;
  };
  while (!done()) {
    bool progress = false;
    for (int s = 0; s < P; ++s) {  // run every stage up to its next transfer
      auto& segs = stages[static_cast<size_t>(s)].prog.segments;
      size_t& i = pos[static_cast<size_t>(s)];
      while (i < segs.size()) {
        Segment& seg = segs[i];
        if (!seg.kernels.empty() || (!is_p2p(s, i) && (seg.sync.kind != SyncSpec::Kind::kNone || seg.drain_comm))) {
          Segment out = seg;
          out.stage = static_cast<int16_t>(s);
          if (is_p2p(s, i)) out.sync = SyncSpec{};
          p.segments.push_back(std::move(out));
          seg.kernels.clear();
          seg.drain_comm = false;
          progress = true;
        }
        if (is_p2p(s, i)) break;
        ++i;
      }
    }
    // fire one transfer both sides are waiting at (any member of a combined op)
    bool fired = false;
    for (int s = 0; s < P && !fired; ++s) {
      auto& st = stages[static_cast<size_t>(s)];
      const size_t i = pos[static_cast<size_t>(s)];
      for (size_t c = i; !fired && c < st.prog.segments.size() && is_p2p(s, c) && st.transfer[c].batch == st.transfer[i].batch;
           ++c) {
        const SyncSpec& sync = st.prog.segments[c].sync;
        const int q = sync.p2p_from == s ? sync.p2p_to : sync.p2p_from;
        auto& pt = stages[static_cast<size_t>(q)];
        const size_t j = pos[static_cast<size_t>(q)];
        for (size_t d = j; d < pt.prog.segments.size() && is_p2p(q, d) && pt.transfer[d].batch == pt.transfer[j].batch; ++d) {
          if (pt.transfer[d].id != st.transfer[c].id) continue;
          Segment out;
          out.sync = sync;
          p.segments.push_back(std::move(out));
          // take the fired transfer out of both stages' pending combined ops
          std::rotate(st.prog.segments.begin() + static_cast<std::ptrdiff_t>(i), st.prog.segments.begin() + static_cast<std::ptrdiff_t>(c),
                      st.prog.segments.begin() + static_cast<std::ptrdiff_t>(c) + 1);
          std::rotate(st.transfer.begin() + static_cast<std::ptrdiff_t>(i), st.transfer.begin() + static_cast<std::ptrdiff_t>(c),
                      st.transfer.begin() + static_cast<std::ptrdiff_t>(c) + 1);
          std::rotate(pt.prog.segments.begin() + static_cast<std::ptrdiff_t>(j), pt.prog.segments.begin() + static_cast<std::ptrdiff_t>(d),
                      pt.prog.segments.begin() + static_cast<std::ptrdiff_t>(d) + 1);
          std::rotate(pt.transfer.begin() + static_cast<std::ptrdiff_t>(j), pt.transfer.begin() + static_cast<std::ptrdiff_t>(d),
                      pt.transfer.begin() + static_cast<std::ptrdiff_t>(d) + 1);
          ++pos[static_cast<size_t>(s)];
          ++pos[static_cast<size_t>(q)];
          fired = true;
          break;
        }
      }
    }
    if (!fired && !progress) return Status(ErrorCode::kInternal, "pipeline schedule deadlocked while merging stages");
  }
  p.main_layers = 2 * L * M;
  sc.programs.push_back(std::move(p));
  sc.first_program = sc.rest_program = 0;
  return {};
}

// ---- topology ----

void add_group(Topology& t, GroupKind kind, const char* group_name, std::vector<int> ranks) {
  CommGroup g;
  g.comm_name = "group_name_" + std::to_string(t.groups.size());
  g.group_name = group_name;
  g.kind = kind;
  std::sort(ranks.begin(), ranks.end());
  g.ranks = std::move(ranks);
  g.hash = double_hash(g.comm_name);
  const int idx = static_cast<int>(t.groups.size());
  auto& of = t.group_of[static_cast<size_t>(kind)];
  for (const int r : g.ranks) of[static_cast<size_t>(r)] = idx;
  t.slot.push_back(static_cast<int>(t.kind_groups[static_cast<size_t>(kind)].size()));
  t.kind_groups[static_cast<size_t>(kind)].push_back(idx);
  t.groups.push_back(std::move(g));
}

Topology make_topology(int ranks, int tp, bool moe, int pp = 1) {
  Topology t;
  t.ranks = ranks;
  t.tp = moe ? 1 : tp;
  t.pp = pp;
  t.dp = ranks / (t.tp * pp);
  t.ep = moe ? ranks : 1;
  t.stage.assign(static_cast<size_t>(ranks), 0);
  for (int r = 0; r < ranks; ++r) t.stage[static_cast<size_t>(r)] = r / (t.tp * t.dp);
  for (auto& v : t.group_of) v.assign(static_cast<size_t>(ranks), -1);
  std::vector<int> all(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) all[static_cast<size_t>(r)] = r;
  add_group(t, GroupKind::kWorld, "default_group", all);
  if (moe) {
    add_group(t, GroupKind::kEp, "ep", all);
    return t;
  }
  const int per_stage = t.tp * t.dp;  // Megatron order: TP fastest, then DP, then the pipeline stage
  for (int s = 0; s < pp; ++s)
    for (int d = 0; d < t.dp; ++d) {  // TP groups are consecutive ranks
      std::vector<int> g;
      for (int k = 0; k < t.tp; ++k) g.push_back(s * per_stage + d * t.tp + k);
      add_group(t, GroupKind::kTp, "tp", g);
    }
  for (int s = 0; s < pp; ++s)
    for (int k = 0; k < t.tp; ++k) {
      std::vector<int> g;
      for (int d = 0; d < t.dp; ++d) g.push_back(s * per_stage + d * t.tp + k);
      add_group(t, GroupKind::kDp, "dp", g);
    }
  if (pp > 1)
    for (int i = 0; i < per_stage; ++i) {
      std::vector<int> g;
      for (int s = 0; s < pp; ++s) g.push_back(s * per_stage + i);
      add_group(t, GroupKind::kPp, "pp", g);
    }
  return t;
}

Status invalid(std::string msg) { return Status(ErrorCode::kInvalidArgument, std::move(msg)); }

// The interior_island fragment: a block head, an anchor of the rank's anchor kind, then kernels with
// roles that no normal layer of the scenario has (sampling / aicpu, or aicpu / moe for dense_gqa).
void add_island_kernels(Scenario& sc, bool moe) {
  MoeDims d;
  auto add = [&](KernelSpec k, std::vector<int>& to) {
    k.layer = -1;
    sc.kernels.push_back(std::move(k));
    to.push_back(static_cast<int>(sc.kernels.size() - 1));
  };
  for (int dummy = 0; dummy < 2; ++dummy) {
    std::vector<int>& to = dummy ? sc.island_kernels_dummy : sc.island_kernels;
    if (moe) {
      add(add_rms_norm(d.t, d.h, 7), to);
      if (dummy) add(moe_gating(d, 9), to);
      else add(mla_preprocess(d, 42), to);
      add(apply_top_k_top_p(d.t, d.vocab, 15), to);
      to.push_back(sc.aicpu_kernel);
    } else {
      const int64_t t = 32;
      add(add_rms_norm(t, 4096, 6), to);
      if (dummy) add(matmul(t, 4096, 4096, 12), to);
      else add(fused_infer_attention(t, 16, 4, 128, 25), to);
      to.push_back(sc.aicpu_kernel);
      MoeDims g;
      g.t = t;
      add(moe_gating(g, 9), to);
    }
  }
}

}  // namespace

std::vector<std::string> scenario_names() { return {"dense_gqa", "glm5_mtp", "moe_mla_decode", "training"}; }

std::vector<std::string> fault_names() {
  return {"aicpu_fallback",  "block_dim_one",    "clock_offset",    "cube_underused",  "ep_imbalance",
          "exposed_aicpu",   "host_bound",       "host_sync_heavy", "idle_bubble",     "interior_island",
          "moe_recv_starved", "moe_slow_expert", "slow_collective", "slow_rank",       "throttled_cores",
          "vector_scalar_heavy"};
}

Result<Fault> parse_fault(std::string_view spec, int ranks, int steps) {
  const std::string text(spec);
  std::string_view parts[3];
  int n = 0;
  size_t pos = 0;
  while (n < 3) {
    const size_t c = spec.find(':', pos);
    parts[n++] = spec.substr(pos, c == std::string_view::npos ? std::string_view::npos : c - pos);
    if (c == std::string_view::npos) break;
    pos = c + 1;
    if (n == 3) return invalid("fault '" + text + "': expected NAME[:RANK[:MAGNITUDE]]");
  }
  Fault f;
  f.name = std::string(parts[0]);
  struct Def { const char* name; FaultKind kind; double magnitude; };
  static constexpr Def kDefs[] = {
      {"slow_rank", FaultKind::kSlowRank, 2.0},       {"ep_imbalance", FaultKind::kEpImbalance, 4.0},
      {"slow_collective", FaultKind::kSlowCollective, 8.0}, {"idle_bubble", FaultKind::kIdleBubble, 5000.0},
      {"exposed_aicpu", FaultKind::kExposedAicpu, 120.0}, {"host_bound", FaultKind::kHostBound, 8.0},
      {"clock_offset", FaultKind::kClockOffset, 20000.0}, {"interior_island", FaultKind::kInteriorIsland, 1.0},
      {"vector_scalar_heavy", FaultKind::kVectorScalarHeavy, 1.0}, {"cube_underused", FaultKind::kCubeUnderused, 1.0},
      {"aicpu_fallback", FaultKind::kAicpuFallback, 1.0}, {"block_dim_one", FaultKind::kBlockDimOne, 1.0},
      {"host_sync_heavy", FaultKind::kHostSyncHeavy, 1.0}, {"throttled_cores", FaultKind::kThrottledCores, 1000.0},
      {"moe_slow_expert", FaultKind::kMoeSlowExpert, 3.0}, {"moe_recv_starved", FaultKind::kMoeRecvStarved, 4.0}};
  const Def* def = nullptr;
  for (const auto& d : kDefs)
    if (f.name == d.name) def = &d;
  if (def == nullptr) {
    std::string known;
    for (const auto& k : fault_names()) known += (known.empty() ? "" : ", ") + k;
    return invalid("unknown fault '" + f.name + "' (known: " + known + ")");
  }
  f.kind = def->kind;
  f.magnitude = def->magnitude;
  f.rank = ranks > 1 ? 1 : 0;
  if (n >= 2 && !parts[1].empty()) {
    int r = -1;
    const auto res = std::from_chars(parts[1].data(), parts[1].data() + parts[1].size(), r);
    if (res.ec != std::errc() || res.ptr != parts[1].data() + parts[1].size() || r < 0 || r >= ranks)
      return invalid("fault '" + text + "': rank must be an integer in [0, " + std::to_string(ranks - 1) + "]");
    f.rank = r;
  }
  if (n >= 3) {
    double m = 0;
    const auto res = std::from_chars(parts[2].data(), parts[2].data() + parts[2].size(), m);
    if (res.ec != std::errc() || res.ptr != parts[2].data() + parts[2].size() || !(m > 0) || !std::isfinite(m))
      return invalid("fault '" + text + "': magnitude must be a positive number");
    if ((f.kind == FaultKind::kSlowRank || f.kind == FaultKind::kEpImbalance || f.kind == FaultKind::kSlowCollective ||
         f.kind == FaultKind::kHostBound || f.kind == FaultKind::kMoeSlowExpert || f.kind == FaultKind::kMoeRecvStarved) &&
        m < 1.0)
      return invalid("fault '" + text + "': a slow-down factor must be >= 1");
    if (f.kind == FaultKind::kThrottledCores && m >= kNominalAicoreMhz)
      return invalid("fault '" + text + "': the throttled AI Core clock must be below " +
                     std::to_string(static_cast<int>(kNominalAicoreMhz)) + " MHz");
    f.magnitude = m;
    f.magnitude_given = true;
  }
  if (f.kind == FaultKind::kIdleBubble || f.kind == FaultKind::kInteriorIsland) f.steps = {steps / 2};
  return f;
}

Result<std::vector<int>> parse_rank_list(std::string_view text) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t c = text.find(',', pos);
    if (c == std::string_view::npos) c = text.size();
    std::string_view item = text.substr(pos, c - pos);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) {
      const size_t dash = item.find('-');
      int lo = 0, hi = 0;
      auto num = [](std::string_view s, int& v) {
        const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        return r.ec == std::errc() && r.ptr == s.data() + s.size() && v >= 0;
      };
      bool ok = dash == std::string_view::npos ? num(item, lo) : (num(item.substr(0, dash), lo) && num(item.substr(dash + 1), hi));
      if (dash == std::string_view::npos) hi = lo;
      if (!ok || hi < lo || hi - lo > 1000000)
        return invalid("bad rank list item '" + std::string(item) + "' (expected N or N-M with N <= M)");
      for (int r = lo; r <= hi; ++r) out.push_back(r);
    }
    pos = c + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

BlockRoles block_roles(const KernelSpec& k) {
  // The folded matching text of the taxonomy: lower-case "name type core" reduced to [a-z0-9].
  std::string f;
  for (const std::string_view part : {std::string_view(k.name), std::string_view(k.type), std::string_view(core_name(k.core))})
    for (const char c : part) {
      const char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
      if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9')) f += l;
    }
  auto any = [&](std::initializer_list<const char*> toks) {
    for (const char* t : toks)
      if (f.find(t) != std::string::npos) return true;
    return false;
  };
  BlockRoles r;
  // rules 2-9 of the taxonomy that add role attention or attention_aux (signbitspack adds neither)
  r.attention = any({"sharedkv", "lightningindex", "indexercompressepilog", "compressor", "kvcompressepilog",
                     "batchmatmultranspose", "mlapreprocess", "mlaprolog", "mlapo", "kvrmsnormropecache",
                     "splitqkvrmsnormrope", "transposebatchmatmul", "transposequantbatchmatmul", "hammingdisttopk",
                     "reshapeandcache", "pagedcacheload", "scatterpakvcache", "fusedinferattentionscore",
                     "unpadflashattention", "flashattention", "pagedattentionmask", "causalconv", "mamba", "deltanet",
                     "gdn", "recurrentdelta", "recurrentgateddelta", "qkvzbasplit", "rope", "rotary", "attention"});
  // rules 10-12 (role moe); §2.4 also counts MIX_AIV communication kernels (op type mix_comm_aiv)
  r.moe = any({"moegating", "gatingtopk", "topkgating", "topkrouter", "dispatchffncombine", "ffncombine",
               "dispatchgmmcombine", "fuseddeepmoe", "moeinitrouting", "dispatch", "combine", "groupedmatmul", "gmm"});
  r.aicpu = any({"aicpu"});
  return r;
}

std::vector<std::vector<std::string>> layer_blocks(const Scenario& sc, int program, bool dummy, bool aicpu_per_layer,
                                                   int stage, bool fallback_per_layer) {
  const StepProgram& p = sc.programs[static_cast<size_t>(program)];
  // rows of each layer, in row order, as (roles) — collectives count as rows without roles
  std::vector<std::vector<BlockRoles>> rows(p.layers.size());
  int cur = -1;
  auto row = [&](const KernelSpec* k, int layer) {
    if (layer > cur) cur = layer;  // a layer's range starts at its first row and runs to the next layer's
    if (cur < 0) return;
    rows[static_cast<size_t>(cur)].push_back(k != nullptr ? block_roles(*k) : BlockRoles{});
  };
  for (const Segment& seg : p.segments) {
    if (stage >= 0 && seg.stage >= 0 && seg.stage != stage) continue;
    if (stage >= 0 && seg.sync.p2p_from >= 0 && seg.sync.p2p_from != stage && seg.sync.p2p_to != stage) continue;
    for (const int ki : seg.kernels) {
      const KernelSpec& k = sc.kernels[static_cast<size_t>(ki)];
      if (aicpu_per_layer && k.layer_first) row(&sc.kernels[static_cast<size_t>(sc.aicpu_kernel)], k.layer);
      if (!(dummy && k.attention)) row(&k, k.layer);
      if (fallback_per_layer && k.layer_first) row(&sc.kernels[static_cast<size_t>(sc.fallback_kernel)], k.layer);
    }
    if (seg.sync.kind == SyncSpec::Kind::kSyncKernel) row(&sc.kernels[static_cast<size_t>(seg.sync.kernel)], seg.sync.layer);
    else if (seg.sync.kind == SyncSpec::Kind::kCollective) row(nullptr, seg.sync.layer);
  }
  std::vector<std::vector<std::string>> out(p.layers.size());
  for (size_t l = 0; l < rows.size(); ++l) {
    const auto& r = rows[l];
    const int n = static_cast<int>(r.size());
    int last_attn = -1, first_moe = -1, aicpu = 0;
    for (int i = 0; i < n; ++i) {
      if (r[static_cast<size_t>(i)].attention) last_attn = i;
      if (r[static_cast<size_t>(i)].moe && first_moe < 0) first_moe = i;
      aicpu += r[static_cast<size_t>(i)].aicpu;
    }
    auto& b = out[l];
    if (n == 0) continue;
    if (last_attn < 0 && first_moe < 0) {
      b.push_back(aicpu >= std::max(1, n / 2) ? "aicpu" : "ffn");
    } else if (last_attn < 0) {
      b.push_back("moe");
    } else if (first_moe < 0) {
      b.push_back("attention");
      if (last_attn + 1 < n) b.push_back("ffn");
    } else {
      const int split = last_attn < first_moe ? (last_attn + first_moe) / 2 : first_moe - 1;
      if (split >= 0) b.push_back("attention");
      if (split + 1 < n) b.push_back("moe");
    }
  }
  return out;
}

std::string pick_hot_kernel(const Scenario& sc, int rank, bool vector) {
  const StepProgram& p = sc.programs[static_cast<size_t>(sc.rest_program)];
  const bool dummy = sc.dummy[static_cast<size_t>(rank)] != 0;
  const int stage = sc.topo.stage[static_cast<size_t>(rank)];
  std::vector<std::pair<std::string, int64_t>> groups;  // (name + shapes, nominal total); few distinct keys
  auto add = [&](const KernelSpec& k) {
    if (vector ? k.core != Core::kAiVectorCore : (k.core != Core::kAiCore || !k.matmul)) return;
    if (dummy && k.attention) return;
    const std::string key = k.name + '\x1f' + k.in_shapes;
    const int64_t ns = k.expert && dummy ? k.base_ns / 4 : k.base_ns;
    for (auto& g : groups)
      if (g.first == key) {
        g.second += ns;
        return;
      }
    groups.emplace_back(key, ns);
  };
  for (const Segment& seg : p.segments) {
    if (seg.stage >= 0 && seg.stage != stage) continue;
    for (const int ki : seg.kernels) add(sc.kernels[static_cast<size_t>(ki)]);
  }
  const std::pair<std::string, int64_t>* best = nullptr;
  for (const auto& g : groups)
    if (best == nullptr || g.second > best->second) best = &g;
  return best == nullptr ? std::string() : best->first.substr(0, best->first.find('\x1f'));
}

Result<Scenario> build_scenario(const SynthOptions& o) {
  const auto names = scenario_names();
  if (std::find(names.begin(), names.end(), o.scenario) == names.end()) {
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    return invalid("unknown scenario '" + o.scenario + "' (known: " + known + ")");
  }
  if (o.ranks < 1 || o.ranks > 4096) return invalid("ranks must be in [1, 4096], got " + std::to_string(o.ranks));
  if (o.steps < 1) return invalid("steps must be >= 1, got " + std::to_string(o.steps));
  if (!(o.scale > 0) || !std::isfinite(o.scale) || o.scale > 1e6) return invalid("scale must be a positive number <= 1e6");
  if (o.layers < 0 || o.layers > 4096) return invalid("layers must be in [0, 4096]");
  if (o.microbatches < 0 || o.microbatches > 1024) return invalid("microbatches must be in [0, 1024]");
  if (o.first_step < 0) return invalid("first_step must be >= 0");
  const double eff = std::llround(static_cast<double>(o.steps) * o.scale);
  if (eff > 50'000'000) return invalid("steps x scale is too large");

  const bool split_attention = o.split_attention;
  int pp = o.pp;
  if (pp < 0 || pp > 64) return invalid("pp must be in [0, 64], got " + std::to_string(pp));
  if (pp > 1 && o.scenario != "training")
    return invalid("pp (pipeline parallel) applies to training only (scenario '" + o.scenario + "')");
  pp = std::max(pp, 1);
  if (split_attention && o.scenario != "moe_mla_decode")
    return invalid("split_attention applies to moe_mla_decode only (scenario '" + o.scenario + "')");
  if (o.with_modules && o.scenario != "training")
    return invalid("with_modules applies to training only (scenario '" + o.scenario + "')");
  if (!o.moe_trace.empty()) {
    if (o.moe_trace != "skill" && o.moe_trace != "umdk" && o.moe_trace != "array")
      return invalid("unknown moe_trace variant '" + o.moe_trace + "' (expected skill, umdk or array)");
    if (o.scenario != "moe_mla_decode")
      return invalid("moe_trace applies to moe_mla_decode only (scenario '" + o.scenario + "')");
  }

  Scenario sc;
  sc.name = o.scenario;
  sc.split_attention = split_attention;
  sc.moe_trace = o.moe_trace;
  sc.with_modules = o.with_modules;
  sc.seed = o.seed;
  sc.steps = std::max(1, static_cast<int>(eff));
  sc.first_step = o.first_step;
  const bool moe = o.scenario == "moe_mla_decode" || o.scenario == "glm5_mtp";
  int tp = 1;
  if (!moe) {
    tp = o.tp > 0 ? o.tp : (o.ranks % (2 * pp) == 0 ? 2 : 1);
    if (o.ranks % tp != 0)
      return invalid("tp " + std::to_string(tp) + " does not divide ranks " + std::to_string(o.ranks));
    if (pp > 1 && o.ranks % (tp * pp) != 0)
      return invalid("tp x pp = " + std::to_string(tp * pp) + " does not divide ranks " + std::to_string(o.ranks));
    if (tp > 8 || (tp & (tp - 1)) != 0) return invalid("tp must be 1, 2, 4 or 8");
  }
  sc.topo = make_topology(o.ranks, tp, moe, pp);

  sc.dummy.assign(static_cast<size_t>(o.ranks), 0);
  for (const int r : o.dummy_ranks) {
    if (r < 0 || r >= o.ranks)
      return invalid("dummy rank " + std::to_string(r) + " out of range [0, " + std::to_string(o.ranks - 1) + "]");
    sc.dummy[static_cast<size_t>(r)] = 1;
  }

  if (o.scenario == "moe_mla_decode") {
    build_moe_mla_decode(sc, o.layers > 0 ? o.layers : 10);
    sc.host_op_ns = 12000;
  } else if (o.scenario == "glm5_mtp") {
    build_glm5_mtp(sc, o.layers > 0 ? o.layers : 78);
    sc.host_op_ns = 12000;
  } else if (o.scenario == "dense_gqa") {
    const int layers = o.layers > 0 ? o.layers : 16;
    build_dense_program(sc, layers, /*prefill=*/true);
    build_dense_program(sc, layers, /*prefill=*/false);
    sc.first_program = 0;
    sc.rest_program = 1;
    sc.host_op_ns = 12000;
  } else {
    const int microbatches = o.microbatches > 0 ? o.microbatches : 2;
    if (2LL * std::max(o.layers, 4) * microbatches > 30000)  // layer indices are 16-bit
      return invalid("training: 2 x layers x microbatches must be <= 30000");
    if (pp > 1) {
      const int layers = o.layers > 0 ? o.layers : (std::max(4, pp) + pp - 1) / pp * pp;
      if (layers % pp != 0)
        return invalid("layers " + std::to_string(layers) + " must be a multiple of pp " + std::to_string(pp));
      ASCPROF_RETURN_IF_ERROR(build_training_pp(sc, layers, microbatches));
    } else {
      build_training(sc, o.layers > 0 ? o.layers : 4, microbatches);
    }
    sc.host_op_ns = 16000;
  }

  auto aicpu = make_kernel("aclnnNonzero_NonZero_NonZero", "NonZero", "aten::nonzero", "aclnnNonzero", Core::kAiCpu, 120,
                           "16,7168", "114688,2", Profile::kCpu);
  aicpu.out_dtypes = "INT64";
  sc.kernels.push_back(std::move(aicpu));
  sc.aicpu_kernel = static_cast<int>(sc.kernels.size() - 1);

  for (const auto& spec : o.faults) {
    auto f = parse_fault(spec, o.ranks, sc.steps);
    if (!f.ok()) return f.status();
    if (f->kind == FaultKind::kEpImbalance && !moe)
      return invalid("fault ep_imbalance needs a scenario with expert layers (moe_mla_decode, glm5_mtp)");
    if (f->kind == FaultKind::kEpImbalance && !sc.moe_trace.empty())
      return invalid("fault ep_imbalance stretches GroupedMatmul kernels, which moe_trace fuses into FusedDeepMoe "
                     "(use moe_slow_expert)");
    if ((f->kind == FaultKind::kMoeSlowExpert || f->kind == FaultKind::kMoeRecvStarved) && sc.moe_trace.empty())
      return invalid("fault " + f->name + " is an in-kernel fault of the traced FusedDeepMoe: it needs moe_trace");
    if (f->kind == FaultKind::kInteriorIsland) {
      if (o.scenario == "training")
        return invalid("fault interior_island applies to dense_gqa, moe_mla_decode and glm5_mtp");
      if (sc.island_kernels.empty()) add_island_kernels(sc, moe);
    }
    if (f->kind == FaultKind::kSlowCollective) {
      bool any = false;
      for (const auto& prog : sc.programs)
        for (const auto& seg : prog.segments)
          if (seg.sync.kind == SyncSpec::Kind::kCollective) {
            const int g = sc.topo.group_of[static_cast<size_t>(seg.sync.group)][static_cast<size_t>(f->rank)];
            if (g >= 0 && sc.topo.groups[static_cast<size_t>(g)].ranks.size() > 1) any = true;
          }
      if (!any)
        return invalid("fault slow_collective: rank " + std::to_string(f->rank) + " takes part in no collective");
    }
    if (f->kind == FaultKind::kVectorScalarHeavy || f->kind == FaultKind::kCubeUnderused ||
        f->kind == FaultKind::kBlockDimOne) {
      f->target = pick_hot_kernel(sc, f->rank, f->kind != FaultKind::kCubeUnderused);
      if (f->target.empty())
        return invalid("fault " + f->name + ": rank " + std::to_string(f->rank) + " runs no " +
                       (f->kind == FaultKind::kCubeUnderused ? "AI_CORE matmul" : "AI_VECTOR_CORE") + " kernel");
      for (const KernelSpec& k : sc.kernels)
        if (k.name == f->target) {
          f->target_type = k.type;
          f->target_core = k.core;
          break;
        }
    }
    if (f->kind == FaultKind::kAicpuFallback) {
      if (sc.fallback_kernel < 0) {
        // IndexPut normally runs on the vector cores; int64 indices with accumulate send it to the AI CPU.
        auto k = make_kernel("aclnnIndexPut_IndexPutAiCpu_IndexPut", "IndexPut", "aten::index_put_",
                             "aclnnIndexPut", Core::kAiCpu, static_cast<double>(kAicpuFallbackUs), "16,7168;16;16,7168",
                             "16,7168", Profile::kCpu);
        k.in_dtypes = "DT_BF16;INT64;DT_BF16";
        sc.kernels.push_back(std::move(k));
        sc.fallback_kernel = static_cast<int>(sc.kernels.size() - 1);
      }
      const KernelSpec& k = sc.kernels[static_cast<size_t>(sc.fallback_kernel)];
      f->target = k.name;
      f->target_type = k.type;
      f->target_core = k.core;
    }
    if (!f->magnitude_given) {
      // Scenario-relative defaults so the fault is visible whatever the kernel sizes: launches slower than
      // 3x the mean kernel, and a bubble of 30 % of a step (>= 5 ms).
      const StepProgram& p = sc.programs[static_cast<size_t>(sc.rest_program)];
      int64_t sum = 0, n = 0;
      for (const Segment& seg : p.segments)
        for (const int k : seg.kernels) {
          sum += sc.kernels[static_cast<size_t>(k)].base_ns;
          ++n;
        }
      const double mean_ns = n > 0 ? static_cast<double>(sum) / static_cast<double>(n) : 0.0;
      if (f->kind == FaultKind::kHostBound)
        f->magnitude = std::max(8.0, std::ceil(3.0 * mean_ns / static_cast<double>(sc.host_op_ns)));
      if (f->kind == FaultKind::kIdleBubble) f->magnitude = std::max(5000.0, std::round(0.3 * static_cast<double>(sum) / 1000.0));
    }
    sc.faults.push_back(std::move(f).value());
  }

  const uint64_t h = mix64(o.seed ^ 0x5eedf00dULL);
  // late 2025 wall clock, shifted by the seed (whole seconds) so different seeds differ everywhere
  sc.base_time_ns = 1764246877000000000LL + static_cast<int64_t>(h % (30ULL * 86400ULL)) * 1000000000LL +
                    static_cast<int64_t>(mix64(h) % 1000ULL) * 1000000LL;
  sc.host_pid_base = 200000 + static_cast<int>(mix64(h + 1) % 3000000ULL);
  return sc;
}

}  // namespace ascprof::synth

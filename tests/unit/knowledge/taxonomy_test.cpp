// Every rule of reference-analysis §2.3 (taxonomy), §2.6 (op_type) and §2.5.5 (hccl_op_kind),
// checked against the shipped knowledge/ files.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include <set>
#include <string>

#include "ascprof/knowledge/knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::knowledge {
namespace {

class TaxonomyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto k = Knowledge::load(ascprof::testing::knowledge_dir());
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    kb_ = new Knowledge(std::move(k).value());
  }
  static void TearDownTestSuite() { delete kb_; }

  static std::set<std::string> cats(std::string_view name, std::string_view type = "", std::string_view core = "") {
    const Taxon t = kb_->taxonomy.classify(name, type, core);
    std::set<std::string> out;
    for (size_t i = 0; i < kb_->vocab.categories().size(); ++i)
      if (t.categories.test(i)) out.insert(kb_->vocab.categories()[i]);
    return out;
  }
  static std::set<std::string> roles(std::string_view name, std::string_view type = "", std::string_view core = "") {
    const Taxon t = kb_->taxonomy.classify(name, type, core);
    std::set<std::string> out;
    for (size_t i = 0; i < kb_->vocab.roles().size(); ++i)
      if (t.roles.test(i)) out.insert(kb_->vocab.roles()[i]);
    return out;
  }
  static std::string op_type(std::string_view core, bool aiv = false) {
    bool exact = false;
    int t = kb_->op_types.op_type(core, &exact);
    t = kb_->op_types.fuse(t, exact, aiv);
    return kb_->vocab.op_types()[static_cast<size_t>(t)];
  }
  static std::string hccl(std::string_view type) {
    return kb_->vocab.hccl_kinds()[static_cast<size_t>(kb_->op_types.hccl_kind(type))];
  }
  static Knowledge* kb_;
};
Knowledge* TaxonomyTest::kb_ = nullptr;

using S = std::set<std::string>;

TEST_F(TaxonomyTest, FoldKeepsOnlyLowerAlnum) {
  EXPECT_EQ(Taxonomy::fold("hcom_allReduce__612_4_1", "hcom_allReduce_", "HCCL"), "hcomallreduce61241hcomallreducehccl");
  EXPECT_EQ(Taxonomy::fold("Cast", "", "AI_CPU"), "castaicpu");
}

// Only argmax-like kernels are step delimiters; CNN max pooling that returns argmax indices is not.
TEST_F(TaxonomyTest, ArgMaxSelectsButMaxPoolWithArgmaxDoesNot) {
  EXPECT_EQ(roles("aclnnArgMax_ArgMaxV2_ArgMaxV2", "ArgMaxV2", "AI_VECTOR_CORE"), (S{"selection"}));
  EXPECT_EQ(roles("MaxPoolWithArgmaxV1", "MaxPoolWithArgmaxV1", "AI_CORE"), S{});
  EXPECT_EQ(roles("MaxPoolGradWithArgmaxV1", "MaxPoolGradWithArgmaxV1", "AI_CORE"), S{});
}

TEST_F(TaxonomyTest, Communication) {
  EXPECT_EQ(cats("hcom_allReduce__612_4_1", "hcom_allReduce_", "HCCL"),
            (S{"communication.collective", "communication.allreduce"}));
  EXPECT_EQ(roles("hcom_allReduce__612_4_1", "hcom_allReduce_", "HCCL"), (S{"communication"}));
  EXPECT_EQ(cats("hcom_allGather__1_2_1", "hcom_allGather_", "COMMUNICATION"),
            (S{"communication.collective", "communication.allgather"}));
  EXPECT_EQ(cats("hcom_reduceScatter__1_2_1"), (S{"communication.collective", "communication.reducescatter"}));
  EXPECT_EQ(cats("hcom_alltoallv__1_2_1"), (S{"communication.collective", "communication.alltoallv"}));
  // "hc" prefix of hcom names must not make them block heads
  EXPECT_EQ(roles("hcom_broadcast__483_0", "hcom_broadcast_", "HCCL"), (S{"communication"}));
}

TEST_F(TaxonomyTest, SparseAttention) {
  EXPECT_EQ(cats("SparseAttnSharedkvMetadata"), (S{"attention.sparse_sharedkv.metadata"}));
  EXPECT_EQ(roles("SparseAttnSharedkvMetadata"), (S{"attention_aux"}));
  EXPECT_EQ(cats("SparseAttnSharedKV"), (S{"attention.sparse_sharedkv"}));
  EXPECT_EQ(roles("SparseAttnSharedKV"), (S{"attention"}));
  EXPECT_EQ(cats("LightningIndexer"), (S{"attention.lightning_indexer"}));
  EXPECT_EQ(cats("KvCompressEpilog"), (S{"attention.kv_compressor"}));
  EXPECT_EQ(cats("BatchMatMulTranspose"), (S{"attention.sparse_attn.v_up_proj", "compute.matmul"}));
}

TEST_F(TaxonomyTest, Mla) {
  EXPECT_EQ(cats("aclnnMlaPreprocess_MlaPreprocess_MlaPreprocess"), (S{"attention.mla.preprocess", "attention.mla"}));
  EXPECT_EQ(roles("MlaPrologV2"), (S{"attention"}));
  // KvRmsNormRopeCache also gains normalization: "norm" matches anywhere (reference caveat)
  EXPECT_EQ(cats("KvRmsNormRopeCache"), (S{"attention.mla.kv_norm_rope_cache", "attention.rope", "normalization"}));
  EXPECT_EQ(roles("KvRmsNormRopeCache"), (S{"attention_aux", "normalization"}));
  EXPECT_EQ(cats("TransposeBatchMatMul"), (S{"attention.mla.v_up_proj", "compute.matmul"}));
  EXPECT_EQ(roles("TransposeBatchMatMul"), (S{"attention", "compute"}));
}

TEST_F(TaxonomyTest, KvCompAndPagedCache) {
  EXPECT_EQ(cats("HammingDistTopK"), (S{"attention.kvcomp.topk", "attention.kvcomp"}));
  EXPECT_EQ(cats("SignBitsPack"), (S{"attention.kvcomp.signpack"}));
  // KVComp cache write suppresses the paged cache I/O rule although "reshapeandcache" matches
  EXPECT_EQ(cats("ReshapeAndCacheBnsd"), (S{"attention.kvcomp.cache_write"}));
  EXPECT_EQ(cats("ReshapeAndCache"), (S{"attention.kv_cache_io"}));
  EXPECT_EQ(cats("PagedCacheLoad"), (S{"attention.kv_cache_io"}));
}

TEST_F(TaxonomyTest, DenseAttentionLinearAndGeneric) {
  EXPECT_EQ(cats("aclnnFlashAttentionScore_FlashAttentionScore_FlashAttentionScore"), (S{"attention.flash_score"}));
  EXPECT_EQ(cats("FusedInferAttentionScore"), (S{"attention.flash_score"}));
  EXPECT_EQ(cats("CausalConv1d"), (S{"attention.linear_or_mamba"}));
  EXPECT_EQ(cats("RecurrentGatedDeltaRule"), (S{"attention.linear_or_mamba"}));
  EXPECT_EQ(cats("IncreAttention"), (S{"attention.generic"}));
  EXPECT_EQ(roles("IncreAttention"), (S{"attention"}));
}

TEST_F(TaxonomyTest, Rope) {
  EXPECT_EQ(cats("InterleaveRope"), (S{"attention.rope.interleave", "attention.rope"}));
  EXPECT_EQ(cats("RotaryMul"), (S{"attention.rope.partial", "attention.rope"}));
  EXPECT_EQ(cats("RotaryEmbedding"), (S{"attention.rope.indexed", "attention.rope"}));
  EXPECT_EQ(cats("ApplyRopeV2"), (S{"attention.rope"}));
  EXPECT_EQ(roles("ApplyRopeV2"), (S{"attention_aux"}));
}

TEST_F(TaxonomyTest, MoE) {
  EXPECT_EQ(cats("MoeGatingTopK"), (S{"moe.gating"}));
  EXPECT_EQ(roles("MoeGatingTopK"), (S{"moe"}));
  EXPECT_EQ(cats("MoeDistributeDispatchV2"), (S{"moe.dispatch"}));
  EXPECT_EQ(cats("MoeDistributeCombineV2"), (S{"moe.combine"}));
  EXPECT_EQ(cats("MoeInitRoutingV2"), (S{"moe.dispatch"}));
  // fused MC2 suppresses plain dispatch/combine/gmm
  EXPECT_EQ(cats("DispatchGmmCombineDecode"), (S{"moe.dispatch_expert_compute"}));
  EXPECT_EQ(cats("aclnnGroupedMatmulV4_GroupedMatmul_GroupedMatmul"), (S{"moe.expert_matmul", "compute.matmul"}));
  EXPECT_EQ(roles("GroupedMatmul"), (S{"moe", "compute"}));
  EXPECT_EQ(cats("GroupedMatmulSwigluQuant"), (S{"moe.expert_matmul", "compute.matmul"}));
}

TEST_F(TaxonomyTest, MatmulQuantSampling) {
  EXPECT_EQ(cats("aclnnMatmul_MatMulV3Common_MatMulV3"), (S{"compute.matmul"}));
  EXPECT_EQ(cats("QuantBatchMatmulV3"), (S{"compute.matmul", "quant.matmul"}));
  EXPECT_EQ(cats("DynamicMxQuant"), (S{"quant.mx", "compute.aux"}));
  EXPECT_EQ(cats("DynamicQuant"), (S{"quant.dynamic", "compute.aux"}));
  EXPECT_EQ(roles("DynamicQuant"), (S{"quant"}));
  EXPECT_EQ(cats("ApplyTopKTopP"), (S{"sampling.top_k_top_p", "sampling_or_selection"}));
  EXPECT_EQ(roles("ApplyTopKTopP"), (S{"sampling"}));
  EXPECT_EQ(roles("ArgMaxV2"), (S{"selection"}));
}

TEST_F(TaxonomyTest, BlockHeadNormalizationAicpu) {
  // verified in the reference: AddRmsNorm is block_head + normalization
  EXPECT_EQ(cats("AddRmsNorm"), (S{"normalization", "block_head"}));
  EXPECT_EQ(roles("AddRmsNorm"), (S{"normalization", "block_head"}));
  EXPECT_EQ(cats("RmsNorm"), (S{"normalization"}));
  EXPECT_EQ(cats("HcPreNorm"), (S{"block_head.mhc_prefix", "normalization", "block_head"}));
  EXPECT_EQ(cats("MhcPre"), (S{"block_head.mhc_prefix"}));
  EXPECT_EQ(cats("Cast", "Cast", "AI_CPU"), (S{"aicpu"}));
  EXPECT_EQ(roles("Cast", "Cast", "AI_CPU"), (S{"aicpu"}));
  // unmatched kernels get nothing (reference [verified])
  EXPECT_TRUE(cats("Swiglu", "Swiglu", "AI_VECTOR_CORE").empty());
  EXPECT_TRUE(cats("Gather").empty());
}

TEST_F(TaxonomyTest, OpTypeFromAcceleratorCore) {
  EXPECT_EQ(op_type("AI_CORE"), "aic");
  EXPECT_EQ(op_type("ai_vector_core"), "aiv");
  EXPECT_EQ(op_type("MIX_AIC"), "mix_cv");
  EXPECT_EQ(op_type("MIX_AIV"), "mix_cv");
  EXPECT_EQ(op_type("COMMUNICATION"), "communication");
  EXPECT_EQ(op_type("COMMUNICATION", true), "mix_comm_aiv");
  EXPECT_EQ(op_type("AI_CPU"), "aicpu");
  EXPECT_EQ(op_type("DSA_SQE"), "dsa");
  EXPECT_EQ(op_type(""), "unknown");
  EXPECT_EQ(op_type("N/A"), "unknown");
  // fallbacks; the HCCL fallback does not check AIV
  EXPECT_EQ(op_type("HCCL"), "communication");
  EXPECT_EQ(op_type("HCCL", true), "communication");
  EXPECT_EQ(op_type("MIX_VECTOR_FOO"), "mix_cv");
  EXPECT_EQ(op_type("FOO_VECTOR"), "aiv");
  EXPECT_EQ(op_type("SOMETHING_AIV"), "aiv");
  EXPECT_EQ(op_type("NEW_CORE"), "aic");
  EXPECT_EQ(op_type("DVPP"), "unknown");
}

TEST_F(TaxonomyTest, HcclOpKind) {
  EXPECT_EQ(hccl("hcom_allReduce_"), "allreduce");
  EXPECT_EQ(hccl("hcom_allGather_"), "allgather");
  EXPECT_EQ(hccl("hcom_reduceScatter_"), "reducescatter");
  EXPECT_EQ(hccl("hcom_alltoallv_"), "alltoallv");
  EXPECT_EQ(hccl("HCOM_ALLTOALLVC_"), "alltoallv");
  EXPECT_EQ(hccl("hcom_broadcast_"), "broadcast");
  EXPECT_EQ(hccl("hcom_send_"), "send_recv");
  EXPECT_EQ(hccl("hcom_receive_"), "send_recv");
  EXPECT_EQ(hccl("hccl_batchSendRecv_"), "send_recv");
  EXPECT_EQ(hccl("hcom_batchSendRecv_"), "other");  // exact-match rule: the hcom_ spelling is not a key
  EXPECT_EQ(hccl("hcom_barrier_"), "barrier");
  EXPECT_EQ(hccl("hcom_allReduce"), "other");
  EXPECT_EQ(hccl("MatMul"), "other");
}

TEST_F(TaxonomyTest, NameKeyAndShapeSignature) {
  const auto& n = kb_->names;
  EXPECT_EQ(n.name_key("aclnnMatmul_MatMulV3Common_MatMulV3"), "aclnnmatmul_matmulv_common_matmulv");
  EXPECT_EQ(n.name_key("hcom_allReduce__612_4_1"), "hcom_allreduce");
  EXPECT_EQ(n.name_key("Kernel_0x7fffabcd12_deadbeefdeadbeefdead"), "kernel");
  EXPECT_EQ(n.name_key("!!!"), "unknown");
  EXPECT_EQ(n.name_key(std::string(200, 'z')).size(), 96u);
  EXPECT_EQ(n.name_key(std::string(200, 'a')), "unknown");  // a long hex run is an address, deleted
  EXPECT_EQ(n.shape_signature(""), "");
  EXPECT_EQ(n.shape_signature("\"32,3,224,224\" \"32,1,224,224,8\""), "shape_b79a7702bc96884f");
}

// [ep] expert_compute_categories names categories of the vocabulary: a typo stops the load at its line.
TEST(KnowledgeLoad, ExpertComputeCategoriesAreDeclared) {
  const auto shipped = Knowledge::load(ascprof::testing::knowledge_dir());
  ASSERT_TRUE(shipped.ok()) << shipped.status().to_string();
  EXPECT_EQ(shipped->diagnostics.ep_expert_categories,
            (std::vector<std::string>{"moe.expert_matmul", "moe.dispatch_expert_compute"}));
  ascprof::testing::ScratchDir dir("knowledge-ep");
  for (const auto& e : std::filesystem::directory_iterator(ascprof::testing::knowledge_dir()))
    if (e.path().extension() == ".rules") std::filesystem::copy_file(e.path(), dir.path() / e.path().filename());
  std::ifstream in(ascprof::testing::knowledge_dir() / "diagnostics.rules");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = "expert_compute_categories = moe.expert_matmul";
  const size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos);
  const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
  text.replace(at, key.size(), "expert_compute_categories = moe.expert_matmull");
  ascprof::testing::write_text(dir / "diagnostics.rules", text);
  const auto k = Knowledge::load(dir.path());
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), ErrorCode::kKnowledge);
  EXPECT_NE(k.status().message().find("diagnostics.rules:line " + std::to_string(line)), std::string::npos)
      << k.status().message();
  EXPECT_NE(k.status().message().find("'moe.expert_matmull' is not declared"), std::string::npos) << k.status().message();
}

TEST(KnowledgeLoad, ErrorsNameFileAndLine) {
  ascprof::testing::ScratchDir dir("knowledge");
  for (const char* f : {"vocabulary.rules", "operator_taxonomy.rules", "op_type.rules", "hccl_op_kind.rules",
                        "pipeline.rules", "name_key.rules", "segmentation.rules", "summarize.rules", "diagnostics.rules"})
    std::filesystem::copy_file(ascprof::testing::knowledge_dir() / f, dir / f);
  ascprof::testing::write_text(dir / "operator_taxonomy.rules",
                               "# typo in a category\n[rule x]\nany = foo\nadd_categories = attention.flash_scor\n");
  auto k = Knowledge::load(dir.path());
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), ErrorCode::kKnowledge);
  EXPECT_NE(k.status().message().find("operator_taxonomy.rules:line 4"), std::string::npos) << k.status().message();
  EXPECT_NE(k.status().message().find("attention.flash_scor"), std::string::npos);

  ascprof::testing::write_text(dir / "operator_taxonomy.rules", "[rule x]\nany = Foo\nadd_roles = moe\n");
  k = Knowledge::load(dir.path());
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("lower-case"), std::string::npos);

  ascprof::testing::write_text(dir / "operator_taxonomy.rules", "[rule x]\nany = foo\nadd_roles = moe\nwhen = x\n");
  k = Knowledge::load(dir.path());
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("unknown key 'when'"), std::string::npos);

  ascprof::testing::write_text(dir / "operator_taxonomy.rules", "[rule x]\nany = foo\nadd_roles = moe\n");
  ascprof::testing::write_text(dir / "op_type.rules", "[exact]\nAI_CORE = aicc\n[fallback]\ndefault = unknown\n");
  k = Knowledge::load(dir.path());
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("op_type.rules:line 2"), std::string::npos) << k.status().message();

  // the training rules name HCCL kinds of the vocabulary
  for (const char* f : {"operator_taxonomy.rules", "op_type.rules"})
    std::filesystem::copy_file(ascprof::testing::knowledge_dir() / f, dir / f,
                               std::filesystem::copy_options::overwrite_existing);
  std::ifstream seg_in(ascprof::testing::knowledge_dir() / "segmentation.rules");
  const std::string segmentation((std::istreambuf_iterator<char>(seg_in)), std::istreambuf_iterator<char>());
  const size_t at = segmentation.find("microbatch_boundary_hccl_kinds = send_recv");
  ASSERT_NE(at, std::string::npos);
  std::string typo = segmentation;
  typo.replace(at, std::string("microbatch_boundary_hccl_kinds = send_recv").size(), "microbatch_boundary_hccl_kinds = sendrecv");
  ascprof::testing::write_text(dir / "segmentation.rules", typo);
  k = Knowledge::load(dir.path());
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("segmentation.rules:line"), std::string::npos) << k.status().message();
  EXPECT_NE(k.status().message().find("HCCL kind 'sendrecv'"), std::string::npos) << k.status().message();
  ascprof::testing::write_text(dir / "segmentation.rules", segmentation);
  const auto shipped = Knowledge::load(ascprof::testing::knowledge_dir());
  ASSERT_TRUE(shipped.ok()) << shipped.status().to_string();
  EXPECT_EQ(shipped->segmentation.microbatch_boundary_hccl_kinds,
            std::vector<int>{shipped->vocab.hccl_kind_index("send_recv")});

  std::filesystem::remove(dir / "op_type.rules");
  k = Knowledge::load(dir.path());
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), ErrorCode::kIo);
  EXPECT_NE(k.status().message().find("op_type.rules"), std::string::npos);
}

TEST(KnowledgeLoad, RuleFileSyntax) {
  auto f = parse_rule_text("[a b c]\nkey = x \"y z\" # comment\n\n# c\n[d]\nk2=\n", "t.rules");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  ASSERT_EQ(f->blocks.size(), 2u);
  EXPECT_EQ(f->blocks[0].kind, "a");
  EXPECT_EQ(f->blocks[0].name, "b c");
  ASSERT_EQ(f->blocks[0].entries[0].values.size(), 2u);
  EXPECT_EQ(f->blocks[0].entries[0].values[1], "y z");
  EXPECT_FALSE(parse_rule_text("key = 1\n", "t.rules").ok());
  EXPECT_FALSE(parse_rule_text("[a\n", "t.rules").ok());
  auto bad = parse_rule_text("[a]\nk = \"open\n", "t.rules");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "t.rules:line 2: unterminated double quote");
}

}  // namespace
}  // namespace ascprof::knowledge

#include "ascprof/analysis/classify.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <memory>
#include <string>
#include <vector>

#include "ascprof/common/blake2b.hpp"
#include "ascprof/common/stable_id.hpp"
#include "ascprof/common/stats.hpp"
#include "support/test_support.hpp"

namespace ascprof::analysis {
namespace {

using model::BlockKind;

// Kernel kinds used to build rank tables; the real knowledge/ classifies them.
enum K { N, A, Q, Q2, G, S, C, H };
struct KernelSpec {
  const char* name;
  const char* type;
  const char* core;
  const char* shapes;
  double aiv_time;
};
KernelSpec spec(K k) {
  switch (k) {
    case N: return {"AddRmsNorm", "AddRmsNorm", "AI_VECTOR_CORE", "1,7168;7168", 0};  // normalization: no shape
    case A: return {"FusedInferAttentionScore", "FusedInferAttentionScore", "AI_CORE", "8,1,128", 0};  // attention
    case Q: return {"MatMulV3", "MatMulV3", "AI_CORE", "1,7168;7168,2048", 0};                // compute
    case Q2: return {"MatMulV3", "MatMulV3", "AI_CORE", "2,7168;7168,2048", 0};               // other shape
    case G: return {"MoeGatingTopK", "MoeGatingTopK", "AI_VECTOR_CORE", "1,256", 0};          // moe
    case S: return {"Swiglu", "Swiglu", "AI_VECTOR_CORE", "1,4096", 0};                       // no role
    case C: return {"Cast", "Cast", "AI_CPU", "1", 0};                                        // aicpu
    case H: return {"hcom_allReduce__1_1", "hcom_allReduce_", "COMMUNICATION", "1,7168", 5.0};  // mix_comm_aiv
  }
  return {};
}

constexpr int64_t kT0 = 1'736'408'883'704'643'212;

struct Rank {
  StringPool pool;
  model::KernelTable kernels;
  NormalizedKernels normalized;
  model::RankStructure structure;
};

class ClassifyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto k = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    kb_ = new knowledge::Knowledge(std::move(k).value());
  }
  static void TearDownTestSuite() {
    delete kb_;
    kb_ = nullptr;
  }

  // Row r starts at kT0 + 2000 r and lasts 1000 ns.
  static std::unique_ptr<Rank> make_rank(const std::vector<K>& rows) {
    auto rank = std::make_unique<Rank>();
    auto& k = rank->kernels;
    k.header.columns = {"Name", "Type", "Accelerator Core", "Start Time(us)", "Duration(us)", "Input Shapes",
                        "aiv_time(us)"};
    k.metrics.push_back({"aiv_time(us)", {}});
    for (size_t r = 0; r < rows.size(); ++r) {
      const KernelSpec s = spec(rows[r]);
      k.name.push_back(rank->pool.intern(s.name));
      k.type.push_back(rank->pool.intern(s.type));
      k.accelerator_core.push_back(rank->pool.intern(s.core));
      k.input_shapes.push_back(rank->pool.intern(s.shapes));
      k.output_shapes.push_back(0);
      k.start_ns.push_back(kT0 + 2000 * static_cast<int64_t>(r));
      k.dur_ns.push_back(1000);
      k.metrics[0].values.push_back(s.aiv_time);
    }
    Stats stats;
    rank->normalized = normalize_kernels(k, rank->pool, *kb_, stats);
    rank->structure.rank_id = "rank0";
    return rank;
  }

  static void add_segment(Rank& rank, model::SegmentType type, uint32_t row_start, uint32_t row_end,
                          uint32_t main_layers = 0, const std::string& signature = "") {
    model::StepSegment s;
    s.segment_id = "seg_" + std::to_string(rank.structure.segments.size());
    s.type = type;
    s.complete = type == model::SegmentType::kStep;
    s.row_start = row_start;
    s.row_end = row_end;
    s.main_layer_count = main_layers;
    s.structure_signature = signature;
    if (s.complete) s.step_family = "attention_moe_workload";
    rank.structure.segments.push_back(s);
  }

  static void add_layer(Rank& rank, uint32_t segment, uint32_t row_start, uint32_t row_end,
                        const std::string& signature = "attention.mla:x") {
    model::LayerSegment l;
    l.layer_id = "layer_" + std::to_string(rank.structure.layers.size());
    l.segment = segment;
    l.row_start = row_start;
    l.row_end = row_end;
    l.start_ns = kT0 + 2000 * static_cast<int64_t>(row_start);
    l.end_ns = kT0 + 2000 * static_cast<int64_t>(row_end) + 1000;
    auto& sigs = rank.structure.layer_signatures;
    auto it = std::find(sigs.begin(), sigs.end(), signature);
    l.signature = static_cast<uint32_t>(it - sigs.begin());
    if (it == sigs.end()) sigs.push_back(signature);
    rank.structure.layers.push_back(l);
  }

  static model::RankClasses classify(const Rank& rank) {
    return classify_rank(rank.structure, rank.kernels, rank.normalized, rank.pool, *kb_);
  }

  // One step segment holding one layer over every row; returns its blocks.
  static std::vector<model::BlockSegment> blocks_of(const std::vector<K>& rows) {
    auto rank = make_rank(rows);
    const auto last = static_cast<uint32_t>(rows.size() - 1);
    add_segment(*rank, model::SegmentType::kStep, 0, last, 1);
    add_layer(*rank, 0, 0, last);
    return classify(*rank).blocks;
  }

  static std::string sig(const Rank& rank, uint32_t row) {
    return std::string(rank.pool.view(rank.normalized.shape_signature[row]));
  }
  // The normalized name key (knowledge/name_key.rules) of the row's kernel, not its raw name.
  static std::string key(const Rank& rank, uint32_t row) {
    return std::string(rank.pool.view(rank.normalized.taxa[rank.normalized.taxon[row]].name_key));
  }
  static std::pair<std::string, std::string> pair(const Rank& rank, uint32_t row) { return {key(rank, row), sig(rank, row)}; }

  static knowledge::Knowledge* kb_;
};
knowledge::Knowledge* ClassifyTest::kb_ = nullptr;

struct Expect {
  BlockKind kind;
  uint32_t index, row_start, row_end;
};
void expect_blocks(const std::vector<model::BlockSegment>& got, const std::vector<Expect>& want, bool companion) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("block " + std::to_string(i));
    EXPECT_EQ(got[i].kind, want[i].kind) << model::block_kind_name(got[i].kind);
    EXPECT_EQ(got[i].block_index, want[i].index);
    EXPECT_EQ(got[i].row_start, want[i].row_start);
    EXPECT_EQ(got[i].row_end, want[i].row_end);
    EXPECT_EQ(got[i].event_count, want[i].row_end - want[i].row_start + 1);
    EXPECT_EQ(got[i].companion_layer, companion);
    EXPECT_EQ(got[i].layer, 0u);
  }
}

TEST_F(ClassifyTest, DenseLayerSplitsAfterLastAttentionRow) {
  const auto blocks = blocks_of({N, Q, A, Q, N, Q, S, Q});
  expect_blocks(blocks, {{BlockKind::kAttention, 0, 0, 2}, {BlockKind::kFfn, 1, 3, 7}}, false);
  // times: min start / max (start + dur) of the block's rows
  EXPECT_EQ(blocks[0].start_ns, kT0);
  EXPECT_EQ(blocks[0].end_ns, kT0 + 2 * 2000 + 1000);
  EXPECT_EQ(blocks[1].start_ns, kT0 + 3 * 2000);
  EXPECT_EQ(blocks[1].end_ns, kT0 + 7 * 2000 + 1000);
  EXPECT_EQ(blocks[0].block_id, stable_id("blk", {"layer_0", "0", "attention", "0", "2"}));
  EXPECT_EQ(blocks[1].block_id, stable_id("blk", {"layer_0", "1", "ffn", "3", "7"}));
}

TEST_F(ClassifyTest, AttentionOnlyLayerHasNoEmptyFfnBlock) {
  expect_blocks(blocks_of({N, Q, A}), {{BlockKind::kAttention, 0, 0, 2}}, false);
}

TEST_F(ClassifyTest, MoeLayerSplitsAtFloorOfMidpoint) {
  // last attention row 1, first moe row 6: split = floor(7 / 2) = 3
  expect_blocks(blocks_of({N, A, Q, N, Q, S, G, Q}),
                {{BlockKind::kAttention, 0, 0, 3}, {BlockKind::kMoe, 1, 4, 7}}, false);
}

TEST_F(ClassifyTest, InterleavedAttentionAndMoeSplitBeforeFirstMoe) {
  // last attention row 3 >= first moe row 2: split = 2 - 1
  expect_blocks(blocks_of({N, A, G, A, Q}), {{BlockKind::kAttention, 0, 0, 1}, {BlockKind::kMoe, 1, 2, 4}}, false);
}

TEST_F(ClassifyTest, InterleavedSplitThatEmptiesAttentionKeepsReferenceIndexAndFlag) {
  // split = -1: the attention block is empty and dropped; the moe block keeps raw index 1 and, as in
  // the reference code, the layer is not a companion (it has attention events).
  expect_blocks(blocks_of({G, A, Q}), {{BlockKind::kMoe, 1, 0, 2}}, false);
}

TEST_F(ClassifyTest, MixCommAivCountsAsMoe) {
  // the collective has no moe role but op_type mix_comm_aiv: split = floor((1 + 3) / 2) = 2
  expect_blocks(blocks_of({N, A, Q, H, Q}), {{BlockKind::kAttention, 0, 0, 2}, {BlockKind::kMoe, 1, 3, 4}}, false);
}

TEST_F(ClassifyTest, LayersWithoutAttentionAreCompanions) {
  expect_blocks(blocks_of({N, G, Q}), {{BlockKind::kMoe, 0, 0, 2}}, true);
  expect_blocks(blocks_of({N, Q, S}), {{BlockKind::kFfn, 0, 0, 2}}, true);
}

TEST_F(ClassifyTest, AicpuBlockNeedsHalfTheLayerRoundedDown) {
  expect_blocks(blocks_of({C, C, N, Q, S}), {{BlockKind::kAicpu, 0, 0, 4}}, true);  // 2 >= floor(5/2)
  expect_blocks(blocks_of({C, N, Q, S, S}), {{BlockKind::kFfn, 0, 0, 4}}, true);    // 1 < 2
  expect_blocks(blocks_of({C}), {{BlockKind::kAicpu, 0, 0, 0}}, true);              // 1 >= max(1, 0)
}

TEST_F(ClassifyTest, ClassesMergeIdenticalShapesAcrossRowsAndStepsOnlyForCompleteSteps) {
  // head | step [layer, layer, S] | step [layer, layer, S] | step [layer(Q2), layer(other sig), Q, S] | tail
  auto rank = make_rank({Q,                          // 0  head (shape outside any step)
                         N, A, Q, G, Q, N, A, Q, G, Q, S,      // 1..11
                         N, A, Q, G, Q, N, A, Q, G, Q, S,      // 12..22
                         N, A, Q, G, Q2, N, A, Q, G, Q, Q, S,  // 23..34
                         Q});                                  // 35 tail
  add_segment(*rank, model::SegmentType::kHead, 0, 0);
  add_segment(*rank, model::SegmentType::kStep, 1, 11, 2, "main_len=2");
  add_segment(*rank, model::SegmentType::kStep, 12, 22, 2, "main_len=2");
  add_segment(*rank, model::SegmentType::kStep, 23, 34, 2, "main_len=2");
  add_segment(*rank, model::SegmentType::kTail, 35, 35);
  add_layer(*rank, 1, 1, 5);
  add_layer(*rank, 1, 6, 10);
  add_layer(*rank, 2, 12, 16);
  add_layer(*rank, 2, 17, 21);
  add_layer(*rank, 3, 23, 27);
  add_layer(*rank, 3, 28, 32, "other");
  const model::RankClasses rc = classify(*rank);

  // blocks: attention = N A Q (split floor((1+3)/2) = 2 within the layer), moe = G Q
  ASSERT_EQ(rc.blocks.size(), 12u);
  ASSERT_EQ(rc.block_classes.size(), 3u);
  const auto& attn_cls = rc.block_classes[rc.blocks[0].block_class];
  EXPECT_EQ(attn_cls.members, (std::vector<uint32_t>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(attn_cls.block_kind, BlockKind::kAttention);
  EXPECT_FALSE(attn_cls.companion_layer);
  EXPECT_EQ(attn_cls.scope_label, "attention|companion=0");
  EXPECT_EQ(attn_cls.structure_signature, "");
  EXPECT_EQ(attn_cls.shape_pairs_count, 2u);
  EXPECT_FALSE(attn_cls.has_unknown_shape);
  EXPECT_EQ(attn_cls.class_id,
            class_signature_id("blk_cls", "", "attention|companion=0",
                               {pair(*rank, 2), pair(*rank, 3)}, "x"));
  EXPECT_EQ(key(*rank, 2), "fusedinferattentionscore");
  EXPECT_NE(key(*rank, 3), "MatMulV3");  // name keys, not raw names
  EXPECT_EQ(key(*rank, 3).substr(0, 7), "matmulv");
  EXPECT_EQ(rc.block_classes[rc.blocks[1].block_class].members, (std::vector<uint32_t>{1, 3, 5, 7, 11}));
  EXPECT_EQ(rc.block_classes[rc.blocks[9].block_class].members, (std::vector<uint32_t>{9}));  // Q2
  EXPECT_NE(rc.blocks[9].block_class, rc.blocks[1].block_class);

  // layers: 0-3 identical on different rows; 4 differs in one shape; 5 in its structure signature
  ASSERT_EQ(rc.layer_class.size(), 6u);
  ASSERT_EQ(rc.layer_classes.size(), 3u);
  EXPECT_EQ(rc.layer_class[0], rc.layer_class[3]);
  EXPECT_NE(rc.layer_class[4], rc.layer_class[0]);
  EXPECT_NE(rc.layer_class[5], rc.layer_class[0]);
  const auto& lc = rc.layer_classes[static_cast<size_t>(rc.layer_class[0])];
  EXPECT_EQ(lc.members, (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(lc.scope_label, "attention->moe|companion=0");
  EXPECT_EQ(lc.block_kinds, (std::vector<std::string>{"attention", "moe"}));
  EXPECT_EQ(lc.child_class_ids,
            (std::vector<std::string>{attn_cls.class_id, rc.block_classes[rc.blocks[1].block_class].class_id}));
  EXPECT_EQ(lc.structure_signature, "attention.mla:x");
  EXPECT_EQ(lc.shape_pairs_count, 4u);
  const std::vector<std::pair<std::string, std::string>> layer_pairs = {pair(*rank, 2), pair(*rank, 3),
                                                                        pair(*rank, 4), pair(*rank, 5)};
  EXPECT_EQ(lc.class_id, class_signature_id("lyr_cls", "attention.mla:x", "attention->moe|companion=0", layer_pairs, ""));
  EXPECT_EQ(lc.class_id.substr(0, 8), "lyr_cls_");
  EXPECT_EQ(lc.class_id.size(), 8u + 16u);

  // steps: only the three kStep segments; head and tail get -1
  ASSERT_EQ(rc.step_class.size(), 5u);
  EXPECT_EQ(rc.step_class[0], -1);
  EXPECT_EQ(rc.step_class[4], -1);
  EXPECT_EQ(rc.step_class[1], rc.step_class[2]);
  EXPECT_NE(rc.step_class[3], rc.step_class[1]);
  ASSERT_EQ(rc.step_classes.size(), 2u);
  const auto& sc = rc.step_classes[static_cast<size_t>(rc.step_class[1])];
  EXPECT_EQ(sc.members, (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(sc.scope_label, "layers=2|main=2");
  EXPECT_EQ(sc.layer_count, 2u);
  EXPECT_EQ(sc.main_layer_count, 2u);
  EXPECT_EQ(sc.step_family, "attention_moe_workload");
  EXPECT_EQ(sc.child_class_ids, (std::vector<std::string>{lc.class_id, lc.class_id}));
  std::vector<std::pair<std::string, std::string>> step_pairs = layer_pairs;
  step_pairs.insert(step_pairs.end(), layer_pairs.begin(), layer_pairs.end());
  EXPECT_EQ(sc.class_id, class_signature_id("stp_cls", "main_len=2", "layers=2|main=2", step_pairs, ""));
  // the third step's pairs include row 33, which lies in the step but in no layer
  const auto& sc3 = rc.step_classes[static_cast<size_t>(rc.step_class[3])];
  EXPECT_EQ(sc3.shape_pairs_count, 9u);
  EXPECT_EQ(sc3.child_class_ids.size(), 2u);
  EXPECT_EQ(sc3.child_class_ids[1], rc.layer_classes[static_cast<size_t>(rc.layer_class[5])].class_id);
}

TEST_F(ClassifyTest, ScopesWithoutShapesAreUnknownShapeSingletons) {
  auto rank = make_rank({N, S, N, S});
  add_segment(*rank, model::SegmentType::kStep, 0, 3, 2);
  add_layer(*rank, 0, 0, 1);
  add_layer(*rank, 0, 2, 3);
  const model::RankClasses rc = classify(*rank);
  ASSERT_EQ(rc.blocks.size(), 2u);
  ASSERT_EQ(rc.block_classes.size(), 2u);  // identical content, still not merged
  ASSERT_EQ(rc.layer_classes.size(), 2u);
  for (uint32_t i = 0; i < 2; ++i) {
    const auto& bc = rc.block_classes[rc.blocks[i].block_class];
    EXPECT_EQ(bc.class_id, "blk_cls_unknown_shape_" + blake2b_hex(rc.blocks[i].block_id, 6));
    EXPECT_TRUE(bc.has_unknown_shape);
    EXPECT_EQ(bc.shape_pairs_count, 0u);
    EXPECT_EQ(bc.members, (std::vector<uint32_t>{i}));
    EXPECT_EQ(bc.scope_label, "ffn|companion=1");
    const auto& lc = rc.layer_classes[static_cast<size_t>(rc.layer_class[i])];
    EXPECT_EQ(lc.class_id, "lyr_cls_unknown_shape_" + blake2b_hex("layer_" + std::to_string(i), 6));
    EXPECT_TRUE(lc.companion_layer);
    EXPECT_EQ(lc.scope_label, "ffn|companion=1");
  }
  ASSERT_EQ(rc.step_classes.size(), 1u);
  EXPECT_EQ(rc.step_classes[0].class_id, "stp_cls_unknown_shape_" + blake2b_hex("seg_0", 6));
  EXPECT_TRUE(rc.step_classes[0].has_unknown_shape);
}

TEST_F(ClassifyTest, LayerOutsideTheTableHasNoBlocksAndAnEmptyLabel) {
  auto rank = make_rank({N, A, Q});
  add_segment(*rank, model::SegmentType::kStep, 0, 2, 1);
  add_layer(*rank, 0, 0, 2);
  add_layer(*rank, 0, 7, 9);  // beyond the last row: clamped to nothing, never read
  const model::RankClasses rc = classify(*rank);
  ASSERT_EQ(rc.blocks.size(), 2u);  // attention [0,1] + ffn [2,2], both from layer 0
  EXPECT_EQ(rc.blocks[1].layer, 0u);
  EXPECT_EQ(rc.layer_classes[static_cast<size_t>(rc.layer_class[0])].scope_label, "attention->ffn|companion=0");
  const auto& lc = rc.layer_classes[static_cast<size_t>(rc.layer_class[1])];
  EXPECT_EQ(lc.scope_label, "empty|companion=0");
  EXPECT_TRUE(lc.block_kinds.empty());
  EXPECT_TRUE(lc.has_unknown_shape);
}

TEST_F(ClassifyTest, ClassSignatureIdHashesPythonCompactJson) {
  // json.dumps([...], separators=(",", ":"), ensure_ascii=False): quotes, backslashes and C0
  // controls escaped (\b short, others \u00xx), '<', DEL and non-ASCII kept verbatim.
  const std::string json = R"(["main_len=1 ; \"q\"","attention->ffn|companion=0<)"
                           "\xc3\xa9>\\u0001\x7f"
                           R"(",[["matmulv#","shape_0123456789abcdef"],["a\\b","x\ny\tz\b"]]])";
  const std::string id = class_signature_id("lyr_cls", "main_len=1 ; \"q\"",
                                            "attention->ffn|companion=0<\xc3\xa9>\x01\x7f",
                                            {{"matmulv#", "shape_0123456789abcdef"}, {"a\\b", "x\ny\tz\b"}}, "unused");
  EXPECT_EQ(id, "lyr_cls_" + blake2b_hex(json, 8));
  EXPECT_EQ(id, "lyr_cls_5ccad38670e1a8bc");  // python3 hashlib.blake2b(json, digest_size=8)
  EXPECT_EQ(class_signature_id("blk_cls", "", "ffn|companion=1", {}, "blk_0123"), "blk_cls_unknown_shape_e8667f02d3be");
}

}  // namespace
}  // namespace ascprof::analysis

// Segment-stage rules on kernel sequences generated here row by row (reference-analysis.md §2.2):
// piecewise multi-stream interleaving, adjacent duplicates, and which kernels delimit steps.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ascprof/analysis/normalize.hpp"
#include "ascprof/analysis/segment.hpp"
#include "support/test_support.hpp"

namespace ascprof::analysis {
namespace {

using model::SegmentType;

struct Kernel {
  const char* name;
  const char* type;
  const char* core;
};

const Kernel kAddRmsNorm{"aclnnAddRmsNorm_AddRmsNorm_AddRmsNorm", "AddRmsNorm", "AI_VECTOR_CORE"};
const Kernel kAttention{"aclnnFusedInferAttentionScore_FusedInferAttentionScore_FusedInferAttentionScore",
                        "FusedInferAttentionScore", "MIX_AIC"};
const Kernel kMatMul{"aclnnMatmul_MatMulV3Common_MatMulV3", "MatMulV3", "AI_CORE"};
const Kernel kGating{"aclnnMoeGatingTopK_MoeGatingTopK_MoeGatingTopK", "MoeGatingTopK", "AI_VECTOR_CORE"};
const Kernel kExperts{"aclnnGroupedMatmulV4_GroupedMatmul_GroupedMatmul", "GroupedMatmul", "AI_CORE"};
const Kernel kArgMax{"aclnnArgMax_ArgMaxV2_ArgMaxV2", "ArgMaxV2", "AI_VECTOR_CORE"};
const Kernel kTopKTopP{"aclnnApplyTopKTopP_ApplyTopKTopP_ApplyTopKTopP", "ApplyTopKTopP", "AI_VECTOR_CORE"};

class Capture {
 public:
  // Dense layer: attention + MLP. MoE layer: attention + gating + experts. `stream` runs the layer.
  void dense(int32_t stream = 2) { layer({kAddRmsNorm, kAttention, kMatMul, kAddRmsNorm, kMatMul, kMatMul}, stream); }
  void moe(int32_t stream = 2) { layer({kAddRmsNorm, kAttention, kMatMul, kAddRmsNorm, kGating, kExperts, kExperts}, stream); }
  void layer(const std::vector<Kernel>& ks, int32_t stream) {
    for (const auto& k : ks) push(k, stream);
  }
  void push(const Kernel& k, int32_t stream, bool duplicate_previous = false) {
    if (duplicate_previous) now_ -= 2000;
    table.name.push_back(pool.intern(k.name));
    table.type.push_back(pool.intern(k.type));
    table.accelerator_core.push_back(pool.intern(k.core));
    table.input_shapes.push_back(pool.intern("16,7168"));
    table.output_shapes.push_back(0);
    table.stream_id.push_back(stream);
    table.start_ns.push_back(now_);
    table.dur_ns.push_back(1000);
    now_ += 2000;
  }
  model::RankStructure segment(const knowledge::Knowledge& kb) {
    Stats stats;
    norm_ = normalize_kernels(table, pool, kb, stats);
    SegmentInput in;
    in.kernels = &table;
    in.normalized = &norm_;
    in.pool = &pool;
    in.rank_id = "0";
    return segment_rank(in, kb);
  }

  StringPool pool;
  model::KernelTable table;

 private:
  int64_t now_ = 1'764'000'000'000'000'000;
  NormalizedKernels norm_;
};

class SegmentRules : public ::testing::Test {
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
  static knowledge::Knowledge* kb_;
};
knowledge::Knowledge* SegmentRules::kb_ = nullptr;

// The body template: one dense layer then four MoE layers, ended by ArgMax.
void body(Capture& c) {
  c.dense();
  for (int i = 0; i < 4; ++i) c.moe();
}

std::vector<SegmentType> types(const model::RankStructure& s) {
  std::vector<SegmentType> v;
  for (const auto& seg : s.segments) v.push_back(seg.type);
  return v;
}

// aclgraph piecewise execution: after a normal body, slices of the template (two MoE layers, then
// the template's first two layers) run on another stream before the next ArgMax. The residual is
// covered by template slices at different offsets with a stream change: a
// piecewise_interleaved_window, explained, not an error.
TEST_F(SegmentRules, PiecewiseMultiStreamInterleavingIsRecognised) {
  Capture c;
  for (int step = 0; step < 4; ++step) {
    body(c);
    if (step == 2) {
      c.moe();
      c.moe();
      c.dense(7);
      c.moe(7);
    }
    c.push(kArgMax, 2);
  }
  const auto s = c.segment(*kb_);
  EXPECT_TRUE(s.hard_errors.empty()) << s.hard_errors.size();
  ASSERT_EQ(types(s), (std::vector<SegmentType>{SegmentType::kStep, SegmentType::kStep, SegmentType::kStep,
                                                 SegmentType::kPiecewiseInterleavedWindow, SegmentType::kStep}));
  for (const auto& seg : s.segments) {
    if (seg.type == SegmentType::kStep) {
      EXPECT_EQ(seg.main_layer_count, 5u);
    }
  }
}

// Without the stream change the same residual is not piecewise; its layers all fit template layers,
// so it is an explained partial body window (no error).
TEST_F(SegmentRules, SameResidualOnOneStreamIsAPartialBodyWindow) {
  Capture c;
  for (int step = 0; step < 4; ++step) {
    body(c);
    if (step == 2) {
      c.moe();
      c.moe();
      c.dense();
      c.moe();
    }
    c.push(kArgMax, 2);
  }
  const auto s = c.segment(*kb_);
  std::vector<std::string> errors;
  for (const auto& e : s.hard_errors) errors.push_back(e.error_type);
  EXPECT_EQ(types(s)[3], SegmentType::kPartialBodyWindow);
  EXPECT_TRUE(errors.empty());
}

// Two steps lost the ArgMax between the main body and their first MTP layer ("main+1, spec") while
// two others show both MTP layers: the trailing main layer with the MTP layer's role key moves into
// the speculative tail, so every step is 5 main + 2 speculative.
TEST_F(SegmentRules, MissingSpeculativeBoundaryIsRebalanced) {
  Capture c;
  auto mtp = [&c] {
    c.layer({kAddRmsNorm, kMatMul, kAddRmsNorm, kAttention, kMatMul, kAddRmsNorm, kGating, kExperts}, 2);
  };
  for (int step = 0; step < 4; ++step) {
    body(c);
    if (step % 2 == 0) c.push(kArgMax, 2);  // steps 1 and 3 miss this delimiter
    mtp();
    c.push(kArgMax, 2);
    mtp();
    c.push(kArgMax, 2);
  }
  const auto s = c.segment(*kb_);
  EXPECT_TRUE(s.hard_errors.empty());
  ASSERT_EQ(s.step_count(), 4u);
  int rebalanced = 0;
  for (const auto& seg : s.segments) {
    EXPECT_EQ(seg.main_layer_count, 5u);
    EXPECT_EQ(seg.speculative_layer_count, 2u);
    for (const auto& t : seg.frame_tags) rebalanced += t == "rebalanced_missing_spec_boundary";
  }
  EXPECT_EQ(rebalanced, 2);
}

// Duplicated "piecewise" marker rows (same name, stream, start and duration) do not add layers.
TEST_F(SegmentRules, AdjacentDuplicateAnchorsDoNotAddLayers) {
  Capture c;
  for (int step = 0; step < 3; ++step) {
    c.push(kAddRmsNorm, 2);
    c.push(kAttention, 2);
    c.push(kAttention, 2, /*duplicate_previous=*/true);
    c.push(kMatMul, 2);
    for (int i = 0; i < 3; ++i) c.dense();
    c.push(kArgMax, 2);
  }
  const auto s = c.segment(*kb_);
  EXPECT_TRUE(s.hard_errors.empty());
  ASSERT_EQ(s.step_count(), 3u);
  for (const auto& seg : s.segments) EXPECT_EQ(seg.main_layer_count, 4u);
}

// Only argmax-like kernels delimit steps: top-k/top-p sampling (role `sampling`) does not, so
// bodies ended by ApplyTopKTopP form one frame.
TEST_F(SegmentRules, TopKTopPSamplingIsNotAStepDelimiter) {
  Capture argmax, topk;
  for (int step = 0; step < 3; ++step) {
    body(argmax);
    argmax.push(kArgMax, 2);
    body(topk);
    topk.push(kTopKTopP, 2);
  }
  EXPECT_EQ(argmax.segment(*kb_).step_count(), 3u);
  const auto s = topk.segment(*kb_);
  ASSERT_EQ(s.step_count(), 1u);
  EXPECT_EQ(s.segments[0].main_layer_count, 15u);
}

// A rank without any anchor-bearing kernel is one unclassified island and no error by itself.
TEST_F(SegmentRules, NoAnchorsGiveOneIslandWithoutError) {
  Capture c;
  for (int i = 0; i < 5; ++i) c.push({"aclnnCast_Cast_Cast", "Cast", "AI_VECTOR_CORE"}, 2);
  const auto s = c.segment(*kb_);
  EXPECT_EQ(s.anchor_family, "none");
  ASSERT_EQ(s.segments.size(), 1u);
  EXPECT_EQ(s.segments[0].type, SegmentType::kUnclassifiedIsland);
  EXPECT_EQ(s.segments[0].row_end, 4u);
  EXPECT_TRUE(s.hard_errors.empty());
}

}  // namespace
}  // namespace ascprof::analysis

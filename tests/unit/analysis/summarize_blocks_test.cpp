// Block rows of the summarize stage (reference-analysis.md §2.5.8, block_summary.csv) on kernel
// tables built here row by row, normalized with the real knowledge, and hand-built blocks.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ascprof/analysis/classify.hpp"
#include "ascprof/analysis/normalize.hpp"
#include "ascprof/analysis/summarize.hpp"
#include "support/test_support.hpp"

namespace ascprof::analysis {
namespace {

using Counts = model::NameCounts;

constexpr int64_t kBase = 1'764'000'000'000'000'000;  // epoch ns, as real captures have
constexpr int64_t kUs = 1000;

struct Kernel {
  const char* name;
  const char* type;
  const char* core;
};

const Kernel kMatMul{"aclnnMatmul_MatMulV3Common_MatMulV3", "MatMulV3", "AI_CORE"};
const Kernel kMatMulLower{"aclnnMatmul_MatMulV3Common_MatMulV3", "matmulv3", "AI_CORE"};
const Kernel kAddRmsNorm{"aclnnAddRmsNorm_AddRmsNorm_AddRmsNorm", "AddRmsNorm", "AI_VECTOR_CORE"};
const Kernel kAttention{"aclnnFusedInferAttentionScore_FusedInferAttentionScore_FusedInferAttentionScore",
                        "FusedInferAttentionScore", "MIX_AIC"};
const Kernel kCacheWrite{"aclnnReshapeAndCache_ReshapeAndCache_ReshapeAndCache", "ReshapeAndCache", "AI_VECTOR_CORE"};
const Kernel kExperts{"aclnnGroupedMatmulV4_GroupedMatmul_GroupedMatmul", "GroupedMatmul", "AI_CORE"};
const Kernel kAllReduce{"hcom_allReduce__123_0_1", "HCOM_ALLREDUCE_", "COMMUNICATION"};
const Kernel kAicpu{"Unique", "Unique", "AI_CPU"};
const Kernel kCast{"aclnnCast_Cast_Cast", "Cast", "AI_VECTOR_CORE"};
const Kernel kNoType{"", "", "AI_CORE"};

using Pipe = std::map<std::string, double>;  // canonical pipeline field -> µs

class SummarizeBlocks : public ::testing::Test {
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

  void SetUp() override {
    // Every canonical pipeline field is a metric column (absent cells = 0), like an E3+ capture.
    for (const auto& f : kb_->pipeline.fields()) t_.metrics.push_back({f.name, {}});
  }

  // Row with start / duration in µs relative to kBase.
  uint32_t add(const Kernel& k, int64_t start_us, int64_t dur_us, const Pipe& pipe = {}, int64_t wait_us = 0) {
    t_.name.push_back(pool_.intern(k.name));
    t_.type.push_back(pool_.intern(k.type));
    t_.accelerator_core.push_back(pool_.intern(k.core));
    t_.input_shapes.push_back(0);
    t_.output_shapes.push_back(0);
    t_.stream_id.push_back(1);
    t_.start_ns.push_back(kBase + start_us * kUs);
    t_.dur_ns.push_back(dur_us * kUs);
    t_.wait_ns.push_back(wait_us * kUs);
    for (auto& m : t_.metrics) {
      auto it = pipe.find(m.name);
      m.values.push_back(it == pipe.end() ? 0.0 : it->second);
    }
    return static_cast<uint32_t>(t_.size() - 1);
  }

  void block(uint32_t row_start, uint32_t row_end, model::BlockKind kind = model::BlockKind::kFfn) {
    model::BlockSegment b;
    b.layer = 0;
    b.block_index = static_cast<uint32_t>(classes_.blocks.size());
    b.kind = kind;
    b.row_start = row_start;
    b.row_end = row_end;
    b.event_count = row_end >= row_start ? row_end - row_start + 1 : 0;
    classes_.blocks.push_back(b);
  }

  const std::vector<model::BlockSummary>& run() {
    Stats stats;
    norm_ = normalize_kernels(t_, pool_, *kb_, stats);
    in_ = SummarizeInput{&t_, &norm_, &pool_, kb_};
    structure_.segments.resize(1);
    structure_.layers.resize(1);
    structure_.segments[0].row_start = 0;
    structure_.segments[0].row_end = t_.size() == 0 ? 0 : static_cast<uint32_t>(t_.size() - 1);
    structure_.layers[0].row_start = structure_.segments[0].row_start;
    structure_.layers[0].row_end = structure_.segments[0].row_end;
    rows_ = summarize_blocks(in_, structure_, classes_);
    return rows_;
  }

  size_t field(const char* name) const { return static_cast<size_t>(kb_->pipeline.field_index(name)); }

  static knowledge::Knowledge* kb_;
  StringPool pool_;
  model::KernelTable t_;
  NormalizedKernels norm_;
  SummarizeInput in_;
  model::RankStructure structure_;
  model::RankClasses classes_;
  std::vector<model::BlockSummary> rows_;
};
knowledge::Knowledge* SummarizeBlocks::kb_ = nullptr;

void expect_bound(const model::BoundClass& b, const std::string& stage, const std::string& family,
                  const std::string& core) {
  EXPECT_EQ(b.bound_stage, stage);
  EXPECT_EQ(b.bound_family, family);
  EXPECT_EQ(b.dominant_core, core);
}

struct Top {
  std::string name, type;
  uint64_t calls;
  int64_t dur_us;
  bool operator==(const Top&) const = default;
};
void PrintTo(const Top& t, std::ostream* os) { *os << "{" << t.name << "|" << t.type << " x" << t.calls << " " << t.dur_us << "us}"; }
std::vector<Top> tops(const model::BlockSummary& b) {
  std::vector<Top> v;
  for (const auto& t : b.top_ops) v.push_back({t.name.str(), t.task_type.str(), t.call_count, t.duration_sum_ns / kUs});
  return v;
}

// The reference's [verified] 0.1818 ffn block: 20 µs of communication over a 110 µs kernel sum in a
// 200 µs wall (the wall-based share would be 0.10).
TEST_F(SummarizeBlocks, FfnBlockFieldsAndCommShareOverKernelSum) {
  add(kMatMul, 0, 50, {{"aic_mac_time(us)", 30}, {"aic_mte2_time(us)", 10}, {"aicore_time(us)", 48}}, 5);  // 0
  add(kAddRmsNorm, 60, 40);                                                                              // 1
  add(kAllReduce, 180, 20, {}, 7);                                                                       // 2
  block(0, 2);
  const auto& rows = run();
  ASSERT_EQ(rows.size(), 1u);
  const auto& b = rows[0];
  EXPECT_EQ(b.block, 0u);

  // window metrics of the row range, without top bubbles
  EXPECT_EQ(b.metrics.event_count, 3u);
  EXPECT_EQ(b.metrics.row_start, 0u);
  EXPECT_EQ(b.metrics.row_end, 2u);
  EXPECT_EQ(b.metrics.wall_ns, 200 * kUs);
  EXPECT_EQ(b.metrics.busy_union_ns, 110 * kUs);
  EXPECT_EQ(b.metrics.kernel_sum_ns, 110 * kUs);
  EXPECT_EQ(b.metrics.wait_sum_ns, 12 * kUs);
  EXPECT_EQ(b.metrics.bubble_count, 2u);
  EXPECT_EQ(b.metrics.largest_internal_bubble_ns, 80 * kUs);
  EXPECT_TRUE(b.metrics.top_bubbles.empty());
  EXPECT_EQ(b.metrics.role_counts, (Counts{{"block_head", 1}, {"communication", 1}, {"compute", 1}, {"normalization", 1}}));

  EXPECT_EQ(b.op_type_counts, (Counts{{"aic", 1}, {"aiv", 1}, {"communication", 1}}));
  EXPECT_EQ(b.dominant_op_type, "aic");
  EXPECT_EQ(b.comm_duration_ns, 20 * kUs);
  EXPECT_NEAR(b.comm_share, 20.0 / 110.0, 1e-12);
  EXPECT_NEAR(b.comm_share, 0.1818, 1e-4);

  EXPECT_TRUE(b.pipeline_signal);
  ASSERT_EQ(b.pipeline_us.size(), kb_->pipeline.fields().size());
  EXPECT_DOUBLE_EQ(b.pipeline_us[field("aic_mac_time(us)")], 30);
  EXPECT_DOUBLE_EQ(b.pipeline_us[field("aic_mte2_time(us)")], 10);
  EXPECT_DOUBLE_EQ(b.pipeline_us[field("aicore_time(us)")], 48);
  EXPECT_DOUBLE_EQ(b.pipeline_us[field("aiv_vec_time(us)")], 0);
  expect_bound(b.bound, "aic_mac_time(us)", "cube", "aic");

  EXPECT_EQ(tops(b), (std::vector<Top>{{kMatMul.name, "MATMULV3", 1, 50},
                                       {kAddRmsNorm.name, "ADDRMSNORM", 1, 40},
                                       {kAllReduce.name, "HCOM_ALLREDUCE_", 1, 20}}));
  EXPECT_FALSE(b.has_attention);
  EXPECT_FALSE(b.has_moe);
  EXPECT_TRUE(b.has_communication);
}

// Compute-first lens, signal present: communication dominates the duration, yet the bound is the
// stage bound of the summed pipeline (an op-type lens would say communication).
TEST_F(SummarizeBlocks, SignalPresentCommunicationDominantGivesStageBound) {
  add(kExperts, 0, 10, {{"aiv_vec_time(us)", 6}, {"aic_mac_time(us)", 1}});  // 0
  add(kAllReduce, 10, 100);                                                 // 1
  block(0, 1, model::BlockKind::kMoe);
  const auto& b = run()[0];
  EXPECT_EQ(b.dominant_op_type, "communication");
  EXPECT_TRUE(b.pipeline_signal);
  expect_bound(b.bound, "aiv_vec_time(us)", "vector", "aiv");
  EXPECT_NEAR(b.comm_share, 100.0 / 110.0, 1e-12);
  EXPECT_TRUE(b.has_moe);
  EXPECT_TRUE(b.has_communication);
  EXPECT_FALSE(b.has_attention);
  // the same inputs through the op-type lens would have short-circuited
  expect_bound(bound_class(b.pipeline_us, b.dominant_op_type, false, true, *kb_), "communication", "communication", "none");
}

// Compute-first lens, no signal: the bound follows the dominant op type.
TEST_F(SummarizeBlocks, NoSignalBoundFollowsDominantOpType) {
  add(kAllReduce, 0, 100);   // 0  block 0: communication dominant
  add(kAddRmsNorm, 100, 10); // 1
  add(kAicpu, 200, 30);      // 2  block 1: aicpu dominant
  add(kCast, 230, 5);        // 3
  add(kCast, 300, 5);        // 4  block 2: aiv dominant, no signal
  // 5  block 3: comm + AIV fusion (aiv_time is no stage, so still no stage signal)
  add(kAllReduce, 400, 50, {{"aiv_time(us)", 12}});
  block(0, 1);
  block(2, 3, model::BlockKind::kAicpu);
  block(4, 4);
  block(5, 5);
  const auto& rows = run();
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& b : rows) {
    EXPECT_FALSE(b.pipeline_signal);
    EXPECT_TRUE(b.pipeline_us.empty());
  }
  EXPECT_EQ(rows[0].dominant_op_type, "communication");
  expect_bound(rows[0].bound, "communication", "communication", "none");
  EXPECT_EQ(rows[1].dominant_op_type, "aicpu");
  expect_bound(rows[1].bound, "aicpu", "aicpu", "none");
  EXPECT_EQ(rows[1].comm_duration_ns, 0);
  EXPECT_EQ(rows[1].comm_share, 0.0);
  EXPECT_EQ(rows[2].dominant_op_type, "aiv");
  expect_bound(rows[2].bound, "unknown", "unknown", "none");
  EXPECT_EQ(rows[3].dominant_op_type, "mix_comm_aiv");
  expect_bound(rows[3].bound, "communication", "comm_aiv_mix", "none");
  EXPECT_EQ(rows[3].comm_duration_ns, 50 * kUs);  // mix_comm_aiv counts as communication
  EXPECT_DOUBLE_EQ(rows[3].comm_share, 1.0);
  EXPECT_EQ(rows[3].op_type_counts, (Counts{{"mix_comm_aiv", 1}}));
}

// Dominant op type is by summed duration, not by count; equal durations keep the first seen.
TEST_F(SummarizeBlocks, DominantOpTypeBySummedDurationTiesFirstSeen) {
  add(kCast, 0, 4);        // aiv x3 = 12
  add(kCast, 4, 4);
  add(kCast, 8, 4);
  add(kMatMul, 12, 20);    // aic x1 = 20
  add(kAddRmsNorm, 40, 10);  // block 1: aiv 10 first, then aic 10
  add(kMatMul, 50, 10);
  block(0, 3);
  block(4, 5);
  const auto& rows = run();
  EXPECT_EQ(rows[0].dominant_op_type, "aic");
  EXPECT_EQ(rows[0].op_type_counts, (Counts{{"aic", 1}, {"aiv", 3}}));
  EXPECT_EQ(rows[1].dominant_op_type, "aiv");
}

// Top ops: (name, upper-cased task type) pairs by summed duration, ties first seen, at most 5.
TEST_F(SummarizeBlocks, TopOpsOrderingAndCap) {
  add(kCast, 0, 3);                                             // Cast 3+3 = 6, 2 calls
  add(kMatMul, 10, 5);                                          // MatMul 5 + 7 (lower-case type) = 12
  add(kAddRmsNorm, 20, 6);                                      // AddRmsNorm 6 (ties Cast; seen after it)
  add(kMatMulLower, 30, 7);
  add(kAttention, 40, 9);                                       // 9
  add(kCacheWrite, 50, 1);                                      // 1: sixth, dropped
  add(kCast, 60, 3);
  add(kNoType, 70, 8);                                          // "" name / type -> UNKNOWN, 8
  block(0, 7, model::BlockKind::kAttention);
  const auto& b = run()[0];
  EXPECT_EQ(tops(b), (std::vector<Top>{{kMatMul.name, "MATMULV3", 2, 12},
                                       {kAttention.name, "FUSEDINFERATTENTIONSCORE", 1, 9},
                                       {"UNKNOWN", "UNKNOWN", 1, 8},
                                       {kCast.name, "CAST", 2, 6},
                                       {kAddRmsNorm.name, "ADDRMSNORM", 1, 6}}));
  EXPECT_TRUE(b.has_attention);
}

// has_attention also counts the attention_aux role alone (a cache write); role_counts show it.
TEST_F(SummarizeBlocks, AttentionAuxAloneSetsHasAttention) {
  add(kCacheWrite, 0, 2);
  add(kMatMul, 2, 2);
  block(0, 1);
  const auto& b = run()[0];
  EXPECT_TRUE(b.has_attention);
  EXPECT_FALSE(b.has_moe);
  EXPECT_FALSE(b.has_communication);
  bool aux = false;
  for (const auto& [role, n] : b.metrics.role_counts) aux = aux || (role == "attention_aux" && n == 1);
  EXPECT_TRUE(aux);
}

// Empty blocks (row_end < row_start, or entirely past the table) give zero rows that still classify;
// a block running past the table is clamped.
TEST_F(SummarizeBlocks, EmptyAndClampedBlocks) {
  add(kMatMul, 0, 10, {{"aic_mac_time(us)", 4}});
  add(kAllReduce, 10, 10);
  block(1, 0);
  block(50, 60);
  block(1, 99);
  const auto& rows = run();
  ASSERT_EQ(rows.size(), 3u);
  for (size_t i = 0; i < 2; ++i) {
    const auto& b = rows[i];
    EXPECT_EQ(b.block, i);
    EXPECT_EQ(b.metrics.event_count, 0u);
    EXPECT_EQ(b.metrics.wall_ns, 0);
    EXPECT_TRUE(b.op_type_counts.empty());
    EXPECT_EQ(b.dominant_op_type, "unknown");
    EXPECT_EQ(b.comm_duration_ns, 0);
    EXPECT_EQ(b.comm_share, 0.0);
    EXPECT_FALSE(b.pipeline_signal);
    EXPECT_TRUE(b.pipeline_us.empty());
    expect_bound(b.bound, "unknown", "unknown", "none");
    EXPECT_TRUE(b.top_ops.empty());
    EXPECT_FALSE(b.has_attention || b.has_moe || b.has_communication);
  }
  const auto& c = rows[2];
  EXPECT_EQ(c.metrics.event_count, 1u);
  EXPECT_EQ(c.metrics.row_end, 1u);
  EXPECT_EQ(c.dominant_op_type, "communication");
  expect_bound(c.bound, "communication", "communication", "none");
}

// No blocks, and an input without normalized kernels: no rows, no crash.
TEST_F(SummarizeBlocks, NoBlocksOrNoInput) {
  add(kMatMul, 0, 10);
  EXPECT_TRUE(run().empty());
  block(0, 0);
  SummarizeInput bare{&t_, nullptr, &pool_, kb_};
  EXPECT_TRUE(summarize_blocks(bare, structure_, classes_).empty());
}

// Many blocks tiling a table: each row equals window_metrics of its range, and the per-block
// scratch does not leak between blocks.
TEST_F(SummarizeBlocks, TilingBlocksMatchWindowMetricsAndDoNotLeak) {
  for (int i = 0; i < 60; ++i) {
    add(i % 3 == 0 ? kAttention : i % 3 == 1 ? kMatMul : kAllReduce, i * 10, 1 + i % 4,
        i % 5 == 0 ? Pipe{{"aic_mac_time(us)", 1}} : Pipe{});
  }
  for (uint32_t a = 0; a < 60; a += 6) block(a, a + 5);
  const auto& rows = run();
  ASSERT_EQ(rows.size(), 10u);
  int64_t comm_total = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& b = rows[i];
    const auto m = window_metrics(in_, classes_.blocks[i].row_start, classes_.blocks[i].row_end, 0);
    EXPECT_EQ(b.metrics.kernel_sum_ns, m.kernel_sum_ns);
    EXPECT_EQ(b.metrics.busy_union_ns, m.busy_union_ns);
    EXPECT_EQ(b.metrics.task_type_counts, m.task_type_counts);
    uint64_t calls = 0;
    for (const auto& t : b.top_ops) calls += t.call_count;
    EXPECT_EQ(calls, 6u);  // three distinct ops, two calls each
    EXPECT_EQ(b.op_type_counts, (Counts{{"aic", 2}, {"communication", 2}, {"mix_cv", 2}}));
    EXPECT_TRUE(b.pipeline_signal);  // rows 0, 5, 10, ... : one per 6-row block
    comm_total += b.comm_duration_ns;
  }
  int64_t expect_comm = 0;
  for (int i = 2; i < 60; i += 3) expect_comm += (1 + i % 4) * kUs;
  EXPECT_EQ(comm_total, expect_comm);
}

// End to end with the classify stage: one layer with attention then MoE splits into an attention
// and a moe block; their rows carry the matching flags, and the comm + AIV fused allreduce
// counts as communication inside the moe block.
TEST_F(SummarizeBlocks, BlocksFromClassifyRank) {
  add(kAddRmsNorm, 0, 1);                          // 0 attention block
  add(kAttention, 2, 1);                           // 1
  add(kMatMul, 4, 1);                              // 2
  add(kExperts, 6, 2);                             // 3 moe block (split = (1 + 3) / 2 = 2)
  add(kCast, 10, 1);                               // 4
  add(kAllReduce, 12, 3, {{"aiv_time(us)", 2}});   // 5 mix_comm_aiv
  Stats stats;
  norm_ = normalize_kernels(t_, pool_, *kb_, stats);
  in_ = SummarizeInput{&t_, &norm_, &pool_, kb_};
  structure_.rank_id = "rank0";
  model::StepSegment seg;
  seg.segment_id = "seg_0";
  seg.complete = true;
  seg.row_start = 0;
  seg.row_end = 5;
  seg.main_layer_count = 1;
  seg.layer_count = 1;
  structure_.segments.push_back(seg);
  model::LayerSegment layer;
  layer.layer_id = "layer_0";
  layer.row_start = 0;
  layer.row_end = 5;
  structure_.layer_signatures.push_back("attention:x");
  structure_.layers.push_back(layer);
  classes_ = classify_rank(structure_, t_, norm_, pool_, *kb_);
  ASSERT_EQ(classes_.blocks.size(), 2u);
  ASSERT_EQ(classes_.blocks[0].kind, model::BlockKind::kAttention);
  ASSERT_EQ(classes_.blocks[1].kind, model::BlockKind::kMoe);

  const auto rows = summarize_blocks(in_, structure_, classes_);
  ASSERT_EQ(rows.size(), 2u);
  const auto& att = rows[0];
  EXPECT_EQ(att.metrics.row_start, 0u);
  EXPECT_EQ(att.metrics.row_end, 2u);
  EXPECT_EQ(att.metrics.event_count, classes_.blocks[0].event_count);
  EXPECT_TRUE(att.has_attention);
  EXPECT_FALSE(att.has_moe);
  EXPECT_EQ(att.dominant_op_type, "aiv");  // aiv, mix_cv and aic all sum 1 µs: the first seen wins
  const auto& moe = rows[1];
  EXPECT_EQ(moe.metrics.row_start, 3u);
  EXPECT_EQ(moe.metrics.row_end, 5u);
  EXPECT_TRUE(moe.has_moe);
  EXPECT_TRUE(moe.has_communication);
  EXPECT_FALSE(moe.has_attention);
  EXPECT_EQ(moe.op_type_counts, (Counts{{"aic", 1}, {"aiv", 1}, {"mix_comm_aiv", 1}}));
  EXPECT_EQ(moe.dominant_op_type, "mix_comm_aiv");  // 3 µs against 2 and 1
  EXPECT_EQ(moe.comm_duration_ns, 3 * kUs);
  EXPECT_DOUBLE_EQ(moe.comm_share, 0.5);
  expect_bound(moe.bound, "communication", "comm_aiv_mix", "none");
}

}  // namespace
}  // namespace ascprof::analysis

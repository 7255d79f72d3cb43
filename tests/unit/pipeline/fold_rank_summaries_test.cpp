// What a process keeps of a rank once its summaries are folded (issue 22): the operator and HCCL rows
// are gone, their memory too (a cleared vector keeps its capacity, and once process 0's own outcomes
// moved into the gather instead of being copied those capacities stayed for the whole run).
#include <gtest/gtest.h>

#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

TEST(FoldRankSummaries, FreesTheOperatorAndHcclRows) {
  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  ASSERT_TRUE(kb.ok()) << kb.status().to_string();
  RankOutcome o;
  o.ok = true;
  o.rank_id = "rank0";
  o.parts_file = "ranks/rank0.parts";
  for (int i = 0; i < 100; ++i) {
    OperatorBrief b;
    b.name = "MatMulV2_" + std::to_string(i);
    b.task_type = "AI_CORE";
    b.call_count = 3;
    b.duration_sum_ns = 3000;
    o.operators.push_back(b);
  }
  o.hccl.resize(10);
  RootMerge merge;
  analysis::ClassWalls walls;
  fold_rank_summaries(o, merge, walls, *kb);
  EXPECT_TRUE(o.operators.empty());
  EXPECT_EQ(o.operators.capacity(), 0u);
  EXPECT_EQ(o.hccl.capacity(), 0u);
}

}  // namespace
}  // namespace ascprof::pipeline

// The stage list is declared once (pipeline/stage.hpp): names round-trip, the rank-local stages keep
// the int32 values checkpoints and rank tasks carry, and the order is the pipeline's.
#include "ascprof/pipeline/stage.hpp"

#include <gtest/gtest.h>

namespace ascprof::pipeline {
namespace {

TEST(Stage, NamesRoundTripInPipelineOrder) {
  for (size_t i = 0; i < kStageNames.size(); ++i) {
    const auto s = stage_from_name(kStageNames[i]);
    ASSERT_TRUE(s.has_value()) << kStageNames[i];
    EXPECT_EQ(static_cast<size_t>(*s), i);
    EXPECT_EQ(stage_name(*s), kStageNames[i]);
  }
  EXPECT_FALSE(stage_from_name("resume").has_value());
  EXPECT_FALSE(stage_from_name("").has_value());
  EXPECT_EQ(stage_name_list(), "normalize, segment, classify, summarize, cross_rank, diagnostics, report");
}

TEST(Stage, RankLocalValuesAreStable) {  // stored in checkpoints: a change would redo every rank
  EXPECT_EQ(kStageNormalize, 0);
  EXPECT_EQ(kStageSegment, 1);
  EXPECT_EQ(kStageClassify, 2);
  EXPECT_EQ(kStageSummarize, 3);
  EXPECT_LT(Stage::kSummarize, Stage::kCrossRank);
  EXPECT_LT(Stage::kDiagnostics, Stage::kReport);
}

}  // namespace
}  // namespace ascprof::pipeline

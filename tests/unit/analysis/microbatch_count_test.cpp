// microbatch_count_mismatch (issue 21): the ranks of one training step must agree on its microbatch
// count; the minority is named, non-training steps are left out, agreement gives nothing.
#include <gtest/gtest.h>

#include <algorithm>

#include "ascprof/analysis/align.hpp"
#include "ascprof/analysis/diagnose.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::analysis {
namespace {

const knowledge::Knowledge& kb() { return ascprof::testing::shipped_knowledge(); }

// Two steps on `counts.size()` ranks at the same times; rank r's steps have counts[r] microbatches.
std::vector<StepWindow> windows(const std::vector<uint32_t>& counts) {
  std::vector<StepWindow> w;
  for (int step = 0; step < 2; ++step)
    for (size_t r = 0; r < counts.size(); ++r)
      w.push_back({std::to_string(r), "seg_" + std::to_string(r) + "_" + std::to_string(step), "train", 24,
                   1'000'000'000LL * (step + 1), 1'000'000'000LL * (step + 1) + 800'000'000LL, counts[r]});
  return w;
}

std::vector<model::Finding> findings(const std::vector<StepWindow>& w) {
  const auto steps = align_steps(w, std::vector<int64_t>(w.size(), 0), kb().diagnostics);
  EXPECT_EQ(steps.size(), 2u);
  return diagnose_microbatch_counts(steps, w);
}

TEST(MicrobatchCount, TheMinorityCountIsNamedPerStep) {
  const auto w = windows({4, 4, 1, 4});
  const auto f = findings(w);
  ASSERT_EQ(f.size(), 2u);  // one per step
  for (const auto& x : f) {
    EXPECT_EQ(x.finding_type, "microbatch_count_mismatch");
    EXPECT_EQ(x.suspected_ranks, std::vector<std::string>{"2"});
    EXPECT_EQ(x.evidence_ids.size(), 4u);
    EXPECT_NE(x.summary.find("1 on ranks 2; 4 on ranks 0,1,3"), std::string::npos) << x.summary;
    EXPECT_FALSE(x.limitations.empty());
    EXPECT_TRUE(finding_is_traceable(x));
  }
}

TEST(MicrobatchCount, AgreementAndNonTrainingStepsGiveNothing) {
  EXPECT_TRUE(findings(windows({3, 3, 3})).empty());
  EXPECT_TRUE(findings(windows({0, 0, 0})).empty());   // inference steps: no microbatches
  EXPECT_TRUE(findings(windows({3, 0, 3})).empty());   // a rank without a training step is not counted
  const auto tie = findings(windows({2, 2, 4, 4}));     // a tie names nobody but is still said
  ASSERT_EQ(tie.size(), 2u);
  EXPECT_TRUE(tie[0].suspected_ranks.empty());
}

}  // namespace
}  // namespace ascprof::analysis

// The slow-rank vote on hand-made collective times: Dixon's Q for small groups, the sigma rule for
// large ones, vote thresholds, and the victim rule.
#include <gtest/gtest.h>

#include "ascprof/analysis/diagnose.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::analysis {
namespace {

const knowledge::Knowledge& kb() { return ascprof::testing::shipped_knowledge(); }

std::vector<std::string> ids(size_t n) {
  std::vector<std::string> v;
  for (size_t i = 0; i < n; ++i) v.push_back(std::to_string(i));
  return v;
}

TEST(SlowRank, DixonVoteInSmallGroups) {
  // 4 ranks, 5 collectives of one communicator: rank 2 always short (others wait ~1 ms)
  std::vector<std::vector<CollectiveTime>> t(4);
  for (uint32_t s = 0; s < 5; ++s)
    for (size_t r = 0; r < 4; ++r) t[r].push_back({7, s, r == 2 ? 0.05 : 1.0 + 0.01 * static_cast<double>(r)});
  const auto f = diagnose_slow_ranks(ids(4), t, kb());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].suspected_ranks, std::vector<std::string>{"2"});
  EXPECT_EQ(f[0].severity, "high");
  EXPECT_NEAR(f[0].magnitude_ms, 5 * (1.01 - 0.05), 1e-9);  // the median member (1.01 ms) waited, summed
}

TEST(SlowRank, NoOutlierNoVoteAndTooFewVotesNoFinding) {
  std::vector<std::vector<CollectiveTime>> t(4);
  for (uint32_t s = 0; s < 5; ++s)
    for (size_t r = 0; r < 4; ++r) t[r].push_back({7, s, 1.0 + 0.1 * static_cast<double>(r)});  // evenly spread
  EXPECT_TRUE(diagnose_slow_ranks(ids(4), t, kb()).empty());
  // an outlier in only 2 collectives: below min_votes (3)
  for (uint32_t s = 0; s < 2; ++s) t[3][s].elapse_ms = 0.01;
  EXPECT_TRUE(diagnose_slow_ranks(ids(4), t, kb()).empty());
}

TEST(SlowRank, SigmaRuleForLargeGroups) {
  const size_t n = 40;
  std::vector<std::vector<CollectiveTime>> t(n);
  for (uint32_t s = 0; s < 4; ++s)
    for (size_t r = 0; r < n; ++r) t[r].push_back({9, s, r == 17 ? 0.1 : 2.0 + 0.001 * static_cast<double>(r % 5)});
  const auto f = diagnose_slow_ranks(ids(n), t, kb());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].suspected_ranks, std::vector<std::string>{"17"});
}

TEST(SlowRank, CollectiveTimesSkipP2pAndTotalsAndNumberPerCommunicator) {
  model::CommStatTable c;
  auto add = [&c](uint64_t group, bool p2p, bool total, int64_t start, double elapse) {
    c.step.push_back(1);
    c.is_p2p.push_back(p2p);
    c.is_total.push_back(total);
    c.op_name.push_back(0);
    c.group_hash.push_back(group);
    c.op_kind.push_back(0);
    c.start_ns.push_back(start);
    c.elapse_ms.push_back(elapse);
  };
  add(5, false, false, 300, 3.0);
  add(5, false, false, 100, 1.0);
  add(6, false, false, 200, 2.0);
  add(5, true, false, 150, 9.0);
  add(5, false, true, 0, 9.0);
  const auto t = collective_times(c);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].group_hash, 5u);
  EXPECT_EQ(t[0].seq, 0u);
  EXPECT_EQ(t[0].elapse_ms, 1.0);
  EXPECT_EQ(t[1].group_hash, 6u);
  EXPECT_EQ(t[1].seq, 0u);
  EXPECT_EQ(t[2].seq, 1u);
}

}  // namespace
}  // namespace ascprof::analysis

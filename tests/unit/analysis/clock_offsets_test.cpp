// Clock offsets from shared collectives: exact on clean data, robust to a stray collective (median),
// chained through communicators that do not include the reference rank, and "not estimated" when a
// rank shares nothing.
#include "ascprof/analysis/clock_offsets.hpp"

#include <gtest/gtest.h>

#include <tuple>

namespace ascprof::analysis {
namespace {

CollectiveMarks marks_of(std::initializer_list<std::tuple<const char*, uint32_t, int64_t>> list) {
  CollectiveMarks m;
  for (const auto& [group, seq, end_ns] : list) m.add(group, seq, end_ns);
  return m;
}

TEST(ClockOffsets, MedianOfSharedCollectiveEnds) {
  // rank 1's clock runs 2 ms ahead; one collective of rank 1 ended late (an outlier the median ignores)
  std::vector<CollectiveMarks> marks(2);
  for (uint32_t s = 0; s < 5; ++s) {
    marks[0].add("world", s, 1'000'000 * s);
    marks[1].add("world", s, 1'000'000 * s + 2'000'000 + (s == 3 ? 900'000 : 0));
  }
  const auto o = estimate_clock_offsets({"0", "1"}, marks);
  ASSERT_EQ(o.size(), 2u);
  EXPECT_TRUE(o[0].estimated);
  EXPECT_EQ(o[0].offset_us, 0.0);
  EXPECT_TRUE(o[1].estimated);
  EXPECT_DOUBLE_EQ(o[1].offset_us, 2000.0);
  EXPECT_EQ(o[1].collectives, 5u);
  EXPECT_EQ(o[1].via_rank, "0");
  EXPECT_DOUBLE_EQ(o[1].spread_us, 0.0);
}

TEST(ClockOffsets, ChainsThroughOtherCommunicatorsAndSaysWhenItCannot) {
  // 0-1 share "tp0"; 1-2 share "dp1"; 2 is +5 ms, 1 is -1 ms; 3 shares nothing
  std::vector<CollectiveMarks> marks(4);
  marks[0] = marks_of({{"tp0", 0, 10'000'000}});
  marks[1] = marks_of({{"tp0", 0, 9'000'000}, {"dp1", 0, 20'000'000}});
  marks[2] = marks_of({{"dp1", 0, 26'000'000}});
  marks[3] = marks_of({{"tp9", 0, 1}});
  const auto o = estimate_clock_offsets({"0", "1", "2", "3"}, marks);
  EXPECT_DOUBLE_EQ(o[1].offset_us, -1000.0);
  EXPECT_DOUBLE_EQ(o[2].offset_us, 5000.0);
  EXPECT_EQ(o[2].via_rank, "1");
  EXPECT_FALSE(o[3].estimated);
}

TEST(ClockOffsets, MarksNumberOpsPerCommunicatorAndSample) {
  StringPool pool;
  model::CommOpTable ops;
  for (int i = 0; i < 400; ++i) {
    ops.name.push_back(pool.intern("hcom_allReduce_"));
    ops.group.push_back(pool.intern(i % 2 ? "Group b Communication" : "Group a Communication"));
    ops.start_ns.push_back(1000 * i);
    ops.dur_ns.push_back(10);
  }
  const auto m = collective_marks(ops, pool, 100, 50);
  // per group 200 ops: seq 0..99 kept, then 100 and 150
  ASSERT_EQ(m.size(), 2u * 102u);
  ASSERT_EQ(m.groups.size(), 2u);  // each name once
  EXPECT_EQ(m.groups[m.marks[0].group], "Group a Communication");
  EXPECT_EQ(m.marks[0].seq, 0u);
  EXPECT_EQ(m.marks[0].end_ns, 10);
  EXPECT_EQ(m.groups[m.marks[1].group], "Group b Communication");
  EXPECT_EQ(m.marks[1].seq, 0u);  // first op of group b
  EXPECT_EQ(m.marks.back().seq, 150u);
}

}  // namespace
}  // namespace ascprof::analysis

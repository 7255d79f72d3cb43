#include "ascprof/parallel/schedule.hpp"

#include <gtest/gtest.h>

namespace ascprof::parallel {
namespace {

TEST(AssignLargestFirst, HugeItemGetsItsOwnProcess) {
  // one 10 GB rank and six 1 GB ranks on 2 processes: the big one alone, the rest on the other
  const std::vector<uint64_t> sizes = {1, 1, 10, 1, 1, 1, 1};
  const auto a = assign_largest_first(sizes, 2);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0], (std::vector<size_t>{2}));
  EXPECT_EQ(a[1], (std::vector<size_t>{0, 1, 3, 4, 5, 6}));
}

TEST(AssignLargestFirst, MoreProcessesThanItemsAndEmpty) {
  const auto a = assign_largest_first({5, 7}, 3);
  EXPECT_EQ(a[0], (std::vector<size_t>{1}));
  EXPECT_EQ(a[1], (std::vector<size_t>{0}));
  EXPECT_TRUE(a[2].empty());
  const auto e = assign_largest_first({}, 2);
  EXPECT_TRUE(e[0].empty() && e[1].empty());
}

TEST(AssignLargestFirst, EveryItemExactlyOnce) {
  std::vector<uint64_t> sizes;
  for (int i = 0; i < 100; ++i) sizes.push_back(static_cast<uint64_t>((i * 7919) % 113));
  for (int np : {1, 2, 3, 7}) {
    const auto a = assign_largest_first(sizes, np);
    std::vector<int> seen(sizes.size(), 0);
    for (const auto& items : a)
      for (size_t i : items) ++seen[i];
    for (int s : seen) EXPECT_EQ(s, 1);
  }
}

}  // namespace
}  // namespace ascprof::parallel

// WallSet: the class walls as sorted delta-coded runs count exactly what the sorted values count,
// whatever the order and chunking of the adds (ties, negatives, the int64 extremes, spreads that
// need ten-byte varints), sealed or not; and realistic walls take ~2 bytes a value, not 8.
#include "ascprof/analysis/wall_set.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace ascprof::analysis {
namespace {

uint64_t count_sorted(const std::vector<int64_t>& sorted, int64_t x) {
  return static_cast<uint64_t>(std::upper_bound(sorted.begin(), sorted.end(), x) - sorted.begin());
}

TEST(WallSet, CountsEqualTheSortedValuesForAnyOrderAndChunking) {
  std::mt19937_64 rng(20261204);
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  for (int round = 0; round < 60; ++round) {
    const size_t n = round % 3 == 0 ? rng() % 50 : 1 + rng() % 60'000;
    std::vector<int64_t> values(n);
    for (auto& v : values) {
      switch (rng() % 5) {
        case 0: v = static_cast<int64_t>(rng()); break;                                 // the whole range
        case 1: v = 100'000 + static_cast<int64_t>(rng() % 20'000); break;              // a block wall
        case 2: v = static_cast<int64_t>(rng() % 7) - 3; break;                         // ties, negatives
        case 3: v = rng() % 2 ? kMin : kMax; break;                                     // the extremes
        default: v = static_cast<int64_t>(rng() % 1'000'000'000); break;
      }
    }
    WallSet set;
    for (size_t at = 0; at < n;) {
      const size_t k = std::min<size_t>(n - at, 1 + rng() % 9'000);
      set.add(std::span<const int64_t>(values.data() + at, k));
      at += k;
    }
    std::vector<int64_t> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(set.size(), n);
    std::vector<int64_t> probes = {kMin, kMax, 0, -1, 1, 100'000, 119'999};
    for (int i = 0; i < 200 && n > 0; ++i) {
      const int64_t v = sorted[rng() % n];
      probes.insert(probes.end(), {v, v == kMin ? v : v - 1, v == kMax ? v : v + 1});
    }
    for (const int64_t x : probes) ASSERT_EQ(set.count_le(x), count_sorted(sorted, x)) << "unsealed, x " << x;
    set.seal();
    for (const int64_t x : probes) ASSERT_EQ(set.count_le(x), count_sorted(sorted, x)) << "sealed, x " << x;
    ASSERT_EQ(set.sorted(), sorted);
  }
}

TEST(WallSet, RealisticWallsTakeAboutTwoBytesAValue) {
  // a 5,000-rank process's share of one block class: walls around 150 µs, a few % apart
  std::mt19937_64 rng(7);
  std::normal_distribution<double> wall(150'000.0, 6'000.0);
  WallSet set;
  std::vector<int64_t> rank(2'000);
  for (int r = 0; r < 1'000; ++r) {
    for (auto& v : rank) v = static_cast<int64_t>(wall(rng));
    set.add(rank);
  }
  set.seal();
  const double per_value = static_cast<double>(set.heap_bytes()) / static_cast<double>(set.size());
  EXPECT_LT(per_value, 2.5) << set.heap_bytes() << " bytes for " << set.size() << " walls";
}

}  // namespace
}  // namespace ascprof::analysis

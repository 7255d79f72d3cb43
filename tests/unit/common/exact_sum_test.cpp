// ExactSum: the correctly rounded exact sum, whatever the order and grouping of the additions.
#include "ascprof/common/exact_sum.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace ascprof {
namespace {

// Values k * 2^-30 with |k| < 2^62: their exact sum is an integer count of 2^-30 (no overflow in
// __int128), rounded once to a double by the conversion.
__extension__ using Int128 = __int128;

double reference_sum(const std::vector<int64_t>& ks) {
  Int128 total = 0;
  for (const int64_t k : ks) total += k;
  return std::ldexp(static_cast<double>(total), -30);  // int128 -> double rounds to nearest, ties even
}

TEST(ExactSum, AnyOrderAndGroupingGivesTheCorrectlyRoundedSum) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<int64_t> ks;
    for (size_t i = 1 + rng() % 60; i > 0; --i) {
      // magnitudes from 2^0 to 2^61 (units of 2^-30), mixed signs: cancellation and absorption
      const int shift = static_cast<int>(rng() % 62);
      int64_t k = static_cast<int64_t>(rng() >> (63 - shift)) | 1;
      if (rng() % 2) k = -k;
      ks.push_back(k);
    }
    std::vector<double> xs;
    for (const int64_t k : ks) xs.push_back(std::ldexp(static_cast<double>(k), -30));
    // every k fits a double exactly (|k| < 2^53 is not guaranteed): use the doubles' own exact values
    for (size_t i = 0; i < ks.size(); ++i) ks[i] = static_cast<int64_t>(std::ldexp(xs[i], 30));
    const double want = reference_sum(ks);

    ExactSum whole;
    for (const double x : xs) whole.add(x);
    EXPECT_EQ(whole.value(), want) << "trial " << trial;

    std::shuffle(xs.begin(), xs.end(), rng);
    std::vector<ExactSum> parts(1 + rng() % 4);
    for (const double x : xs) parts[rng() % parts.size()].add(x);
    ExactSum merged;
    for (const auto& p : parts) merged.add(p);
    EXPECT_EQ(merged.value(), want) << "trial " << trial;
  }
}

TEST(ExactSum, CancellationThatASequentialSumLoses) {
  ExactSum s;
  for (const double x : {1e100, 1.0, -1e100, 1e-3}) s.add(x);
  EXPECT_EQ(s.value(), 1.001);
  double plain = 0;
  for (const double x : {1e100, 1.0, -1e100, 1e-3}) plain += x;
  EXPECT_NE(plain, 1.001);  // what the tree would get wrong without it
}

TEST(ExactSum, EmptyIsZeroAndSpecialValuesWin) {
  ExactSum s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.value(), 0.0);
  s.add(2.5);
  s.add(std::numeric_limits<double>::infinity());
  EXPECT_EQ(s.value(), std::numeric_limits<double>::infinity());
  s.add(-std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(s.value()));
}

}  // namespace
}  // namespace ascprof

// align_steps (reference §2.7, step_time_overlap_v1) against the rule itself, written the obvious
// O(W²) way: for each window in order, it and every window of another rank that overlaps it by at
// least min_overlap_ratio of the shorter (floored at 1 µs) form a set; a set is kept once (by its
// sorted segment ids), anchor first, the rest in window order. Captures of every shape: steps in
// lockstep (one clique per step), jitter and clock offsets, a slow rank whose steps straddle two of
// the others', steps that chain into one long component, zero-length and duplicated windows.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "ascprof/analysis/align.hpp"
#include "ascprof/common/stable_id.hpp"
#include "support/shipped_knowledge.hpp"

namespace ascprof::analysis {
namespace {

const knowledge::DiagnosticsRules& rules() { return ascprof::testing::shipped_knowledge().diagnostics; }

struct Expected {
  std::vector<size_t> members;
  std::vector<std::string> rank_ids;
  std::string alignment_id;  // the reference's: its sorted segment ids
};

std::vector<Expected> brute_force(const std::vector<StepWindow>& w, const std::vector<int64_t>& off, double ratio) {
  std::vector<Expected> out;
  std::set<std::vector<std::string>> seen;
  for (size_t i = 0; i < w.size(); ++i) {
    Expected e;
    e.members.push_back(i);
    const int64_t si = w[i].start_ns - off[i], ei = w[i].end_ns - off[i];
    for (size_t j = 0; j < w.size(); ++j) {
      if (j == i || w[j].rank_id == w[i].rank_id) continue;
      const int64_t sj = w[j].start_ns - off[j], ej = w[j].end_ns - off[j];
      const int64_t overlap = std::min(ei, ej) - std::max(si, sj);
      const int64_t shorter = std::max<int64_t>(1000, std::min(ei - si, ej - sj));
      if (overlap > 0 && static_cast<double>(overlap) / static_cast<double>(shorter) >= ratio) e.members.push_back(j);
    }
    if (e.members.size() < 2) continue;
    std::vector<std::string> key;
    for (const size_t m : e.members) key.push_back(w[m].segment_id);
    std::sort(key.begin(), key.end());
    if (!seen.insert(key).second) continue;
    std::string joined;
    for (const auto& id : key) joined += id + ",";
    e.alignment_id = stable_id("align", {"time_window", joined});
    for (const size_t m : e.members)
      if (std::find(e.rank_ids.begin(), e.rank_ids.end(), w[m].rank_id) == e.rank_ids.end()) e.rank_ids.push_back(w[m].rank_id);
    out.push_back(std::move(e));
  }
  return out;
}

void expect_as_the_rule(const std::vector<StepWindow>& w, const std::vector<int64_t>& off, const std::string& what) {
  const auto want = brute_force(w, off, rules().align_min_overlap_ratio);
  const auto got = align_steps(w, off, rules());
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t a = 0; a < got.size(); ++a) {
    EXPECT_EQ(got[a].members, want[a].members) << what << ", alignment " << a;
    EXPECT_EQ(got[a].rank_ids, want[a].rank_ids) << what << ", alignment " << a;
    EXPECT_EQ(got[a].alignment_id, want[a].alignment_id) << what << ", alignment " << a;
  }
}

// Segment ids share a 16-byte prefix and differ in length, as real ones ("<root>_rank<N>_step<M>")
// do, so ordering them needs more than the first 16 bytes.
StepWindow window(int rank, int step, int64_t start, int64_t end, const char* family = "decode") {
  return {std::to_string(rank), "capture_root_a_rank" + std::to_string(rank) + "_step" + std::to_string(step), family, 61,
          start, end, 0};
}

// `ranks` ranks × `steps` steps of `len` ns with gaps of `gap` ns; each window jittered by up to
// `jitter` ns and shifted by the rank's clock offset (undone by the offsets passed to align_steps
// when `correct`); rank `slow` (if any) runs `slow_factor` times longer from its own start.
struct Shape {
  int ranks = 8, steps = 5;
  int64_t len = 10'000'000, gap = 1'000'000, jitter = 0, clock_spread = 0;
  int slow = -1;
  double slow_factor = 1;
  bool correct = true;
};

std::pair<std::vector<StepWindow>, std::vector<int64_t>> capture(const Shape& s, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> jit(-s.jitter, s.jitter), clock(-s.clock_spread, s.clock_spread);
  std::vector<StepWindow> w;
  std::vector<int64_t> off;
  std::vector<int64_t> rank_clock(static_cast<size_t>(s.ranks));
  for (auto& c : rank_clock) c = s.clock_spread ? clock(rng) : 0;
  for (int step = 0; step < s.steps; ++step)
    for (int r = 0; r < s.ranks; ++r) {
      const double f = r == s.slow ? s.slow_factor : 1.0;
      const int64_t len = static_cast<int64_t>(static_cast<double>(s.len) * f);
      const int64_t begin = static_cast<int64_t>(static_cast<double>(step * (s.len + s.gap)) * f) + (s.jitter ? jit(rng) : 0);
      const int64_t c = rank_clock[static_cast<size_t>(r)];
      w.push_back(window(r, step, begin + c, begin + len + c));
      off.push_back(s.correct ? c : 0);
    }
  // windows of a rank arrive together from its outcome, not interleaved by step
  std::vector<size_t> order(w.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return std::stoi(w[a].rank_id) < std::stoi(w[b].rank_id); });
  std::vector<StepWindow> w2;
  std::vector<int64_t> off2;
  for (const size_t i : order) {
    w2.push_back(w[i]);
    off2.push_back(off[i]);
  }
  return {w2, off2};
}

TEST(AlignSteps, LockstepStepsGiveOneAlignmentPerStepWithEveryRank) {
  Shape s;
  s.jitter = 200'000;
  const auto [w, off] = capture(s, 1);
  const auto got = align_steps(w, off, rules());
  ASSERT_EQ(got.size(), 5u);
  for (size_t step = 0; step < got.size(); ++step) {
    EXPECT_EQ(got[step].members.size(), 8u);
    EXPECT_EQ(got[step].members.front(), step) << "rank 0's step is the first anchor";
    EXPECT_EQ(got[step].confidence, "high");
  }
  expect_as_the_rule(w, off, "lockstep");
}

TEST(AlignSteps, EveryShapeEqualsTheRule) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    Shape jittery;  // jitter as large as the gap: steps chain into long components
    jittery.jitter = 1'500'000;
    Shape skewed;  // clock offsets, corrected
    skewed.clock_spread = 4'000'000;
    skewed.jitter = 300'000;
    Shape uncorrected = skewed;  // the same offsets left in: windows straddle neighbouring steps
    uncorrected.correct = false;
    Shape slow;  // one rank 1.6× slower: its steps drift across the others'
    slow.slow = 3;
    slow.slow_factor = 1.6;
    slow.steps = 7;
    Shape tiny;  // sub-µs windows: the 1 µs floor of the shorter
    tiny.len = 600;
    tiny.gap = 100;
    tiny.jitter = 300;
    Shape scattered;  // far-apart steps, but within a step some pairs overlap less than the ratio
    scattered.gap = 20'000'000;
    scattered.jitter = 4'500'000;
    Shape many;
    many.ranks = 40;
    many.steps = 3;
    many.jitter = 2'000'000;
    for (const auto& [name, s] : std::vector<std::pair<const char*, Shape>>{
             {"jittery", jittery}, {"skewed", skewed}, {"uncorrected", uncorrected}, {"slow", slow}, {"tiny", tiny}, {"scattered", scattered}, {"many", many}}) {
      const auto [w, off] = capture(s, seed);
      expect_as_the_rule(w, off, std::string(name) + " seed " + std::to_string(seed));
    }
  }
}

TEST(AlignSteps, ZeroLengthDuplicatedAndSingleRankWindows) {
  std::vector<StepWindow> w = {window(0, 0, 0, 10'000'000),          window(1, 0, 0, 10'000'000),
                               window(2, 0, 5'000'000, 5'000'000),   // zero length: overlaps nothing
                               window(0, 1, 20'000'000, 30'000'000),  // alone at its time
                               window(1, 2, 40'000'000, 50'000'000),  // two copies of one rank's step
                               window(1, 2, 40'000'000, 50'000'000), window(2, 3, 41'000'000, 43'000'000)};
  const std::vector<int64_t> off(w.size(), 0);
  expect_as_the_rule(w, off, "edge cases");
  const auto got = align_steps(w, off, rules());
  ASSERT_EQ(got.size(), 3u);  // the copies' sets are one by segment ids; rank 2's set holds both copies
  EXPECT_EQ(got[0].members, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(got[1].members, (std::vector<size_t>{4, 6}));
  EXPECT_EQ(got[2].members, (std::vector<size_t>{6, 4, 5}));
  EXPECT_EQ(got[2].rank_ids, (std::vector<std::string>{"2", "1"}));
}

TEST(AlignSteps, ShortOverlapBelowTheRatioDoesNotAlign) {
  // 19 % of the shorter: not aligned; 20 %: aligned (min_overlap_ratio = 0.20 shipped)
  ASSERT_DOUBLE_EQ(rules().align_min_overlap_ratio, 0.20);
  const std::vector<int64_t> off(2, 0);
  EXPECT_TRUE(align_steps({window(0, 0, 0, 100'000), window(1, 0, 81'000, 200'000)}, off, rules()).empty());
  EXPECT_EQ(align_steps({window(0, 0, 0, 100'000), window(1, 0, 80'000, 200'000)}, off, rules()).size(), 1u);
}

TEST(AlignSteps, IdsOfAnyLengthAndByteAreOrderedAsStrings) {
  // the alignment id hashes the sorted segment ids: short, prefix-related and high-byte ids
  std::vector<StepWindow> w;
  const char* const ids[] = {"b", "ab", "a", "abc\xff", "abc", "abcdefghijklmnopq", "abcdefghijklmnop", ""};
  for (int r = 0; r < 8; ++r) w.push_back({std::to_string(r), ids[r], "decode", 61, 0, 10'000'000, 0});
  expect_as_the_rule(w, std::vector<int64_t>(w.size(), 0), "ids");
}

}  // namespace
}  // namespace ascprof::analysis

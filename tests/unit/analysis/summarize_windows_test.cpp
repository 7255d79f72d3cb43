// Window part of the summarize stage (reference-analysis.md §2.5.1-§2.5.3, §2.5.9) on kernel tables
// built here row by row with known intervals.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <ostream>
#include <random>
#include <tuple>
#include <string>
#include <vector>

#include "ascprof/analysis/normalize.hpp"
#include "ascprof/analysis/segment.hpp"
#include "ascprof/analysis/summarize.hpp"
#include "support/test_support.hpp"

namespace ascprof::analysis {
namespace {

using Counts = model::NameCounts;
using model::SegmentType;

struct Kernel {
  const char* name;
  const char* type;
  const char* core;
};

const Kernel kAddRmsNorm{"aclnnAddRmsNorm_AddRmsNorm_AddRmsNorm", "AddRmsNorm", "AI_VECTOR_CORE"};
const Kernel kAttention{"aclnnFusedInferAttentionScore_FusedInferAttentionScore_FusedInferAttentionScore",
                        "FusedInferAttentionScore", "MIX_AIC"};
const Kernel kCacheWrite{"aclnnReshapeAndCache_ReshapeAndCache_ReshapeAndCache", "ReshapeAndCache", "AI_VECTOR_CORE"};
const Kernel kMatMul{"aclnnMatmul_MatMulV3Common_MatMulV3", "MatMulV3", "AI_CORE"};
const Kernel kMatMulLower{"aclnnMatmul_MatMulV3Common_MatMulV3", "matmulv3", "AI_CORE"};
const Kernel kExperts{"aclnnGroupedMatmulV4_GroupedMatmul_GroupedMatmul", "GroupedMatmul", "AI_CORE"};
const Kernel kAllReduce{"hcom_allReduce__123_0_1", "HCOM_ALLREDUCE_", "COMMUNICATION"};
const Kernel kArgMax{"aclnnArgMax_ArgMaxV2_ArgMaxV2", "ArgMaxV2", "AI_VECTOR_CORE"};
const Kernel kTopKTopP{"aclnnApplyTopKTopP_ApplyTopKTopP_ApplyTopKTopP", "ApplyTopKTopP", "AI_VECTOR_CORE"};
const Kernel kCast{"aclnnCast_Cast_Cast", "Cast", "AI_VECTOR_CORE"};

constexpr int64_t kBase = 1'764'000'000'000'000'000;  // epoch ns, as real captures have
constexpr int64_t kUs = 1000;
constexpr int64_t kMs = 1000 * kUs;

// A kernel table filled row by row, normalized with the real knowledge.
class Table {
 public:
  // Row with start/duration relative to kBase (ns); wait < 0 = absent.
  uint32_t add(const Kernel& k, int64_t start, int64_t dur, int32_t stream = 1, int64_t wait = 0) {
    t.name.push_back(pool.intern(k.name));
    t.type.push_back(pool.intern(k.type));
    t.accelerator_core.push_back(pool.intern(k.core));
    t.input_shapes.push_back(pool.intern("16,7168"));
    t.output_shapes.push_back(0);
    t.stream_id.push_back(stream);
    t.start_ns.push_back(kBase + start);
    t.dur_ns.push_back(dur);
    t.wait_ns.push_back(wait < 0 ? model::kAbsentI64 : wait);
    return static_cast<uint32_t>(t.size() - 1);
  }
  SummarizeInput input(const knowledge::Knowledge& kb) {
    Stats stats;
    norm = normalize_kernels(t, pool, kb, stats);
    SummarizeInput in;
    in.kernels = &t;
    in.normalized = &norm;
    in.pool = &pool;
    in.kb = &kb;
    return in;
  }
  StringPool pool;
  model::KernelTable t;
  NormalizedKernels norm;
};

class SummarizeWindows : public ::testing::Test {
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
  static knowledge::Knowledge* kb_;
};
knowledge::Knowledge* SummarizeWindows::kb_ = nullptr;

struct Gap {
  uint32_t index;
  int64_t start, end;  // relative to kBase, µs
  uint32_t before, after;
  bool operator==(const Gap&) const = default;
};
void PrintTo(const Gap& g, std::ostream* os) {
  *os << "{#" << g.index << " [" << g.start << "," << g.end << ") " << g.before << "->" << g.after << "}";
}
using Gaps = std::vector<Gap>;

Gaps gaps(const model::WindowMetrics& m) {
  Gaps v;
  for (const auto& b : m.top_bubbles)
    v.push_back({b.bubble_index, (b.start_ns - kBase) / kUs, (b.end_ns - kBase) / kUs, b.before_row, b.after_row});
  return v;
}

// Overlapping, touching, nested, zero-length and out-of-order rows (times in µs):
//   r0 [0,10) r1 [5,15) overlap; r2 [15,20) touches r1 (merged); r3 [16,18) nested;
//   r4 [30,30) zero-length; r5 [40,50); r6 [25,28) starts before r5 (out of order);
//   r7 [60,61); r8 [70,70) zero-length that still ends the window.
// Busy runs: [0,20) [25,28) [40,50) [60,61) = 34 µs of a 70 µs wall.
void fill_mixed(Table& tb) {
  tb.add(kMatMul, 0, 10 * kUs, 1, 2 * kUs);
  tb.add(kAttention, 5 * kUs, 10 * kUs, 2, 1 * kUs);
  tb.add(kCacheWrite, 15 * kUs, 5 * kUs, 1, -1);
  tb.add(kMatMulLower, 16 * kUs, 2 * kUs, 1);
  tb.add(kAddRmsNorm, 30 * kUs, 0, 1);
  tb.add(kExperts, 40 * kUs, 10 * kUs, 7);
  tb.add(kAllReduce, 25 * kUs, 3 * kUs, 7, 4 * kUs);
  tb.add(kMatMul, 60 * kUs, 1 * kUs, 1);
  tb.add(kCast, 70 * kUs, 0, 1);
}

TEST_F(SummarizeWindows, MergesIntervalsAndFindsBubbles) {
  Table tb;
  fill_mixed(tb);
  const auto in = tb.input(*kb_);
  const auto m = window_metrics(in, 0, 8, 8);
  EXPECT_EQ(m.event_count, 9u);
  EXPECT_EQ(m.row_start, 0u);
  EXPECT_EQ(m.row_end, 8u);
  EXPECT_EQ(m.start_ns, kBase);
  EXPECT_EQ(m.end_ns, kBase + 70 * kUs);
  EXPECT_EQ(m.wall_ns, 70 * kUs);
  EXPECT_EQ(m.busy_union_ns, 34 * kUs);
  EXPECT_EQ(m.underfeed_ns, 36 * kUs);
  EXPECT_DOUBLE_EQ(m.underfeed_ratio, 36.0 / 70.0);
  // The idle time after the last busy run ([61,70)) is underfeed but not an internal bubble.
  EXPECT_EQ(m.bubble_count, 3u);
  EXPECT_EQ(m.internal_bubble_total_ns, 27 * kUs);
  EXPECT_EQ(m.largest_internal_bubble_ns, 12 * kUs);
  EXPECT_EQ(m.kernel_sum_ns, 41 * kUs);
  EXPECT_EQ(m.wait_sum_ns, 7 * kUs);  // the absent wait of r2 counts as 0
  EXPECT_EQ(m.total_cost_ns, 48 * kUs);
  EXPECT_EQ(m.stream_count, 3u);
  // Gaps by duration, bubble_index in start order; before = the row ending the run, after = the
  // row starting the next one.
  EXPECT_EQ(gaps(m), (Gaps{{1, 28, 40, 6, 5}, {2, 50, 60, 5, 7}, {0, 20, 25, 2, 6}}));

  // Task types upper-cased (MatMulV3 and matmulv3 are one), every counter sorted by name.
  EXPECT_EQ(m.task_type_counts, (Counts{{"ADDRMSNORM", 1},
                                        {"CAST", 1},
                                        {"FUSEDINFERATTENTIONSCORE", 1},
                                        {"GROUPEDMATMUL", 1},
                                        {"HCOM_ALLREDUCE_", 1},
                                        {"MATMULV3", 3},
                                        {"RESHAPEANDCACHE", 1}}));
  // One count per event having the role / category; GroupedMatmul is both moe and compute.
  EXPECT_EQ(m.role_counts, (Counts{{"attention", 1},
                                   {"attention_aux", 1},
                                   {"block_head", 1},
                                   {"communication", 1},
                                   {"compute", 4},
                                   {"moe", 1},
                                   {"normalization", 1}}));
  EXPECT_EQ(m.category_counts, (Counts{{"attention.flash_score", 1},
                                       {"attention.kv_cache_io", 1},
                                       {"block_head", 1},
                                       {"communication.allreduce", 1},
                                       {"communication.collective", 1},
                                       {"compute.matmul", 4},
                                       {"moe.expert_matmul", 1},
                                       {"normalization", 1}}));
}

TEST_F(SummarizeWindows, KeepsTheLargestBubblesOnly) {
  Table tb;
  fill_mixed(tb);
  const auto in = tb.input(*kb_);
  const auto m = window_metrics(in, 0, 8, 2);
  EXPECT_EQ(gaps(m), (Gaps{{1, 28, 40, 6, 5}, {2, 50, 60, 5, 7}}));
  EXPECT_EQ(m.bubble_count, 3u);  // counts every gap, not only the kept ones
  EXPECT_TRUE(window_metrics(in, 0, 8, 0).top_bubbles.empty());
}

// Equal gaps keep start order; a run's closing row is the last row among those with the latest end,
// its opening row the one with the smallest end among those starting first (the reference's sort).
TEST_F(SummarizeWindows, TieBreaksFollowTheReference) {
  Table tb;
  tb.add(kMatMul, 0, 10 * kUs);             // r0
  tb.add(kMatMul, 2 * kUs, 8 * kUs);        // r1 ends at 10 too: closes the run
  tb.add(kMatMul, 20 * kUs, 10 * kUs);      // r2
  tb.add(kMatMul, 20 * kUs, 5 * kUs);       // r3 same start, shorter: opens the run
  tb.add(kMatMul, 40 * kUs, 5 * kUs);       // r4: gap [30,40) equals gap [10,20)
  const auto in = tb.input(*kb_);
  const auto m = window_metrics(in, 0, 4, 8);
  EXPECT_EQ(gaps(m), (Gaps{{0, 10, 20, 1, 3}, {1, 30, 40, 2, 4}}));
  EXPECT_EQ(m.busy_union_ns, 25 * kUs);
}

// Rows in reverse time order take the sorting path and give the same runs and gaps.
TEST_F(SummarizeWindows, OutOfOrderRowsGiveTheSameResult) {
  Table tb;
  tb.add(kMatMul, 60 * kUs, 1 * kUs);   // r0
  tb.add(kMatMul, 40 * kUs, 10 * kUs);  // r1
  tb.add(kMatMul, 25 * kUs, 3 * kUs);   // r2
  tb.add(kMatMul, 16 * kUs, 2 * kUs);   // r3
  tb.add(kMatMul, 15 * kUs, 5 * kUs);   // r4
  tb.add(kMatMul, 5 * kUs, 10 * kUs);   // r5
  tb.add(kMatMul, 0, 10 * kUs);         // r6
  const auto in = tb.input(*kb_);
  const auto m = window_metrics(in, 0, 6, 8);
  EXPECT_EQ(m.wall_ns, 61 * kUs);
  EXPECT_EQ(m.busy_union_ns, 34 * kUs);
  EXPECT_EQ(gaps(m), (Gaps{{1, 28, 40, 2, 1}, {2, 50, 60, 1, 0}, {0, 20, 25, 4, 2}}));
}

// The reference's merge written plainly (sort by (start, end, row), then merge) against
// window_metrics on small random tables full of ties, in start order (the no-sort path) and
// shuffled (insertion sort, and std::sort past its budget).
TEST_F(SummarizeWindows, MatchesAPlainReferenceMergeOnRandomTables) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    const bool in_start_order = round % 2 == 0;
    // every tenth round is long enough to overrun the insertion-sort budget
    const int rows = round % 10 == 1 ? 300 : 1 + static_cast<int>(rng() % 40);
    std::vector<std::pair<int64_t, int64_t>> ev;  // (start, duration) in µs, small ranges: many ties
    for (int i = 0; i < rows; ++i) ev.emplace_back(rng() % 60, rng() % 4 == 0 ? 0 : rng() % 8);
    if (in_start_order)
      std::stable_sort(ev.begin(), ev.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    Table tb;
    for (const auto& [st, d] : ev) tb.add(kMatMul, st * kUs, d * kUs);
    const auto in = tb.input(*kb_);
    const auto m = window_metrics(in, 0, static_cast<uint32_t>(rows - 1), 1000);

    struct Ev {
      int64_t s, e;
      uint32_t row;
    };
    std::vector<Ev> sorted;
    for (uint32_t r = 0; r < ev.size(); ++r)
      if (ev[r].second > 0) sorted.push_back({ev[r].first, ev[r].first + ev[r].second, r});
    std::sort(sorted.begin(), sorted.end(), [](const Ev& x, const Ev& y) {
      return std::tie(x.s, x.e, x.row) < std::tie(y.s, y.e, y.row);
    });
    struct Run {
      int64_t s, e;
      uint32_t first, last;
    };
    std::vector<Run> runs;
    for (const auto& x : sorted) {
      if (!runs.empty() && x.s <= runs.back().e) {
        Run& r = runs.back();
        if (x.e > r.e || (x.e == r.e && x.row > r.last)) {
          r.e = std::max(r.e, x.e);
          r.last = x.row;
        }
        continue;
      }
      runs.push_back({x.s, x.e, x.row, x.row});
    }
    Gaps want;
    int64_t busy = 0;
    for (size_t i = 0; i < runs.size(); ++i) {
      busy += runs[i].e - runs[i].s;
      if (i > 0)
        want.push_back({static_cast<uint32_t>(i - 1), runs[i - 1].e, runs[i].s, runs[i - 1].last, runs[i].first});
    }
    std::stable_sort(want.begin(), want.end(),
                     [](const Gap& x, const Gap& y) { return x.end - x.start > y.end - y.start; });
    ASSERT_EQ(m.busy_union_ns, busy * kUs) << "round " << round;
    ASSERT_EQ(gaps(m), want) << "round " << round;
    ASSERT_EQ(m.bubble_count, want.size());
  }
}

TEST_F(SummarizeWindows, SubRangesClampingAndEmptyWindows) {
  Table tb;
  fill_mixed(tb);
  const auto in = tb.input(*kb_);
  const auto m = window_metrics(in, 5, 7, 8);  // r5 [40,50) r6 [25,28) r7 [60,61)
  EXPECT_EQ(m.event_count, 3u);
  EXPECT_EQ(m.wall_ns, 36 * kUs);
  EXPECT_EQ(m.busy_union_ns, 14 * kUs);
  EXPECT_EQ(gaps(m), (Gaps{{0, 28, 40, 6, 5}, {1, 50, 60, 5, 7}}));
  EXPECT_EQ(m.stream_count, 2u);
  const auto clamped = window_metrics(in, 7, 1000, 8);
  EXPECT_EQ(clamped.event_count, 2u);
  EXPECT_EQ(clamped.row_end, 8u);
  EXPECT_EQ(window_metrics(in, 9, 20, 8).event_count, 0u);
  EXPECT_EQ(window_metrics(in, 4, 3, 8).event_count, 0u);
  // Only zero-length events: a wall of 0, no busy time, nothing divided by zero.
  const auto zero = window_metrics(in, 4, 4, 8);
  EXPECT_EQ(zero.event_count, 1u);
  EXPECT_EQ(zero.wall_ns, 0);
  EXPECT_EQ(zero.busy_union_ns, 0);
  EXPECT_EQ(zero.underfeed_ratio, 0.0);
}

// Tables without Stream ID / Wait columns, an empty Type cell, and no normalize output at all.
TEST_F(SummarizeWindows, MissingColumnsAndNoTaxonomy) {
  Table tb;
  tb.add(kMatMul, 0, 10 * kUs);
  tb.add(Kernel{"SomeKernel", "", "AI_CORE"}, 20 * kUs, 10 * kUs);
  tb.add(kMatMulLower, 40 * kUs, 10 * kUs);
  tb.t.stream_id.clear();
  tb.t.wait_ns.clear();
  auto in = tb.input(*kb_);
  auto m = window_metrics(in, 0, 2, 8);
  EXPECT_EQ(m.stream_count, 1u);  // one "unknown" stream, as the reference counts it
  EXPECT_EQ(m.wait_sum_ns, 0);
  EXPECT_EQ(m.total_cost_ns, 30 * kUs);
  EXPECT_EQ(m.task_type_counts, (Counts{{"MATMULV3", 2}, {"UNKNOWN", 1}}));
  in.normalized = nullptr;
  m = window_metrics(in, 0, 2, 8);
  EXPECT_EQ(m.task_type_counts, (Counts{{"MATMULV3", 2}, {"UNKNOWN", 1}}));
  EXPECT_TRUE(m.role_counts.empty());
  EXPECT_EQ(m.bubble_count, 2u);
}

// One non-step segment per case; the four segments tile the table.
struct TagCase {
  const char* what;
  int64_t busy_a, gap, busy_b, idle_end;  // [0,a) then gap then b, then zero-length at +idle_end
};

TEST_F(SummarizeWindows, AnomalyTagsAtAndJustBelowThresholds) {
  // idle_gap_heavy_ratio 0.30, bubble_heavy max(1 ms, 0.10 x wall).
  const std::vector<TagCase> cases = {
      {"underfeed exactly 30%", 7 * kMs, 0, 0, 3 * kMs},
      {"underfeed just below 30%", 7 * kMs + 1, 0, 0, 3 * kMs - 1},
      {"bubble = 10% of a 20 ms wall", 9 * kMs, 2 * kMs, 9 * kMs, 0},
      {"bubble 1 ns below 10% of 20 ms", 9 * kMs + 1, 2 * kMs - 1, 9 * kMs, 0},
      {"bubble = 1 ms floor in a 5 ms wall", 2 * kMs, 1 * kMs, 2 * kMs, 0},
      {"bubble 1 ns below the 1 ms floor", 2 * kMs + 1, 1 * kMs - 1, 2 * kMs, 0},
  };
  Table tb;
  model::RankStructure s;
  int64_t t = 0;
  for (const auto& c : cases) {
    model::StepSegment seg;
    seg.type = SegmentType::kUnclassifiedIsland;
    seg.row_start = tb.add(kMatMul, t, c.busy_a);
    seg.row_end = seg.row_start;
    if (c.busy_b > 0) seg.row_end = tb.add(kMatMul, t + c.busy_a + c.gap, c.busy_b);
    if (c.idle_end > 0) seg.row_end = tb.add(kCast, t + c.busy_a + c.gap + c.busy_b + c.idle_end, 0);
    s.segments.push_back(seg);
    t += 100 * kMs;
  }
  const auto in = tb.input(*kb_);
  model::RankSummary out;
  summarize_windows(in, s, out);
  ASSERT_EQ(out.segments.size(), cases.size());
  using V = std::vector<std::string>;
  const std::vector<V> want = {{"DEVICE_IDLE_GAP_HEAVY"}, {}, {"INTERNAL_BUBBLE_HEAVY"}, {}, {"INTERNAL_BUBBLE_HEAVY"}, {}};
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(out.segments[i].anomaly_tags, want[i]) << cases[i].what;
    EXPECT_EQ(out.segments[i].anatomy.anatomy_kind, "") << "non-steps have no anatomy";
  }
  EXPECT_DOUBLE_EQ(out.segments[0].metrics.underfeed_ratio, 0.3);
  EXPECT_EQ(out.segments[2].metrics.wall_ns, 20 * kMs);
  EXPECT_EQ(out.segments[4].metrics.wall_ns, 5 * kMs);
}

// A hand-built structure: step 0 with a head, two layers and a sampling tail; step 1 whose only
// selection row precedes its last anchor (no tail); step 2 without layers (head_only).
TEST_F(SummarizeWindows, StepAnatomyHeadMainTail) {
  Table tb;
  const std::vector<Kernel> step0 = {kCast,     kCast,   kAddRmsNorm, kAttention, kArgMax, kMatMul,
                                     kAddRmsNorm, kAttention, kMatMul,  kArgMax,    kTopKTopP, kCast};
  // 10 µs per row, back to back, with a 30 µs hole before row 6.
  for (size_t i = 0; i < step0.size(); ++i)
    tb.add(step0[i], static_cast<int64_t>(i) * 10 * kUs + (i >= 6 ? 30 * kUs : 0), 10 * kUs);
  const std::vector<Kernel> step1 = {kArgMax, kAttention, kMatMul, kMatMul};
  for (size_t i = 0; i < step1.size(); ++i) tb.add(step1[i], (200 + static_cast<int64_t>(i) * 10) * kUs, 10 * kUs);
  for (int i = 0; i < 3; ++i) tb.add(kMatMul, (300 + i * 10) * kUs, 10 * kUs);

  model::RankStructure s;
  auto step = [&s](uint32_t a, uint32_t b, uint32_t first_layer, uint32_t layers) {
    model::StepSegment seg;
    seg.type = SegmentType::kStep;
    seg.complete = true;
    seg.row_start = a;
    seg.row_end = b;
    seg.first_layer = first_layer;
    seg.layer_count = layers;
    s.segments.push_back(seg);
  };
  auto layer = [&s](uint32_t segment, uint32_t a, uint32_t b, uint32_t anchor) {
    model::LayerSegment l;
    l.segment = segment;
    l.row_start = a;
    l.row_end = b;
    l.first_anchor_row = anchor;
    s.layers.push_back(l);
  };
  step(0, 11, 0, 2);
  layer(0, 2, 5, 3);
  layer(0, 6, 11, 7);
  step(12, 15, 2, 1);
  layer(1, 12, 15, 13);
  step(16, 18, 3, 0);
  const auto in = tb.input(*kb_);
  model::RankSummary out;
  summarize_windows(in, s, out);
  ASSERT_EQ(out.segments.size(), 3u);

  const auto& a0 = out.segments[0].anatomy;
  EXPECT_EQ(a0.anatomy_kind, "full");
  EXPECT_FALSE(a0.head.empty);
  EXPECT_EQ(a0.head.row_start, 0u);
  EXPECT_EQ(a0.head.row_end, 1u);
  EXPECT_EQ(a0.head.wall_ns, 20 * kUs);
  EXPECT_EQ(a0.head.event_count, 2u);
  // The tail starts at the TopKTopP row (the last sampling/selection row after anchor row 7).
  EXPECT_EQ(a0.main.row_start, 2u);
  EXPECT_EQ(a0.main.row_end, 9u);
  EXPECT_EQ(a0.main.start_ns, kBase + 20 * kUs);
  EXPECT_EQ(a0.main.end_ns, kBase + 130 * kUs);
  EXPECT_EQ(a0.main.wall_ns, 110 * kUs);
  EXPECT_EQ(a0.main.busy_ns, 80 * kUs);
  EXPECT_EQ(a0.main.bubble_ns, 30 * kUs);
  EXPECT_EQ(a0.main.event_count, 8u);
  EXPECT_EQ(a0.tail.row_start, 10u);
  EXPECT_EQ(a0.tail.row_end, 11u);
  EXPECT_EQ(a0.tail.wall_ns, 20 * kUs);
  EXPECT_EQ(a0.tail.bubble_ns, 0);
  EXPECT_EQ(out.segments[0].metrics.wall_ns, 150 * kUs);
  EXPECT_DOUBLE_EQ(a0.head_ratio, 20.0 / 150.0);
  EXPECT_DOUBLE_EQ(a0.main_ratio, 110.0 / 150.0);
  EXPECT_DOUBLE_EQ(a0.tail_ratio, 20.0 / 150.0);
  EXPECT_DOUBLE_EQ(a0.bubble_ratio, 30.0 / 150.0);

  const auto& a1 = out.segments[1].anatomy;
  EXPECT_EQ(a1.anatomy_kind, "full");
  EXPECT_TRUE(a1.head.empty);
  EXPECT_TRUE(a1.tail.empty);
  EXPECT_EQ(a1.main.row_start, 12u);
  EXPECT_EQ(a1.main.row_end, 15u);
  EXPECT_DOUBLE_EQ(a1.main_ratio, 1.0);
  EXPECT_DOUBLE_EQ(a1.head_ratio + a1.tail_ratio, 0.0);

  const auto& a2 = out.segments[2].anatomy;
  EXPECT_EQ(a2.anatomy_kind, "head_only");
  EXPECT_EQ(a2.head.row_start, 16u);
  EXPECT_EQ(a2.head.row_end, 18u);
  EXPECT_EQ(a2.head.event_count, 3u);
  EXPECT_TRUE(a2.main.empty);
  EXPECT_TRUE(a2.tail.empty);
  EXPECT_DOUBLE_EQ(a2.head_ratio, 1.0);
  EXPECT_DOUBLE_EQ(a2.main_ratio, 0.0);

  // Layers and the rank row.
  ASSERT_EQ(out.layers.size(), 3u);
  EXPECT_EQ(out.layers[1].layer, 1u);
  EXPECT_EQ(out.layers[1].metrics.row_start, 6u);
  EXPECT_EQ(out.layers[1].metrics.event_count, 6u);
  EXPECT_TRUE(out.layers[1].metrics.top_bubbles.empty());
  EXPECT_TRUE(out.layers[1].has_attention);
  EXPECT_FALSE(out.layers[1].has_moe);
  EXPECT_EQ(out.rank.event_count, 19u);
  EXPECT_EQ(out.rank.wall_ns, 330 * kUs);
  EXPECT_EQ(out.rank.bubble_count, 3u);  // the 30 µs hole and the two steps' leading idle
  EXPECT_EQ(out.rank.top_bubbles.size(), 3u);
  EXPECT_TRUE(out.segments[0].has_attention);
  EXPECT_EQ(out.segments[0].attention_event_count, 2u);
  EXPECT_EQ(out.segments[2].attention_event_count, 0u);
}

// Flags: attention counts role `attention` events only (the reference's has_attention; an
// attention_aux-only kernel such as RoPE does not count); MoE and communication by role.
TEST_F(SummarizeWindows, SegmentEventFlags) {
  Table tb;
  fill_mixed(tb);
  model::RankStructure s;
  model::StepSegment seg;
  seg.type = SegmentType::kTail;
  seg.row_start = 0;
  seg.row_end = 8;
  s.segments.push_back(seg);
  const auto in = tb.input(*kb_);
  model::RankSummary out;
  summarize_windows(in, s, out);
  ASSERT_EQ(out.segments.size(), 1u);
  const auto& r = out.segments[0];
  EXPECT_EQ(r.attention_event_count, 1u);
  EXPECT_TRUE(r.has_attention);
  EXPECT_EQ(r.moe_event_count, 1u);
  EXPECT_TRUE(r.has_moe);
  EXPECT_EQ(r.comm_event_count, 1u);
  EXPECT_TRUE(r.has_communication);
  EXPECT_EQ(r.metrics.top_bubbles.size(), 3u);
  EXPECT_EQ(r.metrics.busy_union_ns, 34 * kUs);
}

// Through the segment stage: each step is a preamble Cast, four dense layers and an ArgMax, with a
// 2 ms host gap before every preamble but the first. A step runs to the row before the next step's
// first layer, so the gap and the next preamble land inside the earlier step (§2.5.2): its idle and
// bubble tags fire, its anatomy tail holds the gap, and the last step stays clean.
TEST_F(SummarizeWindows, InterStepGapIsCountedInTheEarlierStep) {
  Table tb;
  int64_t t = 0;
  auto push = [&](const Kernel& k) {
    tb.add(k, t, 2 * kUs, 2);
    t += 2 * kUs;
  };
  for (int step = 0; step < 4; ++step) {
    if (step > 0) t += 2 * kMs;
    push(kCast);
    for (int l = 0; l < 4; ++l)
      for (const auto& k : {kAddRmsNorm, kAttention, kMatMul, kAddRmsNorm, kMatMul, kMatMul}) push(k);
    push(kArgMax);
  }
  const auto in = tb.input(*kb_);
  SegmentInput sin;
  sin.kernels = &tb.t;
  sin.normalized = &tb.norm;
  sin.pool = &tb.pool;
  sin.rank_id = "0";
  const auto s = segment_rank(sin, *kb_);
  std::vector<size_t> steps;
  for (size_t i = 0; i < s.segments.size(); ++i)
    if (s.segments[i].type == SegmentType::kStep) steps.push_back(i);
  ASSERT_EQ(steps.size(), 4u);
  model::RankSummary out;
  summarize_windows(in, s, out);
  ASSERT_EQ(out.segments.size(), s.segments.size());
  ASSERT_EQ(out.layers.size(), s.layers.size());

  for (size_t k = 0; k < 3; ++k) {
    const auto& row = out.segments[steps[k]];
    const auto& seg = s.segments[steps[k]];
    EXPECT_EQ(row.metrics.bubble_count, 1u);
    EXPECT_EQ(row.metrics.largest_internal_bubble_ns, 2 * kMs);
    EXPECT_EQ(row.anomaly_tags, (std::vector<std::string>{"DEVICE_IDLE_GAP_HEAVY", "INTERNAL_BUBBLE_HEAVY"}));
    EXPECT_GT(row.anatomy.bubble_ratio, 0.9);
    // Tail: the ArgMax and the next step's preamble, across the gap.
    EXPECT_EQ(row.anatomy.tail.row_start, seg.row_end - 1);
    EXPECT_EQ(row.anatomy.tail.row_end, seg.row_end);
    EXPECT_EQ(row.anatomy.tail.wall_ns, 2 * kMs + 4 * kUs);
    EXPECT_EQ(row.anatomy.tail.bubble_ns, 2 * kMs);
    EXPECT_TRUE(row.anatomy.head.empty);
    EXPECT_EQ(row.anatomy.main.bubble_ns, 0);
    EXPECT_EQ(row.metrics.top_bubbles.size(), 1u);
    EXPECT_EQ(row.metrics.top_bubbles[0].before_row, seg.row_end - 1);
    EXPECT_EQ(row.metrics.top_bubbles[0].after_row, seg.row_end);
  }
  const auto& last = out.segments[steps[3]];
  EXPECT_TRUE(last.anomaly_tags.empty());
  EXPECT_EQ(last.metrics.bubble_count, 0u);
  EXPECT_DOUBLE_EQ(last.anatomy.bubble_ratio, 0.0);
  EXPECT_EQ(last.anatomy.tail.event_count, 1u);  // the final ArgMax alone
  EXPECT_EQ(out.rank.bubble_count, 3u);
  EXPECT_EQ(out.rank.event_count, tb.t.size());
  for (const auto& l : out.layers) EXPECT_TRUE(l.has_attention);
}

// Window counter names are interned: equal names share one string (no copy per window), compare
// equal whatever they were made from, and order by name as the sorted counters need.
TEST(CountName, EqualNamesShareOneStringAndOrderByName) {
  const std::string built = std::string("MATMUL") + "V3";
  const model::CountName a("MATMULV3"), b(built), c(std::string_view(built).substr(0, 6));
  EXPECT_EQ(&a.str(), &b.str());
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a == c);
  EXPECT_EQ(c.str(), "MATMUL");
  EXPECT_TRUE(c < a);
  EXPECT_FALSE(a < b);
  EXPECT_EQ(model::CountName().str(), "");
  EXPECT_EQ(std::string_view(a), "MATMULV3");
  Counts sorted = {{"b", 1}, {"a", 2}};
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (Counts{{"a", 2}, {"b", 1}}));
  EXPECT_EQ(sizeof(model::CountName), sizeof(void*));
}

}  // namespace
}  // namespace ascprof::analysis

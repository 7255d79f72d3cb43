// The segment stage on generated captures with known ground truth (reference-analysis.md §2.2 and
// the structural regression invariants of issue 3): step counts, main and speculative layer counts
// per step, training forward/backward layers per microbatch, and hard errors on captures built to
// break the rules.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "ascprof/analysis/normalize.hpp"
#include "ascprof/analysis/segment.hpp"
#include "ascprof/importers/discovery.hpp"
#include "ascprof/importers/kernel_details.hpp"
#include "ascprof/importers/trace_view.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;
using model::LayerRole;
using model::SegmentType;

struct RankResult {
  std::string rank_id;
  model::RankStructure s;
};

const knowledge::Knowledge& kb() {
  static const knowledge::Knowledge k = [] {
    auto r = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return std::move(r).value();
  }();
  return k;
}

std::vector<RankResult> segment_capture(const fs::path& root, bool declared = true, bool with_trace = true) {
  std::vector<RankResult> out;
  Stats stats;
  auto cap = importers::discover_capture_root(root, stats);
  EXPECT_TRUE(cap.ok()) << cap.status().to_string();
  if (!cap.ok()) return out;
  for (const auto& rank : cap->ranks) {
    StringPool pool;
    model::KernelTable k;
    Status st = importers::import_kernel_details(rank.files.kernel_details, pool, k, stats);
    EXPECT_TRUE(st.ok()) << st.to_string();
    model::TraceTables tr;
    if (with_trace && !rank.files.trace_view.empty()) {
      st = importers::import_trace_view(rank.files.trace_view, pool, tr, stats);
      EXPECT_TRUE(st.ok()) << st.to_string();
    }
    if (!declared) k.step_id.assign(k.size(), model::kAbsentI32);
    const auto norm = analysis::normalize_kernels(k, pool, kb(), stats);
    analysis::SegmentInput in;
    in.kernels = &k;
    in.normalized = &norm;
    in.pool = &pool;
    in.profiler_steps = declared ? &tr.steps : nullptr;
    in.rank_id = rank.rank_id;
    in.use_declared_steps = declared;
    out.push_back({rank.rank_id, analysis::segment_rank(in, kb())});
  }
  return out;
}

struct StepShape {
  uint32_t main, spec;
  bool operator==(const StepShape& o) const { return main == o.main && spec == o.spec; }
};

std::vector<StepShape> steps_of(const model::RankStructure& s) {
  std::vector<StepShape> v;
  for (const auto& seg : s.segments)
    if (seg.type == SegmentType::kStep) v.push_back({seg.main_layer_count, seg.speculative_layer_count});
  return v;
}

std::string describe(const model::RankStructure& s) {
  std::string d = "rank " + s.rank_id + " anchors=" + s.anchor_family + ":";
  for (const auto& seg : s.segments)
    d += " [" + std::string(model::segment_type_name(seg.type)) + " " + std::to_string(seg.row_start) + "-" +
         std::to_string(seg.row_end) + " main=" + std::to_string(seg.main_layer_count) + " spec=" +
         std::to_string(seg.speculative_layer_count) + "]";
  for (const auto& e : s.hard_errors) d += " ERR " + e.error_type + "@" + std::to_string(e.row_start) + ": " + e.detail;
  return d;
}

synth::SynthOptions options(const fs::path& dir, const char* scenario, int ranks, int steps) {
  synth::SynthOptions o;
  o.scenario = scenario;
  o.out_dir = dir;
  o.ranks = ranks;
  o.steps = steps;
  return o;
}

TEST(SegmentSynth, MoeMlaDecodeMainAndSpeculativeLayersPerStep) {
  ascprof::testing::ScratchDir dir("seg-moe");
  auto gen = synth::generate_capture(options(dir / "c", "moe_mla_decode", 2, 4));
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  for (const bool declared : {false, true}) {
    for (const auto& r : segment_capture(dir / "c", declared)) {
      SCOPED_TRACE(describe(r.s));
      EXPECT_EQ(r.s.anchor_family, "attention.mla");
      EXPECT_TRUE(r.s.hard_errors.empty());
      const auto steps = steps_of(r.s);
      ASSERT_EQ(steps.size(), 4u);
      for (const auto& s : steps) EXPECT_TRUE((s == StepShape{10, 2}));
      if (declared) {
        EXPECT_EQ(r.s.step_source, model::StepSource::kStepId);
        ASSERT_EQ(r.s.boundary_checks.size(), 4u);
        for (const auto& c : r.s.boundary_checks) EXPECT_TRUE(c.agrees) << c.note;
      }
    }
  }
}

TEST(SegmentSynth, DenseGqaPrefillAndDecodeSteps) {
  ascprof::testing::ScratchDir dir("seg-dense");
  auto gen = synth::generate_capture(options(dir / "c", "dense_gqa", 2, 3));
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  for (const bool declared : {false, true})
    for (const auto& r : segment_capture(dir / "c", declared)) {
      SCOPED_TRACE(describe(r.s));
      EXPECT_TRUE(r.s.hard_errors.empty());
      const auto steps = steps_of(r.s);
      ASSERT_EQ(steps.size(), 3u);
      for (const auto& s : steps) EXPECT_TRUE((s == StepShape{16, 0}));
    }
}

TEST(SegmentSynth, DummyRankGetsMoeAnchoredLayers) {
  ascprof::testing::ScratchDir dir("seg-dummy");
  auto o = options(dir / "c", "moe_mla_decode", 2, 3);
  o.dummy_ranks = {1};
  auto gen = synth::generate_capture(o);
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  for (const bool declared : {false, true}) {
    const auto res = segment_capture(dir / "c", declared);
    ASSERT_EQ(res.size(), 2u);
    const auto& dummy = res[1].s;
    SCOPED_TRACE(describe(dummy));
    EXPECT_EQ(dummy.anchor_family, "role:moe");
    EXPECT_TRUE(dummy.hard_errors.empty());
    const auto steps = steps_of(dummy);
    ASSERT_EQ(steps.size(), 3u);
    // the two dense prefix layers have no MoE anchor on a dummy rank: 8 MoE-anchored main layers
    for (const auto& s : steps) EXPECT_TRUE((s == StepShape{8, 2}));
  }
}

TEST(SegmentSynth, TrainingForwardBackwardPerMicrobatch) {
  ascprof::testing::ScratchDir dir("seg-train");
  auto o = options(dir / "c", "training", 2, 2);
  o.layers = 4;
  o.microbatches = 3;
  auto gen = synth::generate_capture(o);
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  for (const auto& r : segment_capture(dir / "c")) {
    SCOPED_TRACE(describe(r.s));
    size_t steps = 0;
    for (const auto& seg : r.s.segments) {
      if (seg.type != SegmentType::kStep) continue;
      ++steps;
      EXPECT_EQ(seg.phase, "training");
      EXPECT_EQ(seg.microbatch_count, 3u);
      std::map<std::pair<int, int>, int> per;  // (microbatch, backward) -> layers
      for (uint32_t i = 0; i < seg.layer_count; ++i) {
        const auto& l = r.s.layers[seg.first_layer + i];
        ++per[{l.microbatch, l.role == LayerRole::kBackward ? 1 : 0}];
      }
      for (int mb = 0; mb < 3; ++mb) {
        EXPECT_EQ((per[{mb, 0}]), 4) << "forward layers of microbatch " << mb;
        EXPECT_EQ((per[{mb, 1}]), 4) << "backward layers of microbatch " << mb;
      }
    }
    EXPECT_EQ(steps, 2u);
  }
}

}  // namespace
}  // namespace ascprof::pipeline

namespace ascprof::pipeline {
namespace {

// Real captures: no LLM among them, so what the rules find is documented here.
// - e2-cnn-level{0,1,2} (a CNN training step, 191 rows, Step Id column): no attention, no MoE, so the
//   matmul fallback anchors; no block_head between the matmuls, so they form one anchor group: one
//   declared step holding one layer that covers all rows. No hard error.
// - e1-2023-two-rank (trimmed 2023 files, no Step Id, no trace): rank 0 has one attention anchor
//   (one structural step of one layer over its 21 rows); rank 1 has no anchor-bearing kernel at all,
//   so it is a single unclassified_island covering every row, which is not an error by itself.
TEST(SegmentReal, RealFixturesGiveTheDocumentedStructure) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  for (const char* f : {"e2-cnn-level0", "e2-cnn-level1", "e2-cnn-level2"}) {
    const auto res = segment_capture(ascprof::testing::real_fixtures_dir() / f);
    ASSERT_EQ(res.size(), 2u) << f;
    for (const auto& r : res) {
      SCOPED_TRACE(std::string(f) + " " + describe(r.s));
      EXPECT_EQ(r.s.anchor_family, "category:compute.matmul@compute");
      EXPECT_EQ(r.s.step_source, model::StepSource::kStepId);
      ASSERT_EQ(r.s.segments.size(), 1u);
      EXPECT_EQ(r.s.segments[0].type, SegmentType::kStep);
      EXPECT_EQ(r.s.segments[0].row_start, 0u);
      EXPECT_EQ(r.s.segments[0].row_end, 190u);
      EXPECT_EQ(r.s.layers.size(), 1u);
      EXPECT_TRUE(r.s.hard_errors.empty());
    }
  }
  const auto res = segment_capture(ascprof::testing::real_fixtures_dir() / "e1-2023-two-rank");
  ASSERT_EQ(res.size(), 2u);
  SCOPED_TRACE(describe(res[0].s) + " | " + describe(res[1].s));
  EXPECT_EQ(res[0].s.anchor_family, "attention");
  EXPECT_EQ(steps_of(res[0].s).size(), 1u);
  EXPECT_EQ(res[1].s.anchor_family, "none");
  ASSERT_EQ(res[1].s.segments.size(), 1u);
  EXPECT_EQ(res[1].s.segments[0].type, SegmentType::kUnclassifiedIsland);
  EXPECT_EQ(res[1].s.segments[0].row_end + 1, res[1].s.event_count);
  EXPECT_TRUE(res[0].s.hard_errors.empty());
  EXPECT_TRUE(res[1].s.hard_errors.empty());
}

}  // namespace
}  // namespace ascprof::pipeline

// The segment stage on generated captures with known ground truth (reference-analysis.md §2.2 and
// the structural regression invariants of issue 3): step counts, main and speculative layer counts
// per step, training forward/backward layers per microbatch, and hard errors on captures built to
// break the rules.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "ascprof/analysis/classify.hpp"
#include "ascprof/analysis/normalize.hpp"
#include "ascprof/common/files.hpp"
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
  model::RankClasses c;
};

const knowledge::Knowledge& kb() {
  static const knowledge::Knowledge k = [] {
    auto r = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return std::move(r).value();
  }();
  return k;
}

// declared: the capture's declared steps are read; windows: they set the step boundaries
// (use_declared_steps) instead of the reference's convention, the tool's default
std::vector<RankResult> segment_capture(const fs::path& root, bool declared = true, bool with_trace = true,
                                        bool windows = true) {
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
    in.use_declared_steps = declared && windows;
    auto structure = analysis::segment_rank(in, kb());
    auto classes = analysis::classify_rank(structure, k, norm, pool, kb());
    out.push_back({rank.rank_id, std::move(structure), std::move(classes)});
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

// Ground truth of a generated capture (ground_truth.json).
struct Truth {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  explicit Truth(const fs::path& file) {
    auto text = read_file(file);
    EXPECT_TRUE(text.ok());
    doc = parser.parse(*text);
  }
  // block kinds per layer of global step `step` (ground truth for ranks with attention)
  std::vector<std::vector<std::string>> blocks(size_t step) {
    std::vector<std::vector<std::string>> out;
    size_t i = 0;
    for (simdjson::dom::element st : doc["steps"].get_array()) {
      if (i++ != step) continue;
      for (simdjson::dom::element l : st["layers"].get_array()) {
        std::vector<std::string> kinds;
        for (simdjson::dom::element b : l["blocks"].get_array()) kinds.emplace_back(std::string_view(b));
        out.push_back(std::move(kinds));
      }
    }
    return out;
  }
};

std::vector<std::string> block_kinds(const RankResult& r, uint32_t layer) {
  std::vector<std::string> kinds;
  for (const auto& b : r.c.blocks)
    if (b.layer == layer) kinds.emplace_back(model::block_kind_name(b.kind));
  return kinds;
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
      // what implements the main layers of the first step: the MLA, attention, MoE kernels
      ASSERT_FALSE(r.s.observations.empty());
      const auto& names = r.s.observations.front().implementation_names;
      EXPECT_EQ(r.s.observations.front().role, LayerRole::kMain);
      for (const char* k : {"aclnnMlaPreprocess_MlaPreprocess_MlaPreprocess", "aclnnMoeGatingTopK_MoeGatingTopK_MoeGatingTopK"})
        EXPECT_NE(std::find(names.begin(), names.end(), k), names.end()) << k;
      EXPECT_EQ(r.s.observations.size(), 8u);  // (main, speculative) x 4 steps
      // the reference's observations: per step, the operator roles of its events in first-seen
      // order, each with its events' rows (in the step, in order) and their sorted distinct names
      std::set<uint32_t> observed_steps;
      for (const auto& o : r.s.role_observations) {
        const auto& seg = r.s.segments[o.segment];
        ASSERT_EQ(seg.type, model::SegmentType::kStep);
        observed_steps.insert(o.segment);
        ASSERT_FALSE(o.rows.empty()) << o.role;
        EXPECT_LE(o.rows.size(), 64u);
        EXPECT_TRUE(std::is_sorted(o.rows.begin(), o.rows.end()));
        EXPECT_GE(o.rows.front(), seg.row_start);
        EXPECT_LE(o.rows.back(), seg.row_end);
        EXPECT_TRUE(std::is_sorted(o.implementation_names.begin(), o.implementation_names.end()));
        EXPECT_LE(o.implementation_names.size(), 16u);
      }
      EXPECT_EQ(observed_steps.size(), 4u);
      std::vector<std::string> first_step_roles;
      for (const auto& o : r.s.role_observations)
        if (o.segment == r.s.role_observations.front().segment) first_step_roles.push_back(o.role);
      for (const char* role : {"attention", "moe"})
        EXPECT_NE(std::find(first_step_roles.begin(), first_step_roles.end(), role), first_step_roles.end()) << role;
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


// The reference's GLM5 counterexample (TP8 W8A8, 78 main layers, MTP=3): MlaProlog decides the layer
// frequency (the sparse flash score and V-up kernels do not add layers), and the 3 dense prefix
// layers stay with the 75 MoE layers: 4 complete steps of [78 main, 3 speculative], never [3] or [3, 75].
TEST(SegmentSynth, Glm5BodyIs78MainPlus3Speculative) {
  ascprof::testing::ScratchDir dir("seg-glm5");
  auto gen = synth::generate_capture(options(dir / "c", "glm5_mtp", 2, 4));
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  for (const bool declared : {false, true})
    for (const auto& r : segment_capture(dir / "c", declared)) {
      SCOPED_TRACE(describe(r.s));
      EXPECT_EQ(r.s.anchor_family, "attention.mla");
      EXPECT_TRUE(r.s.hard_errors.empty());
      const auto steps = steps_of(r.s);
      ASSERT_EQ(steps.size(), 4u);
      for (const auto& st : steps) EXPECT_TRUE((st == StepShape{78, 3}));
    }
}

// DeepSeek MLA emitting two attention anchors per layer (MlaProlog kv path, block head, MlaPreprocess
// q path): the anchor sub-units merge back into one layer per model layer.
TEST(SegmentSynth, TwoAttentionAnchorsPerLayerMergeIntoOneLayer) {
  ascprof::testing::ScratchDir dir("seg-split");
  auto o = options(dir / "c", "moe_mla_decode", 2, 3);
  o.split_attention = true;
  auto gen = synth::generate_capture(o);
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  for (const bool declared : {false, true})
    for (const auto& r : segment_capture(dir / "c", declared)) {
      SCOPED_TRACE(describe(r.s));
      EXPECT_TRUE(r.s.hard_errors.empty());
      const auto steps = steps_of(r.s);
      ASSERT_EQ(steps.size(), 3u);
      for (const auto& st : steps) EXPECT_TRUE((st == StepShape{10, 2}));
      bool merged = false;
      for (const auto& seg : r.s.segments)
        for (const auto& t : seg.frame_tags) merged = merged || t == "exact_attention_subunits";
      EXPECT_TRUE(merged);
    }
}

// An injected foreign fragment in the middle step of a dense body: the template cover leaves it as a
// residual, an interior unclassified island, reported as the reference's two hard errors on that
// rank only (with or without declared steps).
TEST(SegmentSynth, InteriorIslandIsAHardError) {
  ascprof::testing::ScratchDir dir("seg-island");
  auto o = options(dir / "c", "dense_gqa", 2, 3);
  o.faults = {"interior_island:1"};
  auto gen = synth::generate_capture(o);
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  for (const bool declared : {false, true}) {
    const auto res = segment_capture(dir / "c", declared);
    ASSERT_EQ(res.size(), 2u);
    EXPECT_TRUE(res[0].s.hard_errors.empty()) << describe(res[0].s);
    std::set<std::string> types;
    for (const auto& e : res[1].s.hard_errors) types.insert(e.error_type);
    EXPECT_EQ(types, (std::set<std::string>{"interior_template_residual", "interior_unclassified_island"}))
        << describe(res[1].s);
  }
}

// In a MoE body the same fragment makes the reference's regime split cut the dense prefix off, and
// both halves pass as "partial body windows": the reference reports nothing and the step is gone.
// With declared steps that is caught: a declared step between complete ones holding no complete
// structural step is an `unexplained_declared_step` hard error.
TEST(SegmentSynth, MoeIslandIsCaughtByDeclaredSteps) {
  ascprof::testing::ScratchDir dir("seg-moe-island");
  auto o = options(dir / "c", "moe_mla_decode", 2, 3);
  o.faults = {"interior_island:1"};
  auto gen = synth::generate_capture(o);
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  const auto res = segment_capture(dir / "c", true);
  ASSERT_EQ(res.size(), 2u);
  EXPECT_TRUE(res[0].s.hard_errors.empty()) << describe(res[0].s);
  ASSERT_EQ(res[1].s.hard_errors.size(), 1u) << describe(res[1].s);
  EXPECT_EQ(res[1].s.hard_errors[0].error_type, "unexplained_declared_step");
  const auto& seg = res[1].s.segments[static_cast<size_t>(res[1].s.hard_errors[0].segment)];
  EXPECT_EQ(seg.declared_step, 2);
  EXPECT_FALSE(seg.complete);
}

// The tool's default: steps follow the reference's convention (a step starts at its first layer and
// runs to the next plan; rows before the first plan are a head), each step records the declared step
// holding its first layer, and every declared step is checked against the structure.
TEST(SegmentSynth, StepsFollowTheReferenceConventionAndRecordTheirDeclaredStep) {
  ascprof::testing::ScratchDir dir("seg-convention");
  auto gen = synth::generate_capture(options(dir / "c", "moe_mla_decode", 2, 4));
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  for (const auto& r : segment_capture(dir / "c", true, true, false)) {
    SCOPED_TRACE(describe(r.s));
    EXPECT_EQ(r.s.step_source, model::StepSource::kStructural);
    ASSERT_FALSE(r.s.segments.empty());
    EXPECT_EQ(r.s.segments.front().row_start, 0u);
    EXPECT_EQ(r.s.segments.back().row_end + 1, r.s.event_count);
    int64_t last_declared = -1;
    size_t steps = 0;
    for (size_t i = 0; i < r.s.segments.size(); ++i) {
      const auto& g = r.s.segments[i];
      if (i > 0) {
        EXPECT_EQ(g.row_start, r.s.segments[i - 1].row_end + 1) << i;  // they tile the rank
      }
      if (g.type != SegmentType::kStep) {
        if (i == 0) {
          EXPECT_EQ(g.type, SegmentType::kHead);
        }
        continue;
      }
      ++steps;
      ASSERT_GT(g.layer_count, 0u);
      EXPECT_EQ(g.row_start, r.s.layers[g.first_layer].row_start) << i;  // starts at its first layer
      EXPECT_EQ(g.source, model::StepSource::kStructural);
      EXPECT_GT(g.declared_step, last_declared) << i;  // one declared step each, in order
      last_declared = g.declared_step;
      // the step's selection rows (argmax before its speculative layers), inside it and in order
      EXPECT_FALSE(g.selection_rows.empty()) << i;
      EXPECT_TRUE(std::is_sorted(g.selection_rows.begin(), g.selection_rows.end()));
      for (const uint32_t row : g.selection_rows) {
        EXPECT_GE(row, g.row_start);
        EXPECT_LE(row, g.row_end);
      }
    }
    EXPECT_EQ(steps, 4u);
    ASSERT_EQ(r.s.boundary_checks.size(), 4u);
    for (const auto& c : r.s.boundary_checks) EXPECT_TRUE(c.agrees) << c.note;
  }
  // a declared step the structure cannot explain is still a hard error
  ascprof::testing::ScratchDir island("seg-convention-island");
  auto o = options(island / "c", "moe_mla_decode", 2, 3);
  o.faults = {"interior_island:1"};
  ASSERT_TRUE(synth::generate_capture(o).ok());
  const auto res = segment_capture(island / "c", true, true, false);
  ASSERT_EQ(res.size(), 2u);
  EXPECT_TRUE(res[0].s.hard_errors.empty()) << describe(res[0].s);
  bool unexplained = false;
  for (const auto& e : res[1].s.hard_errors) unexplained = unexplained || e.error_type == "unexplained_declared_step";
  EXPECT_TRUE(unexplained) << describe(res[1].s);
}

// Block kinds per layer equal the ground truth (reference §2.4 decomposition) on ranks with
// attention; prefill and decode steps land in different step classes; identical steps share one.
TEST(SegmentSynth, BlocksAndClassesMatchGroundTruth) {
  struct Case {
    const char* scenario;
    int layers;
    size_t step_classes;
  };
  for (const Case& cs : {Case{"moe_mla_decode", 0, 1}, Case{"dense_gqa", 0, 2}, Case{"glm5_mtp", 12, 1}, Case{"training", 0, 1}}) {
    ascprof::testing::ScratchDir dir("seg-blocks");
    auto o = options(dir / "c", cs.scenario, 2, 3);
    o.layers = cs.layers;
    auto gen = synth::generate_capture(o);
    ASSERT_TRUE(gen.ok()) << gen.status().to_string();
    Truth truth(gen->ground_truth);
    for (const auto& r : segment_capture(dir / "c")) {
      SCOPED_TRACE(std::string(cs.scenario) + " " + describe(r.s));
      size_t step = 0;
      for (size_t si = 0; si < r.s.segments.size(); ++si) {
        const auto& seg = r.s.segments[si];
        if (seg.type != SegmentType::kStep) continue;
        const auto expected = truth.blocks(step++);
        ASSERT_EQ(seg.layer_count, expected.size());
        for (uint32_t i = 0; i < seg.layer_count; ++i)
          EXPECT_EQ(block_kinds(r, seg.first_layer + i), expected[i]) << "step " << step << " layer " << i;
        EXPECT_GE(r.c.step_class[si], 0);
      }
      EXPECT_EQ(r.c.step_classes.size(), cs.step_classes);
      if (std::string(cs.scenario) == "dense_gqa") {  // prefill (step 0) vs decode (steps 1, 2)
        std::vector<int32_t> ids;
        for (size_t si = 0; si < r.s.segments.size(); ++si)
          if (r.s.segments[si].type == SegmentType::kStep) ids.push_back(r.c.step_class[si]);
        ASSERT_EQ(ids.size(), 3u);
        EXPECT_NE(ids[0], ids[1]);
        EXPECT_EQ(ids[1], ids[2]);
      }
    }
  }
}

// 1F1B pipeline parallel training: every stage's forward/backward layers and microbatch indices, in
// row order, equal the generator's schedule. With as many microbatches as stages (or fewer) the
// first stages run all their forwards and then all their backwards (F0 F1 .. B0 B1 ..): one run
// per phase, which only the point-to-point transfers between microbatches cut apart (issue 21;
// before, those stages were given one microbatch). 3 and 4 stages, and the steady 1F1B shapes.
TEST(SegmentSynth, PipelineParallelTrainingLayersPerMicrobatch) {
  struct Shape {
    int ranks, pp, microbatches;
  };
  for (const Shape shape : {Shape{4, 2, 4}, Shape{3, 3, 3}, Shape{4, 4, 4}, Shape{3, 3, 2}, Shape{3, 3, 6}}) {
    SCOPED_TRACE("pp " + std::to_string(shape.pp) + ", " + std::to_string(shape.microbatches) + " microbatches");
    ascprof::testing::ScratchDir dir("seg-pp");
    auto o = options(dir / "c", "training", shape.ranks, 2);
    o.pp = shape.pp;
    o.microbatches = shape.microbatches;
    auto gen = synth::generate_capture(o);
    ASSERT_TRUE(gen.ok()) << gen.status().to_string();
    Truth truth(gen->ground_truth);
    const auto res = segment_capture(dir / "c");
    ASSERT_EQ(res.size(), static_cast<size_t>(shape.ranks));
    size_t r = 0;
    for (simdjson::dom::element rank : truth.doc["ranks"].get_array()) {
      std::vector<std::pair<std::string, int64_t>> expected;
      for (simdjson::dom::element l : rank["layers"].get_array())
        expected.emplace_back(std::string(std::string_view(l["role"])), int64_t(l["microbatch"]));
      const auto& s = res[r++].s;
      SCOPED_TRACE("rank " + std::to_string(r - 1) + ": " + describe(s));
      size_t steps = 0;
      for (const auto& seg : s.segments) {
        if (seg.type != SegmentType::kStep) continue;
        ++steps;
        EXPECT_EQ(seg.microbatch_count, static_cast<uint32_t>(shape.microbatches));
        std::vector<std::pair<std::string, int64_t>> got;
        for (uint32_t i = 0; i < seg.layer_count; ++i) {
          const auto& l = s.layers[seg.first_layer + i];
          got.emplace_back(model::layer_role_name(l.role), l.microbatch);
        }
        EXPECT_EQ(got, expected);
      }
      EXPECT_EQ(steps, 2u);
    }
  }
}


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

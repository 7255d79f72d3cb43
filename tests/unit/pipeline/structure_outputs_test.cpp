// The root-level segment / classify JSON files from two hand-built ranks: counts, merged classes
// across ranks, interior islands, layer inventories, hard errors, evidence, exact µs text, and
// atomic publication (no temporary files left, nothing published when the target is unusable).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <list>
#include <map>
#include <memory>
#include <set>

#include "ascprof/common/files.hpp"
#include "ascprof/common/stable_id.hpp"
#include "ascprof/pipeline/structure_outputs.hpp"
#include "ascprof/store/part_pack.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;
using namespace model;

constexpr int64_t kBase = 1'700'000'000'123'456'000LL;  // ns; row r starts at kBase + r*1000 + 789

struct LayerSpec {
  uint32_t rs, re;
  LayerRole role;
};
struct SegSpec {
  SegmentType type;
  uint32_t rs, re;
  std::vector<LayerSpec> layers;
};

RankStructure build(const std::string& rank, uint64_t events, const std::vector<SegSpec>& specs) {
  RankStructure s;
  s.rank_id = rank;
  s.event_count = events;
  s.anchor_family = "attention.mla";
  for (const auto& sp : specs) {
    StepSegment g;
    g.segment_id = stable_id("seg", {rank, std::to_string(s.segments.size()), std::to_string(sp.rs), std::to_string(sp.re)});
    g.type = sp.type;
    g.complete = sp.type == SegmentType::kStep;
    g.row_start = sp.rs;
    g.row_end = sp.re;
    g.start_ns = kBase + sp.rs * 1000 + 789;
    g.end_ns = kBase + sp.re * 1000 + 1789;
    g.first_layer = static_cast<uint32_t>(s.layers.size());
    g.layer_count = static_cast<uint32_t>(sp.layers.size());
    if (g.complete) {
      g.step_family = "attention_moe_workload";
      g.phase = "inference";
      g.structure_signature = "main_len=" + std::to_string(sp.layers.size());
      g.frame_reasons = {"exact_recurring_template"};
    }
    for (const auto& ls : sp.layers) {
      LayerSegment l;
      l.layer_index = static_cast<uint32_t>(s.layers.size()) - g.first_layer;
      l.layer_id = stable_id("layer", {g.segment_id, std::to_string(l.layer_index)});
      l.segment = static_cast<uint32_t>(s.segments.size());
      l.row_start = ls.rs;
      l.row_end = ls.re;
      l.start_ns = kBase + ls.rs * 1000 + 789;
      l.end_ns = kBase + ls.re * 1000 + 1789;
      l.first_anchor_row = ls.rs;
      l.role = ls.role;
      // speculative layers as if placed in a declared step: the reference's column still says anchor
      l.boundary_source = ls.role == LayerRole::kSpeculative ? model::BoundarySource::kDeclaredStepWindow
                                                             : model::BoundarySource::kExactStructuralAnchor;
      if (s.layer_signatures.empty()) s.layer_signatures.push_back("anchors:attention.mla:x|block_head");
      l.signature = 0;
      g.main_layer_count += ls.role == LayerRole::kMain ? 1 : 0;
      g.speculative_layer_count += ls.role == LayerRole::kSpeculative ? 1 : 0;
      s.layers.push_back(l);
    }
    s.segments.push_back(g);
  }
  return s;
}

ShapeClass shape_class(const std::string& id, std::vector<uint32_t> members) {
  ShapeClass c;
  c.class_id = id;
  c.members = std::move(members);
  c.shape_pairs_count = 4;
  return c;
}

// Blocks: an attention block then a moe block per layer, or one companion ffn block when the
// layer is listed in `ffn_layers`; block classes by kind.
void add_blocks(const RankStructure& s, RankClasses* c, const std::set<uint32_t>& ffn_layers) {
  c->block_classes = {shape_class("blk_cls_attn", {}), shape_class("blk_cls_moe", {}), shape_class("blk_cls_ffn", {})};
  c->block_classes[1].block_kind = BlockKind::kMoe;
  c->block_classes[2].has_unknown_shape = true;
  c->block_classes[2].companion_layer = true;
  c->block_classes[0].block_kind = BlockKind::kAttention;
  for (uint32_t l = 0; l < s.layers.size(); ++l) {
    const auto& ly = s.layers[l];
    auto add = [&](uint32_t idx, BlockKind k, uint32_t rs, uint32_t re, uint32_t cls) {
      BlockSegment b;
      b.block_id = stable_id("blk", {ly.layer_id, std::to_string(idx)});
      b.layer = l;
      b.block_index = idx;
      b.kind = k;
      b.companion_layer = k == BlockKind::kFfn;
      b.row_start = rs;
      b.row_end = re;
      b.start_ns = kBase + rs * 1000;
      b.end_ns = kBase + re * 1000;
      b.event_count = re - rs + 1;
      b.block_class = cls;
      c->block_classes[cls].members.push_back(static_cast<uint32_t>(c->blocks.size()));
      c->blocks.push_back(b);
    };
    if (ffn_layers.count(l)) {
      add(0, BlockKind::kFfn, ly.row_start, ly.row_end, 2);
    } else if (ly.role == LayerRole::kSpeculative) {
      add(0, BlockKind::kAttention, ly.row_start, ly.row_end, 0);
    } else {
      const uint32_t mid = (ly.row_start + ly.row_end) / 2;
      add(0, BlockKind::kAttention, ly.row_start, mid, 0);
      add(1, BlockKind::kMoe, mid + 1, ly.row_end, 1);
    }
  }
}

struct TwoRanks {
  RankStructure s0, s1;
  RankClasses c0, c1;
};

size_t len(simdjson::dom::element e) { return simdjson::dom::array(e).size(); }

TwoRanks two_ranks() {
  TwoRanks t;
  t.s0 = build("0", 200,
               {{SegmentType::kHead, 0, 9, {}},
                {SegmentType::kStep, 10, 79, {{10, 39, LayerRole::kMain}, {40, 69, LayerRole::kMain}, {70, 79, LayerRole::kSpeculative}}},
                {SegmentType::kUnclassifiedIsland, 80, 89, {}},
                {SegmentType::kStep, 90, 179, {{90, 134, LayerRole::kMain}, {135, 179, LayerRole::kMain}}},
                {SegmentType::kTail, 180, 199, {}}});
  t.s0.hard_errors.push_back({"interior_unclassified_island", 80, 89, 2, "unclassified island between steps"});
  // the reference's step-scope observations: two roles on the first step, one on the second
  t.s0.role_observations = {{1, "attention", {"FlashAttentionScore", "MlaProlog"}, {10, 11, 40}},
                            {1, "moe", {"GroupedMatmul"}, {30}},
                            {3, "attention", {"FlashAttentionScore"}, {90, 135}}};
  add_blocks(t.s0, &t.c0, {});
  t.c0.layer_classes = {shape_class("lyr_cls_am", {0, 1, 3, 4}), shape_class("lyr_cls_a", {2})};
  t.c0.layer_classes[0].block_kinds = {"attention", "moe"};
  t.c0.layer_classes[0].child_class_ids = {"blk_cls_attn", "blk_cls_moe"};
  t.c0.step_classes = {shape_class("stp_cls_shared", {1, 3})};
  t.c0.step_classes[0].main_layer_count = 2;
  t.c0.step_classes[0].step_family = "attention_moe_workload";
  t.c0.step_classes[0].child_class_ids = {"lyr_cls_am", "lyr_cls_am", "lyr_cls_a"};
  t.c0.layer_class = {0, 0, 1, 0, 0};
  t.c0.step_class = {-1, 0, -1, 0, -1};

  t.s1 = build("1", 100,
               {{SegmentType::kStep, 0, 59, {{0, 19, LayerRole::kMain}, {20, 39, LayerRole::kMain}, {40, 59, LayerRole::kMain}}},
                {SegmentType::kStep, 60, 89, {{60, 74, LayerRole::kMain}, {75, 89, LayerRole::kMain}}},
                {SegmentType::kUnclassifiedIsland, 90, 99, {}}});
  t.s1.step_source = StepSource::kProfilerStep;
  t.s1.segments[0].declared_step = 4;
  t.s1.segments[0].source = StepSource::kProfilerStep;
  t.s1.boundary_checks.push_back({4, StepSource::kProfilerStep, 0, 59, 1, true, ""});
  t.s1.boundary_checks.push_back({5, StepSource::kProfilerStep, 60, 99, 2, false, "2 structural steps overlap"});
  add_blocks(t.s1, &t.c1, {0});
  t.c1.layer_classes = {shape_class("lyr_cls_f", {0}), shape_class("lyr_cls_am", {1, 2, 3, 4})};
  t.c1.layer_classes[1].block_kinds = {"attention", "moe"};
  t.c1.layer_classes[1].child_class_ids = {"blk_cls_attn", "blk_cls_moe"};
  t.c1.step_classes = {shape_class("stp_cls_3", {0}), shape_class("stp_cls_shared", {1})};
  t.c1.step_classes[1].main_layer_count = 2;
  t.c1.step_classes[1].step_family = "attention_moe_workload";
  t.c1.layer_class = {0, 1, 1, 1, 1};
  t.c1.step_class = {0, 1, -1};
  return t;
}

const char* kFinalFiles[] = {"step_segments.json",  "layer_segments.json", "structure_evidence_graph.json",
                             "segment_manifest.json", "block_segments.json", "class_signatures.json",
                             "classify_manifest.json"};

std::vector<std::string> leftovers(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().find(".tmp") != std::string::npos) out.push_back(e.path().filename().string());
  return out;
}

class StructureOutputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TwoRanks t = two_ranks();
    auto w = StructureOutputWriter::create(dir_ / "out", {true, true, "/captures/run1", {}});
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    ASCPROF_ASSERT_OK(w->add_rank(0, "0", t.s0, t.c0));
    ASCPROF_ASSERT_OK(w->add_rank(1, "1", t.s1, t.c1));
    ASCPROF_ASSERT_OK(w->finish());
    totals_ = w->totals();
    outputs_ = w->outputs();
    ranks_ = std::move(t);
  }
  simdjson::dom::element parse(const char* name) {
    auto text = read_file(dir_ / "out" / name);
    EXPECT_TRUE(text.ok()) << name;
    texts_.push_back(text.ok() ? *text : std::string("null"));
    parsers_.emplace_back(std::make_unique<simdjson::dom::parser>());
    simdjson::dom::element e;
    EXPECT_EQ(parsers_.back()->parse(texts_.back()).get(e), simdjson::SUCCESS) << name;
    return e;
  }
  static std::vector<std::string> strings(simdjson::dom::element arr) {
    std::vector<std::string> out;
    for (simdjson::dom::element e : arr.get_array()) out.emplace_back(std::string_view(e));
    return out;
  }
  static std::vector<uint64_t> uints(simdjson::dom::element arr) {
    std::vector<uint64_t> out;
    for (simdjson::dom::element e : arr.get_array()) out.push_back(uint64_t(e));
    return out;
  }

  ascprof::testing::ScratchDir dir_{"structure-outputs"};
  StructureTotals totals_;
  std::vector<fs::path> outputs_;
  TwoRanks ranks_;
  std::list<std::string> texts_;
  std::vector<std::unique_ptr<simdjson::dom::parser>> parsers_;
};

TEST_F(StructureOutputsTest, PublishesAllFilesAndNoTemporaries) {
  EXPECT_EQ(outputs_.size(), 7u);
  for (const char* f : kFinalFiles) EXPECT_TRUE(fs::is_regular_file(dir_ / "out" / f)) << f;
  EXPECT_EQ(leftovers(dir_ / "out"), std::vector<std::string>{});
  // Markers are published last.
  EXPECT_EQ(outputs_[5].filename(), "segment_manifest.json");
  EXPECT_EQ(outputs_[6].filename(), "classify_manifest.json");
  EXPECT_EQ(totals_.rank_count, 2u);
  EXPECT_EQ(totals_.segment_count, 8u);
  EXPECT_EQ(totals_.step_count, 4u);
  EXPECT_EQ(totals_.layer_count, 10u);
  EXPECT_EQ(totals_.block_count, 18u);
  EXPECT_EQ(totals_.evidence_count, 20u);
  EXPECT_EQ(totals_.structure_observation_count, 3u);
  EXPECT_EQ(totals_.hard_error_count, 1u);
  EXPECT_EQ(totals_.interior_island_total, 1u);
  EXPECT_EQ(totals_.step_classes, 2u);
  EXPECT_EQ(totals_.layer_classes, 3u);
  EXPECT_EQ(totals_.block_classes, 3u);
}

TEST_F(StructureOutputsTest, StepAndLayerSegments) {
  simdjson::dom::element steps = parse("step_segments.json")["step_segments"];
  ASSERT_EQ(len(steps), 8u);
  simdjson::dom::element head = steps.at(0);
  EXPECT_EQ(std::string_view(head["segment_id"]), ranks_.s0.segments[0].segment_id);
  EXPECT_EQ(std::string_view(head["rank_id"]), "0");
  EXPECT_EQ(std::string_view(head["segment_type"]), "head");
  EXPECT_FALSE(bool(head["complete"]));
  EXPECT_TRUE(head["declared_step"].is_null());
  EXPECT_EQ(strings(head["layer_ids"]), std::vector<std::string>{});
  EXPECT_EQ(strings(head["evidence_ids"]),
            std::vector<std::string>{stable_id("evd", {ranks_.s0.segments[0].segment_id, "edge_window"})});
  simdjson::dom::element step = steps.at(1);
  EXPECT_EQ(std::string_view(step["segment_type"]), "step");
  EXPECT_TRUE(bool(step["complete"]));
  EXPECT_EQ(uint64_t(step["row_start"]), 10u);
  EXPECT_EQ(uint64_t(step["row_end"]), 79u);
  EXPECT_EQ(uint64_t(step["main_layer_count"]), 2u);
  EXPECT_EQ(uint64_t(step["speculative_layer_count"]), 1u);
  EXPECT_EQ(strings(step["layer_ids"]), (std::vector<std::string>{ranks_.s0.layers[0].layer_id,
                                                                    ranks_.s0.layers[1].layer_id,
                                                                    ranks_.s0.layers[2].layer_id}));
  EXPECT_EQ(strings(step["frame_reasons"]), std::vector<std::string>{"exact_recurring_template"});
  EXPECT_EQ(std::string_view(step["step_source"]), "structural");
  EXPECT_EQ(std::string_view(step["phase"]), "inference");
  simdjson::dom::element declared = steps.at(5);  // rank 1, first step
  EXPECT_EQ(std::string_view(declared["rank_id"]), "1");
  EXPECT_EQ(int64_t(declared["declared_step"]), 4);
  EXPECT_EQ(std::string_view(declared["step_source"]), "profiler_step");
  // µs from ns, exactly three decimals, as text.
  const std::string& text = texts_.front();
  EXPECT_NE(text.find("\"start_us\":1700000000123456.789,\"end_us\":1700000000123466.789"), std::string::npos);

  simdjson::dom::element layers = parse("layer_segments.json")["layer_segments"];
  ASSERT_EQ(len(layers), 10u);
  simdjson::dom::element spec = layers.at(2);
  EXPECT_EQ(std::string_view(spec["layer_role"]), "speculative");
  EXPECT_EQ(uint64_t(spec["layer_index"]), 2u);
  EXPECT_EQ(std::string_view(spec["segment_id"]), ranks_.s0.segments[1].segment_id);
  EXPECT_TRUE(spec["microbatch"].is_null());
  EXPECT_EQ(std::string_view(spec["boundary_source"]), "exact_structural_anchor");  // the reference's vocabulary
  EXPECT_EQ(std::string_view(spec["boundary_detail"]), "declared_step_window");    // ours
  EXPECT_EQ(std::string_view(layers.at(0)["boundary_detail"]), "exact_structural_anchor");
  EXPECT_EQ(strings(spec["evidence_ids"]),
            std::vector<std::string>{stable_id("evd", {ranks_.s0.layers[2].layer_id, "layer_window"})});
  EXPECT_EQ(std::string_view(layers.at(9)["rank_id"]), "1");
}

TEST_F(StructureOutputsTest, EvidenceGraph) {
  auto g = parse("structure_evidence_graph.json");
  simdjson::dom::array ev = g["evidence"].get_array();
  ASSERT_EQ(ev.size(), 20u);
  std::map<std::string, int> kinds;
  std::set<std::string> ids;
  for (simdjson::dom::element e : ev) {
    ++kinds[std::string(std::string_view(e["kind"]))];
    ids.insert(std::string(std::string_view(e["evidence_id"])));
  }
  EXPECT_EQ(ids.size(), 20u);  // unique
  EXPECT_EQ(kinds["rank_window"], 2);
  EXPECT_EQ(kinds["edge_window"], 4);
  EXPECT_EQ(kinds["step_window"], 4);
  EXPECT_EQ(kinds["layer_window"], 10);
  // Every id a segment or layer refers to exists.
  for (const char* f : {"step_segments", "layer_segments"})
    for (simdjson::dom::element row : parse((std::string(f) + ".json").c_str())[f].get_array())
      for (const auto& id : strings(row["evidence_ids"])) EXPECT_TRUE(ids.count(id)) << f << " " << id;

  simdjson::dom::element rank1 = g["evidence"].at(0);
  EXPECT_EQ(std::string_view(rank1["kind"]), "rank_window");
  EXPECT_EQ(std::string_view(rank1["evidence_id"]), stable_id("evd", {"0", "rank_window"}));
  EXPECT_EQ(uint64_t(rank1["event_count"]), 200u);
  EXPECT_EQ(uint64_t(rank1["row_end"]), 199u);
  const auto evt = strings(rank1["event_ids"]);
  ASSERT_EQ(evt.size(), 64u);  // capped
  EXPECT_EQ(evt.front(), "evt_0_0");
  EXPECT_EQ(evt.back(), "evt_0_63");
  // A rank-1 step window: event ids carry the rank ordinal and the rows of the window.
  bool found = false;
  for (simdjson::dom::element e : ev) {
    if (std::string_view(e["evidence_id"]) != stable_id("evd", {ranks_.s1.segments[1].segment_id, "step_window"})) continue;
    found = true;
    EXPECT_EQ(uint64_t(e["event_count"]), 30u);
    const auto ids1 = strings(e["event_ids"]);
    ASSERT_EQ(ids1.size(), 30u);
    EXPECT_EQ(ids1.front(), "evt_1_60");
    EXPECT_EQ(ids1.back(), "evt_1_89");
    // the reference's reference fields: the segment it covers, no layer, no alignment, a summary
    EXPECT_EQ(strings(e["segment_ids"]), std::vector<std::string>{ranks_.s1.segments[1].segment_id});
    EXPECT_TRUE(strings(e["layer_ids"]).empty());
    EXPECT_TRUE(strings(e["alignment_ids"]).empty());
    EXPECT_EQ(std::string_view(e["summary"]).rfind("Step cover: main_layers=", 0), 0u) << std::string_view(e["summary"]);
  }
  EXPECT_TRUE(found);
  for (simdjson::dom::element e : ev) {
    if (std::string_view(e["evidence_id"]) == stable_id("evd", {ranks_.s1.layers[0].layer_id, "layer_window"})) {
      EXPECT_EQ(strings(e["layer_ids"]), std::vector<std::string>{ranks_.s1.layers[0].layer_id});
    }
  }

  // the reference's records: one per (step, operator role), with the step's evidence
  simdjson::dom::array ref = g["structure_observations"].get_array();
  ASSERT_EQ(ref.size(), 3u);
  simdjson::dom::element att = g["structure_observations"].at(0), moe = g["structure_observations"].at(1);
  EXPECT_EQ(std::string_view(att["scope_type"]), "step");
  EXPECT_EQ(std::string_view(att["role"]), "attention");
  EXPECT_EQ(std::string_view(att["role_family"]), "attention");
  EXPECT_EQ(std::string_view(att["rank_id"]), "0");
  EXPECT_EQ(std::string_view(att["segment_id"]), ranks_.s0.segments[1].segment_id);
  EXPECT_TRUE(att["layer_id"].is_null());
  EXPECT_EQ(strings(att["event_ids"]), (std::vector<std::string>{"evt_0_10", "evt_0_11", "evt_0_40"}));
  EXPECT_EQ(strings(att["implementation_evidence"]), (std::vector<std::string>{"FlashAttentionScore", "MlaProlog"}));
  EXPECT_EQ(strings(att["evidence_ids"]),
            std::vector<std::string>{stable_id("evd", {ranks_.s0.segments[1].segment_id, "step_window"})});
  EXPECT_EQ(std::string_view(att["structure_id"]).rfind("struct_", 0), 0u);
  EXPECT_NE(std::string_view(att["structure_id"]), std::string_view(moe["structure_id"]));
  EXPECT_EQ(std::string_view(moe["role"]), "moe");
  EXPECT_EQ(std::string_view(g["structure_observations"].at(2)["segment_id"]), ranks_.s0.segments[3].segment_id);

  // ours: one per (step, layer role)
  simdjson::dom::array obs = g["layer_role_observations"].get_array();
  ASSERT_EQ(obs.size(), 5u);
  simdjson::dom::element main0 = g["layer_role_observations"].at(0), spec0 = g["layer_role_observations"].at(1);
  EXPECT_EQ(std::string_view(main0["segment_id"]), ranks_.s0.segments[1].segment_id);
  EXPECT_EQ(std::string_view(main0["layer_role"]), "main");
  EXPECT_EQ(uint64_t(main0["layer_count"]), 2u);
  EXPECT_EQ(uint64_t(main0["event_count"]), 60u);
  EXPECT_EQ(strings(main0["event_ids"]).size(), 60u);
  EXPECT_EQ(std::string_view(spec0["layer_role"]), "speculative");
  EXPECT_EQ(uint64_t(spec0["layer_count"]), 1u);
  EXPECT_EQ(strings(spec0["event_ids"]).front(), "evt_0_70");
}

TEST_F(StructureOutputsTest, SegmentManifest) {
  auto m = parse("segment_manifest.json");
  EXPECT_EQ(std::string_view(m["analysis_stage"]), "segment");
  EXPECT_EQ(std::string_view(m["files"]["step_segments"]), "step_segments.json");
  EXPECT_EQ(std::string_view(m["root"]), "/captures/run1");
  EXPECT_EQ(uint64_t(m["segment_count"]), 8u);
  EXPECT_EQ(uint64_t(m["layer_count"]), 10u);
  EXPECT_EQ(uint64_t(m["structure_observation_count"]), 3u);  // the reference's records
  EXPECT_EQ(uint64_t(m["evidence_count"]), 20u);
  EXPECT_EQ(uint64_t(m["hard_error_count"]), 1u);
  EXPECT_EQ(uint64_t(m["interior_island_total"]), 1u);
  simdjson::dom::element he = m["hard_errors"].at(0);
  EXPECT_EQ(std::string_view(he["rank_id"]), "0");
  EXPECT_EQ(std::string_view(he["error_type"]), "interior_unclassified_island");
  EXPECT_EQ(uint64_t(he["row_start"]), 80u);
  EXPECT_EQ(std::string_view(he["segment_id"]), ranks_.s0.segments[2].segment_id);
  simdjson::dom::element r0 = m["rank_summaries"].at(0), r1 = m["rank_summaries"].at(1);
  EXPECT_EQ(std::string_view(r0["rank_id"]), "0");
  EXPECT_EQ(uint64_t(r0["segment_count"]), 5u);
  EXPECT_EQ(uint64_t(r0["step_count"]), 2u);
  EXPECT_EQ(uint64_t(r0["interior_unclassified_count"]), 1u);
  EXPECT_EQ(uints(r0["layer_count_inventory"]), std::vector<uint64_t>{2});
  EXPECT_EQ(uint64_t(r0["hard_error_count"]), 1u);
  EXPECT_EQ(std::string_view(r0["step_source"]), "structural");
  EXPECT_EQ(std::string_view(r0["anchor_family"]), "attention.mla");
  // Rank 1's island follows its last step: not interior.
  EXPECT_EQ(uint64_t(r1["interior_unclassified_count"]), 0u);
  EXPECT_EQ(uints(r1["layer_count_inventory"]), (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(std::string_view(r1["step_source"]), "profiler_step");
  simdjson::dom::element bc = m["boundary_checks"];
  EXPECT_EQ(uint64_t(bc["ranks_with_declared_steps"]), 1u);
  EXPECT_EQ(uint64_t(bc["declared_steps"]), 2u);
  EXPECT_EQ(uint64_t(bc["agreeing"]), 1u);
  EXPECT_EQ(uint64_t(bc["disagreeing"]), 1u);
  EXPECT_EQ(std::string_view(bc["disagreements"].at(0)["note"]), "2 structural steps overlap");
  EXPECT_EQ(int64_t(bc["disagreements"].at(0)["declared_step"]), 5);
}

TEST_F(StructureOutputsTest, BlocksClassesAndClassifyManifest) {
  simdjson::dom::element blocks = parse("block_segments.json")["block_segments"];
  ASSERT_EQ(len(blocks), 18u);
  simdjson::dom::element b = blocks.at(9);  // rank 1, layer 0: the companion ffn block
  EXPECT_EQ(std::string_view(b["rank_id"]), "1");
  EXPECT_EQ(std::string_view(b["block_kind"]), "ffn");
  EXPECT_TRUE(bool(b["companion_layer"]));
  EXPECT_EQ(std::string_view(b["block_class_id"]), "blk_cls_ffn");
  EXPECT_EQ(std::string_view(b["segment_id"]), ranks_.s1.segments[0].segment_id);
  EXPECT_EQ(std::string_view(b["layer_id"]), ranks_.s1.layers[0].layer_id);
  EXPECT_EQ(uint64_t(b["event_count"]), 20u);
  EXPECT_EQ(strings(b["evidence_ids"]),
            std::vector<std::string>{stable_id("evd", {ranks_.s1.layers[0].layer_id, "layer_window"})});

  // the reference's shape: <scope>_classes maps class id -> record, <scope>_class_by_id member id -> class id
  auto cs = parse("class_signatures.json");
  simdjson::dom::element shared = cs["step_classes"]["stp_cls_shared"];
  EXPECT_EQ(strings(shared["members"]),
            (std::vector<std::string>{ranks_.s0.segments[1].segment_id, ranks_.s0.segments[3].segment_id,
                                      ranks_.s1.segments[1].segment_id}));
  EXPECT_EQ(std::string_view(cs["step_class_by_id"][ranks_.s1.segments[1].segment_id]), "stp_cls_shared");
  EXPECT_EQ(uint64_t(shared["main_layer_count"]), 2u);
  EXPECT_EQ(std::string_view(shared["step_family"]), "attention_moe_workload");
  EXPECT_EQ(strings(shared["layer_class_ids"]), (std::vector<std::string>{"lyr_cls_am", "lyr_cls_am", "lyr_cls_a"}));
  EXPECT_EQ(simdjson::dom::object(cs["step_classes"]).size(), 2u);
  EXPECT_EQ(std::string_view(simdjson::dom::object(cs["step_classes"]).begin().key()), "stp_cls_shared");  // first seen
  simdjson::dom::element am = cs["layer_classes"]["lyr_cls_am"];
  EXPECT_EQ(strings(am["members"]).size(), 8u);  // 4 layers on each rank
  EXPECT_EQ(strings(am["members"])[4], ranks_.s1.layers[1].layer_id);
  EXPECT_EQ(std::string_view(cs["layer_class_by_id"][ranks_.s1.layers[1].layer_id]), "lyr_cls_am");
  EXPECT_EQ(strings(am["block_kinds"]), (std::vector<std::string>{"attention", "moe"}));
  EXPECT_EQ(strings(am["block_class_ids"]), (std::vector<std::string>{"blk_cls_attn", "blk_cls_moe"}));
  EXPECT_EQ(simdjson::dom::object(cs["layer_classes"]).size(), 3u);
  simdjson::dom::element attn = cs["block_classes"]["blk_cls_attn"];
  EXPECT_EQ(strings(attn["members"]).size(), 9u);  // 5 on rank 0, 4 on rank 1
  EXPECT_EQ(std::string_view(attn["block_kind"]), "attention");
  EXPECT_EQ(uint64_t(attn["shape_pairs_count"]), 4u);
  EXPECT_TRUE(bool(cs["block_classes"]["blk_cls_ffn"]["has_unknown_shape"]));
  EXPECT_EQ(simdjson::dom::object(cs["block_classes"]).size(), 3u);
  // every member of every class is in the member map: 3 block classes' members, each once
  uint64_t block_members = 0;
  for (auto [id, cls] : simdjson::dom::object(cs["block_classes"])) block_members += len(cls["members"]);
  EXPECT_EQ(simdjson::dom::object(cs["block_class_by_id"]).size(), block_members);
  EXPECT_EQ(uint64_t(cs["schema_version"]), 1u);

  auto m = parse("classify_manifest.json");
  simdjson::dom::element counts = m["counts"];
  EXPECT_EQ(uint64_t(counts["blocks"]), 18u);
  EXPECT_EQ(uint64_t(counts["layers_with_blocks"]), 10u);
  EXPECT_EQ(uint64_t(counts["companion_layers"]), 1u);
  EXPECT_EQ(uint64_t(counts["step_classes"]), 2u);
  EXPECT_EQ(uint64_t(counts["layer_classes"]), 3u);
  EXPECT_EQ(uint64_t(counts["block_classes"]), 3u);
  EXPECT_EQ(uint64_t(counts["block_kind_counts"]["attention"]), 9u);
  EXPECT_EQ(uint64_t(counts["block_kind_counts"]["moe"]), 8u);
  EXPECT_EQ(uint64_t(counts["block_kind_counts"]["ffn"]), 1u);
  EXPECT_EQ(uint64_t(counts["block_kind_counts"]["aicpu"]), 0u);
  simdjson::dom::element cov = m["shape_coverage"];
  EXPECT_EQ(uint64_t(cov["block_classes_with_shape"]), 2u);
  EXPECT_EQ(uint64_t(cov["block_classes_total"]), 3u);
  EXPECT_EQ(uint64_t(cov["step_classes_with_shape"]), 2u);
  EXPECT_EQ(uint64_t(cov["layer_classes_total"]), 3u);
}

// Issue 17: the rank jobs render their rows into their part packs and the root only concatenates
// them. Ranks added from packs (as the root does) give the same files, byte for byte, as ranks
// added from their structures; text with tabs, newlines, backslashes and quotes survives the pack's
// class lines; a damaged or missing section fails the writer naming the pack.
TEST(StructureOutputs, RanksFromPartPacksEqualRanksFromStructures) {
  ascprof::testing::ScratchDir dir("structure-packs");
  TwoRanks t = two_ranks();
  t.c0.step_classes[0].step_family = "odd\tfamily\nwith \\ and \"quotes\"";
  t.c1.step_classes[1].step_family = t.c0.step_classes[0].step_family;
  t.c0.layer_classes[0].child_class_ids = {"blk\tcls", "", "blk_cls_moe"};
  t.c1.layer_classes[1].child_class_ids = t.c0.layer_classes[0].child_class_ids;
  {
    auto w = StructureOutputWriter::create(dir / "direct", {true, true, "/captures/run1", {}});
    ASSERT_TRUE(w.ok());
    ASCPROF_ASSERT_OK(w->add_rank(0, "0", t.s0, t.c0));
    ASCPROF_ASSERT_OK(w->add_rank(1, "1", t.s1, t.c1));
    ASCPROF_ASSERT_OK(w->finish());
  }
  std::vector<fs::path> packs;
  for (int r = 0; r < 2; ++r) {
    packs.push_back(dir / ("rank" + std::to_string(r) + ".parts"));
    store::PartPackWriter pack;
    ASCPROF_ASSERT_OK(pack.open(packs.back()));
    ASCPROF_ASSERT_OK(write_rank_structure_parts(pack, static_cast<uint32_t>(r), std::to_string(r), r ? t.s1 : t.s0,
                                                 r ? t.c1 : t.c0, true));
    ASCPROF_ASSERT_OK(pack.commit());
  }
  // the root's path: each rank added from its pack
  auto from_packs = [&packs](const fs::path& out, const StructureOutputOptions& o) {
    auto w = StructureOutputWriter::create(out, o);
    ASSERT_TRUE(w.ok());
    for (int r = 0; r < 2; ++r) {
      auto reader = store::PartPackReader::open(packs[static_cast<size_t>(r)]);
      ASSERT_TRUE(reader.ok());
      ASCPROF_ASSERT_OK(w->add_rank_parts(static_cast<uint32_t>(r), std::to_string(r), *reader));
    }
    ASCPROF_ASSERT_OK(w->finish());
  };
  from_packs(dir / "packs", {true, true, "/captures/run1", {}});
  // the copies deferred to finish() and run by a runner in pieces, the last piece first (as the
  // processes of a run place them): the same files
  size_t deferred = 0;
  {
    StructureOutputOptions o{true, true, "/captures/run1", {}};
    o.run_copies = [&deferred](const std::vector<store::SectionCopy>& copies) {
      const auto bounds = store::split_section_copies(copies, 2);
      for (size_t k = 2; k-- > 0;) ASCPROF_RETURN_IF_ERROR(store::run_section_copies(copies, bounds[k], bounds[k + 1]));
      deferred += copies.size();
      return Status{};
    };
    from_packs(dir / "later", o);
  }
  EXPECT_GE(deferred, 6u);  // both ranks' step, layer, observation, evidence and block rows
  for (const char* f : kFinalFiles) {
    auto a = read_file(dir / "direct" / f), b = read_file(dir / "packs" / f), c = read_file(dir / "later" / f);
    ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << f;
    std::string direct = *a, later = *c;  // the manifests name their folder
    for (size_t at; (at = direct.find("/direct\"")) != std::string::npos;) direct.replace(at, 7, "/packs");
    for (size_t at; (at = later.find("/later\"")) != std::string::npos;) later.replace(at, 6, "/packs");
    EXPECT_EQ(direct, *b) << f;
    EXPECT_EQ(later, *b) << f;
  }
  auto sigs = read_file(dir / "packs" / "class_signatures.json");
  ASSERT_TRUE(sigs.ok());
  simdjson::dom::parser parser;
  simdjson::dom::element cs;
  ASSERT_EQ(parser.parse(*sigs).get(cs), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(cs["step_classes"]["stp_cls_shared"]["step_family"]), t.c0.step_classes[0].step_family);
  EXPECT_EQ(len(cs["step_classes"]["stp_cls_shared"]["members"]), 3u);
  std::vector<std::string> ids;
  for (simdjson::dom::element e : cs["layer_classes"]["lyr_cls_am"]["block_class_ids"].get_array())
    ids.emplace_back(std::string_view(e));
  EXPECT_EQ(ids, t.c0.layer_classes[0].child_class_ids);

  // a pack whose class lines are damaged, and one without its manifest section
  for (const char* damage : {"classes", "manifest"}) {
    const fs::path bad = dir / (std::string("bad-") + damage + ".parts");
    {
      auto good = store::PartPackReader::open(packs[0]);
      ASSERT_TRUE(good.ok());
      store::PartPackWriter w;
      ASCPROF_ASSERT_OK(w.open(bad));
      for (const auto& section : good->sections()) {
        if (damage == std::string("manifest") && section == "structure_manifest") continue;
        std::string bytes = good->read(section).value();
        if (section == "structure_classes") bytes = "s\tnot a number\n";
        w.add(section, bytes, good->rows(section));
      }
      ASCPROF_ASSERT_OK(w.commit());
    }
    auto w = StructureOutputWriter::create(dir / (std::string("out-") + damage), {true, true, "", {}});
    ASSERT_TRUE(w.ok());
    auto reader = store::PartPackReader::open(bad);
    ASSERT_TRUE(reader.ok());
    const Status st = w->add_rank_parts(0, "0", *reader);
    EXPECT_EQ(st.code(), ErrorCode::kSchema) << damage << ": " << st.to_string();
    EXPECT_NE(st.message().find(bad.filename().string()), std::string::npos) << st.to_string();
    EXPECT_FALSE(w->finish().ok());
    EXPECT_EQ(leftovers(dir / (std::string("out-") + damage)), std::vector<std::string>{});
  }
}

TEST(StructureOutputs, InteriorUnclassifiedCount) {
  using T = SegmentType;
  auto rank = [](std::vector<T> types) {
    RankStructure s;
    for (T t : types) {
      StepSegment g;
      g.type = t;
      s.segments.push_back(g);
    }
    return s;
  };
  EXPECT_EQ(interior_unclassified_count(rank({})), 0u);
  EXPECT_EQ(interior_unclassified_count(rank({T::kUnclassifiedIsland, T::kStep, T::kUnclassifiedIsland})), 0u);
  EXPECT_EQ(interior_unclassified_count(rank({T::kStep, T::kUnclassifiedIsland, T::kRunnerWindow,
                                              T::kUnclassifiedIsland, T::kStep, T::kUnclassifiedIsland})),
            2u);
}

TEST(StructureOutputs, UnusableTargetFolderIsAnIoError) {
  ascprof::testing::ScratchDir dir("structure-outputs");
  ascprof::testing::write_text(dir / "file", "x");
  auto w = StructureOutputWriter::create(dir / "file" / "out");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), ErrorCode::kIo);
  EXPECT_NE(w.status().message().find("file/out"), std::string::npos) << w.status().message();
  auto w2 = StructureOutputWriter::create(dir / "file");
  ASSERT_FALSE(w2.ok());
  EXPECT_NE(w2.status().message().find("cannot create output folder"), std::string::npos) << w2.status().message();
}

TEST(StructureOutputs, TakenFinalNamePublishesNothing) {
  ascprof::testing::ScratchDir dir("structure-outputs");
  const TwoRanks t = two_ranks();
  auto w = StructureOutputWriter::create(dir / "out");
  ASCPROF_ASSERT_OK(w);
  ASCPROF_ASSERT_OK(w->add_rank(0, "0", t.s0, t.c0));
  fs::create_directories(dir / "out" / "class_signatures.json");  // a folder where a file must go
  Status st = w->finish();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kIo);
  EXPECT_NE(st.message().find("class_signatures.json"), std::string::npos) << st.message();
  for (const char* f : kFinalFiles) EXPECT_FALSE(fs::is_regular_file(dir / "out" / f)) << f;
  EXPECT_EQ(leftovers(dir / "out"), std::vector<std::string>{});
  EXPECT_TRUE(w->outputs().empty());
  EXPECT_EQ(w->finish().code(), ErrorCode::kInternal);
}

TEST(StructureOutputs, VanishedFolderFailsAndAbandonedWriterCleansUp) {
  ascprof::testing::ScratchDir dir("structure-outputs");
  const TwoRanks t = two_ranks();
  {
    auto w = StructureOutputWriter::create(dir / "gone");
    ASCPROF_ASSERT_OK(w);
    ASCPROF_ASSERT_OK(w->add_rank(0, "0", t.s0, t.c0));
    fs::remove_all(dir / "gone");
    EXPECT_EQ(w->finish().code(), ErrorCode::kIo);
    EXPECT_FALSE(fs::exists(dir / "gone"));
  }
  {
    auto w = StructureOutputWriter::create(dir / "abandoned");
    ASCPROF_ASSERT_OK(w);
    ASCPROF_ASSERT_OK(w->add_rank(0, "0", t.s0, t.c0));
    EXPECT_FALSE(leftovers(dir / "abandoned").empty());  // rows are on disk while ranks stream in
  }
  EXPECT_TRUE(fs::is_empty(dir / "abandoned"));
}

TEST(StructureOutputs, BadRankInputFailsTheWriter) {
  ascprof::testing::ScratchDir dir("structure-outputs");
  TwoRanks t = two_ranks();
  auto w = StructureOutputWriter::create(dir / "out");
  ASCPROF_ASSERT_OK(w);
  ASCPROF_ASSERT_OK(w->add_rank(3, "3", t.s0, t.c0));
  Status st = w->add_rank(3, "4", t.s1, t.c1);
  EXPECT_EQ(st.code(), ErrorCode::kInternal);
  EXPECT_NE(st.message().find("rank ordinal 3 does not follow 3"), std::string::npos) << st.message();
  EXPECT_EQ(w->finish().code(), ErrorCode::kInternal);
  EXPECT_TRUE(fs::is_empty(dir / "out"));

  auto w2 = StructureOutputWriter::create(dir / "out2");
  ASCPROF_ASSERT_OK(w2);
  t.c1.blocks[0].layer = 99;
  st = w2->add_rank(0, "1", t.s1, t.c1);
  EXPECT_EQ(st.code(), ErrorCode::kInternal);
  EXPECT_NE(st.message().find("block 0: layer out of range"), std::string::npos) << st.message();
}

TEST(StructureOutputs, SegmentOnlyAndEmptyRoot) {
  ascprof::testing::ScratchDir dir("structure-outputs");
  const TwoRanks t = two_ranks();
  StructureOutputOptions o;
  o.classify_files = false;
  auto w = StructureOutputWriter::create(dir / "seg", o);
  ASCPROF_ASSERT_OK(w);
  ASCPROF_ASSERT_OK(w->add_rank(0, "0", t.s0, RankClasses{}));
  ASCPROF_ASSERT_OK(w->finish());
  EXPECT_TRUE(fs::exists(dir / "seg" / "segment_manifest.json"));
  EXPECT_FALSE(fs::exists(dir / "seg" / "classify_manifest.json"));
  EXPECT_FALSE(fs::exists(dir / "seg" / "block_segments.json"));

  auto e = StructureOutputWriter::create(dir / "empty");
  ASCPROF_ASSERT_OK(e);
  ASCPROF_ASSERT_OK(e->finish());
  auto text = read_file(dir / "empty" / "step_segments.json");
  ASCPROF_ASSERT_OK(text);
  EXPECT_EQ(*text, "{\"step_segments\": []}\n");
  simdjson::dom::parser p;
  auto g = read_file(dir / "empty" / "structure_evidence_graph.json");
  ASCPROF_ASSERT_OK(g);
  simdjson::dom::element doc;
  ASSERT_EQ(p.parse(*g).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(len(doc["evidence"]), 0u);
  auto cs = read_file(dir / "empty" / "class_signatures.json");
  ASCPROF_ASSERT_OK(cs);
  ASSERT_EQ(p.parse(*cs).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(simdjson::dom::object(doc["step_classes"]).size(), 0u);
}

TEST(StructureOutputs, FinishedWriterDoesNotTouchALaterWritersTemporaries) {
  ascprof::testing::ScratchDir dir("structure-outputs");
  const TwoRanks t = two_ranks();
  auto first = std::make_unique<Result<StructureOutputWriter>>(StructureOutputWriter::create(dir / "out"));
  ASCPROF_ASSERT_OK(*first);
  ASCPROF_ASSERT_OK((*first)->add_rank(0, "0", t.s0, t.c0));
  ASCPROF_ASSERT_OK((*first)->finish());
  auto second = StructureOutputWriter::create(dir / "out");  // same process: same temporary names
  ASCPROF_ASSERT_OK(second);
  first.reset();
  ASCPROF_ASSERT_OK(second->add_rank(0, "1", t.s1, t.c1));
  ASCPROF_ASSERT_OK(second->finish());
  auto text = read_file(dir / "out" / "segment_manifest.json");
  ASCPROF_ASSERT_OK(text);
  EXPECT_NE(text->find("\"segment_count\": 3"), std::string::npos);
  EXPECT_EQ(leftovers(dir / "out"), std::vector<std::string>{});
}

}  // namespace
}  // namespace ascprof::pipeline

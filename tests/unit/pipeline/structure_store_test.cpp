// Segment / classify results round-trip through the rank HDF5 file field by field, the layout is
// the documented one (h5py-readable vlen strings and plain numeric columns), and damaged or
// inconsistent tables are refused with errors naming the dataset.
#include <gtest/gtest.h>

#include <functional>
#include <tuple>

#include "ascprof/common/stable_id.hpp"
#include "ascprof/store/h5_reader.hpp"
#include "ascprof/store/h5_writer.hpp"
#include "pipeline/structure_store.hpp"
#include "support/table_edit.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;
using namespace model;

auto tie_segment(const StepSegment& g) {
  return std::tie(g.segment_id, g.type, g.complete, g.row_start, g.row_end, g.start_ns, g.end_ns, g.step_family,
                  g.main_layer_count, g.speculative_layer_count, g.structure_signature, g.cluster_id, g.first_layer,
                  g.layer_count, g.source, g.declared_step, g.phase, g.microbatch_count, g.frame_reasons, g.frame_tags,
                  g.selection_rows);
}
auto tie_layer(const LayerSegment& l) {
  return std::tie(l.layer_id, l.segment, l.layer_index, l.row_start, l.row_end, l.start_ns, l.end_ns,
                  l.first_anchor_row, l.role, l.microbatch, l.boundary_source, l.signature);
}
auto tie_error(const HardError& h) { return std::tie(h.error_type, h.row_start, h.row_end, h.segment, h.detail); }
auto tie_check(const StepBoundaryCheck& b) {
  return std::tie(b.declared_step, b.source, b.row_start, b.row_end, b.structural_steps, b.agrees, b.note);
}
auto tie_block(const BlockSegment& b) {
  return std::tie(b.block_id, b.layer, b.block_index, b.kind, b.companion_layer, b.row_start, b.row_end, b.start_ns,
                  b.end_ns, b.event_count, b.block_class);
}
auto tie_class(const ShapeClass& c) {
  return std::tie(c.class_id, c.structure_signature, c.scope_label, c.has_unknown_shape, c.shape_pairs_count,
                  c.members, c.block_kind, c.companion_layer, c.block_kinds, c.child_class_ids, c.main_layer_count,
                  c.layer_count, c.step_family);
}

// Every field set to a non-default value somewhere; strings with quotes, commas and non-ASCII.
RankStructure make_structure() {
  RankStructure s;
  s.rank_id = "13";
  s.event_count = 100;
  s.step_source = StepSource::kProfilerStep;
  s.anchor_family = "attention.mla";
  auto seg = [&](SegmentType t, uint32_t rs, uint32_t re) {
    StepSegment g;
    g.segment_id = stable_id("seg", {s.rank_id, std::to_string(s.segments.size()), std::to_string(rs), std::to_string(re)});
    g.type = t;
    g.complete = t == SegmentType::kStep;
    g.row_start = rs;
    g.row_end = re;
    g.start_ns = 1'000'000'000'000LL + rs * 1000 + 1;
    g.end_ns = 1'000'000'000'000LL + re * 1000 + 999;
    s.segments.push_back(g);
    return &s.segments.back();
  };
  seg(SegmentType::kHead, 0, 9)->frame_reasons = {"rows before the first plan"};
  {
    StepSegment* g = seg(SegmentType::kStep, 10, 49);
    g->step_family = "attention_moe_workload";
    g->main_layer_count = 1;
    g->speculative_layer_count = 1;
    g->structure_signature = "main_len=1 ; main_period=attn|moe ; spec_len=1 ; spec_period=attn";
    g->cluster_id = "cluster_0123456789ab";
    g->first_layer = 0;
    g->layer_count = 2;
    g->source = StepSource::kProfilerStep;
    g->declared_step = 7;
    g->phase = "inference";
    g->frame_reasons = {"exact \"recurring\" template", "a,b", "µs"};
    g->frame_tags = {"exact_regime_split"};
    g->selection_rows = {12, 40};
  }
  seg(SegmentType::kUnclassifiedIsland, 50, 54);
  {
    StepSegment* g = seg(SegmentType::kStep, 55, 99);
    g->step_family = "attention_dense_workload";
    g->main_layer_count = 0;
    g->structure_signature = "main_len=0";
    g->cluster_id = "cluster_ba9876543210";
    g->first_layer = 2;
    g->layer_count = 2;
    g->source = StepSource::kStepId;
    g->declared_step = -1;
    g->phase = "training";
    g->microbatch_count = 2;
  }
  auto layer = [&](uint32_t segment, uint32_t idx, uint32_t rs, uint32_t re, LayerRole role, int32_t mb) {
    LayerSegment l;
    l.layer_id = stable_id("layer", {s.segments[segment].segment_id, std::to_string(idx)});
    l.segment = segment;
    l.layer_index = idx;
    l.row_start = rs;
    l.row_end = re;
    l.start_ns = -5 + rs;  // negative times must survive too
    l.end_ns = 1LL << 40;
    l.first_anchor_row = rs + 1;
    l.role = role;
    l.microbatch = mb;
    l.boundary_source = mb < 0 ? BoundarySource::kExactStructuralAnchor : BoundarySource::kTrainingAnchor;
    l.signature = idx;
    while (s.layer_signatures.size() <= idx) s.layer_signatures.push_back("sig" + std::to_string(s.layer_signatures.size()));
    s.layers.push_back(l);
  };
  layer(1, 0, 10, 39, LayerRole::kMain, -1);
  layer(1, 1, 40, 49, LayerRole::kSpeculative, -1);
  layer(3, 0, 55, 80, LayerRole::kForward, 0);
  layer(3, 1, 81, 99, LayerRole::kBackward, 1);
  s.hard_errors.push_back({"interior_unclassified_island", 50, 54, 2, "island of 5 rows between steps 1 and 3"});
  s.hard_errors.push_back({"overlapping_step_plan", 7, 3, -1, "plan starts at row 3"});
  s.boundary_checks.push_back({7, StepSource::kProfilerStep, 10, 49, 1, true, ""});
  s.boundary_checks.push_back({8, StepSource::kProfilerStep, 1, 0, 0, false, "declared step covers no kernel rows"});
  s.observations.push_back({1, LayerRole::kMain, {"aclnnMlaPreprocess_MlaPreprocess", "aclnnMoeGatingTopK \"q\""}});
  s.observations.push_back({1, LayerRole::kSpeculative, {}});
  s.role_observations.push_back({1, "attention", {"FlashAttentionScore", "MlaProlog \"x\""}, {3, 4, 9}});
  s.role_observations.push_back({1, "moe", {}, {}});
  return s;
}

RankClasses make_classes() {
  RankClasses c;
  auto block = [&](uint32_t layer, uint32_t idx, BlockKind k, bool companion, uint32_t rs, uint32_t re, uint32_t cls) {
    BlockSegment b;
    b.block_id = stable_id("blk", {std::to_string(layer), std::to_string(idx)});
    b.layer = layer;
    b.block_index = idx;
    b.kind = k;
    b.companion_layer = companion;
    b.row_start = rs;
    b.row_end = re;
    b.start_ns = rs * 10;
    b.end_ns = re * 10 + 5;
    b.event_count = re - rs + 1;
    b.block_class = cls;
    c.blocks.push_back(b);
  };
  block(0, 0, BlockKind::kAttention, false, 10, 20, 0);
  block(0, 1, BlockKind::kMoe, false, 21, 39, 1);
  block(1, 0, BlockKind::kAttention, false, 40, 49, 0);
  block(2, 0, BlockKind::kAicpu, true, 55, 80, 2);
  block(3, 0, BlockKind::kFfn, true, 81, 99, 3);
  auto cls = [](const char* id, std::vector<uint32_t> members) {
    ShapeClass k;
    k.class_id = id;
    k.members = std::move(members);
    return k;
  };
  c.block_classes = {cls("blk_cls_00000000000000a1", {0, 2}), cls("blk_cls_00000000000000a2", {1}),
                     cls("blk_cls_unknown_shape_0000000000a3", {3}), cls("blk_cls_00000000000000a4", {4})};
  c.block_classes[0].scope_label = "attention|companion=0";
  c.block_classes[0].shape_pairs_count = 11;
  c.block_classes[1].block_kind = BlockKind::kMoe;
  c.block_classes[2].has_unknown_shape = true;
  c.block_classes[2].block_kind = BlockKind::kAicpu;
  c.block_classes[2].companion_layer = true;
  c.layer_classes = {cls("lyr_cls_00000000000000b1", {0}), cls("lyr_cls_00000000000000b2", {1, 2, 3})};
  c.layer_classes[0].structure_signature = "sig0";
  c.layer_classes[0].scope_label = "attention->moe|companion=0";
  c.layer_classes[0].block_kinds = {"attention", "moe"};
  c.layer_classes[0].child_class_ids = {"blk_cls_00000000000000a1", "blk_cls_00000000000000a2"};
  c.layer_classes[1].companion_layer = true;
  c.step_classes = {cls("stp_cls_00000000000000c1", {1}), cls("stp_cls_00000000000000c2", {3})};
  c.step_classes[0].main_layer_count = 1;
  c.step_classes[0].layer_count = 2;
  c.step_classes[0].step_family = "attention_moe_workload";
  c.step_classes[0].child_class_ids = {"lyr_cls_00000000000000b1", "lyr_cls_00000000000000b2"};
  c.layer_class = {0, 1, 1, -1};
  c.step_class = {-1, 0, -1, 1};
  return c;
}

Status write_file(const fs::path& path, const RankStructure& s, const RankClasses* c) {
  auto w = store::H5Writer::create(path);
  if (!w.ok()) return w.status();
  ASCPROF_RETURN_IF_ERROR(c ? write_structure_tables(*w, s, *c) : write_segment_tables(*w, s));
  return w->commit(c ? "classify" : "segment");
}

TEST(StructureStore, RoundTripsEveryField) {
  ascprof::testing::ScratchDir dir("structure-store");
  const RankStructure s = make_structure();
  const RankClasses c = make_classes();
  ASSERT_EQ(structure_inconsistency(s, c), "");
  ASCPROF_ASSERT_OK(write_file(dir / "13.h5", s, &c));

  auto back = read_structure_tables((dir / "13.h5").string());
  ASCPROF_ASSERT_OK(back);
  const RankStructure& s2 = back->structure;
  const RankClasses& c2 = back->classes;
  EXPECT_TRUE(back->has_classes);
  EXPECT_EQ(s2.rank_id, "13");
  EXPECT_EQ(s2.event_count, 100u);
  EXPECT_EQ(s2.step_source, StepSource::kProfilerStep);
  EXPECT_EQ(s2.anchor_family, "attention.mla");
  ASSERT_EQ(s2.segments.size(), s.segments.size());
  for (size_t i = 0; i < s.segments.size(); ++i) EXPECT_EQ(tie_segment(s2.segments[i]), tie_segment(s.segments[i])) << i;
  ASSERT_EQ(s2.layers.size(), s.layers.size());
  for (size_t i = 0; i < s.layers.size(); ++i) EXPECT_EQ(tie_layer(s2.layers[i]), tie_layer(s.layers[i])) << i;
  EXPECT_EQ(s2.layer_signatures, s.layer_signatures);
  ASSERT_EQ(s2.hard_errors.size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(tie_error(s2.hard_errors[i]), tie_error(s.hard_errors[i])) << i;
  ASSERT_EQ(s2.boundary_checks.size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(tie_check(s2.boundary_checks[i]), tie_check(s.boundary_checks[i])) << i;
  ASSERT_EQ(s2.observations.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(s2.observations[i].segment, s.observations[i].segment);
    EXPECT_EQ(s2.observations[i].role, s.observations[i].role);
    EXPECT_EQ(s2.observations[i].implementation_names, s.observations[i].implementation_names);
  }
  ASSERT_EQ(s2.role_observations.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(s2.role_observations[i].segment, s.role_observations[i].segment);
    EXPECT_EQ(s2.role_observations[i].role, s.role_observations[i].role);
    EXPECT_EQ(s2.role_observations[i].implementation_names, s.role_observations[i].implementation_names);
    EXPECT_EQ(s2.role_observations[i].rows, s.role_observations[i].rows);
  }
  ASSERT_EQ(c2.blocks.size(), c.blocks.size());
  for (size_t i = 0; i < c.blocks.size(); ++i) EXPECT_EQ(tie_block(c2.blocks[i]), tie_block(c.blocks[i])) << i;
  ASSERT_EQ(c2.block_classes.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(tie_class(c2.block_classes[i]), tie_class(c.block_classes[i])) << i;
  ASSERT_EQ(c2.layer_classes.size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(tie_class(c2.layer_classes[i]), tie_class(c.layer_classes[i])) << i;
  ASSERT_EQ(c2.step_classes.size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(tie_class(c2.step_classes[i]), tie_class(c.step_classes[i])) << i;
  EXPECT_EQ(c2.layer_class, c.layer_class);
  EXPECT_EQ(c2.step_class, c.step_class);
}

TEST(StructureStore, LayoutIsPlainColumnsWithReadableStrings) {
  ascprof::testing::ScratchDir dir("structure-store");
  const RankStructure s = make_structure();
  const RankClasses c = make_classes();
  ASCPROF_ASSERT_OK(write_file(dir / "13.h5", s, &c));
  auto r = store::H5Reader::open(dir / "13.h5");
  ASCPROF_ASSERT_OK(r);
  EXPECT_EQ(*r->string_attr("/structure", "rank_id"), "13");
  EXPECT_EQ(*r->uint_attr("/structure", "event_count"), 100u);
  EXPECT_EQ(*r->string_attr("/structure", "step_source"), "profiler_step");
  EXPECT_EQ(*r->string_attr("/structure", "anchor_family"), "attention.mla");
  EXPECT_EQ(*r->uint_attr("/structure/segments", "row_count"), 4u);
  EXPECT_EQ(*r->column_type("/structure/segments/segment_type"), store::ColumnType::kString);
  EXPECT_EQ(*r->read_strings("/structure/segments/segment_type"),
            (std::vector<std::string>{"head", "step", "unclassified_island", "step"}));
  EXPECT_EQ(r->read_strings("/structure/segments/frame_reasons")->at(1),
            "[\"exact \\\"recurring\\\" template\",\"a,b\",\"µs\"]");
  EXPECT_EQ(*r->read_column<int64_t>("/structure/segments/declared_step"), (std::vector<int64_t>{-1, 7, -1, -1}));
  EXPECT_EQ(*r->read_strings("/structure/layers/layer_role"),
            (std::vector<std::string>{"main", "speculative", "forward", "backward"}));
  EXPECT_EQ(r->read_strings("/classes/layer_classes/members")->at(1), "[1,2,3]");
  EXPECT_EQ(*r->read_strings("/classes/blocks/block_kind"),
            (std::vector<std::string>{"attention", "moe", "attention", "aicpu", "ffn"}));
  EXPECT_EQ(*r->read_column<int32_t>("/classes/step_class"), (std::vector<int32_t>{-1, 0, -1, 1}));
  EXPECT_EQ(*r->string_array_attr("/structure/hard_errors", "columns"),
            (std::vector<std::string>{"error_type", "row_start", "row_end", "segment", "detail"}));
}

TEST(StructureStore, SegmentOnlyFileAndEmptyRank) {
  ascprof::testing::ScratchDir dir("structure-store");
  ASCPROF_ASSERT_OK(write_file(dir / "a.h5", make_structure(), nullptr));
  auto back = read_structure_tables((dir / "a.h5").string());
  ASCPROF_ASSERT_OK(back);
  EXPECT_FALSE(back->has_classes);
  EXPECT_EQ(back->structure.segments.size(), 4u);
  EXPECT_TRUE(back->classes.blocks.empty());

  RankStructure empty;
  empty.rank_id = "0";
  empty.anchor_family = "none";
  ASCPROF_ASSERT_OK(write_file(dir / "b.h5", empty, nullptr));
  auto e = read_structure_tables((dir / "b.h5").string());
  ASCPROF_ASSERT_OK(e);
  EXPECT_TRUE(e->structure.segments.empty());
  EXPECT_EQ(e->structure.anchor_family, "none");
  EXPECT_EQ(e->structure.step_source, StepSource::kStructural);
}

TEST(StructureStore, InconsistentInputIsRefusedBeforeWriting) {
  ascprof::testing::ScratchDir dir("structure-store");
  RankStructure s = make_structure();
  s.layers[0].segment = 9;
  EXPECT_EQ(structure_inconsistency(s, {}), "layer 0: segment 9 out of range");
  auto w = store::H5Writer::create(dir / "x.h5");
  ASCPROF_ASSERT_OK(w);
  Status st = write_segment_tables(*w, s);
  EXPECT_EQ(st.code(), ErrorCode::kInternal);
  EXPECT_NE(st.message().find("layer 0: segment 9 out of range"), std::string::npos) << st.message();
  ASCPROF_ASSERT_OK(w->commit("segment"));  // the writer saw no failed call: nothing was written
  EXPECT_FALSE(store::H5Reader::open(dir / "x.h5")->exists("/structure"));

  RankClasses c = make_classes();
  c.step_classes[1].members = {4};
  EXPECT_EQ(structure_inconsistency(make_structure(), c), "step class 1: member 4 out of range");
  c = make_classes();
  c.layer_class.pop_back();
  EXPECT_NE(structure_inconsistency(make_structure(), c).find("layer_class has 3 entries for 4 layers"), std::string::npos);
  c = make_classes();
  c.blocks[2].block_class = 4;
  EXPECT_EQ(structure_inconsistency(make_structure(), c), "block 2: block class out of range");
  s = make_structure();
  s.segments[3].layer_count = 3;
  EXPECT_EQ(structure_inconsistency(s, {}), "segment 3: layers 2+3 exceed the 4 layers");
}

TEST(StructureStore, DamagedTablesAreSchemaErrorsNamingTheDataset) {
  ascprof::testing::ScratchDir dir("structure-store");
  // No /structure at all.
  {
    auto w = store::H5Writer::create(dir / "none.h5");
    ASCPROF_ASSERT_OK(w);
    ASCPROF_ASSERT_OK(w->commit("normalize"));
    auto r = read_structure_tables((dir / "none.h5").string());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kSchema);
    EXPECT_NE(r.status().message().find("/structure"), std::string::npos) << r.status().message();
  }
  // Missing file.
  EXPECT_EQ(read_structure_tables((dir / "missing.h5").string()).status().code(), ErrorCode::kIo);

  const RankStructure s = make_structure();
  const RankClasses c = make_classes();
  auto damage = [&](const char* name, const std::function<Status(store::H5Writer&)>& edit) {
    const fs::path p = dir / name;
    EXPECT_TRUE(write_file(p, s, &c).ok());
    auto w = store::H5Writer::update(p);
    EXPECT_TRUE(w.ok());
    EXPECT_TRUE(edit(*w).ok());
    EXPECT_TRUE(w->commit("classify").ok());
    return read_structure_tables(p.string());
  };
  {
    auto r = damage("enum.h5", [](store::H5Writer& w) {
      const std::vector<std::string> v = {"head", "step", "bogus", "step"};
      return ascprof::testing::rewrite_table(w, "/structure/segments", "segment_type", [&](store::TableWriter& t) { t.string_column("segment_type", v); });
    });
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kSchema);
    EXPECT_NE(r.status().message().find("/structure/segments/segment_type: row 2: unknown value 'bogus'"),
              std::string::npos)
        << r.status().message();
  }
  {
    auto r = damage("json.h5", [](store::H5Writer& w) {
      const std::vector<std::string> v = {"[0]", "[1,\"x\"]"};
      return ascprof::testing::rewrite_table(w, "/classes/layer_classes", "members", [&](store::TableWriter& t) { t.string_column("members", v); });
    });
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("/classes/layer_classes/members: row 1: JSON array element is not a row index"),
              std::string::npos)
        << r.status().message();
  }
  {
    auto r = damage("type.h5", [](store::H5Writer& w) {
      return ascprof::testing::rewrite_table(w, "/structure/layers", "row_end", [&](store::TableWriter& t) {
        t.column("row_end", std::vector<int64_t>{1, 2, 3, 4});
      });
    });
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("/structure/layers/row_end: element type is int64, expected uint32"), std::string::npos)
        << r.status().message();
  }
  {
    auto r = damage("range.h5", [](store::H5Writer& w) {
      ASCPROF_RETURN_IF_ERROR(w.remove("/classes/step_class"));
      return w.write_column("/classes/step_class", std::vector<int32_t>{-1, 0, -1, 5});
    });
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("step_class 3 out of range"), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace ascprof::pipeline

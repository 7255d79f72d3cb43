// Summarize results round-trip through the rank HDF5 file field by field, the layout is the
// documented one (typed numeric columns, h5py-readable vlen strings, compact JSON cells), and
// damaged or inconsistent tables are refused with errors naming the dataset.
#include <gtest/gtest.h>

#include <functional>
#include <tuple>

#include "ascprof/store/h5_reader.hpp"
#include "ascprof/store/h5_writer.hpp"
#include "pipeline/summary_store.hpp"
#include "support/table_edit.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;
using namespace model;

using BubbleTuple = std::tuple<uint32_t, int64_t, int64_t, uint32_t, uint32_t>;
std::vector<BubbleTuple> bubbles(const std::vector<Bubble>& v) {
  std::vector<BubbleTuple> out;
  for (const auto& b : v) out.emplace_back(b.bubble_index, b.start_ns, b.end_ns, b.before_row, b.after_row);
  return out;
}
auto tie_metrics(const WindowMetrics& m) {
  return std::make_tuple(m.event_count, m.row_start, m.row_end, m.start_ns, m.end_ns, m.wall_ns, m.busy_union_ns,
                         m.kernel_sum_ns, m.wait_sum_ns, m.total_cost_ns, m.underfeed_ns, m.underfeed_ratio,
                         m.internal_bubble_total_ns, m.largest_internal_bubble_ns, m.bubble_count, m.stream_count,
                         m.task_type_counts, m.role_counts, m.category_counts, bubbles(m.top_bubbles));
}
auto tie_window(const AnatomyWindow& a) {
  return std::tie(a.empty, a.row_start, a.row_end, a.start_ns, a.end_ns, a.wall_ns, a.busy_ns, a.bubble_ns,
                  a.event_count);
}
auto tie_segment(const SegmentSummary& g) {
  const StepAnatomy& a = g.anatomy;
  return std::make_tuple(g.segment, tie_metrics(g.metrics), g.anomaly_tags, g.has_attention, g.has_moe,
                         g.has_communication, g.attention_event_count, g.moe_event_count, g.comm_event_count,
                         a.anatomy_kind, tie_window(a.head), tie_window(a.main), tie_window(a.tail), a.head_ratio,
                         a.main_ratio, a.tail_ratio, a.bubble_ratio);
}
auto tie_layer(const LayerSummary& l) {
  return std::make_tuple(l.layer, tie_metrics(l.metrics), l.has_attention, l.has_moe, l.has_communication);
}
using TopOpTuple = std::tuple<std::string, std::string, uint64_t, int64_t>;
std::vector<TopOpTuple> top_ops(const std::vector<BlockSummary::TopOp>& v) {
  std::vector<TopOpTuple> out;
  for (const auto& t : v) out.emplace_back(t.name, t.task_type, t.call_count, t.duration_sum_ns);
  return out;
}
auto tie_block(const BlockSummary& b) {
  return std::make_tuple(b.block, tie_metrics(b.metrics), b.op_type_counts, b.dominant_op_type, b.comm_duration_ns,
                         b.comm_share, b.pipeline_signal, b.pipeline_us, b.bound.bound_stage, b.bound.bound_family,
                         b.bound.dominant_core, top_ops(b.top_ops), b.has_attention, b.has_moe, b.has_communication);
}
auto tie_operator(const OperatorRow& o) {
  return std::tie(o.name, o.task_type, o.roles, o.categories, o.call_count, o.duration_sum_ns, o.wait_sum_ns,
                  o.stream_count, o.row_ranges, o.sample_rows, o.op_type, o.bound.bound_stage, o.bound.bound_family,
                  o.bound.dominant_core, o.pipeline_signal, o.pipeline_us);
}
auto tie_hccl(const HcclOpRow& h) {
  return std::tie(h.hccl_op_kind, h.comm_aiv_fused, h.name_count, h.call_count, h.duration_sum_ns, h.wait_sum_ns,
                  h.duration_avg_us, h.duration_min_us, h.duration_p50_us, h.duration_p90_us, h.duration_max_us,
                  h.wait_ratio);
}
auto tie_anchor(const WaitAnchorRow& w) {
  return std::tie(w.op, w.total_cost_avg_rank, w.wait_ratio, w.is_false_hotspot_risk);
}
auto tie_aicpu(const AicpuRow& a) {
  return std::tie(a.name, a.call_count, a.duration_sum_ns, a.overlap_with_ai_core_ns, a.masked_ratio,
                  a.classification, a.row_ranges, a.sample_rows);
}

WindowMetrics metrics(uint32_t rs, uint32_t re, int64_t base) {
  WindowMetrics m;
  m.event_count = re - rs + 1;
  m.row_start = rs;
  m.row_end = re;
  m.start_ns = base;
  m.end_ns = base + 123'456'789'012LL;
  m.wall_ns = m.end_ns - m.start_ns;
  m.busy_union_ns = 100'000'000'001LL;
  m.kernel_sum_ns = 110'000'000'003LL;
  m.wait_sum_ns = 7;
  m.total_cost_ns = 110'000'000'010LL;
  m.underfeed_ns = m.wall_ns - m.busy_union_ns;
  m.underfeed_ratio = 0.1899999999999999;
  m.internal_bubble_total_ns = 20'000'000'000LL;
  m.largest_internal_bubble_ns = 9'999;
  m.bubble_count = 3;
  m.stream_count = 2;
  m.task_type_counts = {{"AI_CORE", 3}, {"AI_CPU", 1}, {"MIX_AIV", 18'000'000'000'000ULL}};
  m.role_counts = {{"attention", 2}, {"name \"quoted\", µs", 1}};
  m.category_counts = {{"", 5}};
  return m;
}

RankSummary make_summary() {
  RankSummary s;
  s.rank = metrics(0, 99, -5'000);  // negative times must survive
  s.rank.top_bubbles = {{0, -40, -2, 3, 4}, {2, 1LL << 40, (1LL << 40) + 17, 77, 78}};
  {
    SegmentSummary g;
    g.segment = 0;
    g.metrics = metrics(0, 9, 1'000'000'000'000LL);  // a head segment: no anatomy, no bubbles
    g.metrics.role_counts.clear();
    s.segments.push_back(g);
  }
  {
    SegmentSummary g;
    g.segment = 1;
    g.metrics = metrics(10, 49, 1'000'000'010'000LL);
    g.metrics.top_bubbles = {{1, 500, 900, 12, 13}};
    g.anomaly_tags = {"DEVICE_IDLE_GAP_HEAVY", "INTERNAL_BUBBLE_HEAVY"};
    g.has_attention = true;
    g.has_communication = true;
    g.attention_event_count = 11;
    g.moe_event_count = 0;
    g.comm_event_count = 4;
    g.anatomy.anatomy_kind = "full";
    g.anatomy.head = {false, 10, 12, -30, -10, 20, 15, 5, 3};
    g.anatomy.main = {false, 13, 47, -10, 900, 910, 800, 110, 35};
    g.anatomy.tail = {true, 48, 47, 0, 0, 0, 0, 0, 0};  // empty window: row_end < row_start
    g.anatomy.head_ratio = 0.021978021978021978;
    g.anatomy.main_ratio = 0.978021978021978;
    g.anatomy.tail_ratio = 0;
    g.anatomy.bubble_ratio = 1.0 / 3.0;
    s.segments.push_back(g);
  }
  {
    SegmentSummary g;
    g.segment = 3;
    g.metrics = metrics(55, 99, 1'000'000'020'000LL);
    g.has_moe = true;
    g.moe_event_count = 9;
    g.anatomy.anatomy_kind = "head_only";
    g.anatomy.head = {false, 55, 99, 1, 2, 1, 1, 0, 45};
    g.anatomy.head_ratio = 1;
    s.segments.push_back(g);
  }
  {
    LayerSummary l;
    l.layer = 0;
    l.metrics = metrics(10, 39, 77);
    l.has_attention = true;
    l.has_moe = true;
    s.layers.push_back(l);
    l = LayerSummary{};
    l.layer = 5;
    l.has_communication = true;  // all-zero metrics with empty counts
    s.layers.push_back(l);
  }
  {
    BlockSummary b;  // every field away from its default
    b.block = 4;
    b.metrics = metrics(10, 19, 1'000'000'010'000LL);
    b.op_type_counts = {{"aic", 6}, {"communication", 3}, {"mix_comm_aiv", 1}};
    b.dominant_op_type = "aic";
    b.comm_duration_ns = 123'456'789'012LL;
    b.comm_share = 0.30000000000000004;
    b.pipeline_signal = true;
    b.pipeline_us = {1.5, 0.0, 1e-9, 2.0 / 3.0};
    b.bound = {"aic_mac_time(us)", "cube", "aic"};
    b.top_ops = {{"aclnnMatmul \"x\", µs", "MATMULV2", 4, 9'000'000'123LL}, {"hcom_allReduce_", "UNKNOWN", 1, -2}};
    b.has_attention = true;
    b.has_moe = true;
    b.has_communication = true;
    s.blocks.push_back(b);
    b = BlockSummary{};  // defaults: empty counts, pipeline and top ops
    b.block = 7;
    b.dominant_op_type = "unknown";
    b.bound = {"unknown", "unknown", "none"};
    s.blocks.push_back(b);
  }
  {
    OperatorRow o;
    o.name = "aclnnMatmul_MatMulV2";
    o.task_type = "AI_CORE";
    o.roles = "attention,mlp";
    o.categories = "matmul";
    o.call_count = 40;
    o.duration_sum_ns = 9'000'000'123LL;
    o.wait_sum_ns = -3;  // kept even where nonsensical
    o.stream_count = 2;
    o.row_ranges = {{1, 2}, {5, 9}, {4'000'000'000u, 4'000'000'001u}};
    o.sample_rows = {1, 2, 5};
    o.op_type = "MatMulV2";
    o.bound = {"aic_mac_ratio", "cube", "aic"};
    o.pipeline_signal = true;
    o.pipeline_us = {0.5, 3.0, 0.0, 1e-7, 1e21, 123456789012345680000.0, 0.1 + 0.2, -2.25};
    s.operators.push_back(o);
  }
  {
    OperatorRow o;
    o.name = "Cast \"µ\"";
    o.task_type = "AI_VECTOR_CORE";
    o.call_count = 1;
    o.duration_sum_ns = 1;
    o.op_type = "Cast";
    o.bound = {"unknown", "unknown", "none"};
    s.operators.push_back(o);  // empty roles, ranges, samples, pipeline
  }
  s.hccl.push_back({"allreduce", true, 2, 8, 8'000, 1'000, 1.0, 0.5, 0.75, 1.5, 2.5, 0.125});
  s.hccl.push_back({"", false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  s.wait_anchors.push_back({1, 2, 0.9, true});
  s.wait_anchors.push_back({0, 1, 0.0, false});
  {
    AicpuRow a;
    a.name = "GatherV2";
    a.call_count = 3;
    a.duration_sum_ns = 3'000;
    a.overlap_with_ai_core_ns = 2'999;
    a.masked_ratio = 0.9996666666666667;
    a.classification = "AICPU_MASKED_BUT_UNDESIRABLE";
    a.row_ranges = {{7, 7}, {20, 21}};
    a.sample_rows = {7, 20, 21};
    s.aicpu.push_back(a);
    a = AicpuRow{};
    a.name = "Exposed";
    a.classification = "AICPU_EXPOSED_NOT_ALLOWED";
    s.aicpu.push_back(a);
  }
  return s;
}

Status write_file(const fs::path& path, const RankSummary& s) {
  auto w = store::H5Writer::create(path);
  if (!w.ok()) return w.status();
  ASCPROF_RETURN_IF_ERROR(write_summary_tables(*w, s));
  return w->commit("summarize");
}

void expect_same(const RankSummary& a, const RankSummary& b) {
  EXPECT_EQ(tie_metrics(a.rank), tie_metrics(b.rank));
  ASSERT_EQ(a.segments.size(), b.segments.size());
  for (size_t i = 0; i < a.segments.size(); ++i) EXPECT_EQ(tie_segment(a.segments[i]), tie_segment(b.segments[i])) << i;
  ASSERT_EQ(a.layers.size(), b.layers.size());
  for (size_t i = 0; i < a.layers.size(); ++i) EXPECT_EQ(tie_layer(a.layers[i]), tie_layer(b.layers[i])) << i;
  ASSERT_EQ(a.blocks.size(), b.blocks.size());
  for (size_t i = 0; i < a.blocks.size(); ++i) EXPECT_EQ(tie_block(a.blocks[i]), tie_block(b.blocks[i])) << i;
  ASSERT_EQ(a.operators.size(), b.operators.size());
  for (size_t i = 0; i < a.operators.size(); ++i)
    EXPECT_EQ(tie_operator(a.operators[i]), tie_operator(b.operators[i])) << i;
  ASSERT_EQ(a.hccl.size(), b.hccl.size());
  for (size_t i = 0; i < a.hccl.size(); ++i) EXPECT_EQ(tie_hccl(a.hccl[i]), tie_hccl(b.hccl[i])) << i;
  ASSERT_EQ(a.wait_anchors.size(), b.wait_anchors.size());
  for (size_t i = 0; i < a.wait_anchors.size(); ++i)
    EXPECT_EQ(tie_anchor(a.wait_anchors[i]), tie_anchor(b.wait_anchors[i])) << i;
  ASSERT_EQ(a.aicpu.size(), b.aicpu.size());
  for (size_t i = 0; i < a.aicpu.size(); ++i) EXPECT_EQ(tie_aicpu(a.aicpu[i]), tie_aicpu(b.aicpu[i])) << i;
}

TEST(SummaryStore, RoundTripsEveryField) {
  ascprof::testing::ScratchDir dir("summary-store");
  const RankSummary s = make_summary();
  ASSERT_EQ(summary_inconsistency(s), "");
  ASCPROF_ASSERT_OK(write_file(dir / "3.h5", s));
  auto back = read_summary_tables((dir / "3.h5").string());
  ASCPROF_ASSERT_OK(back);
  expect_same(*back, s);
  // Spot checks that the comparison itself looks at the values.
  EXPECT_EQ(back->rank.start_ns, -5'000);
  EXPECT_EQ(back->rank.top_bubbles.at(0).start_ns, -40);
  EXPECT_EQ(back->segments.at(1).anatomy.tail.row_end, 47u);
  EXPECT_TRUE(back->segments.at(1).anatomy.tail.empty);
  EXPECT_EQ(back->segments.at(0).anatomy.anatomy_kind, "");
  EXPECT_EQ(back->operators.at(0).pipeline_us.at(6), 0.1 + 0.2);
  EXPECT_TRUE(back->operators.at(1).pipeline_us.empty());
  EXPECT_EQ(back->rank.task_type_counts.at(2).second, 18'000'000'000'000ULL);
}

TEST(SummaryStore, LayoutIsPlainColumnsWithReadableJson) {
  ascprof::testing::ScratchDir dir("summary-store");
  ASCPROF_ASSERT_OK(write_file(dir / "3.h5", make_summary()));
  auto r = store::H5Reader::open(dir / "3.h5");
  ASCPROF_ASSERT_OK(r);
  EXPECT_EQ(*r->list("/summary"), (std::vector<std::string>{"aicpu", "blocks", "hccl", "layers", "operators", "rank",
                                                            "segments", "wait_anchors"}));
  EXPECT_EQ(*r->uint_attr("/summary/rank", "row_count"), 1u);
  EXPECT_EQ(*r->uint_attr("/summary/segments", "row_count"), 3u);
  EXPECT_EQ(*r->column_type("/summary/segments/start_ns"), store::ColumnType::kInt64);
  EXPECT_EQ(*r->column_type("/summary/segments/event_count"), store::ColumnType::kUInt64);
  EXPECT_EQ(*r->column_type("/summary/segments/underfeed_ratio"), store::ColumnType::kDouble);
  EXPECT_EQ(*r->column_type("/summary/segments/tail_empty"), store::ColumnType::kUInt8);
  EXPECT_EQ(*r->read_column<int64_t>("/summary/rank/start_ns"), (std::vector<int64_t>{-5'000}));
  EXPECT_EQ(*r->read_column<uint8_t>("/summary/segments/tail_empty"), (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_EQ(*r->read_column<uint8_t>("/summary/segments/head_empty"), (std::vector<uint8_t>{1, 0, 0}));
  EXPECT_EQ(*r->read_strings("/summary/segments/anatomy_kind"), (std::vector<std::string>{"", "full", "head_only"}));
  EXPECT_EQ(r->read_strings("/summary/rank/task_type_counts")->at(0),
            "{\"AI_CORE\":3,\"AI_CPU\":1,\"MIX_AIV\":18000000000000}");
  EXPECT_EQ(r->read_strings("/summary/rank/role_counts")->at(0), "{\"attention\":2,\"name \\\"quoted\\\", µs\":1}");
  EXPECT_EQ(r->read_strings("/summary/segments/top_bubbles")->at(1),
            "[{\"bubble_index\":1,\"start_ns\":500,\"end_ns\":900,\"before_row\":12,\"after_row\":13}]");
  EXPECT_EQ(*r->read_strings("/summary/segments/anomaly_tags"),
            (std::vector<std::string>{"[]", "[\"DEVICE_IDLE_GAP_HEAVY\",\"INTERNAL_BUBBLE_HEAVY\"]", "[]"}));
  EXPECT_EQ(*r->read_strings("/summary/operators/row_ranges"),
            (std::vector<std::string>{"[[1,2],[5,9],[4000000000,4000000001]]", "[]"}));
  EXPECT_EQ(*r->read_strings("/summary/operators/sample_rows"), (std::vector<std::string>{"[1,2,5]", "[]"}));
  const auto pipeline = *r->read_strings("/summary/operators/pipeline_us");
  EXPECT_EQ(pipeline.at(0), "[0.5,3.0,0.0,1e-07,1e+21,123456789012345683968.0,0.30000000000000004,-2.25]");
  EXPECT_EQ(pipeline.at(1), "");
  EXPECT_EQ(*r->read_column<uint32_t>("/summary/wait_anchors/op"), (std::vector<uint32_t>{1, 0}));
  EXPECT_EQ(*r->string_array_attr("/summary/wait_anchors", "columns"),
            (std::vector<std::string>{"op", "total_cost_avg_rank", "wait_ratio", "is_false_hotspot_risk"}));
  EXPECT_EQ(*r->string_array_attr("/summary/aicpu", "columns"),
            (std::vector<std::string>{"name", "call_count", "duration_sum_ns", "overlap_with_ai_core_ns", "masked_ratio",
                                      "classification", "row_ranges", "sample_rows"}));
  const auto seg_columns = *r->string_array_attr("/summary/segments", "columns");
  ASSERT_EQ(seg_columns.size(), 1u + 20 + 1 + 6 + 1 + 27 + 4);
  EXPECT_EQ(seg_columns.front(), "segment");
  EXPECT_EQ(seg_columns.back(), "bubble_ratio");
}

// Block rows: every BlockSummary field survives (tie_block lists them all; make_summary sets each
// one away from its default in block row 0), and the layout is the documented one.
TEST(SummaryStore, BlocksRoundTripEveryField) {
  ascprof::testing::ScratchDir dir("summary-store");
  const RankSummary s = make_summary();
  ASCPROF_ASSERT_OK(write_file(dir / "b.h5", s));
  auto back = read_summary_tables((dir / "b.h5").string());
  ASCPROF_ASSERT_OK(back);
  ASSERT_EQ(back->blocks.size(), 2u);
  EXPECT_EQ(tie_block(back->blocks[0]), tie_block(s.blocks[0]));
  EXPECT_EQ(tie_block(back->blocks[1]), tie_block(s.blocks[1]));
  const BlockSummary& b = back->blocks[0];
  EXPECT_EQ(b.block, 4u);
  EXPECT_EQ(b.metrics.kernel_sum_ns, 110'000'000'003LL);
  EXPECT_EQ(b.op_type_counts.at(1), (std::pair<model::CountName, uint64_t>{"communication", 3}));
  EXPECT_EQ(b.comm_duration_ns, 123'456'789'012LL);
  EXPECT_EQ(b.comm_share, 0.30000000000000004);
  EXPECT_EQ(b.pipeline_us.at(3), 2.0 / 3.0);
  EXPECT_EQ(b.bound.bound_family, "cube");
  ASSERT_EQ(b.top_ops.size(), 2u);
  EXPECT_EQ(b.top_ops[0].name, "aclnnMatmul \"x\", µs");
  EXPECT_EQ(b.top_ops[1].duration_sum_ns, -2);
  EXPECT_TRUE(b.has_attention && b.has_moe && b.has_communication);
  EXPECT_TRUE(back->blocks[1].top_ops.empty());
  EXPECT_TRUE(back->blocks[1].pipeline_us.empty());
  EXPECT_FALSE(back->blocks[1].pipeline_signal);

  auto r = store::H5Reader::open(dir / "b.h5");
  ASCPROF_ASSERT_OK(r);
  const auto columns = *r->string_array_attr("/summary/blocks", "columns");
  ASSERT_EQ(columns.size(), 1u + 20 + 13);
  EXPECT_EQ(columns.front(), "block");
  EXPECT_EQ(std::vector<std::string>(columns.begin() + 21, columns.end()),
            (std::vector<std::string>{"op_type_counts", "dominant_op_type", "comm_duration_ns", "comm_share",
                                      "pipeline_signal", "pipeline_us", "bound_stage", "bound_family", "dominant_core",
                                      "top_ops", "has_attention", "has_moe", "has_communication"}));
  EXPECT_EQ(*r->column_type("/summary/blocks/comm_duration_ns"), store::ColumnType::kInt64);
  EXPECT_EQ(*r->read_column<uint32_t>("/summary/blocks/block"), (std::vector<uint32_t>{4, 7}));
  EXPECT_EQ(*r->read_strings("/summary/blocks/top_ops"),
            (std::vector<std::string>{"[{\"name\":\"aclnnMatmul \\\"x\\\", µs\",\"task_type\":\"MATMULV2\","
                                      "\"call_count\":4,\"duration_sum_ns\":9000000123},{\"name\":\"hcom_allReduce_\","
                                      "\"task_type\":\"UNKNOWN\",\"call_count\":1,\"duration_sum_ns\":-2}]",
                                      "[]"}));
  EXPECT_EQ(*r->read_strings("/summary/blocks/op_type_counts"),
            (std::vector<std::string>{"{\"aic\":6,\"communication\":3,\"mix_comm_aiv\":1}", "{}"}));
  EXPECT_EQ(r->read_strings("/summary/blocks/pipeline_us")->at(1), "");
}

TEST(SummaryStore, RankWithNoOperatorsOrSegments) {
  ascprof::testing::ScratchDir dir("summary-store");
  RankSummary s;
  s.rank.event_count = 0;
  s.rank.row_start = 1;  // empty rank: row_end < row_start
  s.rank.row_end = 0;
  ASCPROF_ASSERT_OK(write_file(dir / "0.h5", s));
  auto back = read_summary_tables((dir / "0.h5").string());
  ASCPROF_ASSERT_OK(back);
  expect_same(*back, s);
  EXPECT_TRUE(back->operators.empty());
  EXPECT_TRUE(back->segments.empty());
  EXPECT_TRUE(back->rank.task_type_counts.empty());
  EXPECT_EQ(*store::H5Reader::open(dir / "0.h5")->uint_attr("/summary/operators", "row_count"), 0u);

  // Segments and layers but no operators (so no anchors).
  RankSummary t = make_summary();
  t.operators.clear();
  t.wait_anchors.clear();
  t.hccl.clear();
  t.aicpu.clear();
  ASCPROF_ASSERT_OK(write_file(dir / "1.h5", t));
  auto back1 = read_summary_tables((dir / "1.h5").string());
  ASCPROF_ASSERT_OK(back1);
  expect_same(*back1, t);
}

TEST(SummaryStore, InconsistentSummaryIsRefusedBeforeWriting) {
  ascprof::testing::ScratchDir dir("summary-store");
  RankSummary s = make_summary();
  s.wait_anchors[1].op = 2;
  EXPECT_EQ(summary_inconsistency(s), "wait anchor 1: op 2 out of range (2 operators)");
  auto w = store::H5Writer::create(dir / "x.h5");
  ASCPROF_ASSERT_OK(w);
  Status st = write_summary_tables(*w, s);
  EXPECT_EQ(st.code(), ErrorCode::kInternal);
  EXPECT_NE(st.message().find("wait anchor 1: op 2 out of range"), std::string::npos) << st.message();
  ASCPROF_ASSERT_OK(w->commit("summarize"));
  EXPECT_FALSE(store::H5Reader::open(dir / "x.h5")->exists("/summary"));
}

TEST(SummaryStore, DamagedTablesAreSchemaErrorsNamingTheDataset) {
  ascprof::testing::ScratchDir dir("summary-store");
  {
    auto w = store::H5Writer::create(dir / "none.h5");
    ASCPROF_ASSERT_OK(w);
    ASCPROF_ASSERT_OK(w->commit("classify"));
    auto r = read_summary_tables((dir / "none.h5").string());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kSchema);
    EXPECT_NE(r.status().message().find("/summary: missing group"), std::string::npos) << r.status().message();
  }
  EXPECT_EQ(read_summary_tables((dir / "missing.h5").string()).status().code(), ErrorCode::kIo);

  const RankSummary s = make_summary();
  auto damage = [&](const char* name, const std::function<Status(store::H5Writer&)>& edit) {
    const fs::path p = dir / name;
    EXPECT_TRUE(write_file(p, s).ok());
    auto w = store::H5Writer::update(p);
    EXPECT_TRUE(w.ok());
    EXPECT_TRUE(edit(*w).ok());
    EXPECT_TRUE(w->commit("summarize").ok());
    return read_summary_tables(p.string());
  };
  auto expect_schema = [](const Result<RankSummary>& r, const std::string& fragment, const fs::path& file) {
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kSchema) << r.status().message();
    EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(file.string()), std::string::npos) << r.status().message();
  };
  // (a column shorter than its table cannot be stored: a table is one compound dataset)
  expect_schema(damage("type.h5",
                       [](store::H5Writer& w) {
                         return ascprof::testing::rewrite_table(w, "/summary/hccl", "call_count", [&](store::TableWriter& t) { t.column("call_count", std::vector<int64_t>{1, 2}); });
                       }),
                "/summary/hccl/call_count: element type is int64, expected uint64", dir / "type.h5");
  expect_schema(damage("gone.h5",
                       [](store::H5Writer& w) {
                         return ascprof::testing::rewrite_table(w, "/summary/layers", "has_moe", [](store::TableWriter&) {});
                       }),
                "/summary/layers/has_moe: missing column", dir / "gone.h5");
  expect_schema(damage("json.h5",
                       [](store::H5Writer& w) {
                         const std::vector<std::string> v = {"[[1,2]]", "[[3]]"};
                         return ascprof::testing::rewrite_table(w, "/summary/operators", "row_ranges", [&](store::TableWriter& t) { t.string_column("row_ranges", v); });
                       }),
                "/summary/operators/row_ranges: row 1: JSON array element is not a [start,end] row range",
                dir / "json.h5");
  expect_schema(damage("counts.h5",
                       [](store::H5Writer& w) {
                         const std::vector<std::string> v = {"{\"a\":1}", "{\"a\":-1}"};
                         return ascprof::testing::rewrite_table(w, "/summary/layers", "role_counts", [&](store::TableWriter& t) { t.string_column("role_counts", v); });
                       }),
                "/summary/layers/role_counts: row 1: JSON object value is not a count", dir / "counts.h5");
  expect_schema(damage("pipe.h5",
                       [](store::H5Writer& w) {
                         const std::vector<std::string> v = {"[1.0,", ""};
                         return ascprof::testing::rewrite_table(w, "/summary/operators", "pipeline_us", [&](store::TableWriter& t) { t.string_column("pipeline_us", v); });
                       }),
                "/summary/operators/pipeline_us: row 0: not JSON", dir / "pipe.h5");
  expect_schema(damage("top_ops.h5",
                       [](store::H5Writer& w) {
                         const std::vector<std::string> v = {"[]", "[{\"name\":\"x\",\"call_count\":1}]"};
                         return ascprof::testing::rewrite_table(w, "/summary/blocks", "top_ops", [&](store::TableWriter& t) { t.string_column("top_ops", v); });
                       }),
                "/summary/blocks/top_ops: row 1: JSON array element is not a top-op object", dir / "top_ops.h5");
  expect_schema(damage("rank.h5",
                       [](store::H5Writer& w) {
                         ASCPROF_RETURN_IF_ERROR(w.remove("/summary/rank"));
                         store::TableWriter t(w, "/summary/rank", 0);
                         return t.finish();
                       }),
                "/summary/rank: 0 rows, expected exactly 1", dir / "rank.h5");
  expect_schema(damage("anchor.h5",
                       [](store::H5Writer& w) {
                         return ascprof::testing::rewrite_table(w, "/summary/wait_anchors", "op", [&](store::TableWriter& t) { t.column("op", std::vector<uint32_t>{1, 2}); });
                       }),
                "wait anchor 1: op 2 out of range (2 operators)", dir / "anchor.h5");
}

}  // namespace
}  // namespace ascprof::pipeline

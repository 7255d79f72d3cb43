// Cross-rank block / layer / step class summaries (reference-analysis.md §2.5.8, second part) on
// hand-built ranks with known walls: exact counts, quantiles over every member of every rank, means,
// the compute-first bound on the summed pipeline, top-op unions, sorting, and results that do not
// depend on how members are split over ranks or on a serialisation round trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "ascprof/analysis/class_merge.hpp"
#include "ascprof/analysis/class_summary.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::analysis {
namespace {

using model::BlockKind;
using model::Counts;

constexpr int64_t kUs = 1000;
constexpr int64_t kMs = 1000 * kUs;

const knowledge::Knowledge& kb() { return ascprof::testing::shipped_knowledge(); }

using Pipe = std::map<std::string, double>;  // canonical pipeline field -> µs

std::vector<double> pipe_vec(const Pipe& p) {
  std::vector<double> v(kb().pipeline.fields().size(), 0.0);
  for (const auto& [name, us] : p) {
    const int f = kb().pipeline.field_index(name);
    EXPECT_GE(f, 0) << name;
    if (f >= 0) v[static_cast<size_t>(f)] = us;
  }
  return v;
}

struct BlockSpec {
  BlockKind kind = BlockKind::kAttention;
  std::string class_id;
  int64_t wall_ns = 0, busy_ns = 0;
  double comm_share = 0;
  int64_t comm_ns = 0;
  Pipe pipe;                       // empty: no pipeline signal
  std::string family;
  model::NameCounts op_types;      // sorted by name, as summarize_blocks writes them
  std::vector<model::BlockSummary::TopOp> top;
};

// Builds a rank's structure, classes and summary; class metadata is created on first use.
class RankBuilder {
 public:
  explicit RankBuilder(std::string id) { s.rank_id = std::move(id); }

  uint32_t step(const std::string& class_id, int64_t wall_ns, int64_t busy_ns, const model::StepAnatomy& anatomy) {
    const auto seg = static_cast<uint32_t>(s.segments.size());
    model::StepSegment g;
    g.segment_id = s.rank_id + "_seg" + std::to_string(seg);
    g.type = model::SegmentType::kStep;
    g.complete = true;
    g.step_family = "attention_moe_workload";
    g.structure_signature = "main_len=2 ; main_period=" + class_id;
    s.segments.push_back(g);
    model::SegmentSummary ss;
    ss.segment = seg;
    ss.metrics.wall_ns = wall_ns;
    ss.metrics.busy_union_ns = busy_ns;
    ss.metrics.underfeed_ns = wall_ns - busy_ns;
    ss.anatomy = anatomy;
    sum.segments.push_back(ss);
    model::ShapeClass& cls = klass(c.step_classes, class_id);
    cls.structure_signature = g.structure_signature;
    cls.step_family = g.step_family;
    cls.main_layer_count = 2;
    cls.layer_count = 2;
    cls.members.push_back(seg);
    c.step_class.push_back(static_cast<int32_t>(&cls - c.step_classes.data()));
    return seg;
  }

  // A non-step segment: never a class member.
  void edge(int64_t wall_ns) {
    model::StepSegment g;
    g.segment_id = s.rank_id + "_head";
    g.type = model::SegmentType::kHead;
    s.segments.push_back(g);
    model::SegmentSummary ss;
    ss.segment = static_cast<uint32_t>(s.segments.size() - 1);
    ss.metrics.wall_ns = wall_ns;
    sum.segments.push_back(ss);
    c.step_class.push_back(-1);
  }

  uint32_t layer(uint32_t seg, const std::string& class_id, int64_t wall_ns, int64_t busy_ns,
                 const std::vector<BlockSpec>& blocks) {
    const auto li = static_cast<uint32_t>(s.layers.size());
    model::LayerSegment l;
    l.layer_id = s.rank_id + "_layer" + std::to_string(li);
    l.segment = seg;
    s.layers.push_back(l);
    model::LayerSummary ls;
    ls.layer = li;
    ls.metrics.wall_ns = wall_ns;
    ls.metrics.busy_union_ns = busy_ns;
    ls.metrics.underfeed_ns = wall_ns - busy_ns;
    sum.layers.push_back(ls);
    model::ShapeClass& lc = klass(c.layer_classes, class_id);
    lc.members.push_back(li);
    c.layer_class.push_back(static_cast<int32_t>(&lc - c.layer_classes.data()));
    bool has_attention = false;
    std::vector<std::string> kinds, ids;
    for (const BlockSpec& b : blocks) {
      has_attention = has_attention || b.kind == BlockKind::kAttention;
      kinds.push_back(model::block_kind_name(b.kind));
      ids.push_back(b.class_id);
    }
    for (const BlockSpec& spec : blocks) {
      const auto bi = static_cast<uint32_t>(c.blocks.size());
      model::ShapeClass& bc = klass(c.block_classes, spec.class_id);
      bc.block_kind = spec.kind;
      bc.companion_layer = !has_attention;
      bc.members.push_back(bi);
      model::BlockSegment b;
      b.block_id = l.layer_id + "_blk" + std::to_string(bi);
      b.layer = li;
      b.kind = spec.kind;
      b.companion_layer = !has_attention;
      b.block_class = static_cast<uint32_t>(&bc - c.block_classes.data());
      c.blocks.push_back(b);
      model::BlockSummary row;
      row.block = bi;
      row.metrics.wall_ns = spec.wall_ns;
      row.metrics.busy_union_ns = spec.busy_ns;
      row.metrics.underfeed_ns = spec.wall_ns - spec.busy_ns;
      row.comm_share = spec.comm_share;
      row.comm_duration_ns = spec.comm_ns;
      row.pipeline_signal = !spec.pipe.empty();
      if (row.pipeline_signal) row.pipeline_us = pipe_vec(spec.pipe);
      row.bound.bound_family = spec.family;
      row.op_type_counts = spec.op_types;
      row.top_ops = spec.top;
      sum.blocks.push_back(row);
    }
    lc.block_kinds = kinds;
    lc.child_class_ids = ids;
    lc.companion_layer = !has_attention;
    return li;
  }

  ClassPartials partials() const { return class_partials(s, c, sum, kb()); }

  model::RankStructure s;
  model::RankClasses c;
  model::RankSummary sum;

 private:
  static model::ShapeClass& klass(std::vector<model::ShapeClass>& v, const std::string& id) {
    for (auto& x : v)
      if (x.class_id == id) return x;
    v.emplace_back();
    v.back().class_id = id;
    return v.back();
  }
};

model::StepAnatomy anatomy(int64_t main_ns, int64_t tail_ns, double main_ratio, double tail_ratio, double bubble_ratio) {
  model::StepAnatomy a;
  a.anatomy_kind = "full";
  a.main.empty = false;
  a.main.wall_ns = main_ns;
  a.tail.empty = tail_ns == 0;
  a.tail.wall_ns = tail_ns;
  a.main_ratio = main_ratio;
  a.tail_ratio = tail_ratio;
  a.bubble_ratio = bubble_ratio;
  return a;
}

using Op = model::BlockSummary::TopOp;

BlockSpec attn(int64_t wall_ms, double share, int64_t comm_us, Pipe pipe, std::string family, model::NameCounts ops,
               std::vector<Op> top) {
  BlockSpec b;
  b.kind = BlockKind::kAttention;
  b.class_id = "blk_cls_attn";
  b.wall_ns = wall_ms * kMs;
  b.busy_ns = b.wall_ns;
  b.comm_share = share;
  b.comm_ns = comm_us * kUs;
  b.pipe = std::move(pipe);
  b.family = std::move(family);
  b.op_types = std::move(ops);
  b.top = std::move(top);
  return b;
}

BlockSpec moe(int64_t wall_ms, uint64_t calls, int64_t dispatch_us) {
  BlockSpec b;
  b.kind = BlockKind::kMoe;
  b.class_id = "blk_cls_moe";
  b.wall_ns = wall_ms * kMs;
  b.busy_ns = b.wall_ns / 2;
  b.comm_share = 1.0;
  b.comm_ns = dispatch_us * kUs;
  b.family = "communication";
  b.op_types = {{"communication", calls}};
  b.top = {{"Dispatch", "HCCL", calls, dispatch_us * kUs}};
  return b;
}

// Rank "0": one step of two lyr_cls_a layers (attention + moe blocks), after a head segment.
RankBuilder rank0() {
  RankBuilder r("0");
  r.edge(5 * kMs);
  const uint32_t s = r.step("stp_cls_x", 10 * kMs, 8 * kMs, anatomy(9 * kMs, 1 * kMs, 0.875, 0.125, 0.25));
  r.layer(s, "lyr_cls_a", 4 * kMs, 3 * kMs,
          {attn(1, 0.5, 500, {{"aic_mac_time(us)", 100}, {"aiv_vec_time(us)", 20}}, "cube",
                {{"aic", 2}, {"communication", 1}},
                {{"FA", "MIX_AIC", 1, 400 * kUs}, {"HC", "COMMUNICATION", 1, 500 * kUs}}),
           moe(2, 3, 2000)});
  r.layer(s, "lyr_cls_a", 6 * kMs, 5 * kMs,
          {attn(3, 0.0, 0, {{"aic_mac_time(us)", 50}, {"aiv_vec_time(us)", 200}}, "vector", {{"aiv", 4}},
                {{"Cast", "AI_VECTOR_CORE", 3, 900 * kUs}, {"FA", "MIX_AIC", 1, 300 * kUs}}),
           moe(3, 3, 3000)});
  return r;
}

// Rank "1": the same step class, plus a second step class with one companion (aicpu-only) layer.
RankBuilder rank1() {
  RankBuilder r("1");
  const uint32_t s = r.step("stp_cls_x", 12 * kMs, 9 * kMs, anatomy(12 * kMs, 0, 1.0, 0.0, 0.5));
  r.layer(s, "lyr_cls_a", 5 * kMs, 4 * kMs,
          {attn(2, 0.25, 250, {{"aic_mac_time(us)", 10}, {"aiv_vec_time(us)", 30}}, "vector", {{"aic", 1}, {"aiv", 2}},
                {{"FA", "MIX_AIC", 1, 250 * kUs}}),
           moe(2, 3, 1500)});
  r.layer(s, "lyr_cls_a", 11 * kMs, 9 * kMs,
          {attn(10, 0.25, 750, {{"aic_mac_time(us)", 40}}, "cube", {{"aic", 5}}, {{"MM", "AI_CORE", 5, 9000 * kUs}}),
           moe(1, 3, 500)});
  const uint32_t s2 = r.step("stp_cls_y", 3 * kMs, 3 * kMs, anatomy(3 * kMs, 0, 1.0, 0.0, 0.0));
  BlockSpec cpu;
  cpu.kind = BlockKind::kAicpu;
  cpu.class_id = "blk_cls_cpu";
  cpu.wall_ns = 3 * kMs;
  cpu.busy_ns = 3 * kMs;
  cpu.family = "aicpu";
  cpu.op_types = {{"aicpu", 2}};
  cpu.top = {{"Unique", "AI_CPU", 2, 2500 * kUs}};
  r.layer(s2, "lyr_cls_c", 3 * kMs, 3 * kMs, {cpu});
  return r;
}

std::vector<std::string> ids(const std::vector<ClassTopOp>& ops) {
  std::vector<std::string> out;
  for (const auto& t : ops) out.push_back(t.name + "/" + std::to_string(t.call_count) + "/" + std::to_string(t.duration_sum_ns / kUs));
  return out;
}

TEST(SummarizeClasses, BlockClassesMergeExactlyAcrossRanks) {
  const ClassSummaries cs = merge_class_partials({rank0().partials(), rank1().partials()}, kb());
  ASSERT_EQ(cs.blocks.size(), 3u);
  // member_count desc, then kind: attention (4) and moe (4) tie on count, aicpu (1) last
  EXPECT_EQ(cs.blocks[0].block_class_id, "blk_cls_attn");
  EXPECT_EQ(cs.blocks[1].block_class_id, "blk_cls_moe");
  EXPECT_EQ(cs.blocks[2].block_class_id, "blk_cls_cpu");

  const BlockClassSummaryRow& a = cs.blocks[0];
  EXPECT_EQ(a.block_kind, "attention");
  EXPECT_FALSE(a.companion_layer);
  EXPECT_EQ(a.member_count, 4u);
  EXPECT_EQ(a.rank_count, 2u);
  // walls 1, 3 (rank 0) and 2, 10 (rank 1): quantiles over all four members, not per rank
  EXPECT_DOUBLE_EQ(a.wall_ms_sum, 16.0);
  EXPECT_DOUBLE_EQ(a.wall_ms_mean, 4.0);
  EXPECT_DOUBLE_EQ(a.wall_ms_p50, 2.5);
  EXPECT_DOUBLE_EQ(a.wall_ms_p90, 7.9);  // 3 + 0.7 * (10 - 3)
  EXPECT_DOUBLE_EQ(a.busy_ms_sum, 16.0);
  EXPECT_DOUBLE_EQ(a.bubble_ms_mean, 0.0);
  EXPECT_DOUBLE_EQ(a.comm_share_mean, 0.25);  // (0.5 + 0 + 0.25 + 0.25) / 4
  EXPECT_DOUBLE_EQ(a.comm_duration_us_sum, 1500.0);
  // summed pipeline: mac 200, vec 250 -> vector by (250-200)/450 > 0.10, AIV side larger by 20 %
  EXPECT_TRUE(a.pipeline_signal);
  ASSERT_EQ(a.pipeline_us.size(), kb().pipeline.fields().size());
  EXPECT_DOUBLE_EQ(a.pipeline_us[static_cast<size_t>(kb().pipeline.field_index("aic_mac_time(us)"))], 200.0);
  EXPECT_DOUBLE_EQ(a.pipeline_us[static_cast<size_t>(kb().pipeline.field_index("aiv_vec_time(us)"))], 250.0);
  EXPECT_EQ(a.bound.bound_stage, "aiv_vec_time(us)");
  EXPECT_EQ(a.bound.bound_family, "vector");
  EXPECT_EQ(a.bound.dominant_core, "aiv");
  EXPECT_EQ(a.dominant_op_type, "aic");  // most events: aic 8, aiv 6, communication 1
  EXPECT_EQ(a.bound_family_member_histogram, (Counts{{"cube", 2}, {"vector", 2}}));
  EXPECT_EQ(a.op_type_counts, (Counts{{"aic", 8}, {"aiv", 6}, {"communication", 1}}));
  EXPECT_EQ(ids(a.top_ops), (std::vector<std::string>{"MM/5/9000", "FA/3/950", "Cast/3/900", "HC/1/500"}));

  const BlockClassSummaryRow& m = cs.blocks[1];
  EXPECT_EQ(m.member_count, 4u);
  EXPECT_DOUBLE_EQ(m.wall_ms_p50, 2.0);  // 1 2 2 3
  EXPECT_DOUBLE_EQ(m.wall_ms_p90, 2.7);
  EXPECT_DOUBLE_EQ(m.bubble_ms_mean, 1.0);  // half of each wall is idle
  EXPECT_FALSE(m.pipeline_signal);
  EXPECT_TRUE(m.pipeline_us.empty());
  // no stage signal anywhere: bound on the dominant op type
  EXPECT_EQ(m.dominant_op_type, "communication");
  EXPECT_EQ(m.bound.bound_family, "communication");
  EXPECT_EQ(m.bound.dominant_core, "none");
  EXPECT_EQ(ids(m.top_ops), (std::vector<std::string>{"Dispatch/12/7000"}));

  const BlockClassSummaryRow& p = cs.blocks[2];
  EXPECT_EQ(p.member_count, 1u);
  EXPECT_EQ(p.rank_count, 1u);
  EXPECT_TRUE(p.companion_layer);
  EXPECT_EQ(p.bound.bound_stage, "aicpu");
  EXPECT_EQ(p.bound.bound_family, "aicpu");
}

TEST(SummarizeClasses, LayerClassesCarryBlockKindWallsAndTopOps) {
  const ClassSummaries cs = merge_class_partials({rank0().partials(), rank1().partials()}, kb());
  ASSERT_EQ(cs.layers.size(), 2u);
  const LayerClassSummaryRow& l = cs.layers[0];
  EXPECT_EQ(l.layer_class_id, "lyr_cls_a");
  EXPECT_EQ(l.member_count, 4u);
  EXPECT_EQ(l.rank_count, 2u);
  EXPECT_EQ(l.block_kinds, (std::vector<std::string>{"attention", "moe"}));
  EXPECT_EQ(l.block_class_ids, (std::vector<std::string>{"blk_cls_attn", "blk_cls_moe"}));
  EXPECT_FALSE(l.companion_layer);
  // walls 4 6 | 5 11
  EXPECT_DOUBLE_EQ(l.wall_ms_sum, 26.0);
  EXPECT_DOUBLE_EQ(l.wall_ms_mean, 6.5);
  EXPECT_DOUBLE_EQ(l.wall_ms_p50, 5.5);
  EXPECT_DOUBLE_EQ(l.wall_ms_p90, 9.5);  // 6 + 0.7 * 5
  EXPECT_DOUBLE_EQ(l.busy_ms_mean, 5.25);
  EXPECT_DOUBLE_EQ(l.bubble_ms_mean, 1.25);
  ASSERT_EQ(l.block_kind_wall_ms_mean.size(), 2u);
  EXPECT_EQ(l.block_kind_wall_ms_mean[0].first, "attention");
  EXPECT_DOUBLE_EQ(l.block_kind_wall_ms_mean[0].second, 4.0);  // (1 + 3 + 2 + 10) / 4
  EXPECT_EQ(l.block_kind_wall_ms_mean[1].first, "moe");
  EXPECT_DOUBLE_EQ(l.block_kind_wall_ms_mean[1].second, 2.0);
  ASSERT_EQ(l.block_kind_wall_ms_share_mean.size(), 2u);
  EXPECT_DOUBLE_EQ(l.block_kind_wall_ms_share_mean[0].second, 16.0 / 26.0);
  EXPECT_DOUBLE_EQ(l.block_kind_wall_ms_share_mean[1].second, 8.0 / 26.0);
  EXPECT_EQ(ids(l.top_ops),
            (std::vector<std::string>{"MM/5/9000", "Dispatch/12/7000", "FA/3/950", "Cast/3/900", "HC/1/500"}));
  EXPECT_EQ(cs.layers[1].layer_class_id, "lyr_cls_c");
  EXPECT_TRUE(cs.layers[1].companion_layer);
  EXPECT_EQ(cs.layers[1].rank_count, 1u);
}

TEST(SummarizeClasses, StepClassesAverageAnatomyAndRankLayerClasses) {
  const ClassSummaries cs = merge_class_partials({rank0().partials(), rank1().partials()}, kb());
  ASSERT_EQ(cs.steps.size(), 2u);  // the head segment is no member
  const StepClassSummaryRow& s = cs.steps[0];
  EXPECT_EQ(s.step_class_id, "stp_cls_x");
  EXPECT_EQ(s.step_family, "attention_moe_workload");
  EXPECT_EQ(s.main_layer_count, 2u);
  EXPECT_EQ(s.member_count, 2u);
  EXPECT_EQ(s.rank_count, 2u);
  EXPECT_DOUBLE_EQ(s.wall_ms_sum, 22.0);
  EXPECT_DOUBLE_EQ(s.wall_ms_p50, 11.0);
  EXPECT_DOUBLE_EQ(s.wall_ms_p90, 11.8);
  EXPECT_DOUBLE_EQ(s.busy_ms_mean, 8.5);
  EXPECT_DOUBLE_EQ(s.bubble_ms_mean, 2.5);
  EXPECT_DOUBLE_EQ(s.head_ms_mean, 0.0);
  EXPECT_DOUBLE_EQ(s.main_ms_mean, 10.5);
  EXPECT_DOUBLE_EQ(s.tail_ms_mean, 0.5);
  EXPECT_DOUBLE_EQ(s.main_ratio_mean, 0.9375);
  EXPECT_DOUBLE_EQ(s.tail_ratio_mean, 0.0625);
  EXPECT_DOUBLE_EQ(s.bubble_ratio_mean, 0.375);
  ASSERT_EQ(s.top_layer_classes.size(), 1u);
  EXPECT_EQ(s.top_layer_classes[0].layer_class_id, "lyr_cls_a");
  EXPECT_DOUBLE_EQ(s.top_layer_classes[0].wall_ms_sum, 26.0);
  EXPECT_EQ(s.top_layer_classes[0].member_count, 4u);
  EXPECT_EQ(ids(s.top_ops),
            (std::vector<std::string>{"MM/5/9000", "Dispatch/12/7000", "FA/3/950", "Cast/3/900", "HC/1/500"}));
  const StepClassSummaryRow& y = cs.steps[1];
  EXPECT_EQ(y.step_class_id, "stp_cls_y");
  EXPECT_EQ(y.rank_count, 1u);
  EXPECT_EQ(ids(y.top_ops), (std::vector<std::string>{"Unique/2/2500"}));
}

// Every field of every row, for whole-result comparisons.
std::string dump(const ClassSummaries& cs) {
  std::string out;
  auto num = [&out](double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g,", v);
    out += buf;
  };
  auto ops = [&out](const std::vector<ClassTopOp>& v) {
    for (const auto& t : v) out += t.name + "|" + t.task_type + "|" + std::to_string(t.call_count) + "|" + std::to_string(t.duration_sum_ns) + ";";
  };
  auto counts = [&out](const Counts& c) {
    for (const auto& [k, n] : c) out += k + "=" + std::to_string(n) + ";";
  };
  for (const auto& b : cs.blocks) {
    out += b.block_class_id + "," + b.block_kind + "," + std::to_string(b.companion_layer) + "," +
           std::to_string(b.member_count) + "," + std::to_string(b.rank_count) + "," + std::to_string(b.has_unknown_shape) + ",";
    for (double v : {b.wall_ms_sum, b.wall_ms_mean, b.wall_ms_p50, b.wall_ms_p90, b.busy_ms_sum, b.busy_ms_mean,
                     b.bubble_ms_mean, b.comm_share_mean, b.comm_duration_us_sum})
      num(v);
    out += std::to_string(b.pipeline_signal) + b.bound.bound_stage + b.bound.bound_family + b.bound.dominant_core +
           b.dominant_op_type;
    counts(b.bound_family_member_histogram);
    counts(b.op_type_counts);
    ops(b.top_ops);
    for (double v : b.pipeline_us) num(v);
    out += "\n";
  }
  for (const auto& l : cs.layers) {
    out += l.layer_class_id + "," + l.structure_signature + "," + std::to_string(l.member_count) + "," +
           std::to_string(l.rank_count) + ",";
    for (const auto& k : l.block_kinds) out += k + ";";
    for (const auto& k : l.block_class_ids) out += k + ";";
    for (double v : {l.wall_ms_sum, l.wall_ms_mean, l.wall_ms_p50, l.wall_ms_p90, l.busy_ms_mean, l.bubble_ms_mean})
      num(v);
    for (const auto& [k, v] : l.block_kind_wall_ms_mean) {
      out += k;
      num(v);
    }
    for (const auto& [k, v] : l.block_kind_wall_ms_share_mean) {
      out += k;
      num(v);
    }
    ops(l.top_ops);
    out += "\n";
  }
  for (const auto& s : cs.steps) {
    out += s.step_class_id + "," + s.structure_signature + "," + s.step_family + "," + std::to_string(s.member_count) +
           "," + std::to_string(s.rank_count) + ",";
    for (double v : {s.wall_ms_sum, s.wall_ms_mean, s.wall_ms_p50, s.wall_ms_p90, s.busy_ms_mean, s.bubble_ms_mean,
                     s.head_ms_mean, s.main_ms_mean, s.tail_ms_mean, s.head_ratio_mean, s.main_ratio_mean,
                     s.tail_ratio_mean, s.bubble_ratio_mean})
      num(v);
    for (const auto& t : s.top_layer_classes) {
      out += t.layer_class_id + "|" + std::to_string(t.member_count);
      num(t.wall_ms_sum);
    }
    ops(s.top_ops);
    out += "\n";
  }
  return out;
}

// The same four attention blocks split 1+3 over the ranks or 2+2 give the same class row: the
// statistics are over members, not means of per-rank values.
TEST(SummarizeClasses, SplittingMembersDifferentlyOverRanksGivesTheSameRow) {
  const std::vector<BlockSpec> blocks = {
      attn(1, 0.5, 500, {{"aic_mac_time(us)", 100}}, "cube", {{"aic", 2}}, {{"FA", "MIX_AIC", 1, 400 * kUs}}),
      attn(3, 0.25, 250, {{"aiv_vec_time(us)", 64}}, "vector", {{"aiv", 4}}, {{"Cast", "AI_VECTOR_CORE", 3, 900 * kUs}}),
      attn(2, 0.125, 125, {}, "unknown", {{"aic", 1}}, {{"FA", "MIX_AIC", 1, 250 * kUs}}),
      attn(10, 0.0, 0, {{"aic_mac_time(us)", 40}}, "cube", {{"aic", 5}}, {{"MM", "AI_CORE", 5, 9000 * kUs}}),
  };
  auto split = [&](size_t first_rank_blocks) {
    RankBuilder a("0"), b("1");
    const uint32_t sa = a.step("stp_cls_x", 20 * kMs, 20 * kMs, anatomy(20 * kMs, 0, 1, 0, 0));
    const uint32_t sb = b.step("stp_cls_x", 20 * kMs, 20 * kMs, anatomy(20 * kMs, 0, 1, 0, 0));
    for (size_t i = 0; i < blocks.size(); ++i) {
      if (i < first_rank_blocks) a.layer(sa, "lyr_cls_a", 16 * kMs, 16 * kMs, {blocks[i]});
      else b.layer(sb, "lyr_cls_a", 16 * kMs, 16 * kMs, {blocks[i]});
    }
    return merge_class_partials({a.partials(), b.partials()}, kb());
  };
  const ClassSummaries one_three = split(1), two_two = split(2), three_one = split(3);
  ASSERT_EQ(one_three.blocks.size(), 1u);
  EXPECT_EQ(one_three.blocks[0].member_count, 4u);
  EXPECT_EQ(one_three.blocks[0].rank_count, 2u);
  EXPECT_DOUBLE_EQ(one_three.blocks[0].wall_ms_p90, 7.9);
  EXPECT_DOUBLE_EQ(one_three.blocks[0].comm_share_mean, 0.21875);
  EXPECT_EQ(one_three.blocks[0].bound.bound_family, "cube");  // mac 140 vs vec 64
  EXPECT_EQ(dump(one_three), dump(two_two));
  EXPECT_EQ(dump(one_three), dump(three_one));
}

// ---- a minimal archive pair: proves serialize() covers every field the merge reads ----

struct OutArchive {
  std::string bytes;
  template <class T>
  OutArchive& operator&(const T& v) {
    if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
    } else if constexpr (std::is_same_v<T, std::string>) {
      *this & static_cast<uint64_t>(v.size());
      bytes += v;
    } else if constexpr (requires { v.size(); v.begin(); }) {
      *this & static_cast<uint64_t>(v.size());
      for (const auto& x : v) *this & x;
    } else {
      const_cast<T&>(v).serialize(*this, 0);
    }
    return *this;
  }
};

struct InArchive {
  const std::string& bytes;
  size_t pos = 0;
  template <class T>
  InArchive& operator&(T& v) {
    if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      bytes.copy(reinterpret_cast<char*>(&v), sizeof v, pos);
      pos += sizeof v;
    } else if constexpr (std::is_same_v<T, std::string>) {
      uint64_t n = 0;
      *this & n;
      v = bytes.substr(pos, n);
      pos += n;
    } else if constexpr (requires { v.size(); v.begin(); }) {
      uint64_t n = 0;
      *this & n;
      v.resize(n);
      for (auto& x : v) *this & x;
    } else {
      v.serialize(*this, 0);
    }
    return *this;
  }
};

TEST(SummarizeClasses, PartialsSurviveASerialisationRoundTrip) {
  std::vector<ClassPartials> sent = {rank0().partials(), rank1().partials()};
  std::vector<ClassPartials> received;
  for (auto& p : sent) {
    OutArchive out;
    out & p;
    InArchive in{out.bytes};
    ClassPartials back;
    in & back;
    EXPECT_EQ(in.pos, out.bytes.size());
    received.push_back(std::move(back));
  }
  const std::string expected = dump(merge_class_partials(sent, kb()));
  EXPECT_EQ(dump(merge_class_partials(received, kb())), expected);
  EXPECT_NE(expected.find("blk_cls_attn"), std::string::npos);
}

TEST(SummarizeClasses, RankWithoutClassesContributesNothing) {
  RankBuilder empty("2");
  empty.edge(1 * kMs);
  const ClassPartials p = empty.partials();
  EXPECT_EQ(p.rank_id, "2");
  EXPECT_TRUE(p.blocks.empty());
  EXPECT_TRUE(p.layers.empty());
  EXPECT_TRUE(p.steps.empty());
  const ClassSummaries with = merge_class_partials({rank0().partials(), p, rank1().partials()}, kb());
  const ClassSummaries without = merge_class_partials({rank0().partials(), rank1().partials()}, kb());
  EXPECT_EQ(dump(with), dump(without));
  EXPECT_TRUE(merge_class_partials({}, kb()).blocks.empty());
}

// ---- the merge up a tree of processes (class_merge.hpp) ----

// A rank of random classes: few class ids (so ranks share them), walls with ties, doubles whose sum
// depends on the order of adding (so a merge that added them out of rank order would show).
RankBuilder random_rank(std::mt19937_64& rng, uint32_t id) {
  auto pick = [&rng](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  auto real = [&rng] { return std::uniform_real_distribution<double>(0, 1)(rng); };
  const std::vector<std::string> op_names = {"FA", "MM", "Cast", "Dispatch", "Add", "Gather"};
  RankBuilder r(std::to_string(id));
  if (pick(3) == 0) r.edge(pick(5) * kMs);
  const int steps = 1 + pick(3);
  for (int si = 0; si < steps; ++si) {
    const int64_t step_wall = (1 + pick(50)) * kMs + pick(1000);
    const uint32_t s = r.step("stp_cls_" + std::string(1, static_cast<char>('a' + pick(3))), step_wall, step_wall / 2,
                              anatomy(step_wall / 2, pick(2) * kMs, real(), real(), real()));
    const int layers = 1 + pick(3);
    for (int li = 0; li < layers; ++li) {
      std::vector<BlockSpec> blocks;
      const int n_blocks = 1 + pick(3);
      for (int bi = 0; bi < n_blocks; ++bi) {
        BlockSpec b;
        b.kind = pick(2) == 0 ? BlockKind::kAttention : BlockKind::kMoe;
        b.class_id = "blk_cls_" + std::to_string(pick(4));
        b.wall_ns = pick(4) == 0 ? 2 * kMs : (1 + pick(5000)) * kUs + pick(999);  // ties, and spread
        b.busy_ns = b.wall_ns - pick(100);
        b.comm_share = real();
        b.comm_ns = pick(500) * kUs;
        if (pick(2) == 0) b.pipe = {{"aic_mac_time(us)", real() * 100}, {"aiv_vec_time(us)", real() * 100}};
        b.family = std::vector<std::string>{"cube", "vector", "communication"}[static_cast<size_t>(pick(3))];
        if (pick(2) == 0) b.op_types.push_back({"aic", static_cast<uint64_t>(1 + pick(4))});
        if (pick(2) == 0) b.op_types.push_back({"aiv", static_cast<uint64_t>(1 + pick(4))});
        for (int t = pick(3); t > 0; --t)
          b.top.push_back({op_names[static_cast<size_t>(pick(6))], "AI_CORE", static_cast<uint64_t>(1 + pick(3)),
                           (1 + pick(900)) * kUs});
        blocks.push_back(std::move(b));
      }
      r.layer(s, "lyr_cls_" + std::to_string(pick(3)), (5 + pick(20)) * kMs + pick(77), 4 * kMs, blocks);
    }
  }
  return r;
}

// Sums counts over `n` threads standing for processes (a collective: every thread calls it alike).
class ThreadSum {
 public:
  explicit ThreadSum(size_t n) : barrier_(static_cast<std::ptrdiff_t>(n)), slots_(n) {}
  SumOverProcesses for_process(size_t p) {
    return [this, p](std::vector<uint64_t>& counts) {
      slots_[p] = counts;
      barrier_.arrive_and_wait();
      std::vector<uint64_t> total(counts.size(), 0);
      for (const auto& s : slots_)
        for (size_t i = 0; i < total.size() && i < s.size(); ++i) total[i] += s[i];
      barrier_.arrive_and_wait();
      counts = std::move(total);
    };
  }

 private:
  std::barrier<> barrier_;
  std::vector<std::vector<uint64_t>> slots_;
};

// Any split of the ranks over processes, any fold order inside a process, any merge order of the
// processes' merges (each sent through an archive), with the walls never leaving their process:
// every field of every row equals the single pass in rank order.
TEST(ClassMerge, AnySplitOverProcessesAndMergeOrderEqualsTheSinglePass) {
  std::mt19937_64 rng(20261203);
  for (int trial = 0; trial < 40; ++trial) {
    const size_t n_ranks = 1 + rng() % 9;
    std::vector<ClassPartials> partials;
    for (uint32_t r = 0; r < n_ranks; ++r) partials.push_back(random_rank(rng, r).partials());
    const std::string expected = dump(merge_class_partials(partials, kb()));

    const size_t n_procs = 1 + rng() % 4;
    std::vector<std::vector<uint32_t>> ranks_of(n_procs);
    for (uint32_t r = 0; r < n_ranks; ++r) ranks_of[rng() % n_procs].push_back(r);
    std::vector<ClassPartialsMerge> merges(n_procs);
    std::vector<ClassWalls> walls(n_procs);
    for (size_t p = 0; p < n_procs; ++p) {
      std::shuffle(ranks_of[p].begin(), ranks_of[p].end(), rng);
      for (const uint32_t r : ranks_of[p]) merges[p].fold(r, partials[r], walls[p], kb());
    }
    std::vector<size_t> order(n_procs);
    for (size_t p = 0; p < n_procs; ++p) order[p] = p;
    std::shuffle(order.begin(), order.end(), rng);
    ClassPartialsMerge merged;
    for (const size_t p : order) {
      OutArchive out;
      out & merges[p];
      InArchive in{out.bytes};
      ClassPartialsMerge received;
      in & received;
      ASSERT_EQ(in.pos, out.bytes.size());
      merged.merge(std::move(received));
    }
    const std::vector<WallRequest> requests = merged.wall_requests(0);
    std::vector<std::vector<double>> quantiles(n_procs);
    ThreadSum sum(n_procs);
    std::vector<std::thread> procs;
    for (size_t p = 0; p < n_procs; ++p)
      procs.emplace_back([&, p] {
        quantiles[p] = class_wall_quantiles(requests, [&](int32_t) { return &walls[p]; }, sum.for_process(p));
      });
    for (auto& t : procs) t.join();
    for (size_t p = 1; p < n_procs; ++p) EXPECT_EQ(quantiles[p], quantiles[0]);
    merged.set_wall_quantiles(quantiles[0]);
    EXPECT_EQ(dump(merged.finish(kb())), expected) << "trial " << trial << ": " << n_ranks << " ranks over "
                                                   << n_procs << " processes";
  }
}

// The order statistics equal those of the values sorted in one place, whatever the values (ties,
// negatives, the extremes of int64) and however they are spread.
TEST(ClassMerge, OrderStatisticsAcrossProcessesEqualTheSortedValues) {
  std::mt19937_64 rng(7);
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  for (int trial = 0; trial < 30; ++trial) {
    const size_t n_procs = 1 + rng() % 3, n_sets = 1 + rng() % 4;
    std::vector<std::vector<std::vector<int64_t>>> local(n_procs, std::vector<std::vector<int64_t>>(n_sets));
    std::vector<std::vector<int64_t>> all(n_sets);
    for (size_t s = 0; s < n_sets; ++s)
      for (size_t i = rng() % 40; i > 0; --i) {
        const int64_t v = std::vector<int64_t>{kMin, kMax, -1, 0, static_cast<int64_t>(rng() % 7),
                                               static_cast<int64_t>(rng())}[rng() % 6];
        local[rng() % n_procs][s].push_back(v);
        all[s].push_back(v);
      }
    std::vector<OrderRequest> wanted;
    for (size_t s = 0; s < n_sets; ++s) {
      std::sort(all[s].begin(), all[s].end());
      for (uint64_t k = 0; k <= all[s].size(); ++k) wanted.push_back({static_cast<uint32_t>(s), k});
    }
    std::vector<std::vector<int64_t>> got(n_procs);
    ThreadSum sum(n_procs);
    std::vector<std::thread> procs;
    for (size_t p = 0; p < n_procs; ++p)
      procs.emplace_back([&, p] {
        std::vector<std::span<const int64_t>> sets;
        for (auto& v : local[p]) {
          std::sort(v.begin(), v.end());
          sets.emplace_back(v);
        }
        got[p] = select_order_statistics(sets, wanted, sum.for_process(p));
      });
    for (auto& t : procs) t.join();
    for (size_t i = 0; i < wanted.size(); ++i) {
      const auto& values = all[wanted[i].set];
      const int64_t want = wanted[i].k < values.size() ? values[wanted[i].k] : kMax;  // past the end: INT64_MAX
      for (size_t p = 0; p < n_procs; ++p) EXPECT_EQ(got[p][i], want) << "trial " << trial << " request " << i;
    }
  }
}

}  // namespace
}  // namespace ascprof::analysis

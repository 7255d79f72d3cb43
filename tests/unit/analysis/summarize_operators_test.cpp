#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ascprof/analysis/operator_class_merge.hpp"
#include "ascprof/analysis/summarize.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::analysis {
namespace {

using Ranges = std::vector<std::pair<uint32_t, uint32_t>>;
using Rows = std::vector<uint32_t>;

constexpr int64_t kBase = 1'736'408'883'000'000'000;  // epoch ns

struct Ev {
  std::string name, type, core;
  double start_us = 0, dur_us = 1, wait_us = 0;
  int32_t stream = 1;
  std::map<std::string, double> pipe;  // canonical pipeline field -> µs
};

class SummarizeOperatorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto k = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    kb_ = std::make_unique<knowledge::Knowledge>(std::move(k).value());
  }

  // Every canonical pipeline field is a metric column (absent cells = 0), like an E3+ capture.
  const model::RankSummary& run(const std::vector<Ev>& events) {
    table_ = model::KernelTable{};
    pool_ = std::make_unique<StringPool>();
    auto& t = table_;
    t.header.columns = {"Name", "Type", "Accelerator Core", "Start Time(us)", "Duration(us)", "Wait Time(us)", "Stream ID"};
    for (const auto& f : kb_->pipeline.fields()) {
      t.header.columns.push_back(f.name);
      t.metrics.push_back({f.name, {}});
    }
    for (const auto& e : events) {
      t.name.push_back(pool_->intern(e.name));
      t.type.push_back(pool_->intern(e.type));
      t.accelerator_core.push_back(pool_->intern(e.core));
      t.input_shapes.push_back(0);
      t.output_shapes.push_back(0);
      t.start_ns.push_back(kBase + std::llround(e.start_us * 1000));
      t.dur_ns.push_back(std::llround(e.dur_us * 1000));
      t.wait_ns.push_back(std::llround(e.wait_us * 1000));
      t.stream_id.push_back(e.stream);
      for (auto& m : t.metrics) {
        auto it = e.pipe.find(m.name);
        m.values.push_back(it == e.pipe.end() ? 0.0 : it->second);
      }
    }
    Stats stats;
    norm_ = normalize_kernels(t, *pool_, *kb_, stats);
    SummarizeInput in{&table_, &norm_, pool_.get(), kb_.get()};
    summary_ = model::RankSummary{};
    summarize_operators(in, summary_);
    return summary_;
  }

  const model::OperatorRow* op(const std::string& name) const {
    for (const auto& o : summary_.operators)
      if (o.name == name) return &o;
    return nullptr;
  }

  // A pipeline vector in PipelineRules::fields order from (field, value) pairs.
  std::vector<double> pipe(const std::map<std::string, double>& values) const {
    std::vector<double> v(kb_->pipeline.fields().size(), 0.0);
    for (const auto& [name, value] : values) {
      const int f = kb_->pipeline.field_index(name);
      EXPECT_GE(f, 0) << name;
      if (f >= 0) v[static_cast<size_t>(f)] = value;
    }
    return v;
  }

  model::BoundClass bound(const std::map<std::string, double>& values, const std::string& op_type = "aic",
                          bool is_aicpu = false, bool is_comm = false) const {
    return bound_class(values.empty() ? std::vector<double>{} : pipe(values), op_type, is_aicpu, is_comm, *kb_);
  }

  std::unique_ptr<knowledge::Knowledge> kb_;
  std::unique_ptr<StringPool> pool_;
  model::KernelTable table_;
  NormalizedKernels norm_;
  model::RankSummary summary_;
};

void expect_bound(const model::BoundClass& b, const std::string& stage, const std::string& family,
                  const std::string& core) {
  EXPECT_EQ(b.bound_stage, stage);
  EXPECT_EQ(b.bound_family, family);
  EXPECT_EQ(b.dominant_core, core);
}

// ---------------------------------------------------------------- operator rows

TEST_F(SummarizeOperatorsTest, GroupsByNameUpperCasedTypeAndRoles) {
  run({
      {"MatMul", "MatMulV3", "AI_CORE", 0, 10, 2, 1, {{"aic_mac_time(us)", 6}, {"aic_mte2_time(us)", 2}}},  // 0
      {"MatMul", "matmulv3", "AI_CORE", 20, 20, 0, 2, {{"aic_mac_time(us)", 12}, {"aicore_time(us)", 19}}},  // 1
      {"AddRmsNorm", "AddRmsNorm", "AI_VECTOR_CORE", 50, 3, 0, 1, {}},                                      // 2
      {"MatMul", "MatMulV3", "AI_CORE", 60, 30, 1, 1, {}},                                                  // 3
      {"AddRmsNorm", "AddRmsNorm", "AI_VECTOR_CORE", 100, 4, 0.5, 1, {}},                                   // 4
      {"Swiglu", "Swiglu", "AI_CORE", 110, 1, 0, 1, {}},                                                    // 5
  });
  ASSERT_EQ(summary_.operators.size(), 3u);
  // sorted by total cost desc: MatMul 63, AddRmsNorm 7.5, Swiglu 1
  EXPECT_EQ(summary_.operators[0].name, "MatMul");
  EXPECT_EQ(summary_.operators[1].name, "AddRmsNorm");
  EXPECT_EQ(summary_.operators[2].name, "Swiglu");

  const auto& m = summary_.operators[0];
  EXPECT_EQ(m.task_type, "MATMULV3");  // both spellings, one group
  EXPECT_EQ(m.roles, "compute");
  EXPECT_EQ(m.categories, "compute.matmul");
  EXPECT_EQ(m.call_count, 3u);
  EXPECT_EQ(m.duration_sum_ns, 60'000);
  EXPECT_EQ(m.wait_sum_ns, 3'000);
  EXPECT_EQ(m.stream_count, 2u);
  EXPECT_EQ(m.row_ranges, (Ranges{{0, 1}, {3, 3}}));
  EXPECT_EQ(m.sample_rows, (Rows{0, 1, 3}));
  EXPECT_EQ(m.op_type, "aic");
  EXPECT_TRUE(m.pipeline_signal);
  const auto f = [&](const char* name) { return static_cast<size_t>(kb_->pipeline.field_index(name)); };
  ASSERT_EQ(m.pipeline_us.size(), kb_->pipeline.fields().size());
  EXPECT_DOUBLE_EQ(m.pipeline_us[f("aic_mac_time(us)")], 18);
  EXPECT_DOUBLE_EQ(m.pipeline_us[f("aic_mte2_time(us)")], 2);
  EXPECT_DOUBLE_EQ(m.pipeline_us[f("aicore_time(us)")], 19);
  expect_bound(m.bound, "aic_mac_time(us)", "cube", "aic");

  const auto& a = summary_.operators[1];
  EXPECT_EQ(a.roles, "block_head,normalization");
  EXPECT_EQ(a.categories, "block_head,normalization");
  EXPECT_EQ(a.row_ranges, (Ranges{{2, 2}, {4, 4}}));
  EXPECT_EQ(a.stream_count, 1u);
  EXPECT_FALSE(a.pipeline_signal);
  EXPECT_TRUE(a.pipeline_us.empty());
  expect_bound(a.bound, "unknown", "unknown", "none");

  EXPECT_EQ(summary_.operators[2].roles, "unknown");
  EXPECT_EQ(summary_.operators[2].categories, "");
}

TEST_F(SummarizeOperatorsTest, OpTypeMajorityWithFirstSeenTieAndSampleCap) {
  std::vector<Ev> evs = {
      {"Gather", "Gather", "AI_CORE", 0, 1, 0, 1, {}},
      {"Gather", "Gather", "AI_VECTOR_CORE", 1, 1, 0, 1, {}},
      {"Gather", "Gather", "AI_VECTOR_CORE", 2, 1, 0, 1, {}},
      {"Cast", "Cast", "AI_VECTOR_CORE", 3, 1, 0, 1, {}},
      {"Cast", "Cast", "AI_CORE", 4, 1, 0, 1, {}},
  };
  for (int i = 0; i < 20; ++i) evs.push_back({"Swiglu", "Swiglu", "AI_CORE", 10.0 + i, 0.5, 0, 1, {}});
  run(evs);
  EXPECT_EQ(op("Gather")->op_type, "aiv");  // 2 of 3
  EXPECT_EQ(op("Cast")->op_type, "aiv");    // 1:1, the first seen wins
  const auto* s = op("Swiglu");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->call_count, 20u);
  ASSERT_EQ(s->sample_rows.size(), kb_->summarize.operator_sample_event_ids);
  EXPECT_EQ(s->sample_rows.front(), 5u);
  EXPECT_EQ(s->sample_rows.back(), 5u + kb_->summarize.operator_sample_event_ids - 1);
  EXPECT_EQ(s->row_ranges, (Ranges{{5, 24}}));
}

TEST_F(SummarizeOperatorsTest, OperatorBoundShortCircuits) {
  run({
      {"hcom_allReduce__1", "hcom_allReduce_", "COMMUNICATION", 0, 50, 0, 2, {}},
      {"hcom_allReduce__2", "hcom_allReduce_", "COMMUNICATION", 100, 40, 0, 2, {{"aiv_vec_time(us)", 3}, {"aiv_mte3_time(us)", 5}}},
      {"Cast", "Cast", "AI_CPU", 200, 30, 0, 3, {}},
      {"MemCopy", "MemCopy", "DSA_SQE", 300, 20, 0, 3, {}},
  });
  expect_bound(op("hcom_allReduce__1")->bound, "communication", "communication", "none");
  EXPECT_EQ(op("hcom_allReduce__2")->op_type, "mix_comm_aiv");
  expect_bound(op("hcom_allReduce__2")->bound, "aiv_mte3_time(us)", "comm_aiv_mix", "aiv");
  EXPECT_EQ(op("Cast")->roles, "aicpu");
  expect_bound(op("Cast")->bound, "aicpu", "aicpu", "none");
  expect_bound(op("MemCopy")->bound, "dsa", "dsa", "none");
}

// ---------------------------------------------------------------- bound_class (§2.6)

TEST_F(SummarizeOperatorsTest, BoundClassShortCircuitRules) {
  const std::map<std::string, double> cube{{"aic_mac_time(us)", 10}};
  expect_bound(bound(cube, "aic", /*is_aicpu=*/true), "aicpu", "aicpu", "none");
  expect_bound(bound(cube, "aicpu"), "aicpu", "aicpu", "none");
  expect_bound(bound(cube, "dsa"), "dsa", "dsa", "none");
  expect_bound(bound(cube, "communication"), "communication", "communication", "none");
  expect_bound(bound(cube, "aic", false, /*is_comm=*/true), "communication", "communication", "none");
  // the communication flag does not override mix_comm_aiv
  expect_bound(bound({{"aiv_vec_time(us)", 2}}, "mix_comm_aiv", false, true), "aiv_vec_time(us)", "comm_aiv_mix", "aiv");
  // mix_comm_aiv without AIV stages (AIC and totals do not count)
  expect_bound(bound({{"aic_mac_time(us)", 9}, {"aiv_time(us)", 9}}, "mix_comm_aiv"), "communication", "comm_aiv_mix", "none");
  expect_bound(bound({}, "mix_comm_aiv"), "communication", "comm_aiv_mix", "none");
  // AIV tie: the first AIV stage in pipeline.rules order wins
  expect_bound(bound({{"aiv_mte2_time(us)", 4}, {"aiv_vec_time(us)", 4}}, "mix_comm_aiv"), "aiv_vec_time(us)",
               "comm_aiv_mix", "aiv");
  // no stage signal: empty pipeline, or only the totals
  expect_bound(bound({}, "aic"), "unknown", "unknown", "none");
  expect_bound(bound({{"aicore_time(us)", 50}, {"aiv_time(us)", 20}}, "mix_cv"), "unknown", "unknown", "none");
  // aicpu outranks dsa and communication
  expect_bound(bound(cube, "dsa", true, true), "aicpu", "aicpu", "none");
}

TEST_F(SummarizeOperatorsTest, BoundClassStagesFamiliesAndCores) {
  // single stage
  expect_bound(bound({{"aiv_scalar_time(us)", 3}}), "aiv_scalar_time(us)", "scalar", "aiv");
  expect_bound(bound({{"aic_fixpipe_time(us)", 3}}), "aic_fixpipe_time(us)", "cube", "aic");
  // family margin: (top - runner) / total < 0.10 -> mixed; exactly 0.10 is not mixed
  expect_bound(bound({{"aic_mac_time(us)", 55}, {"aiv_vec_time(us)", 45}}), "aic_mac_time(us)", "cube", "aic");
  expect_bound(bound({{"aic_mac_time(us)", 54.9}, {"aiv_vec_time(us)", 45.1}}), "aic_mac_time(us)", "mixed", "aic");
  expect_bound(bound({{"aic_mac_time(us)", 55.1}, {"aiv_vec_time(us)", 44.9}}), "aic_mac_time(us)", "cube", "aic");
  // families sum their stages: cube = 30 + 30 beats vector 50 although vec is the largest stage
  expect_bound(bound({{"aic_mac_time(us)", 30}, {"aic_fixpipe_time(us)", 30}, {"aiv_vec_time(us)", 40}}),
               "aiv_vec_time(us)", "cube", "aic");
  // AIC mte2 and AIV mte2 stay apart: merged they would be 60 > 50
  expect_bound(bound({{"aic_mte2_time(us)", 30}, {"aiv_mte2_time(us)", 30}, {"aiv_vec_time(us)", 50}}),
               "aiv_vec_time(us)", "vector", "aiv");
  // scalar collects both cores
  expect_bound(bound({{"aic_scalar_time(us)", 20}, {"aiv_scalar_time(us)", 20}, {"aiv_vec_time(us)", 25}}),
               "aiv_vec_time(us)", "scalar", "aiv");
  // dominant core
  expect_bound(bound({{"aic_mac_time(us)", 50}, {"aiv_vec_time(us)", 46}}), "aic_mac_time(us)", "mixed", "mix");
  expect_bound(bound({{"aic_mac_time(us)", 50}, {"aiv_vec_time(us)", 45}}), "aic_mac_time(us)", "mixed", "aic");
  expect_bound(bound({{"aic_mac_time(us)", 10}, {"aiv_vec_time(us)", 40}, {"aiv_mte3_time(us)", 30}}),
               "aiv_vec_time(us)", "vector", "aiv");
  // |aic - aiv| / max exactly 0.10 is not mix (families 100 vs 90 of 190 are mixed)
  expect_bound(bound({{"aic_mte1_time(us)", 100}, {"aiv_mte3_time(us)", 90}}), "aic_mte1_time(us)", "mixed", "aic");
  // stage tie: AIC before AIV, then pipeline.rules order
  expect_bound(bound({{"aiv_vec_time(us)", 10}, {"aic_scalar_time(us)", 10}}), "aic_scalar_time(us)", "mixed", "mix");
  expect_bound(bound({{"aic_mte2_time(us)", 7}, {"aic_mac_time(us)", 7}}), "aic_mac_time(us)", "mixed", "aic");
  // NaN (absent column) reads as 0
  auto v = pipe({{"aiv_vec_time(us)", 5}});
  v[static_cast<size_t>(kb_->pipeline.field_index("aic_mac_time(us)"))] = std::nan("");
  expect_bound(bound_class(v, "aiv", false, false, *kb_), "aiv_vec_time(us)", "vector", "aiv");
}

// ---------------------------------------------------------------- HCCL (§2.5.5)

TEST_F(SummarizeOperatorsTest, HcclRowsGroupQuantilesAndSort) {
  run({
      {"hcom_allReduce__1", "hcom_allReduce_", "COMMUNICATION", 0, 10, 10, 2, {}},
      {"hcom_allReduce__2", "hcom_allReduce_", "COMMUNICATION", 100, 20, 0, 2, {}},
      {"hcom_allReduce__3", "hcom_allReduce_", "COMMUNICATION", 200, 40, 0, 2, {}},
      {"hcom_allReduce__3", "hcom_allReduce_", "COMMUNICATION", 300, 60, 0, 2, {}},
      {"hcom_allReduce__4", "hcom_allReduce_", "COMMUNICATION", 400, 5, 0, 2, {{"aiv_vec_time(us)", 1}}},
      {"hcom_allGather__5", "hcom_allGather_", "COMMUNICATION", 500, 100, 25, 2, {}},
      {"Swiglu", "Swiglu", "AI_CORE", 700, 1000, 0, 1, {}},
  });
  ASSERT_EQ(summary_.hccl.size(), 3u);
  const auto& g = summary_.hccl[0];
  EXPECT_EQ(g.hccl_op_kind, "allgather");
  EXPECT_FALSE(g.comm_aiv_fused);
  EXPECT_DOUBLE_EQ(g.wait_ratio, 0.2);

  const auto& fused = summary_.hccl[1];
  EXPECT_EQ(fused.hccl_op_kind, "allreduce");
  EXPECT_TRUE(fused.comm_aiv_fused);  // fused rows first within a kind
  EXPECT_EQ(fused.call_count, 1u);
  EXPECT_DOUBLE_EQ(fused.duration_p90_us, 5);

  const auto& h = summary_.hccl[2];
  EXPECT_EQ(h.hccl_op_kind, "allreduce");
  EXPECT_FALSE(h.comm_aiv_fused);
  EXPECT_EQ(h.name_count, 3u);
  EXPECT_EQ(h.call_count, 4u);
  EXPECT_EQ(h.duration_sum_ns, 130'000);
  EXPECT_EQ(h.wait_sum_ns, 10'000);
  EXPECT_DOUBLE_EQ(h.duration_avg_us, 32.5);
  // per-name averages 10, 20, 50
  EXPECT_DOUBLE_EQ(h.duration_min_us, 10);
  EXPECT_DOUBLE_EQ(h.duration_p50_us, 20);
  EXPECT_DOUBLE_EQ(h.duration_p90_us, 44);  // position 1.8: 20 * 0.2 + 50 * 0.8
  EXPECT_DOUBLE_EQ(h.duration_max_us, 50);
  EXPECT_DOUBLE_EQ(h.wait_ratio, 10.0 / 140.0);
}

TEST_F(SummarizeOperatorsTest, HcclSortsByKindAndNeedsCommunicationOps) {
  // (kind, fused) is unique per rank, so the order is by kind name; no communication op, no row
  run({{"Swiglu", "Swiglu", "AI_CORE", 0, 1, 0, 1, {}}});
  EXPECT_TRUE(summary_.hccl.empty());
  run({
      {"hcom_reduceScatter__1", "hcom_reduceScatter_", "COMMUNICATION", 0, 10, 0, 2, {}},
      {"hcom_allGather__2", "hcom_allGather_", "COMMUNICATION", 100, 5, 0, 2, {}},
      {"hcom_weird__3", "hcom_weird_", "COMMUNICATION", 200, 500, 0, 2, {}},
  });
  ASSERT_EQ(summary_.hccl.size(), 3u);
  EXPECT_EQ(summary_.hccl[0].hccl_op_kind, "allgather");
  EXPECT_EQ(summary_.hccl[1].hccl_op_kind, "other");
  EXPECT_EQ(summary_.hccl[2].hccl_op_kind, "reducescatter");
}

// ---------------------------------------------------------------- wait anchors (§2.5.6)

TEST_F(SummarizeOperatorsTest, WaitAnchorsAndFalseHotspotThresholds) {
  std::vector<Ev> evs;
  double t = 0;
  auto add = [&](const std::string& name, double dur, double wait) {
    evs.push_back({name, name, "AI_CORE", t, dur, wait, 1, {}});
    t += dur + wait + 1;
  };
  for (int i = 0; i < 7; ++i) add("Fill" + std::to_string(i), 3000 + i, 0);  // ranks 1-7
  add("OpE", 10, 2490);   // avg cost 2500, rank 8: duration not < 10 us
  add("OpA", 5, 1995);    // 2000, rank 9: false hotspot
  add("OpA2", 5, 1985);   // 1990, rank 10: false hotspot (rank <= 10)
  add("OpG", 5, 1975);    // 1980, rank 11: outside the top 10
  add("OpB", 20, 80);     // ratio 0.80 exactly: not an anchor
  add("OpC", 19, 81);     // 0.81: anchor, not a hotspot
  add("OpD", 5, 95);      // 0.95 exactly: anchor, not a hotspot
  run(evs);
  struct Want {
    std::string name;
    uint32_t rank;
    bool hotspot;
  };
  const std::vector<Want> want = {{"OpE", 8, false}, {"OpA", 9, true},   {"OpA2", 10, true},
                                  {"OpG", 11, false}, {"OpC", 13, false}, {"OpD", 14, false}};
  ASSERT_EQ(summary_.wait_anchors.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const auto& w = summary_.wait_anchors[i];
    SCOPED_TRACE(want[i].name);
    EXPECT_EQ(summary_.operators[w.op].name, want[i].name);
    EXPECT_EQ(w.total_cost_avg_rank, want[i].rank);
    EXPECT_EQ(w.is_false_hotspot_risk, want[i].hotspot);
  }
  EXPECT_DOUBLE_EQ(summary_.wait_anchors[5].wait_ratio, 0.95);
}

// ---------------------------------------------------------------- AICPU exposure (§2.5.7)

TEST_F(SummarizeOperatorsTest, AicpuMaskedRatioUsesMergedAiCoreIntervals) {
  run({
      {"K1", "K1", "AI_CORE", 0, 100, 0, 1, {}},                 // [0, 100)
      {"K2", "K2", "AI_CORE", 50, 100, 0, 2, {}},                // [50, 150) overlaps K1
      {"CpuMasked", "CpuMasked", "AI_CPU", 60, 80, 0, 3, {}},    // [60, 140): reference 120 / 80 = 1.5
      {"K3", "K3", "AI_VECTOR_CORE", 300, 100, 0, 1, {}},        // [300, 400)
      {"CpuPartial", "CpuPartial", "AI_CPU", 350, 100, 0, 3, {}},  // 50 of 100 masked
      {"CpuAtPartial", "CpuAtPartial", "AI_CPU", 390, 50, 0, 3, {}},  // 10 of 50 = 0.20
      {"hcom_allReduce__1", "hcom_allReduce_", "COMMUNICATION", 500, 100, 0, 2, {}},  // not AI-core-like
      {"CpuExposed", "CpuExposed", "AI_CPU", 520, 60, 0, 3, {}},      // 0 masked
      {"CpuPartial", "CpuPartial", "AI_CPU", 700, 100, 0, 3, {}},     // 0 masked
      {"CpuAtMasked", "CpuAtMasked", "AI_CPU", 1000, 100, 0, 3, {}},  // 90 of 100 = 0.90
      {"K4", "K4", "MIX_AIC", 1010, 190, 0, 1, {}},                   // [1010, 1200)
  });
  ASSERT_EQ(summary_.aicpu.size(), 5u);
  // sorted by duration desc, then name
  const std::vector<std::string> names = {"CpuPartial", "CpuAtMasked", "CpuMasked", "CpuExposed", "CpuAtPartial"};
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(summary_.aicpu[i].name, names[i]);

  const auto& partial = summary_.aicpu[0];
  EXPECT_EQ(partial.call_count, 2u);
  EXPECT_EQ(partial.duration_sum_ns, 200'000);
  EXPECT_EQ(partial.overlap_with_ai_core_ns, 50'000);
  EXPECT_DOUBLE_EQ(partial.masked_ratio, 0.25);
  EXPECT_EQ(partial.classification, "AICPU_PARTIALLY_EXPOSED");
  EXPECT_EQ(partial.row_ranges, (Ranges{{4, 4}, {8, 8}}));
  EXPECT_EQ(partial.sample_rows, (Rows{4, 8}));

  EXPECT_DOUBLE_EQ(summary_.aicpu[1].masked_ratio, 0.9);
  EXPECT_EQ(summary_.aicpu[1].classification, "AICPU_MASKED_BUT_UNDESIRABLE");

  const auto& masked = summary_.aicpu[2];
  EXPECT_EQ(masked.overlap_with_ai_core_ns, 80'000);  // not 120: K1 and K2 are merged first
  EXPECT_DOUBLE_EQ(masked.masked_ratio, 1.0);
  EXPECT_EQ(masked.classification, "AICPU_MASKED_BUT_UNDESIRABLE");

  EXPECT_EQ(summary_.aicpu[3].overlap_with_ai_core_ns, 0);
  EXPECT_EQ(summary_.aicpu[3].classification, "AICPU_EXPOSED_NOT_ALLOWED");
  EXPECT_DOUBLE_EQ(summary_.aicpu[4].masked_ratio, 0.2);
  EXPECT_EQ(summary_.aicpu[4].classification, "AICPU_PARTIALLY_EXPOSED");
  for (const auto& a : summary_.aicpu) EXPECT_LE(a.masked_ratio, 1.0);
}

TEST_F(SummarizeOperatorsTest, EmptyAndMissingInputs) {
  run({});
  EXPECT_TRUE(summary_.operators.empty());
  EXPECT_TRUE(summary_.aicpu.empty());
  model::RankSummary out;
  out.operators.emplace_back();
  summarize_operators(SummarizeInput{}, out);  // null inputs: nothing, no crash
  EXPECT_TRUE(out.operators.empty());
}

// ---------------------------------------------------------------- cross-rank merges

TEST_F(SummarizeOperatorsTest, MergesOperatorClassesAcrossRanks) {
  std::vector<std::vector<model::OperatorRow>> ranks(3);
  run({
      {"MatMul", "MatMulV3", "AI_CORE", 0, 10, 0, 1, {{"aic_mac_time(us)", 8}}},
      {"hcom_allReduce__1", "hcom_allReduce_", "COMMUNICATION", 20, 50, 50, 2, {}},
  });
  ranks[0] = summary_.operators;
  run({
      {"MatMul", "MatMulV3", "AI_CORE", 0, 30, 0, 1, {}},
      {"MatMul", "MatMulV3", "AI_CORE", 40, 10, 0, 1, {{"aiv_vec_time(us)", 1}, {"aic_mac_time(us)", 2}}},
  });
  ranks[1] = summary_.operators;
  run({{"MatMul", "MatMulV3", "AI_CORE", 0, 20, 5, 1, {}}});
  ranks[2] = summary_.operators;

  const auto rows = merge_operator_classes(ranks, *kb_);
  ASSERT_EQ(rows.size(), 2u);
  const auto& hc = rows[0];  // total cost 100 vs 95
  EXPECT_EQ(hc.name, "hcom_allReduce__1");
  EXPECT_EQ(hc.rank_count, 1u);
  expect_bound(hc.bound, "communication", "communication", "none");

  const auto& m = rows[1];
  EXPECT_EQ(m.name, "MatMul");
  EXPECT_EQ(m.op_type, "aic");
  EXPECT_EQ(m.rank_count, 3u);
  EXPECT_EQ(m.call_count, 4u);
  EXPECT_EQ(m.duration_sum_ns, 70'000);
  EXPECT_EQ(m.wait_sum_ns, 5'000);
  EXPECT_DOUBLE_EQ(m.rank_duration_min_us, 10);
  EXPECT_DOUBLE_EQ(m.rank_duration_max_us, 40);
  EXPECT_DOUBLE_EQ(m.rank_duration_p50_us, 20);
  EXPECT_DOUBLE_EQ(m.rank_duration_skew_ratio, 30.0 / (70.0 / 3.0));
  EXPECT_TRUE(m.pipeline_signal);  // rank 2 had none: its columns are skipped
  const auto f = [&](const char* name) { return static_cast<size_t>(kb_->pipeline.field_index(name)); };
  EXPECT_DOUBLE_EQ(m.pipeline_us[f("aic_mac_time(us)")], 10);
  EXPECT_DOUBLE_EQ(m.pipeline_us[f("aiv_vec_time(us)")], 1);
  expect_bound(m.bound, "aic_mac_time(us)", "cube", "aic");

  EXPECT_TRUE(merge_operator_classes({}, *kb_).empty());
}

TEST_F(SummarizeOperatorsTest, MergesHcclClassesAcrossRanks) {
  std::vector<std::vector<model::HcclOpRow>> ranks(2);
  run({
      {"hcom_allReduce__1", "hcom_allReduce_", "COMMUNICATION", 0, 10, 0, 2, {}},
      {"hcom_allReduce__2", "hcom_allReduce_", "COMMUNICATION", 100, 30, 0, 2, {}},
      {"hcom_allGather__3", "hcom_allGather_", "COMMUNICATION", 200, 5, 0, 2, {}},
  });
  ranks[0] = summary_.hccl;
  run({{"hcom_allReduce__1", "hcom_allReduce_", "COMMUNICATION", 0, 60, 6, 2, {}}});
  ranks[1] = summary_.hccl;
  const auto rows = merge_hccl_classes(ranks);
  ASSERT_EQ(rows.size(), 2u);
  const auto& r = rows[0];
  EXPECT_EQ(r.hccl_op_kind, "allreduce");
  EXPECT_EQ(r.rank_count, 2u);
  EXPECT_EQ(r.call_count, 3u);
  EXPECT_EQ(r.duration_sum_ns, 100'000);
  EXPECT_EQ(r.wait_sum_ns, 6'000);
  EXPECT_NEAR(r.duration_avg_us, 100.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(r.rank_avg_min_us, 20);  // rank 0: 40 / 2
  EXPECT_DOUBLE_EQ(r.rank_avg_max_us, 60);
  EXPECT_DOUBLE_EQ(r.rank_avg_mean_us, 40);
  EXPECT_DOUBLE_EQ(r.rank_skew_ratio, 1.0);
  EXPECT_DOUBLE_EQ(r.duration_max_us, 60);
  EXPECT_EQ(rows[1].hccl_op_kind, "allgather");
  EXPECT_EQ(rows[1].rank_count, 1u);
}

TEST(SortedQuantile, LinearInterpolation) {
  EXPECT_DOUBLE_EQ(sorted_quantile({}, 0.5), 0.0);
  EXPECT_DOUBLE_EQ(sorted_quantile({7}, 0.9), 7.0);
  EXPECT_DOUBLE_EQ(sorted_quantile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(sorted_quantile({1, 2, 3, 4, 5}, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(sorted_quantile({0, 10}, 0.9), 9.0);
}

// ---------------------------------------------------------------- the merge up a tree of processes

std::string render(const std::vector<model::OperatorClassRow>& ops, const std::vector<model::HcclClassRow>& hccl) {
  std::string s;
  auto num = [&s](double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, " %.17g", v);
    s += buf;
  };
  for (const auto& r : ops) {
    s += r.name + " " + r.task_type + " " + r.op_type + " " + r.roles + " " + std::to_string(r.rank_count) + " " +
         std::to_string(r.call_count) + " " + std::to_string(r.duration_sum_ns) + " " + std::to_string(r.wait_sum_ns);
    for (const double v : {r.rank_duration_min_us, r.rank_duration_max_us, r.rank_duration_p50_us, r.rank_duration_skew_ratio})
      num(v);
    for (const double v : r.pipeline_us) num(v);
    s += " " + r.bound.bound_family + " " + r.bound.bound_stage + "\n";
  }
  for (const auto& h : hccl) {
    s += h.hccl_op_kind + " " + std::to_string(h.comm_aiv_fused) + " " + std::to_string(h.rank_count) + " " +
         std::to_string(h.call_count) + " " + std::to_string(h.duration_sum_ns);
    for (const double v : {h.duration_avg_us, h.rank_avg_min_us, h.rank_avg_max_us, h.rank_avg_mean_us, h.rank_skew_ratio,
                           h.duration_max_us})
      num(v);
    s += "\n";
  }
  return s;
}

// Any split of the ranks over processes and any fold and merge order give the single pass's rows
// bit for bit: ties in total cost keep first seen, members and ranks count alike.
TEST(OperatorClassMerge, AnySplitAndOrderEqualsTheSinglePass) {
  const knowledge::Knowledge& kb = ascprof::testing::shipped_knowledge();
  const size_t fields = kb.pipeline.fields().size();
  std::mt19937_64 rng(5);
  auto real = [&rng] { return std::uniform_real_distribution<double>(0, 1)(rng); };
  for (int trial = 0; trial < 40; ++trial) {
    const size_t n = 1 + rng() % 8;
    std::vector<std::vector<model::OperatorRow>> ops(n);
    std::vector<std::vector<model::HcclOpRow>> hccl(n);
    for (size_t r = 0; r < n; ++r) {
      for (size_t i = rng() % 12; i > 0; --i) {
        model::OperatorRow o;
        o.name = "Op" + std::to_string(rng() % 6);  // the same name twice in a rank: two members
        o.task_type = rng() % 2 ? "AI_CORE" : "AI_VECTOR_CORE";
        o.op_type = "aiv";
        o.roles = rng() % 3 ? "" : "compute.matmul";
        o.call_count = 1 + rng() % 9;
        o.duration_sum_ns = rng() % 4 == 0 ? 50'000 : static_cast<int64_t>(rng() % 900'000);  // cost ties
        o.wait_sum_ns = static_cast<int64_t>(rng() % 3) * 1'000;
        o.pipeline_signal = rng() % 2 == 0;
        if (o.pipeline_signal)
          for (size_t f = 0; f < fields; ++f) o.pipeline_us.push_back(real() * 100);
        ops[r].push_back(std::move(o));
      }
      for (const char* kind : {"allreduce", "allgather"}) {
        if (rng() % 3 == 0) continue;
        model::HcclOpRow h;
        h.hccl_op_kind = kind;
        h.comm_aiv_fused = rng() % 2 == 0;
        h.call_count = 1 + rng() % 5;
        h.duration_sum_ns = static_cast<int64_t>(rng() % 500'000);
        h.duration_avg_us = real() * 300;
        h.duration_max_us = real() * 900;
        hccl[r].push_back(h);
      }
    }
    const std::string expected = render(merge_operator_classes(ops, kb), merge_hccl_classes(hccl));
    const size_t procs = 1 + rng() % 4;
    std::vector<OperatorClassMerge> merges(procs);
    std::vector<size_t> order(n);
    for (size_t r = 0; r < n; ++r) order[r] = r;
    std::shuffle(order.begin(), order.end(), rng);
    for (const size_t r : order) merges[rng() % procs].fold(static_cast<uint32_t>(r), ops[r], hccl[r], kb);
    std::shuffle(merges.begin(), merges.end(), rng);
    OperatorClassMerge root;
    for (auto& m : merges) root.merge(std::move(m));
    EXPECT_EQ(render(root.finish_operators(kb), root.finish_hccl()), expected) << "trial " << trial;
  }
}

}  // namespace
}  // namespace ascprof::analysis

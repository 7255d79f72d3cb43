// Operator deep dive on hand-made operator profiles: each injected pathology gets its classification
// with the measured facts, a healthy operator gets none, missing evidence is a gap, hot selection,
// root merge across ranks, the lower-bound arithmetic and the host API rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "ascprof/analysis/deep_dive.hpp"
#include "ascprof/knowledge/rule_file.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::analysis {
namespace {

const knowledge::Knowledge& kb() { return ascprof::testing::shipped_knowledge(); }

size_t metric(std::string_view name) {
  for (size_t i = 0; i < kDeepDiveMetricColumns.size(); ++i)
    if (kDeepDiveMetricColumns[i] == name) return i;
  ADD_FAILURE() << name;
  return 0;
}

// An operator with `calls` calls of `avg_us` each; metrics set as duration-weighted sums.
OperatorProfile op(const std::string& name, const std::string& core, uint64_t calls, double avg_us,
                   std::initializer_list<std::pair<const char*, double>> metrics = {}) {
  OperatorProfile p;
  p.name = name;
  p.task_type = core;
  p.kernel_type = name.substr(name.rfind('_') + 1);
  p.op_class = core == "AI_CPU" ? "aicpu" : core == "AI_VECTOR_CORE" ? "aiv" : "aic";
  p.calls = calls;
  p.dur_sum_ns = static_cast<int64_t>(avg_us * 1000.0) * static_cast<int64_t>(calls);
  p.dur_min_ns = p.dur_max_ns = static_cast<int64_t>(avg_us * 1000.0);
  p.block_dim_min = p.block_dim_max = core == "AI_VECTOR_CORE" ? 40 : 20;
  p.hf32_known = calls;
  const double total_us = avg_us * static_cast<double>(calls);
  for (const auto& [m, v] : metrics) {
    p.metric_weighted[metric(m)] = v * total_us;
    p.metric_weight[metric(m)] = total_us;
  }
  for (uint32_t r = 0; r < 6; ++r) p.sample_rows.push_back(r * 10);
  return p;
}

// Healthy metric values for a vector and a cube kernel.
OperatorProfile healthy_vector(const std::string& name, double avg_us) {
  return op(name, "AI_VECTOR_CORE", 100, avg_us,
            {{"aiv_vec_ratio", 0.55}, {"aiv_scalar_ratio", 0.12}, {"aiv_mte2_ratio", 0.35}, {"aiv_mte3_ratio", 0.2},
             {"aic_mac_ratio", 0}, {"aic_icache_miss_rate", 0}, {"aiv_icache_miss_rate", 0.01}});
}
OperatorProfile healthy_matmul(const std::string& name, double avg_us) {
  auto p = op(name, "AI_CORE", 100, avg_us,
              {{"aic_mac_ratio", 0.68}, {"aic_scalar_ratio", 0.06}, {"aic_mte1_ratio", 0.3}, {"aic_mte2_ratio", 0.42},
               {"aic_fixpipe_ratio", 0.1}, {"aic_icache_miss_rate", 0.01}, {"cube_utilization(%)", 78}});
  p.categories = "compute.matmul";
  return p;
}

RankOperatorProfiles rank_of(std::vector<OperatorProfile> ops) {
  RankOperatorProfiles r;
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.dur_sum_ns > b.dur_sum_ns; });
  for (const auto& p : ops) r.kernel_time_ns += p.dur_sum_ns;
  r.span_ns = r.kernel_time_ns * 2;
  r.profiles = std::move(ops);
  r.has_metrics = r.op_statistic_present = r.api_statistic_present = true;
  return r;
}

const DeepDiveRow* find(const DeepDive& dd, const std::string& scope, const std::string& name) {
  for (const auto& r : dd.rows)
    if (r.scope == scope && r.name == name) return &r;
  return nullptr;
}

std::vector<std::string> ids(const DeepDiveRow& r) {
  std::vector<std::string> out;
  for (const auto& d : r.details) out.push_back(d.id);
  return out;
}

bool has_fact(const DeepDiveDetail& d, const std::string& text) {
  return std::any_of(d.facts.begin(), d.facts.end(), [&](const std::string& f) { return f.find(text) != std::string::npos; });
}

DeepDive run(const RankOperatorProfiles& r) {
  RankProfilesRef ref{"0", 0, &r};
  return build_deep_dive(std::span<const RankProfilesRef>(&ref, 1), kb());
}

TEST(DeepDive, EachInjectedPathologyIsClassifiedAndTheHealthyOnesAreNot) {
  auto scalar = op("aclnnIndex_IndexAiCore_Index", "AI_VECTOR_CORE", 100, 50,
                   {{"aiv_vec_ratio", 0.10}, {"aiv_scalar_ratio", 0.70}, {"aiv_mte2_ratio", 0.15}});
  auto cube = op("aclnnMatmul_MatMulV3Common_MatMulV3", "AI_CORE", 100, 60,
                 {{"aic_mac_ratio", 0.18}, {"aic_mte2_ratio", 0.72}, {"aic_scalar_ratio", 0.05}, {"cube_utilization(%)", 20}});
  cube.categories = "compute.matmul";
  auto aicpu = op("aclnnIndexPut_IndexPutAiCpu_IndexPut", "AI_CPU", 40, 300);
  aicpu.block_dim_min = aicpu.block_dim_max = 1;
  auto one_block = op("aclnnSwiGlu_SwiGlu_SwiGlu", "AI_VECTOR_CORE", 100, 40,
                      {{"aiv_vec_ratio", 0.5}, {"aiv_scalar_ratio", 0.1}, {"aiv_mte2_ratio", 0.3}});
  one_block.block_dim_min = one_block.block_dim_max = 1;
  const auto r = rank_of({scalar, cube, aicpu, one_block, healthy_vector("aclnnAdd_AddAiCore_Add", 30),
                          healthy_matmul("aclnnMm_MatMulV2_MatMulV2", 45)});
  const DeepDive dd = run(r);

  const auto* s = find(dd, "rank", scalar.name);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(ids(*s), std::vector<std::string>{"vector_scalar_heavy"});
  EXPECT_EQ(s->severity, "high");  // 0.70 >= high_when 0.6
  EXPECT_TRUE(has_fact(s->details[0], "aiv_scalar_ratio = 0.700 (test: aiv_scalar_ratio >= 0.4)"));
  EXPECT_TRUE(has_fact(s->details[0], "aiv_vec_ratio = 0.100"));
  EXPECT_NE(s->details[0].cause.find("vectorisation"), std::string::npos);
  EXPECT_EQ(s->evidence_ids, (std::vector<std::string>{"evt_0_0", "evt_0_10", "evt_0_20", "evt_0_30"}));

  const auto* c = find(dd, "rank", cube.name);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(ids(*c), (std::vector<std::string>{"cube_low_utilization", "aic_memory_bound"}));
  EXPECT_EQ(c->details[0].severity, "high");  // 20 % < 25 %
  EXPECT_TRUE(has_fact(c->details[0], "cube_utilization_pct = 20 (test: cube_utilization_pct < 40)"));
  EXPECT_TRUE(has_fact(c->details[1], "aic_mte2_ratio = 0.720"));

  const auto* a = find(dd, "rank", aicpu.name);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(ids(*a), std::vector<std::string>{"aicpu_fallback"});
  EXPECT_EQ(a->severity, "high");  // 12 ms of 31 ms kernel time >= 5 %

  const auto* b = find(dd, "rank", one_block.name);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(ids(*b), std::vector<std::string>{"block_dim_low"});
  EXPECT_EQ(b->severity, "high");  // block dim 1
  EXPECT_DOUBLE_EQ(b->number("block_dim_per_core"), 1.0 / 40.0);
  EXPECT_TRUE(has_fact(b->details[0], "cores_of_type = 40"));

  for (const char* name : {"aclnnAdd_AddAiCore_Add", "aclnnMm_MatMulV2_MatMulV2"}) {
    const auto* h = find(dd, "rank", name);
    ASSERT_NE(h, nullptr) << name;
    EXPECT_TRUE(h->details.empty()) << name << ": " << h->verdict();
    EXPECT_EQ(h->severity, "");
    EXPECT_EQ(h->verdict(), "no pathology found by the rules");
  }
}

TEST(DeepDive, TooManyTinyBlocksForALightVectorKernel) {
  auto tiny = healthy_vector("aclnnMuls_MulAiCore_Mul", 3);
  tiny.block_dim_min = tiny.block_dim_max = 96;  // 2.4 blocks per vector core for a 3 us kernel
  auto same_long = healthy_vector("aclnnAdds_AddAiCore_Add", 30);
  same_long.block_dim_min = same_long.block_dim_max = 96;  // long enough to amortise the blocks
  const DeepDive dd = run(rank_of({tiny, same_long}));
  EXPECT_EQ(ids(*find(dd, "rank", tiny.name)), std::vector<std::string>{"block_dim_excess_light"});
  EXPECT_TRUE(find(dd, "rank", same_long.name)->details.empty());
}

TEST(DeepDive, MissingMetricColumnsAreGapsNotSilentPasses) {
  auto bare = op("aclnnIndex_IndexAiCore_Index", "AI_VECTOR_CORE", 10, 50);  // no ratio columns at all
  auto r = rank_of({bare});
  r.has_metrics = false;
  r.api_statistic_present = false;
  const DeepDive dd = run(r);
  const auto* row = find(dd, "rank", bare.name);
  ASSERT_NE(row, nullptr);
  EXPECT_TRUE(row->details.empty());
  const auto& g = row->gaps;
  EXPECT_NE(std::find(g.begin(), g.end(), "aiv_scalar_ratio not available (needed by rule vector_scalar_heavy)"), g.end());
  EXPECT_NE(std::find(g.begin(), g.end(), "kernel_details.csv has no pipeline ratio columns (aic-metrics PipeUtilization off)"),
            g.end());
  EXPECT_NE(std::find(g.begin(), g.end(), "api_statistic.csv not present: host API cost unknown"), g.end());
  EXPECT_EQ(dd.ranks_without_metrics, 1u);
}

TEST(DeepDive, HotSelectionCoversEightyPercentWithAtLeastTwentyAndAtMostFifty) {
  std::vector<OperatorProfile> many;
  for (int i = 0; i < 60; ++i) many.push_back(healthy_vector("op_" + std::to_string(100 + i) + "_X", 10));
  const DeepDive even = run(rank_of(many));
  // 60 equal operators: 80 % is reached after 48
  EXPECT_EQ(std::count_if(even.rows.begin(), even.rows.end(), [](const auto& r) { return r.scope == "rank"; }), 48);
  std::vector<OperatorProfile> skewed = {healthy_vector("big_X", 10000)};
  for (int i = 0; i < 30; ++i) skewed.push_back(healthy_vector("small_" + std::to_string(100 + i) + "_X", 1));
  const DeepDive dd = run(rank_of(skewed));
  // one operator is 97 % of the time, but at least 20 are listed, hot first, shares cumulated
  ASSERT_EQ(std::count_if(dd.rows.begin(), dd.rows.end(), [](const auto& r) { return r.scope == "rank"; }), 20);
  EXPECT_EQ(dd.rows[0].name, "big_X");
  EXPECT_EQ(dd.rows[0].hot_rank, 1u);
  EXPECT_NEAR(dd.rows[1].cumulative_share, dd.rows[0].number("kernel_time_share") + dd.rows[1].number("kernel_time_share"), 1e-12);
}

TEST(DeepDive, RootRowsMergeRanksAndNameTheSlowestRank) {
  auto fast = healthy_vector("aclnnAdd_AddAiCore_Add", 10);
  auto slow = healthy_vector("aclnnAdd_AddAiCore_Add", 30);
  const auto r0 = rank_of({fast});
  const auto r1 = rank_of({slow});
  const RankProfilesRef refs[] = {{"0", 0, &r0}, {"7", 1, &r1}};
  const DeepDive dd = build_deep_dive(refs, kb());
  ASSERT_EQ(dd.rows.size(), 3u);  // root, rank 0, rank 7
  const auto& root = dd.rows[0];
  EXPECT_EQ(root.scope, "root");
  EXPECT_EQ(root.rank_count, 2u);
  EXPECT_DOUBLE_EQ(root.number("calls"), 200);
  EXPECT_DOUBLE_EQ(root.number("avg_us"), 20);
  EXPECT_EQ(root.slowest_rank_id, "7");
  EXPECT_DOUBLE_EQ(root.slowest_rank_avg_us, 30);
  EXPECT_DOUBLE_EQ(root.number("rank_avg_spread"), 1.5);  // 30 / mean(10, 30)
  EXPECT_EQ(root.evidence_ids, (std::vector<std::string>{"evt_0_0", "evt_0_10", "evt_0_20", "evt_0_30"}));
  EXPECT_EQ(dd.rows[1].rank_id, "0");
  EXPECT_EQ(dd.rows[2].rank_id, "7");
  EXPECT_NE(dd.rows[1].deep_dive_id, dd.rows[2].deep_dive_id);
  EXPECT_EQ(root.shape_class, "no_shape");
}

TEST(DeepDive, WorkFromShapes) {
  EXPECT_DOUBLE_EQ(matmul_flops("16,7168;7168,4096"), 2.0 * 16 * 7168 * 4096);
  EXPECT_DOUBLE_EQ(matmul_flops("16,7168;4096,7168"), 2.0 * 16 * 7168 * 4096);          // weight transposed
  EXPECT_DOUBLE_EQ(matmul_flops("8,128,64;8,64,256"), 2.0 * 8 * 128 * 256 * 64);          // batched
  EXPECT_DOUBLE_EQ(matmul_flops("\"16,7168;7168,4096;4096\""), 2.0 * 16 * 7168 * 4096);  // bias, quoted
  EXPECT_TRUE(std::isnan(matmul_flops("16,7168;100,200")));
  EXPECT_TRUE(std::isnan(matmul_flops("N/A")));
  EXPECT_TRUE(std::isnan(matmul_flops("16,x;7168,4096")));
  EXPECT_DOUBLE_EQ(grouped_matmul_flops("128,7168;64,7168,4096;64"), 2.0 * 128 * 7168 * 4096);
  EXPECT_DOUBLE_EQ(grouped_matmul_flops("128,7168;64,4096,7168"), 2.0 * 128 * 7168 * 4096);
  const auto& rules = kb().deep_dive;
  EXPECT_DOUBLE_EQ(tensor_bytes("16,7168;;4", "DT_BF16;INT64;FLOAT", rules), 16 * 7168 * 2 + 4 * 4);
  EXPECT_TRUE(std::isnan(tensor_bytes("16,7168", "MYSTERY_TYPE", rules)));
}

TEST(DeepDive, LowerBoundIsTheLargerOfComputeAndTransfer) {
  // 4096 x 4096 x 4096 bf16 matmul: 137.4 GFLOP -> 453.6 us at 303 TFLOPS; 100.7 MB -> 62.9 us at 1.6 TB/s
  auto p = healthy_matmul("aclnnMatmul_MatMulV3Common_MatMulV3", 907.2);
  p.input_shapes = "4096,4096;4096,4096";
  p.input_dtypes = "DT_BF16;DT_BF16";
  p.output_shapes = "4096,4096";
  p.output_dtypes = "DT_BF16";
  const DeepDive dd = run(rank_of({p}));
  const auto& row = dd.rows[0];
  const double flops = 2.0 * 4096.0 * 4096.0 * 4096.0;
  EXPECT_EQ(row.work_kind, "flops");
  EXPECT_EQ(row.achieved_unit, "TFLOPS");
  EXPECT_DOUBLE_EQ(row.number("work_per_call"), flops);
  EXPECT_NEAR(row.number("achieved"), flops / 907.2e-6 / 1e12, 1e-9);
  EXPECT_NEAR(row.number("efficiency"), flops / 303e12 * 1e6 / 907.2, 1e-12);
  EXPECT_DOUBLE_EQ(row.number("peak"), 303);
  // M = 16: the weight read dominates, the bound is a transfer bound
  p.input_shapes = "16,4096;4096,4096";
  p.output_shapes = "16,4096";
  const DeepDive small = run(rank_of({p}));
  EXPECT_EQ(small.rows[0].work_kind, "bytes");
  EXPECT_DOUBLE_EQ(small.rows[0].number("peak"), 1600);
}

TEST(DeepDive, HostApiRules) {
  auto add = healthy_vector("aclnnAdd_AddAiCore_Add", 5);
  add.wait_sum_ns = 100 * 4000;  // the device waits 4 us before each call: wait share 0.44
  auto r = rank_of({add});  // 0.5 ms kernel time, 1 ms span
  r.api_stats = {{"runtime", "StreamSynchronize", "host", 400.0, 3, 133.3, 1, 300, 0, 5},
                 {"acl", "aclnnAdd", "host", 1200.0, 100, 12.0, 8, 20, 1, 6},
                 {"acl", "aclnnAddGetWorkspaceSize", "host", 300.0, 100, 3.0, 2, 5, 1, 7}};
  const DeepDive dd = run(r);
  ASSERT_EQ(dd.host_api.size(), 1u);
  EXPECT_EQ(dd.host_api[0].rule, "sync_heavy");
  EXPECT_EQ(dd.host_api[0].api, "StreamSynchronize");
  EXPECT_DOUBLE_EQ(dd.host_api[0].share_of_span, 0.4);
  const auto* row = find(dd, "rank", add.name);
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->host_api, "aclnnAdd");
  EXPECT_DOUBLE_EQ(row->number("host_us_per_call"), 15.0);  // (1200 + 300) / 100
  EXPECT_DOUBLE_EQ(row->number("host_to_device_ratio"), 3.0);
  EXPECT_EQ(ids(*row), std::vector<std::string>{"host_launch_bound"});
  // the same host cost with a device that never waits for the launch: the host keeps ahead, no finding
  r.profiles[0].wait_sum_ns = 0;
  const DeepDive fed = run(r);
  EXPECT_TRUE(find(fed, "rank", add.name)->details.empty());
}

TEST(DeepDive, RuleErrorsNameFileAndLine) {
  auto load = [](const std::string& text) {
    auto file = knowledge::parse_rule_text(text, "operator_deep_dive.rules");
    EXPECT_TRUE(file.ok());
    knowledge::DeepDiveRules rules;
    return rules.load(*file, kb().vocab).to_string();
  };
  const std::string base =
      "[selection]\ncoverage = 0.8\nmin_operators = 1\nmax_operators = 5\nevidence_rows = 2\n[defaults]\nchip = C\n"
      "[chip C]\ncube_cores = 1\nvector_cores = 2\ncube_tflops = 3\nhbm_gbps = 4\nsource = x\n[dtype_bytes]\n2 = BF16\n"
      "[cores]\ncube = AI_CORE\nvector = AI_VECTOR_CORE\n";
  const std::string rule = "[rule r]\ntitle = t\nseverity = low\ninference = i\ncause = c\nsuggestion = s\n";
  EXPECT_EQ(load(base + rule + "test = avg_us >= 1\n"), "ok");
  EXPECT_NE(load(base + rule + "test = scalar_share >= 1\n").find("operator_deep_dive.rules:line 25: unknown feature 'scalar_share'"),
            std::string::npos);
  EXPECT_NE(load(base + rule + "test = avg_us ~ 1\n").find("line 25: unknown operator '~'"), std::string::npos);
  EXPECT_NE(load(base + rule + "test = task_type >= 1\n").find("line 25: word feature 'task_type' takes 'in'"), std::string::npos);
  EXPECT_NE(load(base + rule + "when = categories has nope.nothing\ntest = calls >= 1\n").find("category 'nope.nothing' is not declared"),
            std::string::npos);
  EXPECT_NE(load(base + rule).find("needs at least one 'test'"), std::string::npos);
  EXPECT_NE(load(base + "[defaults]\nchip = Missing\n").find("chip 'Missing' has no [chip Missing] block"), std::string::npos);
}

// ---- the root scope merged up a tree of processes (DeepDiveRootMerge) ----

// Every field of every row, numbers bit-exact.
std::string render(const DeepDive& dd) {
  std::string s = std::to_string(dd.ranks) + "/" + std::to_string(dd.ranks_without_metrics) + "/" +
                  std::to_string(dd.ranks_without_op_statistic) + "/" + std::to_string(dd.ranks_without_api_statistic) + "\n";
  auto num = [&s](double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, " %.17g", v);
    s += buf;
  };
  for (const auto& r : dd.rows) {
    s += r.scope + " " + r.rank_id + " " + std::to_string(r.hot_rank) + " " + r.name + " " + r.task_type + " " +
         r.kernel_type + " " + r.categories + " " + r.deep_dive_id + " " + std::to_string(r.rank_count);
    for (const double v : r.numbers) num(v);
    num(r.cumulative_share);
    s += " " + r.bound_family + " " + r.work_kind + " " + r.host_api + " " + std::to_string(r.host_api_count);
    num(r.host_api_avg_us);
    s += " " + r.slowest_rank_id;
    num(r.slowest_rank_avg_us);
    for (const auto& d : r.details) s += " " + d.id;
    for (const auto& e : r.evidence_ids) s += " " + e;
    for (const auto& g : r.gaps) s += " " + g;
    s += "\n";
  }
  for (const auto& h : dd.host_api) s += h.rank_id + " " + h.api + " " + h.rule + "\n";
  return s;
}

// A rank of 40 to 69 operators drawn from a pool of 70 (more than max_operators, so the rank scope
// reads only a prefix), with doubles whose sums depend on the order of adding, per-rank metadata
// (categories) that only the first rank may give the root row, API and op statistics.
RankOperatorProfiles random_rank(std::mt19937_64& rng, bool with_metrics) {
  auto real = [&rng] { return std::uniform_real_distribution<double>(0, 1)(rng); };
  std::vector<OperatorProfile> ops;
  std::vector<int> pool(70);
  for (int i = 0; i < 70; ++i) pool[static_cast<size_t>(i)] = i;
  std::shuffle(pool.begin(), pool.end(), rng);
  for (size_t i = 0, n = 40 + rng() % 30; i < n; ++i) {
    const int k = pool[i];
    OperatorProfile p = op("aclnnOp" + std::to_string(k) + "_Kernel_K" + std::to_string(k % 7),
                           k % 3 == 0 ? "AI_CORE" : "AI_VECTOR_CORE", 1 + rng() % 300, 1 + real() * 90,
                           {{"aiv_vec_ratio", real()}, {"aic_mac_ratio", real()}, {"aiv_scalar_ratio", real() * 0.5}});
    if (!with_metrics) p.metric_weighted = p.metric_weight = {};
    p.categories = "cat" + std::to_string(rng() % 3);  // first rank's wins
    p.dur_min_ns -= static_cast<int64_t>(rng() % 500);
    p.dur_max_ns += static_cast<int64_t>(rng() % 500);
    p.pipeline_us = {real() * 10, real() * 20};
    p.sample_rows.resize(rng() % 7);
    ops.push_back(std::move(p));
  }
  RankOperatorProfiles r = rank_of(std::move(ops));
  r.has_metrics = with_metrics;
  r.api_statistic_present = rng() % 4 != 0;
  for (int k = 0; k < 70; k += 9) {
    model::ApiStatisticRow a;
    a.level = "node";
    a.api_name = "aclnnOp" + std::to_string(k);
    a.time_us = real() * 500;
    a.count = 1 + rng() % 50;
    r.api_stats.push_back(a);
  }
  model::OpStatisticRow o;
  o.op_type = "K1";
  o.core_type = "AI_CORE";
  o.total_us = real() * 100;
  o.ratio_pct = real() * 9;
  r.op_stats.push_back(o);
  return r;
}

// The root row's metadata is the first rank's, the slowest rank ties to the lower rank, and the
// evidence is the first rows in rank order, whichever order the ranks are merged in.
TEST(DeepDive, RootMergeKeepsTheFirstRanksMetadataAndRows) {
  auto a = healthy_vector("aclnnAdd_AddAiCore_Add", 10), b = a, c = a;
  a.categories = "first";
  b.categories = "second";
  c.categories = "third";
  const auto r0 = rank_of({a}), r1 = rank_of({b}), r2 = rank_of({c});
  for (const auto& order : {std::vector<int>{0, 1, 2}, std::vector<int>{2, 1, 0}, std::vector<int>{1, 2, 0}}) {
    const RankOperatorProfiles* ranks[] = {&r0, &r1, &r2};
    DeepDiveRootMerge halves[2];
    for (const int r : order) halves[r == 1 ? 1 : 0].fold(static_cast<uint32_t>(r), std::to_string(r), *ranks[r], 4);
    halves[1].merge(std::move(halves[0]), 4);
    const RankProfilesRef refs[] = {{"0", 0, &r0}, {"1", 1, &r1}, {"2", 2, &r2}};
    const DeepDive dd = build_deep_dive(std::move(halves[1]), refs, kb());
    ASSERT_FALSE(dd.rows.empty());
    EXPECT_EQ(dd.rows[0].categories, "first");
    EXPECT_EQ(dd.rows[0].slowest_rank_id, "0");  // all alike: the lowest rank
    EXPECT_EQ(dd.rows[0].evidence_ids, (std::vector<std::string>{"evt_0_0", "evt_0_10", "evt_0_20", "evt_0_30"}));
  }
}

// Any split of the ranks over processes and any order of folding and merging give the single pass's
// rows, bit for bit; the rank scopes need only the first max_operators profiles of each rank.
TEST(DeepDive, RootMergeOfAnySplitAndOrderEqualsTheSinglePass) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 25; ++trial) {
    const size_t n = 1 + rng() % 7;
    std::vector<RankOperatorProfiles> ranks;
    for (size_t r = 0; r < n; ++r) ranks.push_back(random_rank(rng, rng() % 5 != 0));
    std::vector<std::string> ids_of;
    std::vector<RankProfilesRef> refs;
    for (size_t r = 0; r < n; ++r) ids_of.push_back(std::to_string(r * 3));
    for (size_t r = 0; r < n; ++r) refs.push_back({ids_of[r], static_cast<uint32_t>(r), &ranks[r]});
    const std::string expected = render(build_deep_dive(refs, kb()));

    const size_t procs = 1 + rng() % 4;
    std::vector<std::vector<size_t>> mine(procs);
    for (size_t r = 0; r < n; ++r) mine[rng() % procs].push_back(r);
    std::vector<DeepDiveRootMerge> merges(procs);
    for (size_t p = 0; p < procs; ++p) {
      std::shuffle(mine[p].begin(), mine[p].end(), rng);
      for (const size_t r : mine[p]) merges[p].fold(static_cast<uint32_t>(r), ids_of[r], ranks[r], kb().deep_dive.evidence_rows);
    }
    std::shuffle(merges.begin(), merges.end(), rng);
    DeepDiveRootMerge root;
    for (auto& m : merges) root.merge(std::move(m), kb().deep_dive.evidence_rows);
    std::vector<RankOperatorProfiles> trimmed = ranks;
    for (auto& t : trimmed)
      if (t.profiles.size() > kb().deep_dive.max_operators) t.profiles.resize(kb().deep_dive.max_operators);
    std::vector<RankProfilesRef> trimmed_refs;
    for (size_t r = 0; r < n; ++r) trimmed_refs.push_back({ids_of[r], static_cast<uint32_t>(r), &trimmed[r]});
    EXPECT_EQ(render(build_deep_dive(std::move(root), trimmed_refs, kb())), expected)
        << "trial " << trial << ": " << n << " ranks over " << procs << " processes";
  }
}

}  // namespace
}  // namespace ascprof::analysis

// The root merges' reduction tree (parallel::reduce_root_merges) and the class walls' quantile
// selection (parallel::set_class_wall_quantiles) under mpiexec with 1, 2, 3 and 5 processes (trees
// of depth 0 to 3): process 0's merged buckets give exactly the alignments of one process folding
// every rank itself, its merged classes exactly the class tables of the single pass in rank order,
// its merged operator and HCCL classes exactly those of the single pass, and its merged operator
// profiles exactly the deep dive's root rows of the single pass, for each of two roots, whichever
// process held which rank.
#include <gtest/gtest.h>

#include <boost/mpi/communicator.hpp>
#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ascprof/analysis/class_merge.hpp"
#include "ascprof/analysis/deep_dive.hpp"
#include "ascprof/analysis/operator_class_merge.hpp"
#include "ascprof/analysis/operator_align.hpp"
#include "ascprof/parallel/gather_messages.hpp"
#include "ascprof/analysis/summarize.hpp"
#include "support/shipped_knowledge.hpp"

namespace ascprof {
namespace {

namespace mpi = boost::mpi;
using namespace analysis;

const knowledge::Knowledge& kb() { return testing::shipped_knowledge(); }

// Rank `rank` of root `root`: 30 calls over 3 keys whose starts straddle millisecond edges, its
// clock `offset` ahead (deterministic: every process builds the same rank the same way).
RankOperatorBuckets rank_buckets(int root, uint32_t rank, int64_t offset) {
  const auto& roles = kb().operator_alignment.roles;
  uint32_t mm = 0, cc = 0;
  for (uint32_t i = 0; i < roles.size(); ++i) {
    if (roles[i].name == "compute.matmul") mm = i;
    if (roles[i].name == "communication.collective") cc = i;
  }
  std::mt19937_64 rng(static_cast<uint64_t>(root) * 1000 + rank);
  OperatorCandidates c;
  c.keys = {{mm, "compute.matmul", "a"}, {mm, "compute.matmul", "b"}, {cc, "hcom_x", "no_shape"}};
  for (uint32_t call = 0; call < 30; ++call) {
    const auto key = static_cast<uint32_t>(rng() % 3);
    if (key == 2 && rank % 4 != 0) continue;
    c.key.push_back(key);
    c.start_ns.push_back((static_cast<int64_t>(call / 2) * 1000 + 900 + static_cast<int64_t>(rng() % 300)) * 1000 + offset);
    c.dur_ns.push_back(10'000 + static_cast<int64_t>(rng() % 50'000));
    c.wait_ns.push_back(static_cast<int64_t>(rng() % 7'000));
    c.row.push_back(call);
  }
  return operator_buckets(c, offset, kb().operator_alignment);
}

int64_t offset_of(int root, uint32_t rank) { return (static_cast<int64_t>(rank * 7919 + root) % 4000 - 2000) * 1000; }

// Everything an alignment row and the findings read, as text.
std::string render(const OperatorAlignments& al) {
  std::string s;
  for (const auto& a : al.alignments) {
    const auto& k = al.keys[a.key];
    s += k.name_key + "/" + k.shape + "@" + std::to_string(a.bucket) + " n=" + std::to_string(a.member_ranks) + "," +
         std::to_string(a.member_count);
    for (const int64_t v : {a.start_ns, a.end_ns, a.start_skew_ns, a.end_skew_ns, a.dur_min_ns, a.dur_max_ns, a.wait_max_ns,
                            a.raw_start_min_ns, a.raw_start_max_ns, a.raw_end_ns})
      s += " " + std::to_string(v);
    for (const uint32_t r : {a.latest_start_rank, a.latest_end_rank, a.longest_rank, a.shortest_rank}) {
      s += " o" + std::to_string(r) + ":";
      for (const uint32_t row : al.outlier_rows(a, r)) s += std::to_string(row) + ",";
    }
    s += " ranks";
    for (uint32_t i = 0; i < a.range_count; ++i)
      s += " " + std::to_string(al.ranges[a.first_range + i].first) + "-" + std::to_string(al.ranges[a.first_range + i].end);
    s += " events";
    for (uint32_t i = 0; i < a.event_count; ++i)
      s += " " + std::to_string(al.events[a.first_event + i].rank) + "." + std::to_string(al.events[a.first_event + i].row);
    s += " c" + std::to_string(a.confidence) + "\n";
  }
  return s;
}

// Rank `rank` of root `root`'s class partials: class ids from a small pool (ranks share them), walls
// with ties, doubles whose sum depends on the order of adding (deterministic per rank).
ClassPartials rank_classes(int root, uint32_t rank) {
  std::mt19937_64 rng(static_cast<uint64_t>(root) * 7777 + rank);
  auto real = [&rng] { return std::uniform_real_distribution<double>(0, 1)(rng); };
  const size_t fields = kb().pipeline.fields().size();
  ClassPartials p;
  p.rank_id = std::to_string(rank);
  for (uint32_t c = 0; c < 4; ++c) {
    if (rng() % 3 == 0) continue;
    BlockClassPartial b;
    b.class_id = "blk_" + std::to_string((c + rank) % 5);
    b.block_kind = c % 2 ? "attention" : "moe";
    for (uint64_t m = 1 + rng() % 6; m > 0; --m) b.wall_ns.push_back(rng() % 4 == 0 ? 2'000'000 : static_cast<int64_t>(rng() % 9'000'000));
    b.busy_sum_ns = static_cast<int64_t>(rng() % 1'000'000);
    b.comm_share_sum = real();
    b.pipeline_signal = rng() % 2 == 0;
    if (b.pipeline_signal)
      for (size_t f = 0; f < fields; ++f) b.pipeline_us.push_back(real() * 100);
    b.bound_family_counts = {{rng() % 2 ? "cube" : "vector", 1 + rng() % 3, 0}};
    b.op_type_counts = {{"aic", rng() % 5, 0}, {"aiv", rng() % 5, 0}};
    b.top_ops = {{"MM", "AI_CORE", 1 + rng() % 3, static_cast<int64_t>(rng() % 800'000)},
                 {rng() % 2 ? "FA" : "Cast", "AI_CORE", 1, static_cast<int64_t>(rng() % 800'000)}};
    p.blocks.push_back(std::move(b));
  }
  LayerClassPartial l;
  l.class_id = "lyr_" + std::to_string(rank % 3);
  l.block_kinds = {"attention", "moe"};
  for (uint64_t m = 1 + rng() % 4; m > 0; --m) l.wall_ns.push_back(static_cast<int64_t>(rng() % 20'000'000));
  l.block_kind_walls = {{"attention", 2, static_cast<int64_t>(rng() % 5'000'000)}, {"moe", 1, 7}};
  l.top_ops = {{"MM", "AI_CORE", 2, 500}};
  p.layers.push_back(std::move(l));
  StepClassPartial st;
  st.class_id = "stp_" + std::to_string(rank % 2);
  st.wall_ns = {static_cast<int64_t>(rng() % 50'000'000)};
  st.anatomy_count = 1;
  st.head_ratio_sum = real();
  st.main_ratio_sum = real();
  st.tail_ratio_sum = real();
  st.bubble_ratio_sum = real();
  st.layer_class_walls = {{"lyr_0", 3, static_cast<int64_t>(rng() % 9'000'000)}};
  p.steps.push_back(std::move(st));
  return p;
}

// Rank `rank` of root `root`'s operator profiles: 12 operators from a pool of 16, doubles whose sum
// depends on the order of adding, categories only the first rank may give the root row.
RankOperatorProfiles rank_profiles(int root, uint32_t rank) {
  std::mt19937_64 rng(static_cast<uint64_t>(root) * 5555 + rank);
  auto real = [&rng] { return std::uniform_real_distribution<double>(0, 1)(rng); };
  RankOperatorProfiles r;
  for (uint32_t i = 0; i < 12; ++i) {
    OperatorProfile p;
    const uint32_t k = (i * 5 + rank) % 16;
    p.name = "aclnnOp" + std::to_string(k) + "_Kernel";
    p.task_type = k % 2 ? "AI_CORE" : "AI_VECTOR_CORE";
    p.kernel_type = "K" + std::to_string(k % 3);
    p.op_class = "aiv";
    p.categories = "cat" + std::to_string(rank % 3);
    p.calls = 1 + rng() % 100;
    p.dur_sum_ns = static_cast<int64_t>(p.calls * (1000 + rng() % 90'000));
    p.dur_min_ns = 500 + static_cast<int64_t>(rng() % 500);
    p.dur_max_ns = 90'000 + static_cast<int64_t>(rng() % 9'000);
    for (size_t m = 0; m < p.metric_weighted.size(); m += 3) {
      p.metric_weight[m] = real() * 1e4;
      p.metric_weighted[m] = p.metric_weight[m] * real();
    }
    p.pipeline_us = {real() * 3, real() * 7};
    for (uint32_t s = 0; s < 3; ++s) p.sample_rows.push_back(rank * 100 + i * 10 + s);
    r.kernel_time_ns += p.dur_sum_ns;
    r.profiles.push_back(std::move(p));
  }
  std::stable_sort(r.profiles.begin(), r.profiles.end(), [](const auto& a, const auto& b) { return a.dur_sum_ns > b.dur_sum_ns; });
  r.span_ns = r.kernel_time_ns * 2;
  r.has_metrics = r.op_statistic_present = r.api_statistic_present = true;
  model::ApiStatisticRow a;
  a.level = "node";
  a.api_name = "aclnnOp3";
  a.time_us = real() * 100;
  a.count = 1 + rng() % 9;
  r.api_stats.push_back(a);
  return r;
}

// Rank `rank` of root `root`'s operator and HCCL rows (members with cost ties and pipeline doubles).
std::pair<std::vector<model::OperatorRow>, std::vector<model::HcclOpRow>> rank_operator_rows(int root, uint32_t rank) {
  std::mt19937_64 rng(static_cast<uint64_t>(root) * 3333 + rank);
  std::pair<std::vector<model::OperatorRow>, std::vector<model::HcclOpRow>> out;
  for (uint32_t i = 0; i < 6; ++i) {
    model::OperatorRow o;
    o.name = "Op" + std::to_string(rng() % 5);
    o.task_type = "AI_CORE";
    o.op_type = "aic";
    o.call_count = 1 + rng() % 4;
    o.duration_sum_ns = rng() % 3 == 0 ? 40'000 : static_cast<int64_t>(rng() % 700'000);
    o.pipeline_signal = rng() % 2 == 0;
    if (o.pipeline_signal)
      for (size_t f = 0; f < kb().pipeline.fields().size(); ++f) o.pipeline_us.push_back(std::uniform_real_distribution<double>(0, 50)(rng));
    out.first.push_back(std::move(o));
  }
  model::HcclOpRow h;
  h.hccl_op_kind = rank % 2 ? "allreduce" : "alltoall";
  h.call_count = 2;
  h.duration_sum_ns = static_cast<int64_t>(rng() % 100'000);
  h.duration_avg_us = std::uniform_real_distribution<double>(0, 50)(rng);
  out.second.push_back(h);
  return out;
}

std::string render(const std::vector<model::OperatorClassRow>& ops, const std::vector<model::HcclClassRow>& hccl) {
  std::string s;
  for (const auto& r : ops) {
    s += r.name + " " + std::to_string(r.rank_count) + " " + std::to_string(r.duration_sum_ns);
    for (const double v : r.pipeline_us) s += " " + std::to_string(v);
    char buf[64];
    std::snprintf(buf, sizeof buf, " %.17g %.17g\n", r.rank_duration_p50_us, r.rank_duration_skew_ratio);
    s += buf;
  }
  for (const auto& h : hccl) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %.17g %.17g\n", h.rank_avg_mean_us, h.rank_skew_ratio);
    s += h.hccl_op_kind + " " + std::to_string(h.rank_count) + buf;
  }
  return s;
}

std::string render(const DeepDive& dd) {
  std::string s = std::to_string(dd.ranks) + "\n";
  for (const auto& r : dd.rows) {
    if (r.scope != "root") continue;
    s += r.name + " " + r.kernel_type + " " + r.categories + " " + std::to_string(r.rank_count) + " " + r.slowest_rank_id;
    for (const double v : r.numbers) {
      char buf[40];
      std::snprintf(buf, sizeof buf, " %.17g", v);
      s += buf;
    }
    for (const auto& e : r.evidence_ids) s += " " + e;
    s += "\n";
  }
  return s;
}

// Every number and name of the class tables, as text (%.17g: bit-exact).
std::string render(const ClassSummaries& cs) {
  std::string s;
  auto num = [&s](double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, " %.17g", v);
    s += buf;
  };
  auto ops = [&s](const std::vector<ClassTopOp>& v) {
    for (const auto& t : v) s += " " + t.name + "/" + std::to_string(t.call_count) + "/" + std::to_string(t.duration_sum_ns);
  };
  for (const auto& b : cs.blocks) {
    s += b.block_class_id + " " + b.block_kind + " " + std::to_string(b.member_count) + " " + std::to_string(b.rank_count);
    for (double v : {b.wall_ms_sum, b.wall_ms_mean, b.wall_ms_p50, b.wall_ms_p90, b.busy_ms_sum, b.comm_share_mean}) num(v);
    for (double v : b.pipeline_us) num(v);
    s += " " + b.dominant_op_type + " " + b.bound.bound_family;
    for (const auto& [k, n] : b.op_type_counts) s += " " + k + "=" + std::to_string(n);
    ops(b.top_ops);
    s += "\n";
  }
  for (const auto& l : cs.layers) {
    s += l.layer_class_id + " " + std::to_string(l.member_count) + " " + std::to_string(l.rank_count);
    for (double v : {l.wall_ms_sum, l.wall_ms_p50, l.wall_ms_p90}) num(v);
    for (const auto& [k, v] : l.block_kind_wall_ms_share_mean) {
      s += " " + k;
      num(v);
    }
    ops(l.top_ops);
    s += "\n";
  }
  for (const auto& st : cs.steps) {
    s += st.step_class_id + " " + std::to_string(st.member_count) + " " + std::to_string(st.rank_count);
    for (double v : {st.wall_ms_p50, st.wall_ms_p90, st.head_ratio_mean, st.main_ratio_mean, st.tail_ratio_mean,
                     st.bubble_ratio_mean})
      num(v);
    s += "\n";
  }
  return s;
}

TEST(RootMergeReduce, TreeOfProcessesEqualsOneProcessFoldingEveryRank) {
  mpi::communicator world;
  const auto& rules = kb().operator_alignment;
  const uint32_t ranks = 23;
  std::map<int32_t, pipeline::RootMerge> mine;
  std::map<int32_t, ClassWalls> walls;
  for (const int root : {0, 7})
    for (uint32_t r = 0; r < ranks; ++r)
      if (static_cast<int>((r * 5 + static_cast<uint32_t>(root)) % static_cast<uint32_t>(world.size())) == world.rank()) {
        fold_rank_buckets(mine[root].operators, r, rank_buckets(root, r, offset_of(root, r)), offset_of(root, r), rules);
        mine[root].classes.fold(r, rank_classes(root, r), walls[root], kb());
        mine[root].deep_dive.fold(r, "r" + std::to_string(r), rank_profiles(root, r), kb().deep_dive.evidence_rows);
        const auto rows = rank_operator_rows(root, r);
        mine[root].operator_classes.fold(r, rows.first, rows.second, kb());
      }
  const uint64_t sent = parallel::reduce_root_merges(world, mine, kb());
  parallel::set_class_wall_quantiles(world, mine, walls);
  if (world.rank() != 0) {
    EXPECT_TRUE(mine.empty());
    EXPECT_GT(sent, 0u);
    return;
  }
  EXPECT_EQ(sent, 0u);
  for (const int root : {0, 7}) {
    OperatorBucketMerge one;
    std::vector<ClassPartials> partials;
    std::vector<RankOperatorProfiles> profiles;
    std::vector<std::string> ids;
    for (uint32_t r = 0; r < ranks; ++r) {
      fold_rank_buckets(one, r, rank_buckets(root, r, offset_of(root, r)), offset_of(root, r), rules);
      partials.push_back(rank_classes(root, r));
      profiles.push_back(rank_profiles(root, r));
      ids.push_back("r" + std::to_string(r));
    }
    std::vector<RankProfilesRef> refs;
    for (uint32_t r = 0; r < ranks; ++r) refs.push_back({ids[r], r, &profiles[r]});
    std::vector<std::vector<model::OperatorRow>> op_rows;
    std::vector<std::vector<model::HcclOpRow>> hccl_rows;
    for (uint32_t r = 0; r < ranks; ++r) {
      auto rows = rank_operator_rows(root, r);
      op_rows.push_back(std::move(rows.first));
      hccl_rows.push_back(std::move(rows.second));
    }
    EXPECT_EQ(render(mine[root].operator_classes.finish_operators(kb()), mine[root].operator_classes.finish_hccl()),
              render(merge_operator_classes(op_rows, kb()), merge_hccl_classes(hccl_rows)))
        << "root " << root << " with " << world.size() << " processes";
    const std::string deep_dive_expected = render(build_deep_dive(refs, kb()));
    ASSERT_NE(deep_dive_expected.find("aclnnOp"), std::string::npos);
    EXPECT_EQ(render(build_deep_dive(std::move(mine[root].deep_dive), refs, kb())), deep_dive_expected)
        << "root " << root << " with " << world.size() << " processes";
    const OperatorAlignments expected = finish_alignments(std::move(one), rules);
    ASSERT_GT(expected.alignments.size(), 10u);
    ASSERT_TRUE(mine.count(root)) << root;
    EXPECT_EQ(mine[root].operators.ranks, ranks);
    const OperatorAlignments got = finish_alignments(std::move(mine[root].operators), rules);
    EXPECT_EQ(render(got), render(expected)) << "root " << root << " with " << world.size() << " processes";
    const std::string classes_expected = render(merge_class_partials(partials, kb()));
    ASSERT_NE(classes_expected.find("blk_"), std::string::npos);
    EXPECT_EQ(render(mine[root].classes.finish(kb())), classes_expected) << "root " << root << " with " << world.size()
                                                                         << " processes";
  }
}

}  // namespace
}  // namespace ascprof

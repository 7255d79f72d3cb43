// In-kernel MoE trace analysis (issue 20): per phase and core group the exact counts, sums, unions
// and per-core figures; container bubbles; attachment to the instrumented kernel's rows; and the
// three findings on hand-made ranks with a planted fault (and none on clean ones).
#include <gtest/gtest.h>

#include <algorithm>

#include "ascprof/analysis/moe_trace.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::analysis {
namespace {

const knowledge::MoeTraceRules& rules() { return ascprof::testing::shipped_knowledge().moe_trace; }

// A call built interval by interval (µs).
struct Call {
  StringPool& pool;
  model::MoeTraceCall t;
  void add(const char* label, uint32_t type, uint32_t core, double s_us, double e_us, int64_t index = 0) {
    t.intervals.push_back({pool.intern(label), type, core, 0, index, static_cast<int64_t>(s_us * 1000),
                           static_cast<int64_t>(e_us * 1000)});
  }
  model::MoeTraceCall done() {
    std::sort(t.intervals.begin(), t.intervals.end(), [](const auto& a, const auto& b) {
      return std::make_tuple(a.core_type, a.core_id, a.start_ns, -a.end_ns) < std::make_tuple(b.core_type, b.core_id, b.start_ns, -b.end_ns);
    });
    return t;
  }
};

const MoePhaseStats* find(const MoeCallSummary& c, const std::string& label, uint32_t type, int64_t index = -1) {
  for (const auto& p : c.phases)
    if (p.label == label && p.core_type == type && p.index == index) return &p;
  return nullptr;
}

// The shape of the synthetic kernel, per rank: `slow` stretches expert group 0 on the cube,
// `combine_wait_us` sets the send cores' wait on peers, `recv_wait_us` the receive cores' token wait.
model::MoeTraceCall rank_call(StringPool& pool, double slow = 1.0, double combine_wait_us = 5, double recv_wait_us = 6) {
  Call c{pool, {}};
  const double g0 = 10 * slow;
  const double cube_end = 2 + 4 + g0 + 4 + 10;  // wait, group 0, wait, group 1
  for (uint32_t core = 0; core < 4; ++core) {
    const double j = core * 0.02;
    c.add("dispatch-gmm1 wait-moe-token", 0, core, 2, 6 + j, 0);
    c.add("dispatch-gmm1 moe-process", 0, core, 6 + j, 6 + g0 + j, 0);
    c.add("dispatch-gmm1 wait-moe-token", 0, core, 6 + g0 + j, 10 + g0 + j, 1);
    c.add("dispatch-gmm1 moe-process", 0, core, 10 + g0 + j, cube_end + j, 1);
    c.add("dispatch-gmm1 recv-token", 1, core, 1, 1 + recv_wait_us + j);
    c.add("dispatch-gmm1 moe-quant", 1, core, 2 + recv_wait_us, 6 + recv_wait_us + j);
    c.add("gmm2-combine combine-send", 2, core, cube_end + 1, cube_end + 6 + j);
    c.add("gmm2-combine combine-wait-status", 2, core, cube_end + 6 + j, cube_end + 6 + combine_wait_us + j);
    for (uint32_t type = 0; type < 3; ++type) c.add("processing", type, core, 0, cube_end + 12 + combine_wait_us);
  }
  return c.done();
}

TEST(MoeTraceAnalysis, PhaseSumsUnionsAndBubblesAreExact) {
  StringPool pool;
  Call c{pool, {}};
  // two cube cores; core 1 starts its phases 1 us later
  for (uint32_t core = 0; core < 2; ++core) {
    const double d = core;
    c.add("processing", 0, core, 0, 50 + d);
    c.add("dispatch-gmm1", 0, core, 1, 30 + d);
    c.add("dispatch-gmm1 wait-moe-token", 0, core, 2 + d, 5 + d, 0);
    c.add("dispatch-gmm1 moe-process", 0, core, 5 + d, 15 + d, 0);
    c.add("dispatch-gmm1 wait-moe-token", 0, core, 16 + d, 18 + d, 1);
    c.add("dispatch-gmm1 moe-process", 0, core, 18 + d, 29 + d, 1);
    c.add("gmm2-combine", 0, core, 31 + d, 49 + d);
  }
  c.add("gmm2-combine combine-wait-status", 2, 0, 40, 45);
  std::vector<model::MoeTraceCall> calls{c.done()};
  Stats stats;
  const MoeRankSummary s = summarize_moe_traces(calls, {}, pool, rules(), stats);
  ASSERT_EQ(s.calls.size(), 1u);
  const MoeCallSummary& call = s.calls[0];
  EXPECT_EQ(call.status, "not_attached");  // no kernel rows
  EXPECT_EQ(call.span_ns, 51000);
  const auto* mp = find(call, "dispatch-gmm1 moe-process", 0);
  ASSERT_NE(mp, nullptr);
  EXPECT_EQ(mp->role, "compute");
  EXPECT_EQ(mp->core_group, "cube");
  EXPECT_EQ(mp->count, 4u);
  EXPECT_EQ(mp->cores, 2u);
  EXPECT_EQ(mp->total_ns, 42000);           // (10 + 11) x 2
  EXPECT_EQ(mp->union_ns, 11000 + 12000);   // [5,16) and [18,30)
  EXPECT_EQ(mp->max_core_ns, 21000);
  const auto* g0 = find(call, "dispatch-gmm1 moe-process", 0, 0);
  ASSERT_NE(g0, nullptr);
  EXPECT_EQ(g0->count, 2u);
  EXPECT_EQ(g0->union_ns, 11000);
  EXPECT_EQ(find(call, "processing", 0, 0), nullptr);  // one instance: no instance rows
  const auto* wait = find(call, "gmm2-combine combine-wait-status", 2);
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(wait->role, "combine_wait");
  EXPECT_EQ(wait->core_group, "vector_send");
  EXPECT_EQ(find(call, "dispatch-gmm1 wait-moe-token", 0)->role, "token_wait");
  EXPECT_EQ(find(call, "processing", 0)->role, "container");
  // bubbles per core: processing (50+d) - ((29+d) + 18) = 3 on both; dispatch-gmm1 (29+d) - 26 = 3, 4 (core 1's
  // children start 1 us later, its dispatch-gmm1 does not); gmm2-combine 18 each (nothing inside)
  auto bubble = [&call](const char* container) -> int64_t {
    for (const auto& b : call.bubbles)
      if (b.container == container && b.core_type == 0) return b.total_ns;
    return -1;
  };
  EXPECT_EQ(bubble("processing"), 3000 + 3000);
  EXPECT_EQ(bubble("dispatch-gmm1"), 3000 + 4000);
  EXPECT_EQ(bubble("gmm2-combine"), 36000);
}

TEST(MoeTraceAnalysis, CallsAttachToTheInstrumentedRowsByCallAndDuration) {
  StringPool pool;
  model::KernelTable k;
  auto row = [&](const char* name, const char* type, int64_t start_us, int64_t dur_us) {
    k.name.push_back(pool.intern(name));
    k.type.push_back(pool.intern(type));
    k.start_ns.push_back(start_us * 1000);
    k.dur_ns.push_back(dur_us * 1000);
  };
  row("aclnnFusedDeepMoe_FusedDeepMoe_FusedDeepMoe", "FusedDeepMoe", 100, 60);
  row("aclnnMatmul_MatMul", "MatMul", 200, 10);
  row("aclnnFusedDeepMoe_FusedDeepMoe_FusedDeepMoe", "FusedDeepMoe", 300, 60);
  row("aclnnFusedDeepMoe_FusedDeepMoe_FusedDeepMoe", "FusedDeepMoe", 400, 200);
  const auto rows = moe_kernel_rows(k, pool, rules());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].row, 2u);
  auto call = [&](int64_t index) {
    model::MoeTraceCall t = rank_call(pool);  // span 49 us
    t.call_index = index;
    t.file = "t" + std::to_string(index) + ".json";
    return t;
  };
  Stats stats;
  // call 1 by name; an unnumbered call is the last row (200 us: 49 us is below half of it)
  const auto s = summarize_moe_traces({call(1), call(-1), call(7)}, rows, pool, rules(), stats);
  ASSERT_EQ(s.calls.size(), 3u);
  EXPECT_EQ(s.calls[0].status, "attached") << s.calls[0].detail;
  EXPECT_EQ(s.calls[0].kernel_row, 2);
  EXPECT_EQ(s.calls[0].kernel_call, 1);
  EXPECT_EQ(s.calls[0].kernel_duration_ns, 60000);
  EXPECT_EQ(s.calls[1].status, "not_attached");
  EXPECT_EQ(s.calls[1].kernel_row, 3);
  EXPECT_NE(s.calls[1].detail.find("not this call"), std::string::npos) << s.calls[1].detail;
  EXPECT_EQ(s.calls[2].status, "not_attached");
  EXPECT_NE(s.calls[2].detail.find("3 such rows"), std::string::npos) << s.calls[2].detail;
  EXPECT_EQ(stats.count(Stat::moe_trace_not_attached), 2u);
  // an unreadable call is kept with its error, and takes no part
  model::MoeTraceCall bad;
  bad.file = "bad.json";
  bad.error = "bad.json:byte 9: truncated";
  const auto u = summarize_moe_traces({bad}, rows, pool, rules(), stats);
  EXPECT_EQ(u.calls[0].status, "unreadable");
  EXPECT_FALSE(u.calls[0].usable());
}

std::vector<model::Finding> findings_of(std::vector<MoeRankSummary>& sums) {
  std::vector<MoeRankView> views;
  for (size_t r = 0; r < sums.size(); ++r) views.push_back({std::to_string(r), static_cast<uint32_t>(r), &sums[r]});
  return diagnose_moe_traces(views, rules(), ascprof::testing::shipped_knowledge().diagnostics.max_evidence_ids);
}

std::vector<std::string> types(const std::vector<model::Finding>& fs) {
  std::vector<std::string> t;
  for (const auto& f : fs) t.push_back(f.finding_type);
  return t;
}

TEST(MoeTraceAnalysis, CleanRanksGiveNoFinding) {
  StringPool pool;
  Stats stats;
  std::vector<MoeRankSummary> sums;
  for (int r = 0; r < 4; ++r) sums.push_back(summarize_moe_traces({rank_call(pool)}, {}, pool, rules(), stats));
  EXPECT_TRUE(findings_of(sums).empty()) << ::testing::PrintToString(types(findings_of(sums)));
}

TEST(MoeTraceAnalysis, ASlowExpertGroupIsWhatThePeersWaitFor) {
  StringPool pool;
  Stats stats;
  std::vector<MoeRankSummary> sums;
  for (int r = 0; r < 4; ++r)
    sums.push_back(summarize_moe_traces({r == 2 ? rank_call(pool, 3.0, 5) : rank_call(pool, 1.0, 25)}, {}, pool, rules(), stats));
  const auto fs = findings_of(sums);
  ASSERT_EQ(types(fs), (std::vector<std::string>{"moe_in_kernel_ep_imbalance", "moe_combine_wait"}));
  const auto& ep = fs[0];
  EXPECT_EQ(ep.suspected_ranks, std::vector<std::string>{"2"});
  EXPECT_EQ(ep.rank_ids, (std::vector<std::string>{"2", "0", "1", "3"}));
  EXPECT_NE(ep.summary.find("'dispatch-gmm1 moe-process' #0 on the cube cores"), std::string::npos) << ep.summary;
  EXPECT_NE(ep.summary.find("3.00x"), std::string::npos) << ep.summary;
  EXPECT_EQ(ep.evidence_ids[0], moe_phase_evidence_id(2, 0, 0 + [&] {
              const auto& ph = sums[2].calls[0].phases;
              for (size_t i = 0; i < ph.size(); ++i)
                if (ph[i].label == "dispatch-gmm1 moe-process" && ph[i].index == 0) return i;
              return ph.size();
            }()));
  EXPECT_NEAR(ep.magnitude_ms, 0.02, 1e-9);  // 30 - 10 us
  const auto& cw = fs[1];
  EXPECT_EQ(cw.suspected_ranks, std::vector<std::string>{"2"});
  EXPECT_EQ(cw.rank_ids, (std::vector<std::string>{"0", "1", "3", "2"}));
}

TEST(MoeTraceAnalysis, AStarvedReceiveSideWaitsForTokens) {
  StringPool pool;
  Stats stats;
  std::vector<MoeRankSummary> sums;
  for (int r = 0; r < 3; ++r) sums.push_back(summarize_moe_traces({rank_call(pool, 1.0, 5, r == 1 ? 30 : 6)}, {}, pool, rules(), stats));
  const auto fs = findings_of(sums);
  ASSERT_EQ(types(fs), std::vector<std::string>{"moe_in_kernel_ep_imbalance"});
  EXPECT_EQ(fs[0].suspected_ranks, std::vector<std::string>{"1"});
  EXPECT_NE(fs[0].summary.find("'dispatch-gmm1 recv-token' on the vector_recv cores"), std::string::npos) << fs[0].summary;
  EXPECT_NE(fs[0].summary.find("waits for tokens"), std::string::npos) << fs[0].summary;
}

TEST(MoeTraceAnalysis, OneSlowCoreOfOneRankAndADominantPhase) {
  StringPool pool;
  Stats stats;
  // one rank: core 3's group-1 matmul runs 40 us instead of 10, and it dominates the span
  model::MoeTraceCall t = rank_call(pool);
  for (auto& iv : t.intervals)
    if (pool.view(iv.label) == "dispatch-gmm1 moe-process" && iv.index == 1 && iv.core_id == 3) iv.end_ns += 30000;
  std::vector<MoeRankSummary> sums{summarize_moe_traces({t}, {}, pool, rules(), stats)};
  const auto fs = findings_of(sums);
  ASSERT_EQ(types(fs), std::vector<std::string>{"moe_in_kernel_ep_imbalance"});
  EXPECT_EQ(fs[0].scope, "rank");
  EXPECT_NE(fs[0].summary.find("on core 3"), std::string::npos) << fs[0].summary;
  // a long combine-side wait on a single rank: reported, with no rank to blame
  std::vector<MoeRankSummary> one{summarize_moe_traces({rank_call(pool, 1.0, 60)}, {}, pool, rules(), stats)};
  const auto w = findings_of(one);
  ASSERT_EQ(types(w), std::vector<std::string>{"moe_combine_wait"});
  EXPECT_EQ(w[0].suspected_ranks, std::vector<std::string>{"0"});
  EXPECT_NE(w[0].summary.find("no rank stands out"), std::string::npos);
}

}  // namespace
}  // namespace ascprof::analysis

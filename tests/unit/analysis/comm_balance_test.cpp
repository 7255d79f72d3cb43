// comm_aiv_compute_imbalance and alltoall_size_imbalance on hand-made rank facts and tables.
#include <gtest/gtest.h>

#include <cmath>

#include "ascprof/analysis/diagnose.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::analysis {
namespace {

const knowledge::Knowledge& kb() { return ascprof::testing::shipped_knowledge(); }

RankFacts facts(const char* id, uint32_t ordinal, double aiv_ms, double a2a_mb) {
  RankFacts f;
  f.rank_id = id;
  f.rank_ordinal = ordinal;
  f.comm_aiv_ns = static_cast<int64_t>(aiv_ms * 1e6);
  f.comm_aiv_rows = {5, 9};
  f.alltoall_mb = a2a_mb;
  return f;
}

TEST(CommBalance, CommAivSpreadAboveThirtyPercentNamesTheBusiestRank) {
  // mean 11, spread (14 - 10) / 11 = 0.36 > 0.30
  const auto f = diagnose_comm_balance({facts("0", 0, 10, 0), facts("1", 1, 10, 0), facts("2", 2, 14, 0), facts("3", 3, 10, 0)}, kb());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].finding_type, "comm_aiv_compute_imbalance");
  EXPECT_EQ(f[0].suspected_ranks, std::vector<std::string>{"2"});
  EXPECT_EQ(f[0].evidence_ids, (std::vector<std::string>{"evt_2_5", "evt_2_9"}));
  EXPECT_NEAR(f[0].magnitude_ms, 3.0, 1e-9);
  // 10 vs 12.5: spread 2.5 / 11.25 = 0.22, balanced enough
  EXPECT_TRUE(diagnose_comm_balance({facts("0", 0, 10, 0), facts("1", 1, 12.5, 0)}, kb()).empty());
  // a single rank with fused kernels is nothing to compare
  EXPECT_TRUE(diagnose_comm_balance({facts("0", 0, 10, 0), facts("1", 1, 0, 0)}, kb()).empty());
}

TEST(CommBalance, AllToAllVolumeFromCommunicationTable) {
  StringPool pool;
  model::CommStatTable c;
  auto add = [&](const char* kind, bool total, double hccs_mb, double rdma_mb) {
    c.step.push_back(1);
    c.is_p2p.push_back(0);
    c.is_total.push_back(total ? 1 : 0);
    c.op_name.push_back(pool.intern("x"));
    c.group_hash.push_back(1);
    c.op_kind.push_back(pool.intern(kind));
    c.start_ns.push_back(0);
    for (auto* v : {&c.elapse_ms, &c.transit_ms, &c.wait_ms, &c.sync_ms, &c.idle_ms, &c.wait_ratio, &c.sync_ratio}) v->push_back(1);
    for (size_t t = 0; t < model::kTransportCount; ++t) {
      const double mb = t == static_cast<size_t>(model::Transport::kHccs) ? hccs_mb
                        : t == static_cast<size_t>(model::Transport::kRdma) ? rdma_mb : std::nan("");
      c.transport[t].size_mb.push_back(mb);
      c.transport[t].time_ms.push_back(1);
      c.transport[t].bandwidth_gbps.push_back(1);
      c.transport[t].large_packet_ratio.push_back(0);
    }
  };
  add("alltoallv", false, 3, 1);
  add("alltoall", false, 2, 0);
  add("allreduce", false, 50, 0);  // not all-to-all
  add("alltoallv", true, 99, 0);   // the totals row
  RankFacts f;
  collect_alltoall_volume(c, pool, f);
  EXPECT_DOUBLE_EQ(f.alltoall_mb, 6.0);
  EXPECT_EQ(f.alltoall_ops, 2u);
}

TEST(CommBalance, AllToAllSizeImbalance) {
  // mean 15, rank 3 at 30 = 2x: high (>= cross_rank_skew_ratio)
  const auto f = diagnose_comm_balance({facts("0", 0, 0, 10), facts("1", 1, 0, 10), facts("2", 2, 0, 10), facts("3", 3, 0, 30)}, kb());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].finding_type, "alltoall_size_imbalance");
  EXPECT_EQ(f[0].suspected_ranks, std::vector<std::string>{"3"});
  EXPECT_EQ(f[0].severity, "high");
  EXPECT_EQ(f[0].evidence_ids.size(), 1u);  // no all-to-all kernel rows: the rank window
  EXPECT_TRUE(diagnose_comm_balance({facts("0", 0, 0, 10), facts("1", 1, 0, 12)}, kb()).empty());
}

}  // namespace
}  // namespace ascprof::analysis

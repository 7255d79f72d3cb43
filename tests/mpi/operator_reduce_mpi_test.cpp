// The operator buckets' reduction tree (parallel::reduce_operator_buckets) under mpiexec with 1, 2, 3
// and 5 processes (trees of depth 0 to 3): process 0's merged buckets give exactly the alignments of
// one process folding every rank itself, for each of two roots, whichever process held which rank.
#include <gtest/gtest.h>

#include <boost/mpi/communicator.hpp>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ascprof/analysis/operator_align.hpp"
#include "ascprof/parallel/gather_messages.hpp"
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

TEST(OperatorReduce, TreeOfProcessesEqualsOneProcessFoldingEveryRank) {
  mpi::communicator world;
  const auto& rules = kb().operator_alignment;
  const uint32_t ranks = 23;
  std::map<int32_t, OperatorBucketMerge> mine;
  for (const int root : {0, 7})
    for (uint32_t r = 0; r < ranks; ++r)
      if (static_cast<int>((r * 5 + static_cast<uint32_t>(root)) % static_cast<uint32_t>(world.size())) == world.rank())
        fold_rank_buckets(mine[root], r, rank_buckets(root, r, offset_of(root, r)), offset_of(root, r), rules);
  const uint64_t sent = parallel::reduce_operator_buckets(world, mine, rules);
  if (world.rank() != 0) {
    EXPECT_TRUE(mine.empty());
    EXPECT_GT(sent, 0u);
    return;
  }
  EXPECT_EQ(sent, 0u);
  for (const int root : {0, 7}) {
    OperatorBucketMerge one;
    for (uint32_t r = 0; r < ranks; ++r) fold_rank_buckets(one, r, rank_buckets(root, r, offset_of(root, r)), offset_of(root, r), rules);
    const OperatorAlignments expected = finish_alignments(std::move(one), rules);
    ASSERT_GT(expected.alignments.size(), 10u);
    ASSERT_TRUE(mine.count(root)) << root;
    EXPECT_EQ(mine[root].ranks, ranks);
    const OperatorAlignments got = finish_alignments(std::move(mine[root]), rules);
    EXPECT_EQ(render(got), render(expected)) << "root " << root << " with " << world.size() << " processes";
  }
}

}  // namespace
}  // namespace ascprof

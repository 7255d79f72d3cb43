// The critical path on hand-made ranks: the rank-side skeleton (local walks along streams, stopping
// at communication ops) and the coordinator's walk (the last member to arrive at a collective, transfer
// from its arrival, unmatched ops as waiting, clock offsets), and the finding's thresholds.
#include <gtest/gtest.h>

#include "ascprof/analysis/critical_path.hpp"
#include "ascprof/analysis/normalize.hpp"
#include "ascprof/model/comm_table.hpp"
#include "ascprof/model/kernel_table.hpp"
#include "ascprof/model/structure.hpp"
#include "ascprof/model/trace_tables.hpp"
#include "support/shipped_knowledge.hpp"

namespace ascprof::analysis {
namespace {

const knowledge::Knowledge& kb() { return ascprof::testing::shipped_knowledge(); }

// One rank's kernel rows: (name, stream, start, end); names starting with "hcom_" are communication.
struct HandRank {
  StringPool pool;
  model::KernelTable k;
  NormalizedKernels norm;
  model::CommOpTable ops;
  model::RankStructure s;

  void kernel(const std::string& name, int32_t stream, int64_t start, int64_t end) {
    k.name.push_back(pool.intern(name));
    k.stream_id.push_back(stream);
    k.start_ns.push_back(start);
    k.dur_ns.push_back(end - start);
    const bool comm = name.rfind("hcom_", 0) == 0;
    norm.op_type.push_back(static_cast<uint8_t>(kb().vocab.op_type_index(comm ? "communication" : "aic")));
  }
  // trace_view's op of the same name on a group thread
  void trace_op(const std::string& name, const std::string& group, int64_t start, int64_t end) {
    ops.name.push_back(pool.intern(name));
    ops.group.push_back(pool.intern(group));
    ops.start_ns.push_back(start);
    ops.dur_ns.push_back(end - start);
  }
  void step(const std::string& id, uint32_t first, uint32_t last) {
    model::StepSegment g;
    g.segment_id = id;
    g.type = model::SegmentType::kStep;
    g.complete = true;
    g.row_start = first;
    g.row_end = last;
    g.start_ns = INT64_MAX;
    g.end_ns = INT64_MIN;
    for (uint32_t r = first; r <= last; ++r) {
      g.start_ns = std::min(g.start_ns, k.start_ns[r]);
      g.end_ns = std::max(g.end_ns, k.start_ns[r] + k.dur_ns[r]);
    }
    s.segments.push_back(g);
  }
  RankPathSkeleton skeleton() const { return step_path_skeleton(k, norm, pool, ops, s, kb()); }
};

// Two ranks, one step, one allreduce; `b_late`: rank 1 reaches it last (else rank 0 does).
void two_ranks(HandRank& a, HandRank& b, bool b_late, int64_t b_shift = 0) {
  a.kernel("MatMul", 1, 0, 100);
  a.kernel("Add", 1, 110, 300);
  a.kernel("hcom_allReduce__1_0_1", 2, 300, 500);
  a.kernel("Mul", 1, 510, 700);
  const int64_t arrive = b_late ? 400 : 150;
  b.kernel("MatMul", 1, b_shift + 0, b_shift + 100);
  b.kernel("Add", 1, b_shift + 105, b_shift + arrive);
  b.kernel("hcom_allReduce__1_0_1", 2, b_shift + arrive, b_shift + 500);
  b.kernel("Mul", 1, b_shift + 505, b_shift + 600);
  a.step("a0", 0, 3);
  b.step("b0", 0, 3);
}

CriticalPaths walk_two(const RankPathSkeleton& sa, const RankPathSkeleton& sb, int64_t b_offset = 0) {
  std::vector<StepWindow> w = {{"0", "a0", "", 0, 0, 700, 0}, {"1", "b0", "", 0, b_offset, b_offset + 600, 0}};
  StepAlignment al;
  al.alignment_id = "align_x";
  al.members = {0, 1};
  al.start_ns = 0;
  al.end_ns = 700;
  std::vector<PathRankView> ranks = {{"0", 0, 0, &sa}, {"1", 1, b_offset, &sb}};
  return walk_critical_paths(ranks, w, {al}, kb().diagnostics);
}

TEST(CriticalPath, SkeletonWalksAlongStreamsAndStopsAtCommunication) {
  HandRank a, b;
  two_ranks(a, b, false);
  const auto sk = a.skeleton();
  ASSERT_EQ(sk.steps.size(), 1u);
  const auto& st = sk.steps[0];
  ASSERT_EQ(st.ops.size(), 1u);
  EXPECT_EQ(sk.groups[st.ops[0].group], "name:hcom_allReduce__1_0_1");  // no trace: the name is the op
  // the allreduce waited for Add (the last task to end before it), Add for MatMul on its stream
  EXPECT_EQ(st.ops[0].before.prev, -1);
  EXPECT_EQ(st.ops[0].before.compute_ns, 290);
  EXPECT_EQ(st.ops[0].before.gap_ns, 10);
  EXPECT_EQ(st.ops[0].before.kernels, 2u);
  EXPECT_EQ(st.ops[0].before.longest_row, 1u);
  EXPECT_EQ(st.ops[0].before.start_ns, 0);
  // the step's last kernel (Mul) waited for the allreduce (ended 500), not for Add (ended 300)
  EXPECT_EQ(st.tail.prev, 0);
  EXPECT_EQ(st.tail.compute_ns, 190);
  EXPECT_EQ(st.tail.gap_ns, 10);
  EXPECT_EQ(st.tail.start_ns, 500);
}

TEST(CriticalPath, TraceNamesTheGroupAndSequence) {
  HandRank a, b;
  two_ranks(a, b, false);
  a.trace_op("hcom_broadcast__9_0_1", "Group g Communication", 0, 1);  // an earlier op of the group
  a.trace_op("hcom_allReduce__1_0_1", "Group g Communication", 300, 500);
  const auto sk = a.skeleton();
  ASSERT_EQ(sk.steps[0].ops.size(), 1u);
  EXPECT_EQ(sk.groups[sk.steps[0].ops[0].group], "g");  // the communicator, as the database names it
  EXPECT_EQ(sk.steps[0].ops[0].seq, 1u);
}

TEST(CriticalPath, CollectiveJumpsToTheLastArrival) {
  for (const bool b_late : {false, true}) {
    HandRank a, b;
    two_ranks(a, b, b_late);
    const auto sa = a.skeleton(), sb = b.skeleton();
    const auto p = walk_two(sa, sb);
    ASSERT_EQ(p.steps.size(), 1u);
    ASSERT_EQ(p.elements.size(), 3u);
    const auto& e = p.elements;
    // in time order: the late rank's work, the transfer it released, rank 0's tail (its step ends last)
    const uint32_t late = b_late ? 1 : 0;
    EXPECT_EQ(e[0].rank, late);
    EXPECT_EQ(e[0].kind, PathKind::kCompute);
    EXPECT_EQ(e[1].rank, late);
    EXPECT_EQ(e[1].kind, PathKind::kTransfer);
    EXPECT_EQ(e[1].start_ns, b_late ? 400 : 300);
    EXPECT_EQ(e[1].end_ns, 500);  // rank 0's end of the op, where the walk met it
    EXPECT_EQ(e[1].waited_ns, b_late ? 100 : 150);
    EXPECT_EQ(e[1].members, 2u);
    EXPECT_EQ(e[1].evidence_id, b_late ? "evt_1_2" : "evt_0_2");
    EXPECT_EQ(e[2].rank, 0u);
    EXPECT_EQ(e[2].start_ns, 500);
    EXPECT_EQ(e[2].end_ns, 700);
    EXPECT_EQ(e[2].evidence_id, "evt_0_3");
    // contiguous: the walk covers the whole wall here
    EXPECT_EQ(e[0].start_ns, 0);
    EXPECT_EQ(e[0].end_ns, e[1].start_ns);
    EXPECT_EQ(p.steps[0].walked_ns, 700);
    EXPECT_EQ(p.steps[0].hops, b_late ? 1u : 0u);
    EXPECT_EQ(p.steps[0].compute_ns + p.steps[0].transfer_ns + p.steps[0].gap_ns + p.steps[0].waiting_ns, 700);
    EXPECT_EQ(p.ranks[late].others_waited_ns, b_late ? 100 : 150);
    EXPECT_EQ(p.ranks[0].steps_member, 1u);
    EXPECT_EQ(p.ranks[1].steps_on_path, b_late ? 1u : 0u);
  }
}

TEST(CriticalPath, ClockOffsetsAreApplied) {
  HandRank a, b, a2, b2;
  two_ranks(a, b, true);
  two_ranks(a2, b2, true, 1'000'000);  // rank 1's clock runs 1 ms ahead
  const auto sa = a.skeleton(), sb = b.skeleton(), sa2 = a2.skeleton(), sb2 = b2.skeleton();
  const auto p = walk_two(sa, sb), q = walk_two(sa2, sb2, 1'000'000);
  ASSERT_EQ(p.elements.size(), q.elements.size());
  for (size_t i = 0; i < p.elements.size(); ++i) {
    EXPECT_EQ(p.elements[i].rank, q.elements[i].rank);
    EXPECT_EQ(p.elements[i].start_ns, q.elements[i].start_ns);
    EXPECT_EQ(p.elements[i].end_ns, q.elements[i].end_ns);
  }
}

TEST(CriticalPath, WaitTimesNameTheLastArrivalWhateverTheClocks) {
  HandRank a, b;
  two_ranks(a, b, true);  // rank 1 arrives at 400, rank 0 at 300 and waits 100
  auto sa = a.skeleton(), sb = b.skeleton();
  // an offset estimate 200 us off makes rank 1 look early: the clocks alone blame rank 0
  EXPECT_EQ(walk_two(sa, sb, 200).elements[1].rank, 0u);
  sa.steps[0].ops[0].wait_ns = 100;
  sb.steps[0].ops[0].wait_ns = 0;
  const auto p = walk_two(sa, sb, 200);
  ASSERT_EQ(p.elements.size(), 3u);
  EXPECT_EQ(p.elements[1].rank, 1u);
  EXPECT_EQ(p.elements[1].kind, PathKind::kTransfer);
  EXPECT_EQ(p.elements[1].start_ns, 400);  // rank 0's arrival plus its wait, on its clock
  EXPECT_EQ(p.elements[1].end_ns, 500);
  EXPECT_EQ(p.elements[1].waited_ns, 100);
  // one member without a wait: back to the clocks
  sb.steps[0].ops[0].wait_ns = -1;
  EXPECT_EQ(walk_two(sa, sb, 200).elements[1].rank, 0u);
}

TEST(CriticalPath, CommunicationStatisticsGiveTheWaits) {
  HandRank a, b;
  two_ranks(a, b, false);
  auto sk = a.skeleton();
  model::CommStatTable c;
  auto row = [&](const std::string& name, double wait_ms, bool total) {
    c.step.push_back(1);
    c.is_p2p.push_back(0);
    c.is_total.push_back(total);
    c.op_name.push_back(a.pool.intern(name));
    c.group_hash.push_back(7);
    c.op_kind.push_back(0);
    c.start_ns.push_back(0);
    c.elapse_ms.push_back(1);
    c.transit_ms.push_back(1);
    c.wait_ms.push_back(wait_ms);
    c.sync_ms.push_back(0);
    c.idle_ms.push_back(0);
    c.wait_ratio.push_back(0);
    c.sync_ratio.push_back(0);
  };
  row("Total Op Info", 9, true);
  row("hcom_allReduce__1_0_1", 0.25, false);
  attach_comm_waits(sk, c, a.pool);
  EXPECT_EQ(sk.steps[0].ops[0].wait_ns, 250000);
}

TEST(CriticalPath, AnOpNoOtherRankSharesIsWaiting) {
  HandRank a, b;
  two_ranks(a, b, false);
  b.k.name[2] = b.pool.intern("hcom_allReduce__7_0_1");  // rank 1 ran another op: nobody shares rank 0's
  a.s.segments.clear();
  b.s.segments.clear();
  a.step("a0", 0, 3);
  b.step("b0", 0, 3);
  const auto sa = a.skeleton(), sb = b.skeleton();
  const auto p = walk_two(sa, sb);
  ASSERT_EQ(p.elements.size(), 3u);
  EXPECT_EQ(p.elements[1].kind, PathKind::kWaiting);
  EXPECT_EQ(p.elements[1].waiting_ns, 200);
  EXPECT_EQ(p.elements[1].rank, 0u);
  EXPECT_EQ(p.steps[0].waiting_ns, 200);
}

TEST(CriticalPath, AlignmentWithoutSkeletonIsSkipped) {
  HandRank a, b;
  two_ranks(a, b, false);
  const auto sa = a.skeleton();
  RankPathSkeleton none;
  const auto p = walk_two(sa, none);
  EXPECT_TRUE(p.steps.empty());
  EXPECT_EQ(p.alignments_skipped, 1u);
}

// Findings from made-up totals: `share` of `steps` walked steps on rank 1, others waited `wait_share`.
CriticalPaths totals(size_t ranks, double share, double wait_share, size_t steps) {
  CriticalPaths p;
  p.walked_ns = 1'000'000'000;
  for (uint32_t r = 0; r < ranks; ++r) {
    p.rank_ids.push_back(std::to_string(r));
    p.rank_ordinals.push_back(r);
    PathRankShare s;
    s.rank = r;
    s.steps_member = static_cast<uint32_t>(steps);
    s.path_ns = r == 1 ? static_cast<int64_t>(share * 1e9) : static_cast<int64_t>((1 - share) * 1e9 / static_cast<double>(ranks - 1));
    s.compute_ns = s.path_ns;
    s.share = static_cast<double>(s.path_ns) / 1e9;
    s.others_waited_ns = r == 1 ? static_cast<int64_t>(wait_share * 1e9) : 0;
    s.steps_on_path = static_cast<uint32_t>(steps);
    p.ranks.push_back(s);
  }
  for (size_t i = 0; i < steps; ++i) {
    PathStep st;
    st.alignment_id = "align_" + std::to_string(i);
    p.steps.push_back(st);
    PathElement e;
    e.step = static_cast<uint32_t>(i);
    e.rank = 1;
    e.end_ns = 10;
    e.evidence_id = "evt_1_" + std::to_string(i);
    p.elements.push_back(e);
  }
  return p;
}

TEST(CriticalPath, FindingNamesTheRankThePathRunsThrough) {
  const auto f = diagnose_critical_path(totals(4, 0.85, 0.3, 6), kb().diagnostics);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].finding_type, "critical_path_rank_bound");
  EXPECT_EQ(f[0].suspected_ranks, std::vector<std::string>{"1"});
  EXPECT_EQ(f[0].severity, "high");
  EXPECT_EQ(f[0].evidence_ids.size(), 6u);
  EXPECT_EQ(f[0].alignment_ids.size(), 6u);
  EXPECT_NEAR(f[0].magnitude_ms, 300.0, 1e-9);
  EXPECT_FALSE(f[0].claim_id.empty());
}

TEST(CriticalPath, NoFindingBelowTheThresholds) {
  const auto& r = kb().diagnostics;
  EXPECT_TRUE(diagnose_critical_path(totals(4, 0.35, 0.3, 6), r).empty());  // below min_rank_share
  EXPECT_TRUE(diagnose_critical_path(totals(2, 0.70, 0.3, 6), r).empty());  // two ranks: needs 0.75
  EXPECT_FALSE(diagnose_critical_path(totals(2, 0.80, 0.3, 6), r).empty());
  EXPECT_TRUE(diagnose_critical_path(totals(4, 0.85, 0.01, 6), r).empty());  // last by a hair: nobody waited
  EXPECT_TRUE(diagnose_critical_path(totals(4, 0.85, 0.3, 1), r).empty());   // one step is not a pattern
}

}  // namespace
}  // namespace ascprof::analysis

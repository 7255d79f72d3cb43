// Operator alignment (reference §2.7 time_bucket_v1) on hand-made candidates: bucket folding on the
// corrected clock, the join across ranks with exact metrics and confidence, and the findings of
// skewed alignments (late arrival vs slow finish, thresholds, folding into a known cause).
#include <gtest/gtest.h>

#include <tuple>

#include "ascprof/analysis/diagnose.hpp"
#include "ascprof/analysis/operator_align.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::analysis {
namespace {

const knowledge::Knowledge& kb() { return ascprof::testing::shipped_knowledge(); }

uint32_t role(const char* name) {
  const auto& roles = kb().operator_alignment.roles;
  for (uint32_t i = 0; i < roles.size(); ++i)
    if (roles[i].name == name) return i;
  ADD_FAILURE() << name;
  return 0;
}

// One candidate list per rank: (key index, start µs, duration µs); rows numbered in order.
struct Event {
  uint32_t key;
  double start_us, dur_us;
};
OperatorCandidates candidates(const std::vector<OperatorKey>& keys, const std::vector<Event>& events) {
  OperatorCandidates c;
  c.keys = keys;
  for (size_t i = 0; i < events.size(); ++i) {
    c.key.push_back(events[i].key);
    c.start_ns.push_back(static_cast<int64_t>(events[i].start_us * 1000));
    c.dur_ns.push_back(static_cast<int64_t>(events[i].dur_us * 1000));
    c.wait_ns.push_back(static_cast<int64_t>(i) * 1000);
    c.row.push_back(static_cast<uint32_t>(10 + i));
  }
  return c;
}

TEST(OperatorAlign, RolesFollowTheRuleFileOrder) {
  const auto& v = kb().vocab;
  auto set = [&v](std::initializer_list<const char*> names) {
    knowledge::CategorySet s;
    for (const char* n : names) s.set(static_cast<size_t>(v.category_index(n)));
    return s;
  };
  const auto& r = kb().operator_alignment;
  EXPECT_EQ(r.role_of(set({"communication.collective", "communication.allreduce"})), static_cast<int>(role("communication.collective")));
  EXPECT_EQ(r.role_of(set({"moe.dispatch_expert_compute", "moe.dispatch"})), static_cast<int>(role("moe.dispatch_expert_compute")));
  EXPECT_EQ(r.role_of(set({"moe.combine"})), static_cast<int>(role("moe.dispatch_or_combine")));
  EXPECT_EQ(r.role_of(set({"compute.matmul", "attention.mla"})), static_cast<int>(role("compute.matmul")));
  EXPECT_EQ(r.role_of(set({"attention.mla.preprocess"})), static_cast<int>(role("attention")));
  EXPECT_EQ(r.role_of(set({"compute.norm"})), -1);
  EXPECT_TRUE(r.roles[role("communication.collective")].raw_name_key);
  EXPECT_FALSE(r.roles[role("compute.matmul")].raw_name_key);
}

TEST(OperatorAlign, BucketsFoldPerKeyAndCorrectedMillisecond) {
  const std::vector<OperatorKey> keys = {{role("compute.matmul"), "compute.matmul", "shape_a"}};
  // starts 1000.5, 1000.9 (bucket 1), 1001.2 ms (bucket 2 after a 0.3 ms offset: 1001.5 - 0.3)
  const auto c = candidates(keys, {{0, 1000500, 10}, {0, 1000900, 30}, {0, 1001500, 20}});
  const auto b = operator_buckets(c, 300'000, kb().operator_alignment);  // clock 0.3 ms ahead
  ASSERT_TRUE(b.built);
  ASSERT_EQ(b.buckets.size(), 2u);
  EXPECT_EQ(b.buckets[0].bucket, 1000);
  EXPECT_EQ(b.buckets[0].count, 2u);
  EXPECT_EQ(b.buckets[0].start_min_ns, 1000200'000);
  EXPECT_EQ(b.buckets[0].start_max_ns, 1000600'000);
  EXPECT_EQ(b.buckets[0].end_max_ns, 1000630'000);
  EXPECT_EQ(b.buckets[0].dur_min_ns, 10'000);
  EXPECT_EQ(b.buckets[0].dur_max_ns, 30'000);
  EXPECT_EQ(b.buckets[0].wait_max_ns, 1'000);
  EXPECT_EQ(b.buckets[0].rows, (std::vector<uint32_t>{10, 11}));
  EXPECT_EQ(b.buckets[1].bucket, 1001);
  // a negative corrected time still floors (a rank whose clock is ahead of the reference)
  const auto n = operator_buckets(candidates(keys, {{0, 100, 1}}), 600'000, kb().operator_alignment);
  EXPECT_EQ(n.buckets[0].bucket, -1);
}

TEST(OperatorAlign, JoinsRanksWithExactMetricsAndConfidence) {
  const uint32_t mm = role("compute.matmul");
  const std::vector<OperatorKey> keys = {{mm, "compute.matmul", "shape_a"}, {mm, "compute.matmul", "shape_b"}};
  // ranks 0..3 run shape_a in ms 5 (rank 3's clock 40 ms ahead); shape_b only on rank 0 (no alignment)
  std::vector<RankOperatorBuckets> b;
  for (int r = 0; r < 4; ++r) {
    const double off = r == 3 ? 40000 : 0;
    auto c = candidates(keys, {{0, 5100 + off + 10.0 * r, 100 + 10.0 * r}, {1, 9000 + off, 50}});
    if (r > 0) c.key.pop_back(), c.start_ns.pop_back(), c.dur_ns.pop_back(), c.wait_ns.pop_back(), c.row.pop_back();
    b.push_back(operator_buckets(c, r == 3 ? 40'000'000 : 0, kb().operator_alignment));
  }
  RankOperatorBuckets unbuilt;  // a failed rank: skipped
  std::vector<const RankOperatorBuckets*> per_rank = {&b[0], &b[1], &unbuilt, &b[2], &b[3]};
  const auto al = align_operators(per_rank, kb().operator_alignment);
  ASSERT_EQ(al.alignments.size(), 1u);
  const auto& a = al.alignments[0];
  EXPECT_EQ(al.keys[a.key].shape, "shape_a");
  EXPECT_EQ(a.member_ranks, 4u);
  EXPECT_EQ(a.member_count, 4u);
  EXPECT_EQ(a.start_ns, 5100'000);
  EXPECT_EQ(a.start_skew_ns, 30'000);
  EXPECT_EQ(a.dur_min_ns, 100'000);
  EXPECT_EQ(a.dur_max_ns, 130'000);
  EXPECT_DOUBLE_EQ(a.duration_ratio, 1.3);
  EXPECT_EQ(a.longest_rank, 4u);   // position in per_rank
  EXPECT_EQ(a.shortest_rank, 0u);
  EXPECT_STREQ(confidence_name(a.confidence), "high");  // 4 members, ratio <= 1.5, skew <= 2 ms
  std::vector<uint32_t> ranks;
  for (uint32_t m = 0; m < a.member_ranks; ++m) ranks.push_back(al.members[a.first_member + m].rank);
  EXPECT_EQ(ranks, (std::vector<uint32_t>{0, 1, 3, 4}));
}

TEST(OperatorAlign, ConfidenceFallsWithRatioAndMembers) {
  const uint32_t mm = role("compute.matmul");
  const std::vector<OperatorKey> keys = {{mm, "compute.matmul", "no_shape"}};
  auto pair = [&](double d0, double d1) {
    std::vector<RankOperatorBuckets> b = {operator_buckets(candidates(keys, {{0, 5100, d0}}), 0, kb().operator_alignment),
                                          operator_buckets(candidates(keys, {{0, 5200, d1}}), 0, kb().operator_alignment)};
    const auto al = align_operators({&b[0], &b[1]}, kb().operator_alignment);
    EXPECT_EQ(al.alignments.size(), 1u);
    return std::string(confidence_name(al.alignments.at(0).confidence));
  };
  EXPECT_EQ(pair(100, 110), "medium");  // 2 members: never high
  EXPECT_EQ(pair(100, 300), "low");     // ratio 3 > 2.5
  EXPECT_EQ(pair(100, 600), "low");     // ratio 6 >= 5
}

// Collective alignments of 3 ranks, 6 calls: rank 2 leaves 2 ms after the others (slow finish), or
// arrives 0.8 ms after them while all leave together (late arrival).
struct Scene {
  std::vector<RankOperatorBuckets> b;
  std::vector<const RankOperatorBuckets*> per_rank;
  OperatorAlignments al;
};
Scene collectives(bool late_arrival) {
  const std::vector<OperatorKey> keys = {{role("communication.collective"), "hcom_allReduce_", "no_shape"}};
  Scene s;
  for (int r = 0; r < 3; ++r) {
    std::vector<Event> ev;
    for (int call = 0; call < 6; ++call) {
      const double t = 10000.0 * (call + 1);
      if (late_arrival) ev.push_back({0, t + (r == 2 ? 800.0 : 0.0), r == 2 ? 100.0 : 900.0});
      else ev.push_back({0, t, r == 2 ? 2500.0 : 500.0});
    }
    s.b.push_back(operator_buckets(candidates(keys, ev), 0, kb().operator_alignment));
  }
  for (const auto& x : s.b) s.per_rank.push_back(&x);
  s.al = align_operators(s.per_rank, kb().operator_alignment);
  return s;
}

TEST(OperatorFindings, SlowFinishNamesTheLastToLeave) {
  const Scene s = collectives(false);
  ASSERT_EQ(s.al.alignments.size(), 6u);
  std::vector<model::Finding> causes;
  const auto f = diagnose_operator_alignments(s.al, s.per_rank, {"0", "1", "7"}, {0, 1, 2}, kb(), causes);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].finding_type, "communication_collective_slow");
  EXPECT_EQ(f[0].suspected_ranks, std::vector<std::string>{"7"});
  EXPECT_EQ(f[0].rank_ids, (std::vector<std::string>{"0", "1", "7"}));
  EXPECT_EQ(f[0].severity, "high");  // ratio 5 >= 4
  EXPECT_EQ(f[0].alignment_ids.size(), 6u);
  EXPECT_NEAR(f[0].magnitude_ms, 6 * 2.0, 1e-9);
  EXPECT_NE(f[0].metrics_json.find("\"pattern\":\"slow_finish\""), std::string::npos);
  EXPECT_TRUE(finding_is_traceable(f[0]));
  EXPECT_EQ(f[0].evidence_ids.front().rfind("evt_", 0), 0u);
}

TEST(OperatorFindings, LateArrivalIsFoldedIntoAKnownSlowRank) {
  const Scene s = collectives(true);
  std::vector<model::Finding> none;
  const auto alone = diagnose_operator_alignments(s.al, s.per_rank, {"0", "1", "2"}, {0, 1, 2}, kb(), none);
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0].suspected_ranks, std::vector<std::string>{"2"});
  EXPECT_NE(alone[0].metrics_json.find("\"pattern\":\"late_arrival\""), std::string::npos);
  std::vector<model::Finding> causes = {new_finding("slow_rank_suspected", "cross_rank", "high", "medium", {"0", "1", "2"}, {"2"})};
  const auto folded = diagnose_operator_alignments(s.al, s.per_rank, {"0", "1", "2"}, {0, 1, 2}, kb(), causes);
  EXPECT_TRUE(folded.empty());
  EXPECT_EQ(causes[0].alignment_ids.size(), 6u);
  ASSERT_EQ(causes[0].limitations.size(), 1u);
  EXPECT_NE(causes[0].limitations[0].find("wait for 2"), std::string::npos);
}

TEST(OperatorFindings, JitterBelowTheGroupThresholdsIsNotAFinding) {
  // one skewed call in six (ratio 2, 0.05 ms): below min_share and min_excess_ms
  const std::vector<OperatorKey> keys = {{role("communication.collective"), "hcom_allGather_", "no_shape"}};
  std::vector<RankOperatorBuckets> b;
  for (int r = 0; r < 3; ++r) {
    std::vector<Event> ev;
    for (int call = 0; call < 6; ++call) ev.push_back({0, 10000.0 * (call + 1), (call == 0 && r == 1) ? 100.0 : 50.0});
    b.push_back(operator_buckets(candidates(keys, ev), 0, kb().operator_alignment));
  }
  const auto al = align_operators({&b[0], &b[1], &b[2]}, kb().operator_alignment);
  std::vector<model::Finding> causes;
  EXPECT_TRUE(diagnose_operator_alignments(al, {&b[0], &b[1], &b[2]}, {"0", "1", "2"}, {0, 1, 2}, kb(), causes).empty());
}

TEST(OperatorAlign, PackedBucketsRoundTripAndDamageIsRefused) {
  const std::vector<OperatorKey> keys = {{role("compute.matmul"), "compute.matmul", "shape_a"},
                                         {role("communication.collective"), "hcom_allReduce_\"x", "no_shape"}};
  // a negative corrected time, a long collective, several rows per bucket
  const auto b = operator_buckets(candidates(keys, {{0, 100, 5}, {0, 400, 7}, {1, 2500, 900000}, {0, 7000, 1}}),
                                  1'000'000, kb().operator_alignment);
  const std::string bytes = pack_buckets(b);
  RankOperatorBuckets back;
  ASSERT_TRUE(unpack_buckets(bytes, &back));
  ASSERT_EQ(back.keys.size(), b.keys.size());
  EXPECT_EQ(back.keys[1].name_key, b.keys[1].name_key);
  ASSERT_EQ(back.buckets.size(), b.buckets.size());
  for (size_t i = 0; i < b.buckets.size(); ++i) {
    const auto &x = b.buckets[i], &y = back.buckets[i];
    EXPECT_EQ(std::tie(x.key, x.bucket, x.count, x.start_min_ns, x.start_max_ns, x.end_max_ns, x.dur_min_ns, x.dur_max_ns,
                       x.wait_max_ns, x.rows),
              std::tie(y.key, y.bucket, y.count, y.start_min_ns, y.start_max_ns, y.end_max_ns, y.dur_min_ns, y.dur_max_ns,
                       y.wait_max_ns, y.rows));
  }
  EXPECT_TRUE(back.built);
  for (size_t cut = 0; cut < bytes.size(); ++cut) {  // every truncation is refused, never read past the end
    RankOperatorBuckets t;
    EXPECT_FALSE(unpack_buckets(std::string_view(bytes).substr(0, cut), &t)) << cut;
  }
  EXPECT_FALSE(unpack_buckets(bytes + "x", &back));
}

TEST(OperatorAlignRules, BadRoleCategoryNamesFileAndLine) {
  auto file = knowledge::parse_rule_text("[bucket]\nwidth_us = 1000\n[role x]\ncategories = no.such\nname_key = role\n",
                                         "op.rules");
  ASSERT_TRUE(file.ok());
  knowledge::OperatorAlignmentRules r;
  const Status st = r.load(*file, kb().vocab);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("op.rules:line 4"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("no.such"), std::string::npos);
}

TEST(OperatorAlignRules, LateArrivalCausesComeFromTheRuleFile) {
  EXPECT_EQ(kb().operator_alignment.late_arrival_causes.front(), "slow_rank_suspected");
  auto file = knowledge::parse_rule_text(
      "[bucket]\nwidth_us = 1000\n[confidence]\nlow_min_duration_ratio = 5\nlow_min_start_skew_us = 20000\n"
      "high_min_members = 4\nhigh_max_duration_ratio = 1.5\nhigh_max_start_skew_us = 2000\n"
      "medium_max_duration_ratio = 2.5\nmedium_max_start_skew_us = 10000\n[evidence]\nmax_rows_per_rank = 8\n"
      "max_event_ids_per_row = 64\n[role attention]\ncategories = attention\nname_key = role\n",
      "op.rules");
  ASSERT_TRUE(file.ok());
  knowledge::OperatorAlignmentRules r;
  const Status st = r.load(*file, kb().vocab);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("missing key 'late_arrival' in [causes]"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace ascprof::analysis

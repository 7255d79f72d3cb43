// Operator alignment (reference §2.7 time_bucket_v1) on hand-made candidates: bucket folding on the
// corrected clock, the join across ranks with exact metrics and confidence, and the findings of
// skewed alignments (late arrival vs slow finish, thresholds, folding into a known cause).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
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
  const auto rows = b.rows_of(b.buckets[0]);
  EXPECT_EQ(std::vector<uint32_t>(rows.begin(), rows.end()), (std::vector<uint32_t>{10, 11}));
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
  for (uint32_t r = 0; r < a.range_count; ++r)
    for (uint32_t x = al.ranges[a.first_range + r].first; x < al.ranges[a.first_range + r].end; ++x) ranks.push_back(x);
  EXPECT_EQ(ranks, (std::vector<uint32_t>{0, 1, 3, 4}));
  EXPECT_EQ(a.range_count, 2u);  // runs [0, 2) and [3, 5)
  EXPECT_EQ(al.ranks, 4u);       // the unbuilt rank is not counted
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
  const auto f = diagnose_operator_alignments(s.al, {"0", "1", "7"}, {0, 1, 2}, kb(), causes);
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
  const auto alone = diagnose_operator_alignments(s.al, {"0", "1", "2"}, {0, 1, 2}, kb(), none);
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0].suspected_ranks, std::vector<std::string>{"2"});
  EXPECT_NE(alone[0].metrics_json.find("\"pattern\":\"late_arrival\""), std::string::npos);
  std::vector<model::Finding> causes = {new_finding("slow_rank_suspected", "cross_rank", "high", "medium", {"0", "1", "2"}, {"2"})};
  const auto folded = diagnose_operator_alignments(s.al, {"0", "1", "2"}, {0, 1, 2}, kb(), causes);
  EXPECT_TRUE(folded.empty());
  EXPECT_EQ(causes[0].alignment_ids.size(), 6u);
  ASSERT_EQ(causes[0].limitations.size(), 1u);
  EXPECT_NE(causes[0].limitations[0].find("wait for 2"), std::string::npos);
}

// Ranks late together (the NPUs of a slow node): `slow` ranks take turns at arriving last at each of
// 40 collectives among `ranks`, so each is the last in 1/slow of them, under min_share alone.
std::vector<model::Finding> late_in_turn(int ranks, const std::vector<int>& slow) {
  const std::vector<OperatorKey> keys = {{role("communication.collective"), "hcom_allReduce_", "no_shape"}};
  std::vector<RankOperatorBuckets> b;
  std::vector<std::string> ids;
  std::vector<uint32_t> ordinals;
  for (int r = 0; r < ranks; ++r) {
    std::vector<Event> ev;
    const auto at = std::find(slow.begin(), slow.end(), r);
    for (int call = 0; call < 40; ++call) {
      const double t = 10000.0 * (call + 1);
      if (at == slow.end()) ev.push_back({0, t, 900.0});
      else if (at - slow.begin() == call % static_cast<int>(slow.size())) ev.push_back({0, t + 800.0, 100.0});  // last
      else ev.push_back({0, t + 600.0, 300.0});
    }
    b.push_back(operator_buckets(candidates(keys, ev), 0, kb().operator_alignment));
    ids.push_back(std::to_string(r));
    ordinals.push_back(static_cast<uint32_t>(r));
  }
  std::vector<const RankOperatorBuckets*> per_rank;
  for (const auto& x : b) per_rank.push_back(&x);
  const auto al = align_operators(per_rank, kb().operator_alignment);
  EXPECT_EQ(al.alignments.size(), 40u);
  std::vector<model::Finding> causes;
  return diagnose_operator_alignments(al, ids, ordinals, kb(), causes);
}

TEST(OperatorFindings, RanksLateTogetherAreNamedAsCoSuspects) {
  const auto found = late_in_turn(32, {3, 11, 19, 27});  // each last in 25 % < min_share 0.3
  std::vector<std::string> named;
  for (const auto& f : found) {
    ASSERT_EQ(f.suspected_ranks.size(), 1u);
    named.push_back(f.suspected_ranks[0]);
    EXPECT_NE(f.metrics_json.find("\"share_of_rank_alignments\":0.25"), std::string::npos) << f.metrics_json;
    EXPECT_NE(f.limitations.back().find("one of 4 ranks last together (3,11,19,27)"), std::string::npos)
        << f.limitations.back();
    EXPECT_TRUE(finding_is_traceable(f));
  }
  std::sort(named.begin(), named.end());
  EXPECT_EQ(named, (std::vector<std::string>{"11", "19", "27", "3"}));
  // more ranks late in turn than max_co_suspects (8): lateness spread, nobody named
  EXPECT_TRUE(late_in_turn(32, {0, 4, 8, 12, 16, 20, 24, 28, 30}).empty());
  // every rank of a small root last in turn: no more often than chance, nobody named
  EXPECT_TRUE(late_in_turn(4, {0, 1, 2, 3}).empty());
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
  EXPECT_TRUE(diagnose_operator_alignments(al, {"0", "1", "2"}, {0, 1, 2}, kb(), causes).empty());
}

// The join written the direct way (every member of every bucket, in rank order), as the
// coordinator did before the reduction tree: what any partition and order of merges must equal.
struct Expected {
  std::vector<uint32_t> ranks;
  uint64_t count = 0;
  int64_t start_min = INT64_MAX, start_max = INT64_MIN, end_min = INT64_MAX, end_max = INT64_MIN;
  int64_t dur_min = INT64_MAX, dur_max = INT64_MIN, wait_max = 0;
  int64_t raw_start_min = INT64_MAX, raw_start_max = INT64_MIN, raw_end = INT64_MIN;
  uint32_t latest_start = 0, latest_end = 0, longest = 0, shortest = 0;
  std::vector<std::pair<uint32_t, uint32_t>> events;  // (rank, row) in output order
  std::map<uint32_t, std::vector<uint32_t>> rows;     // every member's rows
};
std::map<std::tuple<uint32_t, std::string, std::string, int64_t>, Expected> direct_join(
    const std::vector<RankOperatorBuckets>& per_rank, const std::vector<int64_t>& offsets,
    const knowledge::OperatorAlignmentRules& rules) {
  std::map<std::tuple<uint32_t, std::string, std::string, int64_t>, Expected> out;
  for (uint32_t r = 0; r < per_rank.size(); ++r)
    for (const auto& b : per_rank[r].buckets) {
      const auto& k = per_rank[r].keys[b.key];
      Expected& e = out[{k.role, k.name_key, k.shape, b.bucket}];
      e.ranks.push_back(r);
      e.count += b.count;
      e.start_min = std::min(e.start_min, b.start_min_ns);
      if (b.start_max_ns > e.start_max) e.start_max = b.start_max_ns, e.latest_start = r;
      e.end_min = std::min(e.end_min, b.end_max_ns);
      if (b.end_max_ns > e.end_max) e.end_max = b.end_max_ns, e.latest_end = r;
      if (b.dur_min_ns < e.dur_min) e.dur_min = b.dur_min_ns, e.shortest = r;
      if (b.dur_max_ns > e.dur_max) e.dur_max = b.dur_max_ns, e.longest = r;
      e.wait_max = std::max(e.wait_max, b.wait_max_ns);
      e.raw_start_min = std::min(e.raw_start_min, b.start_min_ns + offsets[r]);
      e.raw_start_max = std::max(e.raw_start_max, b.start_max_ns + offsets[r]);
      e.raw_end = std::max(e.raw_end, b.end_max_ns + offsets[r]);
      e.rows[r].assign(per_rank[r].rows_of(b).begin(), per_rank[r].rows_of(b).end());
    }
  for (auto& [key, e] : out) {
    if (e.count <= rules.max_event_ids_per_row) {
      for (const uint32_t r : e.ranks)
        for (const uint32_t row : e.rows[r]) e.events.push_back({r, row});
    } else {
      for (size_t depth = 0; e.events.size() < rules.max_event_ids_per_row; ++depth) {
        bool any = false;
        for (const uint32_t r : e.ranks) {
          if (e.events.size() >= rules.max_event_ids_per_row || depth >= e.rows[r].size()) continue;
          e.events.push_back({r, e.rows[r][depth]});
          any = true;
        }
        if (!any) break;
      }
    }
  }
  return out;
}

TEST(OperatorAlign, AnyPartitionAndOrderOfMergesEqualsTheDirectJoin) {
  // 37 ranks, 3 keys, calls whose jittered starts straddle bucket edges (so ranks fall into
  // scattered subsets of a bucket), several calls per bucket on some ranks, clock offsets;
  // small evidence caps so the event lists are cut and tie on depth.
  auto rules = kb().operator_alignment;
  rules.max_rows_per_rank = 2;
  rules.max_event_ids_per_row = 5;
  const uint32_t mm = role("compute.matmul"), cc = role("communication.collective");
  const std::vector<OperatorKey> keys = {{mm, "compute.matmul", "a"}, {mm, "compute.matmul", "b"}, {cc, "hcom_x", "no_shape"}};
  std::mt19937_64 rng(7);
  const uint32_t n = 37;
  std::vector<RankOperatorBuckets> per_rank;
  std::vector<int64_t> offsets;
  for (uint32_t r = 0; r < n; ++r) {
    std::vector<Event> ev;
    for (int call = 0; call < 40; ++call) {
      const uint32_t key = static_cast<uint32_t>(rng() % 3);
      if (r % 5 == 3 && key == 1) continue;  // a key some ranks never run
      if (key == 2 && r % 9 != 0) continue;  // one only a few run: its event lists fit the cap
      const double start = 1000.0 * (call / 2) + 900.0 + static_cast<double>(rng() % 300);  // ms edge at +1000
      ev.push_back({key, start, 10.0 + static_cast<double>(rng() % 50)});
    }
    offsets.push_back(static_cast<int64_t>(rng() % 5000) * 1000 - 2'500'000);
    auto c = candidates(keys, ev);
    for (auto& s : c.start_ns) s += offsets.back();  // the rank's own clock; the fold subtracts it
    per_rank.push_back(operator_buckets(c, offsets.back(), rules));
  }
  const auto expected = direct_join(per_rank, offsets, rules);
  size_t expected_alignments = 0, cut_lists = 0;
  for (const auto& [k, e] : expected) {
    expected_alignments += e.ranks.size() >= 2 ? 1 : 0;
    cut_lists += (e.ranks.size() >= 2 && e.count > rules.max_event_ids_per_row) ? 1 : 0;
  }
  ASSERT_GT(cut_lists, 3u);  // the scene exercises both event orders
  ASSERT_GT(expected_alignments, cut_lists + 3);  // and lists that fit

  for (int trial = 0; trial < 24; ++trial) {
    // ranks dealt to 1..6 "processes" at random, each folding its ranks in a random order, the
    // processes' merges then merged in a random order
    const size_t parts = 1 + rng() % 6;
    std::vector<std::vector<uint32_t>> part(parts);
    for (uint32_t r = 0; r < n; ++r) part[rng() % parts].push_back(r);
    std::vector<OperatorBucketMerge> merges(parts);
    for (size_t p = 0; p < parts; ++p) {
      for (size_t i = part[p].size(); i > 1; --i) std::swap(part[p][i - 1], part[p][rng() % i]);
      for (const uint32_t r : part[p]) fold_rank_buckets(merges[p], r, per_rank[r], offsets[r], rules);
    }
    for (size_t i = parts; i > 1; --i) std::swap(merges[i - 1], merges[rng() % i]);
    OperatorBucketMerge all = std::move(merges[0]);
    for (size_t p = 1; p < parts; ++p) merge_bucket_merges(all, std::move(merges[p]), rules);
    const OperatorAlignments al = finish_alignments(std::move(all), rules);
    EXPECT_EQ(al.ranks, n);
    ASSERT_EQ(al.alignments.size(), expected_alignments) << "trial " << trial;
    for (const auto& a : al.alignments) {
      const auto& k = al.keys[a.key];
      const auto it = expected.find({k.role, k.name_key, k.shape, a.bucket});
      ASSERT_NE(it, expected.end());
      const Expected& e = it->second;
      std::vector<uint32_t> ranks;
      for (uint32_t r = 0; r < a.range_count; ++r)
        for (uint32_t x = al.ranges[a.first_range + r].first; x < al.ranges[a.first_range + r].end; ++x) ranks.push_back(x);
      EXPECT_EQ(ranks, e.ranks);
      EXPECT_EQ(a.member_ranks, e.ranks.size());
      EXPECT_EQ(std::tie(a.member_count, a.start_ns, a.end_ns, a.dur_min_ns, a.dur_max_ns, a.wait_max_ns),
                std::tie(e.count, e.start_min, e.end_max, e.dur_min, e.dur_max, e.wait_max));
      EXPECT_EQ(a.start_skew_ns, e.start_max - e.start_min);
      EXPECT_EQ(a.end_skew_ns, e.end_max - e.end_min);
      EXPECT_EQ(std::tie(a.raw_start_min_ns, a.raw_start_max_ns, a.raw_end_ns),
                std::tie(e.raw_start_min, e.raw_start_max, e.raw_end));
      EXPECT_EQ(std::tie(a.latest_start_rank, a.latest_end_rank, a.longest_rank, a.shortest_rank),
                std::tie(e.latest_start, e.latest_end, e.longest, e.shortest));
      std::vector<std::pair<uint32_t, uint32_t>> events;
      for (uint32_t i = 0; i < a.event_count; ++i) events.push_back({al.events[a.first_event + i].rank, al.events[a.first_event + i].row});
      EXPECT_EQ(events, e.events) << "trial " << trial;
      for (const uint32_t r : {e.latest_start, e.latest_end, e.longest, e.shortest})
        EXPECT_EQ(std::vector<uint32_t>(al.outlier_rows(a, r).begin(), al.outlier_rows(a, r).end()), e.rows.at(r));
      EXPECT_TRUE(al.outlier_rows(a, n + 5).empty());
    }
  }
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
      "max_event_ids_per_row = 64\nmax_rank_ids_per_row = 256\n[role attention]\ncategories = attention\nname_key = role\n",
      "op.rules");
  ASSERT_TRUE(file.ok());
  knowledge::OperatorAlignmentRules r;
  const Status st = r.load(*file, kb().vocab);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("missing key 'late_arrival' in [causes]"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace ascprof::analysis

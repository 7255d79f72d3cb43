// Findings from skewed operator alignments (reference-analysis.md §2.8, the three alignment rows).
#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "ascprof/analysis/diagnose.hpp"
#include "ascprof/common/join.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/common/stable_id.hpp"
#include "ascprof/model/finding.hpp"

namespace ascprof::analysis {

namespace {

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

std::string fmt(const char* f, double a, double b = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

struct Hit {
  size_t alignment;  // index into OperatorAlignments::alignments
  double excess_ns;  // what the trigger measured: duration max - min, or start skew
  double ratio;
};

using HitGroups = std::map<std::tuple<uint32_t, uint32_t, bool>, std::vector<Hit>>;  // (role, rank, late)

// The ranks of one role and pattern that are the last together: those with at least
// co_suspect_min_ratio x the top rank's skewed alignments, when they are two to max_co_suspects
// (one is the single-rank rule's case; more is lateness spread over many ranks). In rank order;
// `hits` is their sum.
struct CoSuspects {
  std::vector<uint32_t> ranks;
  uint64_t hits = 0;
};

std::map<std::pair<uint32_t, bool>, CoSuspects> find_co_suspects(const HitGroups& groups,
                                                                 const knowledge::DiagnosticsRules& d) {
  std::map<std::pair<uint32_t, bool>, std::vector<std::pair<uint64_t, uint32_t>>> by_pattern;  // -> (hits, rank)
  for (const auto& [gk, hits] : groups)
    by_pattern[{std::get<0>(gk), std::get<2>(gk)}].emplace_back(hits.size(), std::get<1>(gk));
  std::map<std::pair<uint32_t, bool>, CoSuspects> out;
  for (auto& [pattern, ranks] : by_pattern) {
    uint64_t top = 0;
    for (const auto& [h, r] : ranks) top = std::max(top, h);
    CoSuspects co;
    for (const auto& [h, r] : ranks)
      if (static_cast<double>(h) >= d.align_co_suspect_min_ratio * static_cast<double>(top)) {
        co.ranks.push_back(r);
        co.hits += h;
      }
    if (co.ranks.size() < 2 || co.ranks.size() > d.align_max_co_suspects) continue;
    std::sort(co.ranks.begin(), co.ranks.end());
    out.emplace(pattern, std::move(co));
  }
  return out;
}

}  // namespace

std::string operator_alignment_id(const OperatorAlignments& al, const OperatorAlignment& a,
                                  const knowledge::OperatorAlignmentRules& rules) {
  const auto& k = al.keys[a.key];
  const std::string role = k.role < rules.roles.size() ? rules.roles[k.role].name : std::to_string(k.role);
  return stable_id("align", {"operator", role, k.name_key, k.shape, std::to_string(a.bucket)});
}

std::vector<model::Finding> diagnose_operator_alignments(const OperatorAlignments& al,
                                                         const std::vector<std::string>& rank_ids,
                                                         const std::vector<uint32_t>& rank_ordinals,
                                                         const knowledge::Knowledge& kb,
                                                         std::vector<model::Finding>& causes) {
  const auto& d = kb.diagnostics;
  const auto& rules = kb.operator_alignment;
  // (role, suspected rank position, late arrival?) -> hits; alignments per role for the share
  HitGroups groups;
  // (role, rank) -> alignments it is in: per role, +1 at each member run's start and -1 past its end
  // (the members are runs of positions, so this costs the runs, not alignments x ranks)
  std::vector<std::vector<int64_t>> member_runs(rules.roles.size());
  std::vector<uint64_t> role_alignments(rules.roles.size(), 0);
  for (size_t i = 0; i < al.alignments.size(); ++i) {
    const auto& a = al.alignments[i];
    const auto& key = al.keys[a.key];
    if (key.role >= rules.roles.size() || rules.roles[key.role].finding.empty()) continue;
    const auto& role = rules.roles[key.role];
    ++role_alignments[key.role];
    auto& runs = member_runs[key.role];
    for (uint32_t r = 0; r < a.range_count; ++r) {
      const RankRange& range = al.ranges[a.first_range + r];
      if (runs.size() <= range.end) runs.resize(range.end + 1, 0);
      ++runs[range.first];
      --runs[range.end];
    }
    if (role.start_skew_trigger) {
      if (us(a.start_skew_ns) < d.cross_rank_skew_us) continue;
      groups[{key.role, a.latest_start_rank, true}].push_back({i, static_cast<double>(a.start_skew_ns), a.duration_ratio});
      continue;
    }
    const int64_t spread = a.dur_max_ns - a.dur_min_ns;
    if (a.duration_ratio < d.cross_rank_skew_ratio && us(spread) < d.cross_rank_skew_us) continue;
    // arrived apart but left together: the last to arrive kept the others waiting
    const bool late_arrival = a.start_skew_ns > a.end_skew_ns;
    groups[{key.role, late_arrival ? a.latest_start_rank : a.latest_end_rank, late_arrival}].push_back(
        {i, static_cast<double>(spread), a.duration_ratio});
  }
  for (auto& runs : member_runs)
    for (size_t r = 1; r < runs.size(); ++r) runs[r] += runs[r - 1];  // now: alignments per rank
  auto member_of = [&member_runs](uint32_t role, uint32_t rank) -> uint64_t {
    const auto& counts = member_runs[role];
    return rank < counts.size() ? static_cast<uint64_t>(counts[rank]) : 0;
  };
  // Mean members per alignment of each role: a rank is the last by chance in one over it.
  std::vector<double> mean_members(rules.roles.size(), 1.0);
  for (size_t r = 0; r < rules.roles.size(); ++r) {
    uint64_t memberships = 0;
    for (const int64_t c : member_runs[r]) memberships += static_cast<uint64_t>(std::max<int64_t>(0, c));
    if (role_alignments[r] > 0) mean_members[r] = static_cast<double>(memberships) / static_cast<double>(role_alignments[r]);
  }
  const auto co_suspects = find_co_suspects(groups, d);
  std::vector<model::Finding> out;
  for (auto& [gk, hits] : groups) {
    const auto& [role_index, suspect, late] = gk;
    const auto& role = rules.roles[role_index];
    // Beyond the reference (which reports every skewed alignment, jitter included): a rank is named
    // only when it stands out in a real share of the role's alignments it takes part in, with real
    // time at stake, alone or as one of a few ranks late together (co-suspects, diagnostics.rules).
    double group_excess_ns = 0;
    for (const auto& h : hits) group_excess_ns += h.excess_ns;
    const double member_alignments = static_cast<double>(std::max<uint64_t>(1, member_of(role_index, suspect)));
    const double share = static_cast<double>(hits.size()) / member_alignments;
    // its co-suspect group, when the group is late in min_share of its alignments and it is late more
    // often than chance (diagnostics.rules [alignment_findings])
    const CoSuspects* co = nullptr;
    if (const auto it = co_suspects.find({role_index, late}); it != co_suspects.end()) {
      const CoSuspects& g = it->second;
      if (std::binary_search(g.ranks.begin(), g.ranks.end(), suspect) &&
          static_cast<double>(g.hits) / member_alignments >= d.align_finding_min_share &&
          share * mean_members[role_index] >= d.align_co_suspect_over_chance)
        co = &g;
    }
    if ((share < d.align_finding_min_share && co == nullptr) || group_excess_ns / 1e6 < d.align_finding_min_excess_ms)
      continue;
    std::stable_sort(hits.begin(), hits.end(), [](const Hit& x, const Hit& y) { return x.excess_ns > y.excess_ns; });
    double excess = 0, worst_ratio = 0;
    std::vector<RankRange> runs;  // the member runs of every hit, then their union
    std::map<std::string, uint64_t> names;  // name key -> skewed alignments
    for (const auto& h : hits) {
      const auto& a = al.alignments[h.alignment];
      excess += h.excess_ns;
      worst_ratio = std::max(worst_ratio, h.ratio);
      runs.insert(runs.end(), al.ranges.begin() + a.first_range, al.ranges.begin() + a.first_range + a.range_count);
      ++names[al.keys[a.key].name_key];
    }
    std::sort(runs.begin(), runs.end(), [](const RankRange& x, const RankRange& y) { return x.first < y.first; });
    std::vector<std::string> ids;
    uint32_t next = 0;  // positions below it are listed
    for (const RankRange& run : runs) {
      for (uint32_t r = std::max(next, run.first); r < run.end; ++r) ids.push_back(rank_ids[r]);
      next = std::max(next, run.end);
    }
    const std::string& who = rank_ids[suspect];
    if (late) {  // the others wait for `who`: a consequence when a cause already names it
      auto cause = causes.end();
      for (const std::string& type : rules.late_arrival_causes) {  // knowledge/operator_alignment.rules [causes]
        cause = std::find_if(causes.begin(), causes.end(), [&who, &type](const model::Finding& c) {
          return c.finding_type == type && c.suspected_ranks == std::vector<std::string>{who};
        });
        if (cause != causes.end()) break;
      }
      if (cause != causes.end()) {
        for (const auto& h : hits) {
          if (cause->alignment_ids.size() >= d.max_evidence_ids) break;
          cause->alignment_ids.push_back(operator_alignment_id(al, al.alignments[h.alignment], rules));
        }
        cause->limitations.push_back("consistent with it: in " + std::to_string(hits.size()) + " aligned " + role.name +
                                     " time buckets the other ranks wait for " + who);
        set_claim_id(*cause);
        continue;
      }
    }
    const bool high = !role.start_skew_trigger && worst_ratio >= d.high_skew_ratio;
    model::Finding f = new_finding(role.finding, "cross_rank", high ? "high" : "medium", "medium", ids, {who});
    const auto& worst = al.alignments[hits.front().alignment];
    const std::string& worst_name = al.keys[worst.key].name_key;
    const std::string what = role.raw_name_key ? role.name + " kernels (worst: " + worst_name + ")" : role.name + " kernels";
    if (role.start_skew_trigger) {
      f.summary = what + ": " + who + " starts last in " + std::to_string(hits.size()) + " aligned time buckets" +
                  fmt(" (start skew up to %.3f ms across %.0f ranks)", us(worst.start_skew_ns) / 1000.0,
                      static_cast<double>(ids.size()));
    } else if (late) {
      f.summary = what + ": in " + std::to_string(hits.size()) + " aligned calls the others wait for " + who +
                  fmt(", which arrives last (durations differ up to %.2fx, %.3f ms)", worst_ratio,
                      us(worst.dur_max_ns - worst.dur_min_ns) / 1000.0);
    } else {
      f.summary = what + ": in " + std::to_string(hits.size()) + " aligned calls " + who +
                  fmt(" finishes last (durations differ up to %.2fx, %.3f ms)", worst_ratio,
                      us(worst.dur_max_ns - worst.dur_min_ns) / 1000.0);
    }
    // the worst alignments first, with the suspect's and the fastest member's rows as evidence
    for (const auto& h : hits) {
      if (f.alignment_ids.size() >= d.max_evidence_ids) break;
      const auto& a = al.alignments[h.alignment];
      f.alignment_ids.push_back(operator_alignment_id(al, a, rules));
      // the suspect's, the shortest's and the longest's rows, in rank order
      uint32_t named[3] = {suspect, a.shortest_rank, a.longest_rank};
      std::sort(std::begin(named), std::end(named));
      for (int n = 0; n < 3 && f.evidence_ids.size() < d.max_evidence_ids; ++n) {
        if (n > 0 && named[n] == named[n - 1]) continue;
        for (const uint32_t row : al.outlier_rows(a, named[n])) {
          if (f.evidence_ids.size() >= d.max_evidence_ids) break;
          f.evidence_ids.push_back(model::event_id(rank_ordinals[named[n]], row));
        }
      }
    }
    if (hits.size() > f.alignment_ids.size())
      f.limitations.push_back("lists the " + std::to_string(f.alignment_ids.size()) + " worst of " +
                              std::to_string(hits.size()) + " alignments (all are in cross_rank_alignment.csv)");
    if (!role.start_skew_trigger)
      f.limitations.push_back("a kernel's duration includes the time it waits for its peers; the pattern (" +
                              std::string(late ? "late_arrival" : "slow_finish") +
                              ") compares when members started and ended on clock-corrected times");
    f.limitations.push_back("alignment: time_bucket_v1 on clock-corrected starts (" + fmt("%.0f", rules.bucket_us) +
                            " us buckets)");
    if (co != nullptr) {
      std::vector<std::string> together;
      for (const uint32_t r : co->ranks) together.push_back(rank_ids[r]);
      f.limitations.push_back("one of " + std::to_string(co->ranks.size()) + " ranks last together (" +
                              join(together, ',') + fmt("): they are the last in %.0f %% of the alignments ",
                                                        100.0 * static_cast<double>(co->hits) / member_alignments) +
                              who + " takes part in, " + who + fmt(" alone in %.0f %%", 100.0 * share));
    }
    JsonWriter w;
    w.begin_object();
    w.kv("role", role.name);
    w.kv("share_of_rank_alignments", share);
    w.kv("pattern", role.start_skew_trigger ? "start_skew" : (late ? "late_arrival" : "slow_finish"));
    w.kv("alignment_count", static_cast<uint64_t>(hits.size()));
    w.kv("worst_duration_ratio", worst.duration_ratio);
    w.kv("worst_duration_skew_us", us(worst.dur_max_ns - worst.dur_min_ns));
    w.kv("worst_start_skew_us", us(worst.start_skew_ns));
    w.kv("excess_ms", excess / 1e6);
    w.key("name_keys");  // the most skewed names first (at most 16)
    std::vector<std::pair<uint64_t, std::string>> by_count;
    for (const auto& [n, c] : names) by_count.push_back({c, n});
    std::stable_sort(by_count.begin(), by_count.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    w.begin_object();
    for (size_t i = 0; i < by_count.size() && i < 16; ++i) w.kv(by_count[i].second, by_count[i].first);
    w.end_object();
    w.end_object();
    f.metrics_json = w.take();
    f.magnitude_ms = excess / 1e6;
    set_claim_id(f);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace ascprof::analysis

// slow_rank_suspected from communication.json (the msprof-analyze method, peers.md §1).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>

#include "ascprof/analysis/diagnose.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/common/stable_id.hpp"

namespace ascprof::analysis {

std::vector<CollectiveTime> collective_times(const model::CommStatTable& comm, uint32_t head, uint32_t stride) {
  std::vector<size_t> order;
  for (size_t i = 0; i < comm.size(); ++i)
    if (!comm.is_p2p[i] && !comm.is_total[i] && std::isfinite(comm.elapse_ms[i])) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&comm](size_t a, size_t b) { return comm.start_ns[a] < comm.start_ns[b]; });
  std::map<uint64_t, uint32_t> next_seq;
  std::vector<CollectiveTime> out;
  for (const size_t i : order) {
    const uint32_t seq = next_seq[comm.group_hash[i]]++;
    if (seq >= head && (stride == 0 || seq % stride != 0)) continue;
    const double transit = i < comm.transit_ms.size() ? comm.transit_ms[i] : std::nan("");
    out.push_back({comm.group_hash[i], seq, comm.elapse_ms[i], transit});
  }
  return out;
}

namespace {

using Members = std::map<std::pair<uint64_t, uint32_t>, std::vector<std::pair<double, size_t>>>;

struct Votes {
  std::vector<uint32_t> votes, tested;
  std::vector<double> excess;  // |median - outlier| summed over the voted collectives
};

// One vote per collective for its extreme member (the lowest when `low`, else the highest) when that
// value is an outlier: Dixon's Q (r10) for up to len(dixon_q_critical) + 2 members, else sigma x sd.
Votes vote(Members& members, size_t ranks, bool low, const knowledge::DiagnosticsRules& rules) {
  Votes v{std::vector<uint32_t>(ranks, 0), std::vector<uint32_t>(ranks, 0), std::vector<double>(ranks, 0)};
  for (auto& [key, list] : members) {
    const size_t n = list.size();
    if (n < 3) continue;
    for (const auto& m : list) ++v.tested[m.second];
    std::sort(list.begin(), list.end());
    if (!low) std::reverse(list.begin(), list.end());
    const double x1 = list[0].first, x2 = list[1].first, xn = list[n - 1].first;
    bool outlier = false;
    if (n - 3 < rules.dixon_q_critical.size()) {
      outlier = xn != x1 && (x2 - x1) / (xn - x1) > rules.dixon_q_critical[n - 3];
    } else {
      double mean = 0;
      for (const auto& m : list) mean += m.first;
      mean /= static_cast<double>(n);
      double var = 0;
      for (const auto& m : list) var += (m.first - mean) * (m.first - mean);
      const double sd = std::sqrt(var / static_cast<double>(n));
      outlier = sd > 0 && std::abs(x1 - mean) > rules.slow_rank_sigma * sd;
    }
    if (!outlier) continue;
    ++v.votes[list[0].second];
    v.excess[list[0].second] += std::abs(list[n / 2].first - x1);
  }
  return v;
}

bool enough(const Votes& v, size_t r, const knowledge::DiagnosticsRules& rules) {
  return v.votes[r] >= rules.slow_rank_min_votes && v.tested[r] > 0 &&
         static_cast<double>(v.votes[r]) / static_cast<double>(v.tested[r]) >= rules.slow_rank_min_vote_share;
}

}  // namespace

std::vector<model::Finding> diagnose_slow_ranks(const std::vector<std::string>& rank_ids,
                                               const std::vector<std::vector<CollectiveTime>>& times,
                                               const knowledge::Knowledge& kb) {
  const auto& rules = kb.diagnostics;
  Members members;  // (communicator, seq) -> (elapse, rank)
  for (size_t r = 0; r < times.size() && r < rank_ids.size(); ++r)
    for (const auto& t : times[r]) members[{t.group_hash, t.seq}].emplace_back(t.elapse_ms, r);
  const Votes v = vote(members, rank_ids.size(), /*low=*/true, rules);
  const auto& votes = v.votes;
  const auto& tested = v.tested;
  const auto& waited = v.excess;
  std::vector<size_t> candidates;
  for (size_t r = 0; r < rank_ids.size(); ++r)
    if (enough(v, r, rules)) candidates.push_back(r);
  // A rank that waits for another candidate in most collectives they share (including 2-member
  // ones the vote cannot test, e.g. its TP peer) is late because of it: a victim, not a cause.
  std::vector<std::string> waits_for(rank_ids.size());
  for (const size_t a : candidates)
    for (const size_t b : candidates) {
      if (a == b) continue;
      uint32_t shared = 0, a_waits = 0;
      for (const auto& [key, list] : members) {
        double ta = -1, tb = -1;
        for (const auto& m : list) {
          if (m.second == a) ta = m.first;
          if (m.second == b) tb = m.first;
        }
        if (ta < 0 || tb < 0) continue;
        ++shared;
        if (ta > tb) ++a_waits;
      }
      if (shared > 0 && 2 * a_waits > shared && waits_for[a].empty()) waits_for[a] = rank_ids[b];
    }
  std::vector<model::Finding> out;
  for (const size_t r : candidates) {
    if (!waits_for[r].empty()) continue;
    const double share = static_cast<double>(votes[r]) / static_cast<double>(tested[r]);
    model::Finding f = new_finding("slow_rank_suspected", "cross_rank", share >= rules.slow_vote_high_share ? "high" : "medium", "medium", rank_ids, {rank_ids[r]});
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  ": shortest communication time in %u of %u collectives (others waited %.3f ms for it in those)",
                  votes[r], tested[r], waited[r]);
    f.summary = rank_ids[r] + " is the one its peers wait for" + buf;
    f.evidence_ids = {stable_id("evd", {rank_ids[r], "rank_window"})};
    f.limitations.push_back("from communication.json collective times (Elapse Time); send/receive excluded");
    for (const size_t c : candidates)
      if (waits_for[c] == rank_ids[r])
        f.limitations.push_back(rank_ids[c] + " also looks slow but waits for " + rank_ids[r] +
                                " in the collectives they share: a consequence, not a cause");
    JsonWriter w;
    w.begin_object();
    w.kv("votes", uint64_t{votes[r]});
    w.kv("collectives_tested", uint64_t{tested[r]});
    w.kv("vote_share", share);
    w.kv("waited_ms", waited[r]);
    w.key("suspected_ranks");
    w.begin_array();
    w.value(rank_ids[r]);
    w.end_array();
    w.end_object();
    f.metrics_json = w.take();
    f.magnitude_ms = waited[r];
    set_claim_id(f);
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<model::Finding> diagnose_slow_links(const std::vector<std::string>& rank_ids,
                                               const std::vector<std::vector<CollectiveTime>>& times,
                                               const knowledge::Knowledge& kb) {
  const auto& rules = kb.diagnostics;
  Members members;  // (communicator, seq) -> (transit, rank)
  for (size_t r = 0; r < times.size() && r < rank_ids.size(); ++r)
    for (const auto& t : times[r])
      if (std::isfinite(t.transit_ms)) members[{t.group_hash, t.seq}].emplace_back(t.transit_ms, r);
  const Votes v = vote(members, rank_ids.size(), /*low=*/false, rules);
  std::vector<model::Finding> out;
  for (size_t r = 0; r < rank_ids.size(); ++r) {
    if (!enough(v, r, rules)) continue;
    const double share = static_cast<double>(v.votes[r]) / static_cast<double>(v.tested[r]);
    model::Finding f = new_finding("slow_link_suspected", "cross_rank", share >= rules.slow_vote_high_share ? "high" : "medium", "medium", rank_ids, {rank_ids[r]});
    char buf[200];
    std::snprintf(buf, sizeof buf, ": longest transit time in %u of %u collectives (%.3f ms more than the median member)",
                  v.votes[r], v.tested[r], v.excess[r]);
    f.summary = rank_ids[r] + " moves collective data slowest" + buf;
    f.evidence_ids = {stable_id("evd", {rank_ids[r], "rank_window"})};
    f.limitations.push_back("from communication.json Transit Time; the link (not the NPU) of this rank is suspected");
    JsonWriter w;
    w.begin_object();
    w.kv("votes", uint64_t{v.votes[r]});
    w.kv("collectives_tested", uint64_t{v.tested[r]});
    w.kv("vote_share", share);
    w.kv("extra_transit_ms", v.excess[r]);
    w.end_object();
    f.metrics_json = w.take();
    f.magnitude_ms = v.excess[r];
    set_claim_id(f);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace ascprof::analysis

// The in-kernel MoE findings (moe_trace.hpp): EP imbalance inside the fused kernel, combine-side
// waits on peers, and a phase that dominates the kernel. Thresholds: moe_trace.rules [findings].
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "ascprof/analysis/diagnose.hpp"
#include "ascprof/analysis/moe_trace.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/model/finding.hpp"

namespace ascprof::analysis {

namespace {

struct RankCall {
  size_t rank = 0;  // index into the views
  size_t call = 0;  // index into the rank's calls
  const MoeCallSummary* c = nullptr;
};

double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }
double us(int64_t ns) { return static_cast<double>(ns) / 1e3; }

int64_t median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::string phase_name(const MoePhaseStats& p) {
  std::string s = "'" + p.label + "'";
  if (!p.label_level()) s += " #" + std::to_string(p.index) + (p.extra_id != 0 ? " [extra " + std::to_string(p.extra_id) + "]" : "");
  return s + " on the " + p.core_group + " cores";
}

// The phase a finding is about, in its metrics.
void phase_keys(JsonWriter& w, const MoePhaseStats& p) {
  w.kv("label", p.label);
  w.kv("core_group", p.core_group);
  w.kv("role", p.role);
}

bool waits_on_tokens_or_peers(const std::string& role) { return role == "token_wait" || role == "combine_wait"; }

// Per core group, the sum of the label-level unions of the phases `pick` accepts; the largest group.
template <class Pick>
int64_t longest_group(const MoeCallSummary& c, Pick pick) {
  std::map<uint32_t, int64_t> by_group;
  for (const auto& p : c.phases)
    if (p.label_level() && pick(p)) by_group[p.core_type] += p.union_ns;
  int64_t best = 0;
  for (const auto& [g, ns] : by_group) best = std::max(best, ns);
  return best;
}

// The phase rows compared for imbalance: compute and token waits, per instance where the label has
// instances (expert group g), else the label row.
std::vector<size_t> compared_phases(const MoeCallSummary& c) {
  std::set<std::pair<uint32_t, std::string>> has_instances;
  for (const auto& p : c.phases)
    if (!p.label_level()) has_instances.insert({p.core_type, p.label});
  std::vector<size_t> out;
  for (size_t i = 0; i < c.phases.size(); ++i) {
    const auto& p = c.phases[i];
    if (p.role != "compute" && p.role != "token_wait") continue;
    if (p.label_level() == (has_instances.count({p.core_type, p.label}) > 0)) continue;
    out.push_back(i);
  }
  return out;
}

struct Finder {
  const std::vector<MoeRankView>& ranks;
  const knowledge::MoeTraceRules& rules;
  size_t max_evidence;  ///< diagnostics.rules [evidence] max_evidence_ids (moe_phase_summary.csv holds the rest)
  std::vector<model::Finding> out;

  int64_t min_excess_ns() const { return static_cast<int64_t>(rules.min_excess_us * 1e3); }

  void add_evidence(model::Finding& f, const RankCall& rc, size_t phase) const {
    const MoeRankView& v = ranks[rc.rank];
    f.evidence_ids.push_back(moe_phase_evidence_id(v.ordinal, rc.call, phase));
  }
  void add_row(model::Finding& f, const RankCall& rc) const {
    if (rc.c->status == "attached")
      f.evidence_ids.push_back(model::event_id(ranks[rc.rank].ordinal, rc.c->kernel_row));
    else
      f.limitations.push_back(ranks[rc.rank].rank_id + "'s trace " + rc.c->file +
                              " is not attached to a kernel row: " + rc.c->detail);
  }
  void common_limitations(model::Finding& f) const {
    f.limitations.push_back(
        "from an in-kernel trace of an instrumented build: its trace points add barriers, so the phases are "
        "longer than in a clean build; each core's times count from its own kernel entry, so ranks are compared "
        "by durations, not by when they ran");
  }

  // One call position k across the ranks that have it.
  void call_position(const std::vector<RankCall>& calls) {
    std::set<std::pair<size_t, std::string>> reported;  // (rank, label) named by an imbalance finding
    std::set<size_t> combine_waiters;
    imbalance(calls, reported);
    combine_waits(calls, combine_waiters);
    dominant(calls, reported, combine_waiters);
  }

  // moe_in_kernel_ep_imbalance
  void imbalance(const std::vector<RankCall>& calls, std::set<std::pair<size_t, std::string>>& reported) {
    struct Hit {
      size_t phase = 0;
      int64_t value = 0, reference = 0;
      size_t peers = 0;
      bool across = true;  // across ranks (else across the rank's cores)
    };
    std::map<size_t, Hit> hit;  // by position in `calls`: the largest excess
    auto consider = [&](size_t at, const Hit& h) {
      reported.insert({calls[at].rank, calls[at].c->phases[h.phase].label});  // every standing-out phase, not only the worst
      auto it = hit.find(at);
      if (it == hit.end() || h.value - h.reference > it->second.value - it->second.reference) hit[at] = h;
    };
    const double ratio = rules.imbalance_ratio;
    if (calls.size() >= 2) {
      // (core type, label, extra, index) -> (position, phase)
      std::map<std::tuple<uint32_t, std::string, int64_t, int64_t>, std::vector<std::pair<size_t, size_t>>> same;
      for (size_t at = 0; at < calls.size(); ++at)
        for (size_t i : compared_phases(*calls[at].c)) {
          const auto& p = calls[at].c->phases[i];
          same[{p.core_type, p.label, p.extra_id, p.index}].emplace_back(at, i);
        }
      for (const auto& [key, members] : same) {
        if (members.size() < 2) continue;
        std::vector<int64_t> values;
        for (const auto& [at, i] : members) values.push_back(calls[at].c->phases[i].max_core_ns);
        const int64_t med = median(values);
        for (const auto& [at, i] : members) {
          const int64_t v = calls[at].c->phases[i].max_core_ns;
          if (static_cast<double>(v) >= ratio * static_cast<double>(med) && v - med >= min_excess_ns())
            consider(at, {i, v, med, members.size(), true});
        }
      }
    }
    for (size_t at = 0; at < calls.size(); ++at) {
      if (hit.count(at)) continue;
      for (size_t i : compared_phases(*calls[at].c)) {
        const auto& p = calls[at].c->phases[i];
        if (p.cores >= 2 && static_cast<double>(p.max_core_ns) >= ratio * static_cast<double>(p.median_core_ns) &&
            p.max_core_ns - p.median_core_ns >= min_excess_ns())
          consider(at, {i, p.max_core_ns, p.median_core_ns, p.cores, false});
      }
    }
    // per rank, its waits on tokens and peers (the longest core group)
    std::vector<int64_t> wait_ns(calls.size());
    for (size_t at = 0; at < calls.size(); ++at)
      wait_ns[at] = longest_group(*calls[at].c, [](const MoePhaseStats& p) { return waits_on_tokens_or_peers(p.role); });
    for (const auto& [at, h] : hit) {
      const RankCall& rc = calls[at];
      const MoeRankView& v = ranks[rc.rank];
      const MoePhaseStats& p = rc.c->phases[h.phase];
      const bool waits = p.role == "token_wait";
      const double x = h.reference > 0 ? static_cast<double>(h.value) / static_cast<double>(h.reference) : 0;
      std::vector<size_t> others;  // compute outlier: the ranks that wait for it; token waiter: whom it waits for
      if (!waits) {
        for (size_t o = 0; o < calls.size(); ++o)
          if (o != at && wait_ns[o] - wait_ns[at] >= min_excess_ns()) others.push_back(o);
      } else {
        for (const auto& [o, oh] : hit)
          if (o != at && rc.c->phases[h.phase].role != calls[o].c->phases[oh.phase].role) others.push_back(o);
      }
      std::vector<std::string> ids{v.rank_id};
      for (size_t o : others) ids.push_back(ranks[calls[o].rank].rank_id);
      model::Finding f = new_finding("moe_in_kernel_ep_imbalance", h.across ? "cross_rank" : "rank",
                                     x >= rules.high_ratio ? "high" : "medium", h.across && h.peers >= 3 ? "high" : "medium",
                                     ids, {v.rank_id});
      char buf[400];
      if (h.across)
        std::snprintf(buf, sizeof buf, "%s: %s takes %.3f us on its slowest core (core %u), %.2fx the median %.3f us of %zu ranks",
                      v.rank_id.c_str(), phase_name(p).c_str(), us(h.value), p.max_core_id, x, us(h.reference), h.peers);
      else
        std::snprintf(buf, sizeof buf, "%s: %s takes %.3f us on core %u, %.2fx the median %.3f us of its %zu cores",
                      v.rank_id.c_str(), phase_name(p).c_str(), us(h.value), p.max_core_id, x, us(h.reference), h.peers);
      f.summary = buf;
      std::string tail;
      for (size_t k = 0; k < others.size(); ++k) tail += (k ? ", " : "") + ranks[calls[others[k]].rank].rank_id;
      if (waits)
        f.summary += others.empty() ? "; it waits for tokens its peers' dispatch sends deliver late (no peer's phase stands out)"
                                    : "; it waits for tokens from rank(s) " + tail + ", whose phases stand out";
      else if (!others.empty())
        f.summary += "; rank(s) " + tail + " wait for it (their token and combine waits are longer)";
      else if (h.across)
        f.summary += "; no other rank's waits grew";
      add_evidence(f, rc, h.phase);
      add_row(f, rc);
      for (size_t o : others) {
        const auto& oc = *calls[o].c;
        for (size_t i = 0; i < oc.phases.size(); ++i)
          if (oc.phases[i].label_level() && waits_on_tokens_or_peers(oc.phases[i].role) && oc.phases[i].union_ns > 0 &&
              f.evidence_ids.size() < max_evidence)
            add_evidence(f, calls[o], i);
      }
      common_limitations(f);
      JsonWriter w;
      w.begin_object();
      phase_keys(w, p);
      w.kv("index", p.index);
      w.kv("value_us", us(h.value));
      w.kv("reference_us", us(h.reference));
      w.kv("ratio", x);
      w.kv("compared", h.across ? "ranks" : "cores");
      w.kv("slowest_core", static_cast<uint64_t>(p.max_core_id));
      w.kv("wait_us", us(wait_ns[at]));
      w.end_object();
      f.metrics_json = w.take();
      f.magnitude_ms = ms(h.value - h.reference);
      set_claim_id(f);
      out.push_back(std::move(f));
    }
  }

  // moe_combine_wait
  void combine_waits(const std::vector<RankCall>& calls, std::set<size_t>& waiters_out) {
    std::vector<int64_t> wait(calls.size());
    std::vector<size_t> waiters;
    double top_share = 0;
    for (size_t at = 0; at < calls.size(); ++at) {
      const auto& c = *calls[at].c;
      wait[at] = longest_group(c, [](const MoePhaseStats& p) { return p.role == "combine_wait"; });
      const double share = c.span_ns > 0 ? static_cast<double>(wait[at]) / static_cast<double>(c.span_ns) : 0;
      if (share >= rules.combine_wait_share && wait[at] >= min_excess_ns()) {
        waiters.push_back(at);
        top_share = std::max(top_share, share);
      }
    }
    if (waiters.empty()) return;
    // the rank they wait for arrives last, so it waits least
    size_t least = 0;
    for (size_t at = 1; at < calls.size(); ++at)
      if (wait[at] < wait[least]) least = at;
    std::vector<int64_t> waiting;
    for (size_t at : waiters) waiting.push_back(wait[at]);
    const bool known = calls.size() >= 2 && std::find(waiters.begin(), waiters.end(), least) == waiters.end() &&
                       median(waiting) - wait[least] >= min_excess_ns();
    std::vector<std::string> ids, suspects;
    for (size_t at : waiters) ids.push_back(ranks[calls[at].rank].rank_id);
    if (known) {
      suspects.push_back(ranks[calls[least].rank].rank_id);
      ids.push_back(suspects.back());
    } else {
      suspects = ids;
    }
    model::Finding f = new_finding("moe_combine_wait", calls.size() >= 2 ? "cross_rank" : "rank",
                                   top_share >= rules.high_share ? "high" : "medium", known ? "high" : "medium", ids, suspects);
    std::string who;
    for (size_t k = 0; k < waiters.size(); ++k) who += (k ? ", " : "") + ranks[calls[waiters[k]].rank].rank_id;
    char buf[320];
    std::snprintf(buf, sizeof buf, "%zu rank(s) (%s) spend up to %.1f %% of the fused MoE kernel waiting on peers in the combine (up to %.3f us)",
                  waiters.size(), who.c_str(), top_share * 100, us(*std::max_element(waiting.begin(), waiting.end())));
    f.summary = buf;
    if (known) {
      std::snprintf(buf, sizeof buf, "; they wait for %s, which waits least (%.3f us): its combine arrives last",
                    suspects[0].c_str(), us(wait[least]));
      f.summary += buf;
    } else {
      f.summary += "; no rank stands out as the late one";
    }
    for (size_t at : waiters) {
      waiters_out.insert(at);
      const auto& c = *calls[at].c;
      for (size_t i = 0; i < c.phases.size(); ++i)
        if (c.phases[i].label_level() && c.phases[i].role == "combine_wait" && f.evidence_ids.size() < max_evidence) add_evidence(f, calls[at], i);
    }
    if (known) add_row(f, calls[least]);
    common_limitations(f);
    JsonWriter w;
    w.begin_object();
    w.key("wait_us");
    w.begin_object();
    for (size_t at = 0; at < calls.size(); ++at) w.kv(ranks[calls[at].rank].rank_id, us(wait[at]));
    w.end_object();
    w.kv("top_share", top_share);
    w.end_object();
    f.metrics_json = w.take();
    f.magnitude_ms = ms(*std::max_element(waiting.begin(), waiting.end()));
    set_claim_id(f);
    out.push_back(std::move(f));
  }

  // moe_phase_dominates_kernel: one finding per (label, core type), naming the ranks
  void dominant(const std::vector<RankCall>& calls, const std::set<std::pair<size_t, std::string>>& reported,
                const std::set<size_t>& combine_waiters) {
    struct Group {
      std::vector<std::pair<size_t, size_t>> members;  // (position, phase)
      double top = 0;
    };
    std::map<std::pair<uint32_t, std::string>, Group> groups;
    for (size_t at = 0; at < calls.size(); ++at) {
      const auto& c = *calls[at].c;
      if (c.span_ns <= 0) continue;
      for (size_t i = 0; i < c.phases.size(); ++i) {
        const auto& p = c.phases[i];
        if (!p.label_level() || p.role == "container") continue;
        const double share = static_cast<double>(p.union_ns) / static_cast<double>(c.span_ns);
        if (share < rules.dominant_share) continue;
        if (reported.count({calls[at].rank, p.label}) || (p.role == "combine_wait" && combine_waiters.count(at))) continue;
        auto& g = groups[{p.core_type, p.label}];
        g.members.emplace_back(at, i);
        g.top = std::max(g.top, share);
      }
    }
    for (const auto& [key, g] : groups) {
      std::vector<std::string> ids;
      for (const auto& [at, i] : g.members) ids.push_back(ranks[calls[at].rank].rank_id);
      const auto& p0 = calls[g.members[0].first].c->phases[g.members[0].second];
      model::Finding f = new_finding("moe_phase_dominates_kernel", "rank", g.top >= rules.high_share ? "high" : "medium", "high",
                                     ids, ids);
      std::string who;
      for (size_t k = 0; k < ids.size() && k < 8; ++k) who += (k ? ", " : "") + ids[k];
      if (ids.size() > 8) who += ", ... (" + std::to_string(ids.size()) + " ranks)";
      char buf[320];
      std::snprintf(buf, sizeof buf, "%s (%s) covers up to %.1f %% of the fused MoE kernel's span on rank(s) %s",
                    phase_name(p0).c_str(), p0.role.c_str(), g.top * 100, who.c_str());
      f.summary = buf;
      int64_t top_ns = 0;
      for (const auto& [at, i] : g.members) {
        if (f.evidence_ids.size() < max_evidence) add_evidence(f, calls[at], i);
        top_ns = std::max(top_ns, calls[at].c->phases[i].union_ns);
      }
      add_row(f, calls[g.members[0].first]);
      common_limitations(f);
      JsonWriter w;
      w.begin_object();
      phase_keys(w, p0);
      w.kv("top_share", g.top);
      w.kv("ranks", static_cast<uint64_t>(ids.size()));
      w.end_object();
      f.metrics_json = w.take();
      f.magnitude_ms = ms(top_ns);
      set_claim_id(f);
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

std::vector<model::Finding> diagnose_moe_traces(const std::vector<MoeRankView>& ranks, const knowledge::MoeTraceRules& rules,
                                                size_t max_evidence_ids) {
  Finder finder{ranks, rules, max_evidence_ids, {}};
  size_t positions = 0;
  for (const auto& v : ranks) positions = std::max(positions, v.summary ? v.summary->calls.size() : 0);
  for (size_t k = 0; k < positions; ++k) {
    std::vector<RankCall> calls;
    for (size_t r = 0; r < ranks.size(); ++r) {
      const MoeRankSummary* s = ranks[r].summary;
      if (s != nullptr && k < s->calls.size() && s->calls[k].usable()) calls.push_back({r, k, &s->calls[k]});
    }
    if (!calls.empty()) finder.call_position(calls);
  }
  return std::move(finder.out);
}

}  // namespace ascprof::analysis

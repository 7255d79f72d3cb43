// critical_path_rank_bound (critical_path.hpp): the rank the walked critical paths run through.
#include <algorithm>
#include <cstdio>
#include <set>

#include "ascprof/analysis/critical_path.hpp"
#include "ascprof/analysis/diagnose.hpp"
#include "ascprof/common/json_writer.hpp"

namespace ascprof::analysis {

namespace {

double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f %%", share * 100.0);
  return buf;
}

std::string millis(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", ms(ns));
  return buf;
}

}  // namespace

std::vector<model::Finding> diagnose_critical_path(const CriticalPaths& paths, const knowledge::DiagnosticsRules& rules) {
  std::vector<model::Finding> out;
  if (paths.steps.size() < std::max<size_t>(1, rules.critical_path_min_steps) || paths.walked_ns <= 0) return out;
  // the ranks of the walked alignments (a rank in none of them cannot be on their paths)
  size_t ranks_walked = 0;
  for (const auto& r : paths.ranks) ranks_walked += r.steps_member > 0 ? 1 : 0;
  const PathRankShare* top = nullptr;
  for (const auto& r : paths.ranks)
    if (top == nullptr || r.path_ns > top->path_ns) top = &r;
  if (top == nullptr || ranks_walked < 2) return out;
  const double needed = std::max(rules.critical_path_min_rank_share,
                                 rules.critical_path_share_over_fair / static_cast<double>(ranks_walked));
  const double wait_share = static_cast<double>(top->others_waited_ns) / static_cast<double>(paths.walked_ns);
  if (top->share < needed || wait_share < rules.critical_path_min_wait_share) return out;

  const std::string& rank = paths.rank_ids[top->rank];
  model::Finding f;
  f.finding_type = "critical_path_rank_bound";
  f.scope = "cross_rank";
  f.severity = top->share >= rules.critical_path_high_rank_share ? "high" : "medium";
  f.confidence = paths.steps.size() >= 2 * std::max<size_t>(1, rules.critical_path_min_steps) ? "high" : "medium";
  f.rank_ids = paths.rank_ids;
  f.suspected_ranks = {rank};
  auto part = [&](int64_t ns) { return percent(top->path_ns > 0 ? static_cast<double>(ns) / static_cast<double>(top->path_ns) : 0); };
  f.summary = rank + " holds " + percent(top->share) + " of the critical path of " +
              std::to_string(paths.steps.size()) + " steps (of its part: compute " + part(top->compute_ns) + ", transfer " +
              part(top->transfer_ns) + ", host gaps " + part(top->gap_ns) + ", waiting " + part(top->waiting_ns) +
              "); the other ranks waited " + millis(top->others_waited_ns) + " for it at collectives";
  // evidence: the rank's elements on the chains, longest first
  std::vector<const PathElement*> mine;
  std::set<uint32_t> steps;
  for (const auto& e : paths.elements)
    if (e.rank == top->rank) {
      steps.insert(e.step);
      if (!e.evidence_id.empty()) mine.push_back(&e);
    }
  std::stable_sort(mine.begin(), mine.end(), [](const PathElement* a, const PathElement* b) {
    return a->end_ns - a->start_ns > b->end_ns - b->start_ns;
  });
  std::set<std::string> ids;
  for (const PathElement* e : mine)
    if (ids.size() < rules.max_evidence_ids && ids.insert(e->evidence_id).second) f.evidence_ids.push_back(e->evidence_id);
  for (const uint32_t s : steps) f.alignment_ids.push_back(paths.steps[s].alignment_id);
  f.limitations = {
      "a kernel's predecessor is the previous task of its stream or a communication op, whichever ended later; "
      "event waits between two compute streams are not read",
      "kernels that synchronise inside (e.g. MoE dispatch/combine on the compute stream) count as compute of the rank "
      "that ran them",
      "times are on the reference rank's clock through the estimated clock offsets; a collective's last arrival is "
      "as exact as those offsets"};
  JsonWriter w;
  w.begin_object();
  w.kv("share", top->share);
  w.kv("steps_walked", static_cast<uint64_t>(paths.steps.size()));
  w.kv("steps_on_path", uint64_t{top->steps_on_path});
  w.kv("path_ms", ms(top->path_ns));
  w.kv("compute_ms", ms(top->compute_ns));
  w.kv("transfer_ms", ms(top->transfer_ns));
  w.kv("host_gap_ms", ms(top->gap_ns));
  w.kv("waiting_ms", ms(top->waiting_ns));
  w.kv("others_waited_ms", ms(top->others_waited_ns));
  w.kv("walked_ms", ms(paths.walked_ns));
  w.end_object();
  f.metrics_json = w.take();
  f.magnitude_ms = ms(top->others_waited_ns);
  set_claim_id(f);
  out.push_back(std::move(f));
  return out;
}

}  // namespace ascprof::analysis

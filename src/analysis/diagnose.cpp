#include "ascprof/analysis/diagnose.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "ascprof/common/join.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/common/stable_id.hpp"

namespace ascprof::analysis {

namespace {

double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

std::string fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

using model::event_id;

std::string rows_text(const std::vector<std::pair<uint32_t, uint32_t>>& ranges) {
  std::string out;
  for (size_t i = 0; i < ranges.size() && i < 8; ++i) {
    if (i) out += ", ";
    out += std::to_string(ranges[i].first);
    if (ranges[i].second != ranges[i].first) out += "-" + std::to_string(ranges[i].second);
  }
  if (ranges.size() > 8) out += ", ... (" + std::to_string(ranges.size()) + " runs)";
  return out;
}

}  // namespace

model::Finding new_finding(std::string type, std::string scope, std::string severity, std::string confidence,
                           std::vector<std::string> rank_ids, std::vector<std::string> suspected_ranks) {
  model::Finding f;
  f.finding_type = std::move(type);
  f.scope = std::move(scope);
  f.severity = std::move(severity);
  f.confidence = std::move(confidence);
  f.rank_ids = std::move(rank_ids);
  f.suspected_ranks = std::move(suspected_ranks);
  return f;
}

void set_claim_id(model::Finding& f) {
  f.claim_id = stable_id("claim", {f.finding_type, f.scope, f.summary, join(f.rank_ids, ','), join(f.alignment_ids, ',')});
}

bool finding_is_traceable(const model::Finding& f) { return !f.evidence_ids.empty(); }

std::vector<model::Finding> diagnose_rank(const std::string& rank_id, uint32_t ordinal, const model::RankStructure& s,
                                          const model::RankSummary& sum, const knowledge::Knowledge& kb,
                                          const std::string& kernel_source) {
  std::vector<model::Finding> out;
  const size_t max_ids = kb.diagnostics.max_evidence_ids;

  // device_idle_bubble: every tagged segment row (head, tail and window rows too, as the reference)
  for (const auto& ss : sum.segments) {
    if (ss.anomaly_tags.empty() || ss.segment >= s.segments.size()) continue;
    const auto& g = s.segments[ss.segment];
    const auto& m = ss.metrics;
    model::Finding f = new_finding("device_idle_bubble", "step", "medium", "high", {rank_id}, {rank_id});
    f.row_table = "step_summary.csv";
    f.row_index = static_cast<size_t>(&ss - sum.segments.data());
    f.summary = rank_id + " " + model::segment_type_name(g.type) + " rows " + std::to_string(g.row_start) + "-" +
                std::to_string(g.row_end) +
                fmt(": device idle %.3f ms of %.3f ms wall (%.0f %%)", ms(m.underfeed_ns), ms(m.wall_ns),
                    100.0 * m.underfeed_ratio) +
                fmt(", largest gap %.3f ms", ms(m.largest_internal_bubble_ns));
    f.evidence_ids.push_back(
        stable_id("evd", {g.segment_id, g.type == model::SegmentType::kStep ? "step_window" : "edge_window"}));
    for (const auto& b : m.top_bubbles) {
      if (f.evidence_ids.size() >= max_ids) break;
      f.evidence_ids.push_back(event_id(ordinal, b.before_row));
      f.evidence_ids.push_back(event_id(ordinal, b.after_row));
    }
    JsonWriter w;
    w.begin_object();
    w.kv("segment_id", g.segment_id);
    w.kv("segment_type", model::segment_type_name(g.type));
    if (g.declared_step >= 0) w.kv("declared_step", g.declared_step);
    w.kv("row_start", uint64_t{g.row_start});
    w.kv("row_end", uint64_t{g.row_end});
    w.kv("wall_ms", ms(m.wall_ns));
    w.kv("underfeed_ms", ms(m.underfeed_ns));
    w.kv("underfeed_ratio", m.underfeed_ratio);
    w.kv("largest_internal_bubble_ms", ms(m.largest_internal_bubble_ns));
    w.key("anomaly_tags");
    w.begin_array();
    for (const auto& t : ss.anomaly_tags) w.value(t);
    w.end_array();
    w.key("suspected_ranks");
    w.begin_array();
    w.value(rank_id);
    w.end_array();
    w.end_object();
    f.metrics_json = w.take();
    f.magnitude_ms = ms(m.underfeed_ns);
    set_claim_id(f);
    out.push_back(std::move(f));
  }

  // wait_anchor_false_hotspot
  for (const auto& wa : sum.wait_anchors) {
    if (!wa.is_false_hotspot_risk || wa.op >= sum.operators.size()) continue;
    const auto& o = sum.operators[wa.op];
    model::Finding f = new_finding("wait_anchor_false_hotspot", "operator", "low", "high", {rank_id}, {rank_id});
    f.row_table = "wait_anchor_ops.csv";
    f.row_index = static_cast<size_t>(&wa - sum.wait_anchors.data());
    f.summary = rank_id + " " + o.name + fmt(": %.0f %% of its cost is waiting, not work (rank %.0f by cost)",
                                                        100.0 * wa.wait_ratio, wa.total_cost_avg_rank);
    for (size_t i = 0; i < o.sample_rows.size() && i < max_ids; ++i) f.evidence_ids.push_back(event_id(ordinal, o.sample_rows[i]));
    f.limitations.push_back("rows " + rows_text(o.row_ranges) + " of " + kernel_source);
    JsonWriter w;
    w.begin_object();
    w.kv("name", o.name);
    w.kv("call_count", o.call_count);
    w.kv("wait_ratio", wa.wait_ratio);
    w.kv("total_cost_avg_rank", uint64_t{wa.total_cost_avg_rank});
    w.end_object();
    f.metrics_json = w.take();
    f.magnitude_ms = ms(o.wait_sum_ns);
    set_claim_id(f);
    out.push_back(std::move(f));
  }

  // aicpu_exposed
  for (const auto& a : sum.aicpu) {
    if (a.classification != "AICPU_EXPOSED_NOT_ALLOWED") continue;
    model::Finding f = new_finding("aicpu_exposed", "operator", "medium", "medium", {rank_id}, {rank_id});
    f.row_table = "aicpu_summary.csv";
    f.row_index = static_cast<size_t>(&a - sum.aicpu.data());
    f.summary = rank_id + " AICPU kernel " + a.name +
                fmt(": %.3f ms on the AI CPU, %.0f %% of it not hidden by AI-core work", ms(a.duration_sum_ns),
                    100.0 * (1.0 - a.masked_ratio));
    for (size_t i = 0; i < a.sample_rows.size() && i < max_ids; ++i) f.evidence_ids.push_back(event_id(ordinal, a.sample_rows[i]));
    f.limitations.push_back("rows " + rows_text(a.row_ranges) + " of " + kernel_source);
    JsonWriter w;
    w.begin_object();
    w.kv("name", a.name);
    w.kv("call_count", a.call_count);
    w.kv("duration_sum_ms", ms(a.duration_sum_ns));
    w.kv("masked_ratio", a.masked_ratio);
    w.end_object();
    f.metrics_json = w.take();
    f.magnitude_ms = ms(a.duration_sum_ns - a.overlap_with_ai_core_ns);
    set_claim_id(f);
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<model::Finding> diagnose_alignments(const std::vector<StepAlignment>& alignments,
                                                const StepWindows& windows) {
  std::vector<model::Finding> out;
  for (const auto& a : alignments) {
    if (!a.is_structure_mismatch) continue;
    std::map<std::pair<std::string, uint32_t>, std::vector<std::string>> by_shape;
    for (const size_t m : a.members) {
      const StepWindowView wm = windows[m];
      auto& v = by_shape[{std::string(wm.step_family), wm.main_layer_count}];
      if (std::find(v.begin(), v.end(), wm.rank_id) == v.end()) v.emplace_back(wm.rank_id);
    }
    size_t most = 0;
    for (const auto& [shape, ranks] : by_shape) most = std::max(most, ranks.size());
    model::Finding f = new_finding("rank_workload_asymmetry", "cross_rank", "medium", "medium", a.rank_ids, {});
    f.alignment_ids = {a.alignment_id};
    std::string shapes;
    for (const auto& [shape, ranks] : by_shape) {
      if (ranks.size() < most)  // the minority shape(s); a tie singles out nobody
        f.suspected_ranks.insert(f.suspected_ranks.end(), ranks.begin(), ranks.end());
      shapes += (shapes.empty() ? "" : "; ") + shape.first + " x" + std::to_string(shape.second) + " on ranks " + join(ranks, ',');
    }
    f.summary = "aligned steps differ in structure: " + shapes;
    for (const size_t m : a.members) f.evidence_ids.push_back(stable_id("evd", {windows[m].segment_id, "step_window"}));
    JsonWriter w;
    w.begin_object();
    w.kv("alignment_id", a.alignment_id);
    w.kv("member_count", static_cast<uint64_t>(a.members.size()));
    w.kv("wall_skew_us", a.wall_skew_us);
    w.end_object();
    f.metrics_json = w.take();
    set_claim_id(f);
    out.push_back(std::move(f));
  }
  return out;
}

void note_throttled_slow_ranks(std::vector<model::Finding>& findings, const std::vector<RankFacts>& ranks,
                               const knowledge::DiagnosticsRules& rules) {
  for (auto& f : findings) {
    if (f.finding_type != "slow_rank_suspected") continue;
    bool changed = false;
    for (const auto& r : f.suspected_ranks) {
      const auto it = std::find_if(ranks.begin(), ranks.end(), [&r](const RankFacts& x) { return x.rank_id == r; });
      if (it == ranks.end() || it->aicore_reduced_share < rules.aicore_min_kernel_share) continue;
      char buf[200];
      std::snprintf(buf, sizeof buf, "; its AI Cores ran at reduced frequency for %.1f %% of its kernel time (lowest %u MHz)",
                    it->aicore_reduced_share * 100, it->aicore_min_mhz);
      f.summary += buf;
      f.limitations.push_back(r + "'s AI Cores were throttled (see aicore_frequency_reduced): the cause may "
                              "be the clock (power cap, thermal), not its workload");
      changed = true;
    }
    if (changed) set_claim_id(f);
  }
}

std::vector<model::Finding> diagnose_microbatch_counts(const std::vector<StepAlignment>& alignments,
                                                       const StepWindows& windows) {
  std::vector<model::Finding> out;
  for (const auto& a : alignments) {
    std::map<uint32_t, std::vector<std::string>> by_count;
    std::vector<std::string> members;
    for (const size_t m : a.members) {
      const StepWindowView wm = windows[m];
      if (wm.microbatch_count == 0) continue;
      auto& v = by_count[wm.microbatch_count];
      if (std::find(v.begin(), v.end(), wm.rank_id) == v.end()) v.emplace_back(wm.rank_id);
      if (std::find(members.begin(), members.end(), wm.rank_id) == members.end()) members.emplace_back(wm.rank_id);
    }
    if (by_count.size() < 2) continue;
    size_t most = 0;
    for (const auto& [count, ranks] : by_count) most = std::max(most, ranks.size());
    model::Finding f = new_finding("microbatch_count_mismatch", "cross_rank", "medium", "medium", members, {});
    f.alignment_ids = {a.alignment_id};
    std::string counts;
    for (const auto& [count, ranks] : by_count) {
      if (ranks.size() < most)  // the minority count(s); a tie singles out nobody
        f.suspected_ranks.insert(f.suspected_ranks.end(), ranks.begin(), ranks.end());
      counts += (counts.empty() ? "" : "; ") + std::to_string(count) + " on ranks " + join(ranks, ',');
    }
    f.summary = "the ranks of one training step disagree on its microbatch count: " + counts;
    f.limitations = {"microbatches are counted from each rank's phase runs and the point-to-point transfers "
                     "between them (segmentation.rules [training]); a schedule that interleaves model chunks "
                     "(virtual pipeline stages) is not modelled"};
    for (const size_t m : a.members)
      if (windows[m].microbatch_count > 0) f.evidence_ids.push_back(stable_id("evd", {windows[m].segment_id, "step_window"}));
    JsonWriter w;
    w.begin_object();
    w.kv("alignment_id", a.alignment_id);
    w.key("microbatch_counts");
    w.begin_object();
    for (const auto& [count, ranks] : by_count) w.kv(std::to_string(count), static_cast<uint64_t>(ranks.size()));
    w.end_object();
    w.end_object();
    f.metrics_json = w.take();
    set_claim_id(f);
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<model::Finding> diagnose_ep_imbalance(const std::vector<std::string>& rank_ids,
                                                 const std::vector<int64_t>& expert_ns, const knowledge::Knowledge& kb) {
  std::vector<model::Finding> out;
  double sum = 0;
  size_t n = 0, hot = 0;
  for (size_t r = 0; r < expert_ns.size() && r < rank_ids.size(); ++r) {
    if (expert_ns[r] <= 0) continue;
    sum += static_cast<double>(expert_ns[r]);
    ++n;
    if (expert_ns[r] > expert_ns[hot] || expert_ns[hot] <= 0) hot = r;
  }
  if (n < 2) return out;
  const double mean = sum / static_cast<double>(n);
  const double ratio = static_cast<double>(expert_ns[hot]) / mean;
  if (ratio < kb.diagnostics.ep_imbalance_ratio) return out;
  model::Finding f = new_finding("ep_load_imbalance_suspected", "cross_rank", ratio >= kb.diagnostics.cross_rank_skew_ratio ? "high" : "medium", "medium", rank_ids, {rank_ids[hot]});
  f.summary = rank_ids[hot] + fmt(" spends %.3f ms in expert compute, %.2fx the mean of %.0f ranks (hot experts)",
                                            ms(expert_ns[hot]), ratio, static_cast<double>(n));
  f.evidence_ids = {stable_id("evd", {rank_ids[hot], "rank_window"})};
  f.limitations.push_back("expert compute = operators with category " + join(kb.diagnostics.ep_expert_categories, " or "));
  JsonWriter w;
  w.begin_object();
  w.kv("expert_ms_max", ms(expert_ns[hot]));
  w.kv("expert_ms_mean", mean / 1e6);
  w.kv("ratio", ratio);
  w.key("suspected_ranks");
  w.begin_array();
  w.value(rank_ids[hot]);
  w.end_array();
  w.end_object();
  f.metrics_json = w.take();
  f.magnitude_ms = (static_cast<double>(expert_ns[hot]) - mean) / 1e6;
  set_claim_id(f);
  out.push_back(std::move(f));
  return out;
}

std::vector<model::Finding> diagnose_host_bound(const std::vector<std::string>& rank_ids,
                                               const std::vector<HostBoundStats>& stats, const knowledge::Knowledge& kb) {
  std::vector<model::Finding> out;
  for (size_t r = 0; r < rank_ids.size() && r < stats.size(); ++r) {
    const auto& s = stats[r];
    if (s.device_wall_ns <= 0) continue;
    if (s.tasks > 0 && s.tasks_with_launch == 0) {
      // Not silence: a capture that links no device task to its launch cannot show host-bound time.
      model::Finding f = new_finding("host_bound_untested", "cross_rank", "info", "high", {rank_ids[r]}, {});
      f.summary = rank_ids[r] + ": host-bound dispatch could not be tested: " + s.launch_links +
                  " links none of its " + std::to_string(s.tasks) +
                  " device tasks to a host launch (no HostToDevice or async_npu flow ends at them, no matching connection_id)";
      f.evidence_ids = {stable_id("evd", {rank_ids[r], "rank_window"})};
      f.limitations.push_back("device idle time of this rank is not split into host-bound and other causes");
      JsonWriter w;
      w.begin_object();
      w.kv("device_tasks", uint64_t{s.tasks});
      w.kv("device_idle_ms", ms(s.idle_ns));
      w.kv("device_wall_ms", ms(s.device_wall_ns));
      w.end_object();
      f.metrics_json = w.take();
      f.magnitude_ms = 0;
      set_claim_id(f);
      out.push_back(std::move(f));
      continue;
    }
    const double share = static_cast<double>(s.host_bound_ns) / static_cast<double>(s.device_wall_ns);
    if (share < kb.diagnostics.host_bound_min_share || ms(s.host_bound_ns) < kb.diagnostics.host_bound_min_ms) continue;
    model::Finding f = new_finding("host_dispatch_bound", "cross_rank", share >= kb.diagnostics.host_bound_high_share ? "high" : "medium", "medium", {rank_ids[r]}, {rank_ids[r]});
    f.summary = rank_ids[r] +
                fmt(": the device waited %.3f ms (%.0f %% of its %.3f ms) for kernels the host launched late", ms(s.host_bound_ns),
                    100.0 * share, ms(s.device_wall_ns)) +
                " (" + std::to_string(s.host_bound_gaps) + " of " + std::to_string(s.gaps) + " idle gaps)";
    f.evidence_ids = {stable_id("evd", {rank_ids[r], "rank_window"})};
    f.limitations.push_back(s.launch_links + " linked " + std::to_string(s.tasks_with_launch) + " of " +
                            std::to_string(s.tasks) + " device tasks to their launch (" + launch_links_text(s) + ")");
    JsonWriter w;
    w.begin_object();
    w.kv("host_bound_ms", ms(s.host_bound_ns));
    w.kv("device_idle_ms", ms(s.idle_ns));
    w.kv("device_wall_ms", ms(s.device_wall_ns));
    w.kv("host_bound_share", share);
    w.kv("host_bound_gaps", uint64_t{s.host_bound_gaps});
    w.kv("gaps", uint64_t{s.gaps});
    w.end_object();
    f.metrics_json = w.take();
    f.magnitude_ms = ms(s.host_bound_ns);
    set_claim_id(f);
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<model::Finding> diagnose_root(const std::vector<RankFacts>& ranks, const knowledge::Knowledge& kb) {
  std::vector<model::Finding> out;
  std::vector<std::string> all, with, without;
  for (const auto& r : ranks) {
    all.push_back(r.rank_id);
    (r.has_attention ? with : without).push_back(r.rank_id);
  }
  auto rank_windows = [](const std::vector<std::string>& ids) {
    std::vector<std::string> e;
    for (const auto& id : ids) e.push_back(stable_id("evd", {id, "rank_window"}));
    return e;
  };
  if (!with.empty() && !without.empty()) {
    model::Finding f = new_finding("reduced_work_or_dummy_rank", "cross_rank", "medium", "medium", all, without);
    f.summary = std::to_string(without.size()) + " of " + std::to_string(all.size()) +
                " ranks run no attention work (ranks " + join(without, ',') + "): dummy or reduced-work ranks";
    f.evidence_ids = rank_windows(without);
    f.limitations.push_back("ranks without any attention-role kernel: " + join(without, ','));
    JsonWriter w;
    w.begin_object();
    w.key("ranks_without_attention");
    w.begin_array();
    for (const auto& id : without) w.value(id);
    w.end_array();
    w.kv("rank_count", static_cast<uint64_t>(all.size()));
    w.key("full_work_ranks");  // the reference's names for the two groups
    w.begin_array();
    for (const auto& id : with) w.value(id);
    w.end_array();
    w.key("reduced_work_candidate_ranks");
    w.begin_array();
    for (const auto& id : without) w.value(id);
    w.end_array();
    w.end_object();
    f.metrics_json = w.take();
    set_claim_id(f);
    out.push_back(std::move(f));
  }
  int64_t lo = 0, hi = 0;
  std::string lo_id, hi_id;
  for (const auto& r : ranks) {
    if (r.wall_ns <= 0) continue;
    if (lo_id.empty() || r.wall_ns < lo) {
      lo = r.wall_ns;
      lo_id = r.rank_id;
    }
    if (hi_id.empty() || r.wall_ns > hi) {
      hi = r.wall_ns;
      hi_id = r.rank_id;
    }
  }
  if (lo > 0 && static_cast<double>(hi) / static_cast<double>(lo) >= kb.diagnostics.dp_wall_skew_ratio) {
    model::Finding f = new_finding("dp_workload_imbalance", "cross_rank", "medium", "low", all, {hi_id});
    f.summary = hi_id + fmt(" is busy for %.3f ms of wall, %.1fx ", ms(hi), static_cast<double>(hi) / static_cast<double>(lo)) +
                lo_id + fmt(" (%.3f ms)", ms(lo));
    f.evidence_ids = rank_windows({hi_id, lo_id});
    f.limitations.push_back("capture windows of different lengths also differ in wall time");
    JsonWriter w;
    w.begin_object();
    w.kv("max_wall_ms", ms(hi));
    w.kv("max_rank", hi_id);
    w.kv("min_wall_ms", ms(lo));
    w.kv("min_rank", lo_id);
    w.kv("ratio", static_cast<double>(hi) / static_cast<double>(lo));
    w.key("rank_wall_ms");  // the reference's metrics: every rank's wall, and the ratio under its name
    w.begin_object();
    for (const auto& r : ranks)
      if (r.wall_ns > 0) w.kv(r.rank_id, ms(r.wall_ns));
    w.end_object();
    w.kv("wall_ratio", static_cast<double>(hi) / static_cast<double>(lo));
    w.end_object();
    f.metrics_json = w.take();
    f.magnitude_ms = ms(hi - lo);
    set_claim_id(f);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace ascprof::analysis

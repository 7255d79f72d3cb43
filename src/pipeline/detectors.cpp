#include "detectors.hpp"

#include <algorithm>

#include "ascprof/analysis/aicore_freq.hpp"
#include "ascprof/analysis/moe_trace.hpp"

namespace ascprof::pipeline {

namespace {

using Findings = std::vector<model::Finding>;

void append(Findings& out, Findings found) {
  for (auto& f : found) out.push_back(std::move(f));
}

// Each rank's own findings (device idle bubbles, exposed AICPU, ... found by its rank job), rank order.
void rank_local(const DiagnosticsFacts& d, Findings& out) {
  for (const auto& o : d.outcomes)
    if (o.ok && !o.parts_file.empty()) out.insert(out.end(), o.findings.begin(), o.findings.end());
}

// reduced_work_or_dummy_rank and dp_workload_imbalance.
void root_balance(const DiagnosticsFacts& d, Findings& out) { append(out, analysis::diagnose_root(d.facts, d.kb)); }

// comm_aiv_compute_imbalance and alltoall_size_imbalance.
void comm_balance(const DiagnosticsFacts& d, Findings& out) { append(out, analysis::diagnose_comm_balance(d.facts, d.kb)); }

void step_alignments(const DiagnosticsFacts& d, Findings& out) {
  append(out, analysis::diagnose_alignments(d.cross_rank.steps, d.cross_rank.windows));
}

void microbatch_counts(const DiagnosticsFacts& d, Findings& out) {
  append(out, analysis::diagnose_microbatch_counts(d.cross_rank.steps, d.cross_rank.windows));
}

// slow_rank_suspected and slow_link_suspected. A rank whose link is slow also makes its peers wait:
// then the link is the cause, and its slow-rank finding is folded into the slow-link one.
void slow_ranks_and_links(const DiagnosticsFacts& d, Findings& out) {
  std::vector<std::string> ids;
  std::vector<std::vector<analysis::CollectiveTime>> times;
  for (const auto& o : d.outcomes)
    if (o.ok) {
      ids.push_back(o.rank_id);
      times.push_back(o.comm_times);
    }
  auto links = analysis::diagnose_slow_links(ids, times, d.kb);
  for (auto& f : analysis::diagnose_slow_ranks(ids, times, d.kb)) {
    auto link = std::find_if(links.begin(), links.end(), [&f](const model::Finding& l) { return l.suspected_ranks == f.suspected_ranks; });
    if (link == links.end()) {
      out.push_back(std::move(f));
      continue;
    }
    link->limitations.push_back("its peers also wait for it (" + f.summary + "): the wait comes from the link");
    analysis::set_claim_id(*link);
  }
  append(out, std::move(links));
}

// ep_load_imbalance_suspected from each rank's expert compute.
void ep_imbalance(const DiagnosticsFacts& d, Findings& out) {
  std::vector<std::string> ids;
  std::vector<int64_t> expert;
  for (const auto& o : d.outcomes)
    if (o.ok && !o.parts_file.empty()) {
      ids.push_back(o.rank_id);
      expert.push_back(o.expert_compute_ns);
    }
  append(out, analysis::diagnose_ep_imbalance(ids, expert, d.kb));
}

// host_dispatch_bound and host_bound_untested.
void host_bound(const DiagnosticsFacts& d, Findings& out) {
  std::vector<std::string> ids;
  std::vector<analysis::HostBoundStats> stats;
  for (const auto& o : d.outcomes)
    if (kernel_stages_ran(o)) {
      ids.push_back(o.rank_id);
      stats.push_back(o.host_bound);
    }
  append(out, analysis::diagnose_host_bound(ids, stats, d.kb));
}

// moe_in_kernel_ep_imbalance, moe_combine_wait, moe_phase_dominates_kernel.
void moe_traces(const DiagnosticsFacts& d, Findings& out) {
  append(out, analysis::diagnose_moe_traces(moe_views(d.outcomes), d.kb.moe_trace, d.kb.diagnostics.max_evidence_ids));
}

// critical_path_rank_bound: the rank the steps' critical paths run through. When a finding found
// above already names that rank with a cause of arriving late (operator_alignment.rules [causes]), the
// path is what that cause costs: it is added to that finding instead of becoming a second one.
void critical_path(const DiagnosticsFacts& d, Findings& out) {
  for (auto& f : analysis::diagnose_critical_path(d.cross_rank.paths, d.kb.diagnostics)) {
    model::Finding* cause = nullptr;
    for (const auto& type : d.kb.operator_alignment.late_arrival_causes) {
      for (auto& g : out)
        if (g.finding_type == type && g.suspected_ranks == f.suspected_ranks) {
          cause = &g;
          break;
        }
      if (cause != nullptr) break;
    }
    if (cause == nullptr) {
      out.push_back(std::move(f));
      continue;
    }
    cause->limitations.push_back("the steps' critical paths run through it: " + f.summary);
    analysis::set_claim_id(*cause);
  }
}

// Skew in the operator alignments may follow from a cause found above: it runs after them.
void operator_alignments(const DiagnosticsFacts& d, Findings& out) {
  const CrossRank& cr = d.cross_rank;
  append(out, analysis::diagnose_operator_alignments(cr.operators, cr.rank_ids, cr.rank_ordinals, d.kb, out));
}

// A slow rank whose AI Cores ran throttled says so (annotates slow_rank_suspected found above).
void throttled_slow_ranks(const DiagnosticsFacts& d, Findings& out) {
  analysis::note_throttled_slow_ranks(out, d.facts, d.kb.diagnostics);
}

}  // namespace

const std::vector<Detector>& detectors() {
  static const std::vector<Detector> list = {
      {"rank_local", rank_local},
      {"root_balance", root_balance},
      {"comm_balance", comm_balance},
      {"step_alignments", step_alignments},
      {"microbatch_counts", microbatch_counts},
      {"slow_ranks_and_links", slow_ranks_and_links},
      {"ep_imbalance", ep_imbalance},
      {"host_bound", host_bound},
      {"moe_traces", moe_traces},
      {"critical_path", critical_path},
      {"operator_alignments", operator_alignments},
      {"throttled_slow_ranks", throttled_slow_ranks},
  };
  return list;
}

std::vector<analysis::MoeRankView> moe_views(const std::vector<RankOutcome>& outcomes) {
  std::vector<analysis::MoeRankView> views;
  for (const auto& o : outcomes)
    if (o.ok && !o.moe.calls.empty()) views.push_back({o.rank_id, static_cast<uint32_t>(o.rank_index), &o.moe});
  return views;
}

std::vector<model::Finding> run_detectors(const std::vector<RankOutcome>& outcomes, const knowledge::Knowledge& kb,
                                          const CrossRank& cross_rank) {
  DiagnosticsFacts d{outcomes, kb, cross_rank, {}};
  for (const auto& o : outcomes)
    if (o.ok && !o.parts_file.empty()) d.facts.push_back(o.facts);
  std::vector<model::Finding> findings;
  for (const Detector& detector : detectors()) detector.run(d, findings);
  return findings;
}

}  // namespace ascprof::pipeline

#pragma once
/// The diagnostics stage (reference-analysis.md §2.8) as plain functions. Rank-local findings come
/// from a rank's summary (idle bubbles, false wait hotspots, exposed AICPU); cross-rank findings from
/// the ranks' facts (dummy / reduced-work ranks, data-parallel wall imbalance). Every finding carries
/// evidence ids (windows or events) and names the suspected rank(s); `finding_is_traceable` is the
/// evidence gate the report applies. Thresholds: knowledge/summarize.rules (tags) and
/// knowledge/diagnostics.rules and knowledge/operator_alignment.rules.
#include <cstdint>
#include <string>
#include <vector>

#include "ascprof/analysis/align.hpp"
#include "ascprof/analysis/host_bound.hpp"
#include "ascprof/analysis/operator_align.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/model/comm_table.hpp"
#include "ascprof/model/finding.hpp"
#include "ascprof/model/structure.hpp"
#include "ascprof/model/summary.hpp"

namespace ascprof::analysis {

/// device_idle_bubble (every segment tagged DEVICE_IDLE_GAP_HEAVY or INTERNAL_BUBBLE_HEAVY),
/// wait_anchor_false_hotspot, aicpu_exposed (AICPU_EXPOSED_NOT_ALLOWED) of one rank. `kernel_source`
/// names what the kernel rows were read from, in the findings' limitations ("rows 3-9 of ...").
std::vector<model::Finding> diagnose_rank(const std::string& rank_id, uint32_t rank_ordinal,
                                          const model::RankStructure& structure, const model::RankSummary& summary,
                                          const knowledge::Knowledge& kb,
                                          const std::string& kernel_source = "kernel_details.csv");

/// What the cross-rank rules need of each rank.
struct RankFacts {
  std::string rank_id;
  uint32_t rank_ordinal = 0;      ///< for event ids
  bool has_attention = false;
  int64_t wall_ns = 0;
  /// Fused communication kernels (op_type mix_comm_aiv): AIV time (the AIV stage fields of the
  /// pipeline, or the duration where a kernel has no pipeline data), calls and sample rows.
  int64_t comm_aiv_ns = 0;
  uint64_t comm_aiv_calls = 0;
  std::vector<uint32_t> comm_aiv_rows;
  /// All-to-all collectives of communication.json: data moved (transit sizes, all transports).
  double alltoall_mb = 0;
  uint64_t alltoall_ops = 0;
  std::vector<uint32_t> alltoall_rows;  ///< sample kernel rows of the rank's all-to-all kernels
  /// AI Core frequency (aicore_freq.hpp): share of kernel time at reduced frequency, lowest MHz.
  double aicore_reduced_share = 0;
  uint32_t aicore_min_mhz = 0;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & rank_id & rank_ordinal & has_attention & wall_ns & comm_aiv_ns & comm_aiv_calls & comm_aiv_rows & alltoall_mb &
        alltoall_ops & alltoall_rows & aicore_reduced_share & aicore_min_mhz;
  }
};

/// A slow rank whose AI Cores ran at reduced frequency says so: every slow_rank_suspected finding
/// naming a rank whose aicore_reduced_share reaches [aicore_freq] min_kernel_share gets that in its
/// summary and limitations (throttled cores, not its workload, may be why it is slow).
void note_throttled_slow_ranks(std::vector<model::Finding>& findings, const std::vector<RankFacts>& ranks,
                               const knowledge::DiagnosticsRules& rules);

/// reduced_work_or_dummy_rank and dp_workload_imbalance over the ranks of a root.
std::vector<model::Finding> diagnose_root(const std::vector<RankFacts>& ranks, const knowledge::Knowledge& kb);

/// Two rules the reference documents but does not build (communication_taxonomy.md §5):
/// comm_aiv_compute_imbalance, when the AIV time of fused communication kernels differs across the
/// ranks by more than comm_aiv.max_spread of the mean ((max - min) / mean; the rank with the most is
/// named), and alltoall_size_imbalance, when a rank moves alltoall.size_ratio x the mean data in
/// all-to-all collectives (tokens routed unevenly to experts). Ranks with none are left out.
std::vector<model::Finding> diagnose_comm_balance(const std::vector<RankFacts>& ranks, const knowledge::Knowledge& kb);

/// The comm-AIV facts of a rank and the sample rows of its all-to-all kernels, from its operators.
void collect_operator_comm_facts(const model::RankSummary& summary, const knowledge::Knowledge& kb, RankFacts& facts);

/// The all-to-all data volume of a rank, from its communication.json table.
void collect_alltoall_volume(const model::CommStatTable& comm, const StringPool& pool, RankFacts& facts);

/// rank_workload_asymmetry: one finding per step alignment whose members differ in (step family,
/// main layer count); suspected ranks are those in the minority shape.
std::vector<model::Finding> diagnose_alignments(const std::vector<StepAlignment>& alignments,
                                                const StepWindows& windows);

/// microbatch_count_mismatch: one finding per step alignment whose training members disagree on
/// their microbatch count (every pipeline stage and data-parallel replica of a step runs the same
/// microbatches, so a disagreement is a rank the segmentation or the schedule got wrong); suspected
/// ranks are those in the minority count. Members that are not training steps are left out.
std::vector<model::Finding> diagnose_microbatch_counts(const std::vector<StepAlignment>& alignments,
                                                       const StepWindows& windows);

/// One collective's communication time on a rank (communication.json), for the slow-rank vote.
struct CollectiveTime {
  uint64_t group_hash = 0;  ///< communicator (same on every member)
  uint32_t seq = 0;         ///< position among the communicator's collectives on the rank
  double elapse_ms = 0;
  double transit_ms = 0;  ///< time moving data (NaN when absent)

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & group_hash & seq & elapse_ms & transit_ms;
  }
};

/// The rank's collectives (not p2p, not the totals row) numbered per communicator in start order,
/// kept for sequence numbers below `head` and every `stride`-th after (same numbers on every rank).
std::vector<CollectiveTime> collective_times(const model::CommStatTable& comm, uint32_t head = 256, uint32_t stride = 64);

/// slow_rank_suspected the msprof-analyze way (peers.md §1): in each collective the member with the
/// shortest communication time is the one the others waited for; it gets a vote when that time is an
/// outlier (Dixon's Q up to 10 members, else mean - sigma x sd). Ranks with enough votes are reported
/// with the time the others spent waiting for them.
std::vector<model::Finding> diagnose_slow_ranks(const std::vector<std::string>& rank_ids,
                                               const std::vector<std::vector<CollectiveTime>>& times,
                                               const knowledge::Knowledge& kb);

/// slow_link_suspected: the same vote on the other side of the transit times: in each collective the
/// member whose data movement took longest, when that is an outlier, points at its link.
std::vector<model::Finding> diagnose_slow_links(const std::vector<std::string>& rank_ids,
                                               const std::vector<std::vector<CollectiveTime>>& times,
                                               const knowledge::Knowledge& kb);

/// ep_load_imbalance_suspected from each rank's expert compute time (moe.expert_matmul /
/// moe.dispatch_expert_compute operators): the rank far above the mean is the hot-expert rank.
/// `expert_ns[i]` is rank i's total.
std::vector<model::Finding> diagnose_ep_imbalance(const std::vector<std::string>& rank_ids,
                                                 const std::vector<int64_t>& expert_ns, const knowledge::Knowledge& kb);

/// host_dispatch_bound: a rank whose device waits for late kernel launches (host_bound.hpp) for at
/// least the configured share of its device wall time. host_bound_untested (severity info): a rank
/// with device tasks none of which the capture links to a launch, so the test could not be made.
std::vector<model::Finding> diagnose_host_bound(const std::vector<std::string>& rank_ids,
                                               const std::vector<HostBoundStats>& stats, const knowledge::Knowledge& kb);

/// The id of an operator alignment row: stable_id("align", operator, role, name key, shape, bucket).
std::string operator_alignment_id(const OperatorAlignments& al, const OperatorAlignment& a,
                                  const knowledge::OperatorAlignmentRules& rules);

/// The reference's alignment findings (§2.8): communication_collective_slow and
/// ep_load_imbalance_suspected from operator alignments whose durations differ (ratio >= skew ratio
/// or max - min >= skew µs), slow_rank_suspected from matmul alignments whose starts differ; the
/// role -> finding table is in knowledge/operator_alignment.rules. Beyond the reference, each skewed
/// alignment names the rank that stands out: when the members started apart but left together, the
/// last to arrive (the others waited for it, pattern "late_arrival"); otherwise the last to finish
/// (pattern "slow_finish"). The alignments of one (finding, role, name key, suspected rank, pattern)
/// make one finding (the reference writes one per alignment) listing the worst alignments first.
/// Alignments where the others wait for a rank that `causes` already names as the cause of delay
/// (slow rank, slow link, hot experts, late host launches, exposed AICPU, idle steps: the findings
/// found before this one) are consequences: they are added to that finding's alignment ids and
/// limitations instead of making a finding of their own.
/// `rank_ids[p]` / `rank_ordinals[p]` name the rank at position p (the positions the buckets were
/// folded at).
std::vector<model::Finding> diagnose_operator_alignments(const OperatorAlignments& al,
                                                         const std::vector<std::string>& rank_ids,
                                                         const std::vector<uint32_t>& rank_ordinals,
                                                         const knowledge::Knowledge& kb,
                                                         std::vector<model::Finding>& causes);

/// The evidence gate: a finding is reported only if it names evidence (window or event ids).
bool finding_is_traceable(const model::Finding& f);

/// A finding with its identity fields set (the rule that raises it fills the rest).
model::Finding new_finding(std::string type, std::string scope, std::string severity, std::string confidence,
                           std::vector<std::string> rank_ids, std::vector<std::string> suspected_ranks);

/// Fills claim_id as the reference builds it.
void set_claim_id(model::Finding& f);

}  // namespace ascprof::analysis

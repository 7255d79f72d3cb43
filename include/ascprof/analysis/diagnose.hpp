#pragma once
/// The diagnostics stage (reference-analysis.md §2.8) as plain functions. Rank-local findings come
/// from a rank's summary (idle bubbles, false wait hotspots, exposed AICPU); cross-rank findings from
/// the ranks' facts (dummy / reduced-work ranks, data-parallel wall imbalance). Every finding carries
/// evidence ids (windows or events) and names the suspected rank(s); `finding_is_traceable` is the
/// evidence gate the report applies. Thresholds: knowledge/summarize.rules (tags) and
/// knowledge/diagnostics.rules. The finding types that need cross-rank alignments
/// (communication_collective_slow, ep_load_imbalance_suspected, slow_rank_suspected,
/// rank_workload_asymmetry) are not built yet.
#include <cstdint>
#include <string>
#include <vector>

#include "ascprof/analysis/align.hpp"
#include "ascprof/analysis/host_bound.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/model/comm_table.hpp"
#include "ascprof/model/finding.hpp"
#include "ascprof/model/structure.hpp"
#include "ascprof/model/summary.hpp"

namespace ascprof::analysis {

/// device_idle_bubble (every segment tagged DEVICE_IDLE_GAP_HEAVY or INTERNAL_BUBBLE_HEAVY),
/// wait_anchor_false_hotspot, aicpu_exposed (AICPU_EXPOSED_NOT_ALLOWED) of one rank.
std::vector<model::Finding> diagnose_rank(const std::string& rank_id, uint32_t rank_ordinal,
                                          const model::RankStructure& structure, const model::RankSummary& summary,
                                          const knowledge::Knowledge& kb);

/// What the cross-rank rules need of each rank.
struct RankFacts {
  std::string rank_id;
  bool has_attention = false;
  int64_t wall_ns = 0;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & rank_id & has_attention & wall_ns;
  }
};

/// reduced_work_or_dummy_rank and dp_workload_imbalance over the ranks of a root.
std::vector<model::Finding> diagnose_root(const std::vector<RankFacts>& ranks, const knowledge::Knowledge& kb);

/// rank_workload_asymmetry: one finding per step alignment whose members differ in (step family,
/// main layer count); suspected ranks are those in the minority shape.
std::vector<model::Finding> diagnose_alignments(const std::vector<StepAlignment>& alignments,
                                                const std::vector<StepWindow>& windows);

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
/// least the configured share of its device wall time.
std::vector<model::Finding> diagnose_host_bound(const std::vector<std::string>& rank_ids,
                                               const std::vector<HostBoundStats>& stats, const knowledge::Knowledge& kb);

/// The evidence gate: a finding is reported only if it names evidence (window or event ids).
bool finding_is_traceable(const model::Finding& f);

/// A finding with its identity fields set (the rule that raises it fills the rest).
model::Finding new_finding(std::string type, std::string scope, std::string severity, std::string confidence,
                           std::vector<std::string> rank_ids, std::vector<std::string> suspected_ranks);

/// Fills claim_id as the reference builds it.
void set_claim_id(model::Finding& f);

}  // namespace ascprof::analysis

#pragma once
/// In-kernel MoE traces (issue 20, ../shared/spec/moe-tracing.md): per rank and call, per phase and
/// core group, how long the phase ran, over how many cores, and the union of its intervals; the
/// bubbles of the containers; which kernel row the call belongs to; and across ranks the same phase
/// compared core group by core group, which gives the in-kernel findings. Plain functions, no MPI.
///
/// Time axis: every core's times are relative to its own kernel entry (T0), and the cores of a call
/// entered within a few cycles of each other, so unions and spans are taken on that shared relative
/// axis. Across ranks only durations are compared.
#include <cstdint>
#include <string>
#include <vector>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/knowledge/moe_trace_rules.hpp"
#include "ascprof/model/finding.hpp"
#include "ascprof/model/kernel_table.hpp"
#include "ascprof/model/moe_trace.hpp"

namespace ascprof::analysis {

/// One phase of one call on one core group. A label-level row (`extra_id` and `index` -1) sums every
/// instance of the label; a label with several (extra id, index) instances also gets one row per
/// instance (expert group g of `moe-process`, ...).
struct MoePhaseStats {
  std::string label;
  std::string core_group;      ///< moe_trace.rules [trace] core_groups
  std::string role;            ///< moe_trace.rules role (work, container, token_wait, ...)
  uint32_t core_type = 0;
  int64_t extra_id = -1, index = -1;
  uint64_t count = 0;          ///< intervals
  uint32_t cores = 0;          ///< cores that ran it
  int64_t total_ns = 0;        ///< sum of the durations
  int64_t union_ns = 0;        ///< length of the union of the intervals over the group's cores
  int64_t first_start_ns = 0;  ///< earliest start (relative axis)
  int64_t max_core_ns = 0, median_core_ns = 0, min_core_ns = 0;  ///< per core sums over the cores that ran it
  uint32_t max_core_id = 0;    ///< the core with the most

  bool label_level() const { return index < 0 && extra_id < 0; }

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & label & core_group & role & core_type & extra_id & index & count & cores & total_ns & union_ns & first_start_ns &
        max_core_ns & median_core_ns & min_core_ns & max_core_id;
  }
};

/// A container's time not covered by any phase inside it, summed over the group's cores.
struct MoeBubble {
  std::string container, core_group;
  uint32_t core_type = 0;
  int64_t total_ns = 0, max_core_ns = 0;
  uint32_t max_core_id = 0;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & container & core_group & core_type & total_ns & max_core_ns & max_core_id;
  }
};

/// One trace file (one kernel call) of a rank, analysed.
struct MoeCallSummary {
  std::string file;              ///< path as found
  int64_t call_index = -1;       ///< from the file name, -1 when none
  std::string variant;
  /// attached | not_attached | unreadable | empty (no interval of this rank)
  std::string status;
  std::string detail;            ///< how well it attached, or why not, or the read error
  int64_t kernel_row = -1;       ///< row in the rank's kernel table (evt_<ordinal>_<row>)
  int64_t kernel_call = -1;      ///< which call of the instrumented kernel on the rank (0-based)
  std::string kernel_name;
  int64_t kernel_start_ns = 0, kernel_duration_ns = 0;
  int64_t span_ns = 0;           ///< latest end - earliest start over the call's cores
  uint64_t intervals = 0, cores = 0, unmatched = 0, unmapped = 0, bad_events = 0, full_cores = 0;
  std::vector<MoePhaseStats> phases;  ///< by core type, then first start, then label
  std::vector<MoeBubble> bubbles;

  bool usable() const { return status == "attached" || status == "not_attached"; }

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & file & call_index & variant & status & detail & kernel_row & kernel_call & kernel_name & kernel_start_ns &
        kernel_duration_ns & span_ns & intervals & cores & unmatched & unmapped & bad_events & full_cores & phases & bubbles;
  }
};

/// A rank's calls, in file-name order (empty when the rank has no traces).
struct MoeRankSummary {
  std::vector<MoeCallSummary> calls;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & calls;
  }
};

/// One row of the instrumented kernel on a rank (moe_trace.rules [kernel] names), in kernel order.
struct MoeKernelRow {
  uint32_t row = 0;
  int64_t start_ns = 0, duration_ns = 0;
  StrId name = 0;
};

/// The rank's rows of the instrumented kernels, in start order.
std::vector<MoeKernelRow> moe_kernel_rows(const model::KernelTable& kernels, const StringPool& pool,
                                          const knowledge::MoeTraceRules& rules);

/// Phases, bubbles and attachment of every call. A call whose file names "call<N>" goes to the Nth
/// instrumented row; the calls without a number are the rank's last rows, in file order. A call
/// attaches when its span is [min_span_share, max_span_share] of the row's duration; otherwise it is
/// not_attached (counted as moe_trace_not_attached) and its phases still count.
MoeRankSummary summarize_moe_traces(const std::vector<model::MoeTraceCall>& calls, const std::vector<MoeKernelRow>& rows,
                                    const StringPool& pool, const knowledge::MoeTraceRules& rules, Stats& stats);

/// The id of a phase record in the root's moe_phase_summary.csv: moe_<ordinal>_<call>_<phase>.
std::string moe_phase_evidence_id(uint32_t rank_ordinal, size_t call, size_t phase);

/// One rank's MoE summary as the cross-rank findings see it.
struct MoeRankView {
  std::string rank_id;
  uint32_t ordinal = 0;
  const MoeRankSummary* summary = nullptr;
};

/// moe_in_kernel_ep_imbalance (a compute phase or token wait that stands out across ranks or cores,
/// with the ranks that wait and the ones they wait for), moe_combine_wait (combine-side waits on peer
/// ranks, and whom they wait for) and moe_phase_dominates_kernel, through moe_trace.rules [findings].
/// Calls are compared position by position (the k-th call of every rank that has one). A finding cites
/// at most `max_evidence_ids` phase records (diagnostics.rules [evidence]).
std::vector<model::Finding> diagnose_moe_traces(const std::vector<MoeRankView>& ranks, const knowledge::MoeTraceRules& rules,
                                                size_t max_evidence_ids);

}  // namespace ascprof::analysis

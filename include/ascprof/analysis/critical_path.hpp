#pragma once
/// The critical path of every step across ranks (issue 21): walking each aligned step backwards from
/// its end, inside a rank from a device task to the task that ended last before it started, and at
/// each collective to the member that arrived last (the others waited for it), gives the chain of
/// (rank, interval, kind) that set the step's wall time. Split so that no event table crosses the
/// network:
///   1. each rank reduces its steps to a skeleton (step_path_skeleton): its communication ops in the
///      step, and for each of them (and for the step's end) what the rank did on its own before it:
///      the local walk back to the previous communication op, folded into sums (compute, host gaps)
///      and its longest kernel. Tens of bytes per communication op, for the first max_steps steps.
///   2. the coordinator, with the clock offsets and the step alignments, walks the skeletons
///      (walk_critical_paths): at a collective it jumps to the member that arrived last: the one that
///      waited least in it when every member's communication statistics give its wait (no clock
///      needed), else the latest corrected arrival; the op's time from that arrival to its end is
///      transfer.
/// Kinds: compute (device kernels), transfer (a collective from its last arrival to its end),
/// waiting (a communication op no other rank of the alignment shares: its partner is not known, so
/// the whole op is time spent waiting on something outside the walk), host gap (no device task: the
/// device waited for the host). Plain functions: no files, no MPI.
#include <cstdint>
#include <string>
#include <vector>

#include "ascprof/analysis/align.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/model/finding.hpp"

namespace ascprof::model {
struct KernelTable;
struct RankStructure;
struct CommOpTable;
struct CommStatTable;
}  // namespace ascprof::model

namespace ascprof::analysis {

struct NormalizedKernels;

/// What a rank did on its own between two points of a step: the local walk from `end_ns` back to the
/// communication op `prev` (its end is `start_ns`) or to where the walk found no earlier task.
struct LocalStretch {
  int32_t prev = -1;              ///< index into StepSkeleton::ops of the op reached (-1: none)
  int64_t start_ns = 0;           ///< rank clock
  int64_t compute_ns = 0;         ///< device kernels on the walk
  int64_t gap_ns = 0;             ///< between them: no task on the walk (the device waited for the host)
  uint32_t kernels = 0;           ///< kernels on the walk
  uint32_t longest_row = 0;       ///< the longest of them (kernel row; evidence), when kernels > 0
  int64_t longest_ns = 0;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & prev & start_ns & compute_ns & gap_ns & kernels & longest_row & longest_ns;
  }
};

/// One communication op of a rank's step: a collective is the same (group, seq) on every member.
struct PathOp {
  uint32_t group = 0;             ///< index into RankPathSkeleton::groups
  uint32_t seq = 0;               ///< position among the group's ops on the rank (as clock offsets number them)
  uint32_t row = 0;               ///< kernel row (evidence)
  uint32_t name = 0;              ///< index into RankPathSkeleton::names
  int64_t start_ns = 0, end_ns = 0;
  /// How long the rank waited in it for its peers, on its own clock (communication.json / analysis.db
  /// "Wait Time"; -1 unknown): the member that waited least arrived last, whatever the clocks say.
  int64_t wait_ns = -1;
  LocalStretch before;            ///< the rank's own walk back from start_ns

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & group & seq & row & name & start_ns & end_ns & wait_ns & before;
  }
};

/// One complete step of a rank, reduced for the walk.
struct StepSkeleton {
  std::string segment_id;         ///< the StepWindow it belongs to
  int64_t start_ns = 0, end_ns = 0;
  std::vector<PathOp> ops;        ///< communication ops in start order
  LocalStretch tail;              ///< the walk back from the step's end

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & segment_id & start_ns & end_ns & ops & tail;
  }
};

/// A rank's skeletons (gathered: about 115 bytes per communication op of its first max_steps steps,
/// name included; benchmarks/critical_path_benchmark).
struct RankPathSkeleton {
  std::vector<std::string> groups;  ///< communicator names ("name:<kernel name>" without a trace)
  std::vector<std::string> names;   ///< op names (distinct)
  std::vector<StepSkeleton> steps;  ///< the rank's first max_steps complete steps
  bool empty() const { return steps.empty(); }

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & groups & names & steps;
  }
};

/// Builds the skeletons of the rank's first `rules.critical_path_max_steps` complete steps. A kernel row
/// is a communication op when trace_view's communication ops name it (its group thread and sequence
/// number come from there) or its op_type is communication / mix_comm_aiv (then its group is its own name).
/// Rows of zero or negative duration take no part. Never fails.
RankPathSkeleton step_path_skeleton(const model::KernelTable& kernels, const NormalizedKernels& norm,
                                    const StringPool& pool, const model::CommOpTable& comm_ops,
                                    const model::RankStructure& structure, const knowledge::Knowledge& kb);

/// Sets each op's wait_ns from the rank's communication statistics (the op of the same name; the
/// k-th row of a name for its k-th op).
void attach_comm_waits(RankPathSkeleton& skeleton, const model::CommStatTable& comm, const StringPool& pool);

enum class PathKind : uint8_t { kCompute, kTransfer, kWaiting, kHostGap };
const char* path_kind_name(PathKind k);

/// One element of a step's chain, on the reference rank's clock.
struct PathElement {
  uint32_t step = 0;              ///< index into CriticalPaths::steps
  uint32_t rank = 0;              ///< index into the ranks passed in
  PathKind kind = PathKind::kCompute;  ///< the kind holding most of it
  int64_t start_ns = 0, end_ns = 0;
  int64_t compute_ns = 0, transfer_ns = 0, waiting_ns = 0, gap_ns = 0;  ///< sum to end - start
  uint32_t kernels = 0;           ///< kernels of a local stretch
  std::string op_name, group;     ///< the communication op (transfer, waiting)
  uint32_t seq = 0;
  int64_t waited_ns = 0;          ///< transfer: how long the first member to arrive waited for this one
  uint32_t members = 0;           ///< transfer: members of the collective in the alignment
  std::string evidence_id;        ///< evt_<ordinal>_<row>: the op, or a local stretch's longest kernel
};

/// One aligned step's critical path.
struct PathStep {
  std::string alignment_id;
  int64_t start_ns = 0, end_ns = 0;  ///< the alignment's corrected window (its wall)
  uint32_t end_rank = 0;          ///< the rank whose step ended last (where the walk starts)
  uint32_t first_element = 0, element_count = 0;  ///< its elements, in time order
  int64_t walked_ns = 0;          ///< sum of its elements (<= wall: the walk stops at the first task it finds)
  int64_t compute_ns = 0, transfer_ns = 0, waiting_ns = 0, gap_ns = 0;
  uint32_t hops = 0;              ///< jumps to another rank at a collective
};

/// Per rank, its share of all walked steps' critical paths.
struct PathRankShare {
  uint32_t rank = 0;
  uint32_t steps_member = 0;      ///< walked steps it is a member of
  uint32_t steps_on_path = 0;     ///< ... and whose path passes through it
  int64_t path_ns = 0, compute_ns = 0, transfer_ns = 0, waiting_ns = 0, gap_ns = 0;
  int64_t others_waited_ns = 0;   ///< Σ waited_ns of the collectives where it arrived last
  double share = 0;               ///< path_ns / Σ walked_ns
};

struct CriticalPaths {
  std::vector<std::string> rank_ids;
  std::vector<uint32_t> rank_ordinals;
  std::vector<PathStep> steps;
  std::vector<PathElement> elements;
  std::vector<PathRankShare> ranks;   ///< every rank passed in, rank order
  int64_t walked_ns = 0;              ///< Σ over steps
  uint32_t alignments_skipped = 0;    ///< aligned steps not walked (a member without a skeleton, or over max_steps)
};

/// The ranks' skeletons and clocks, as the coordinator holds them.
struct PathRankView {
  std::string rank_id;
  uint32_t ordinal = 0;
  int64_t offset_ns = 0;              ///< subtracted from the rank's times (clock offsets; 0 unknown)
  const RankPathSkeleton* skeleton = nullptr;
};

/// Walks every step alignment (time order, at most rules.critical_path_max_steps) whose members all have
/// a skeleton. `windows` are the ones the alignments index.
CriticalPaths walk_critical_paths(const std::vector<PathRankView>& ranks, const StepWindows& windows,
                                  const std::vector<StepAlignment>& alignments, const knowledge::DiagnosticsRules& rules);

/// critical_path_rank_bound: a rank that holds most of the walked critical paths (share >=
/// max(min_rank_share, share_over_fair / ranks)) while the others waited for it at collectives for at
/// least min_wait_share of the walked time. Evidence: the chain's elements on that rank.
std::vector<model::Finding> diagnose_critical_path(const CriticalPaths& paths, const knowledge::DiagnosticsRules& rules);

}  // namespace ascprof::analysis

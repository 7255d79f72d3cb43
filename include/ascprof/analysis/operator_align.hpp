#pragma once
/// Cross-rank operator alignment (reference-analysis.md §2.7, time_bucket_v1), split so that event
/// tables never cross the network and the coordinator's share does not grow with the ranks:
///   1. each rank picks its candidate kernels (operator_candidates; kept by the process that ran it),
///   2. once the coordinator has estimated the clock offsets, each rank folds its candidates into
///      per-bucket partials on its corrected clock (operator_buckets),
///   3. each process folds its ranks' partials into one OperatorBucketMerge per root
///      (fold_rank_buckets), the processes merge those up a tree (merge_bucket_merges), and the
///      coordinator turns the root's merge into alignments (finish_alignments).
/// A bucket key is (role, name key, shape signature or "no_shape", floor(corrected start / width)).
/// Roles, width and confidence thresholds: knowledge/operator_alignment.rules. Plain functions.
#include <cstdint>
#include <string>
#include <span>
#include <string_view>
#include <vector>

#include "ascprof/analysis/normalize.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/model/kernel_table.hpp"

namespace ascprof::analysis {

/// (role, name key, shape) of a bucket; `role` indexes OperatorAlignmentRules::roles.
struct OperatorKey {
  uint32_t role = 0;
  std::string name_key, shape;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & role & name_key & shape;
  }
};

/// The kernels of one rank that take part in operator alignment (process-local, never gathered).
struct OperatorCandidates {
  std::vector<OperatorKey> keys;  ///< distinct keys
  std::vector<uint32_t> key;      ///< per candidate: index into keys
  std::vector<int64_t> start_ns, dur_ns, wait_ns;
  std::vector<uint32_t> row;      ///< kernel_details row
  size_t size() const { return key.size(); }

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {  // rank checkpoints (never gathered)
    ar & keys & key & start_ns & dur_ns & wait_ns & row;
  }
};

/// Candidates of a rank: every kernel with an alignment role. Never fails.
OperatorCandidates operator_candidates(const model::KernelTable& kernels, const NormalizedKernels& norm,
                                       const StringPool& pool, const knowledge::Knowledge& kb);

/// One rank's members of one bucket, folded: enough for the exact alignment metrics.
struct BucketPartial {
  uint32_t key = 0;               ///< index into RankOperatorBuckets::keys
  int64_t bucket = 0;             ///< floor(corrected start µs / width)
  uint32_t count = 0;             ///< member events of this rank
  int64_t start_min_ns = 0, start_max_ns = 0, end_max_ns = 0;  ///< corrected clock
  int64_t dur_min_ns = 0, dur_max_ns = 0, wait_max_ns = 0;
  uint32_t first_row = 0, row_count = 0;  ///< its first max_rows_per_rank member rows in RankOperatorBuckets::rows
};

/// A rank's bucket partials (process-local: folded into the process's merge), ordered by (key, bucket).
struct RankOperatorBuckets {
  bool built = false;             ///< false: the rank ran no summarize stage or has no candidates
  std::vector<OperatorKey> keys;
  std::vector<BucketPartial> buckets;
  std::vector<uint32_t> rows;     ///< the buckets' sampled rows (one array: no allocation per bucket)

  std::span<const uint32_t> rows_of(const BucketPartial& p) const { return {rows.data() + p.first_row, p.row_count}; }
};

/// Folds the candidates into buckets after subtracting `offset_ns` (the rank's clock offset).
RankOperatorBuckets operator_buckets(const OperatorCandidates& candidates, int64_t offset_ns,
                                     const knowledge::OperatorAlignmentRules& rules);

/// A run of member rank positions [first, end).
struct RankRange {
  uint32_t first = 0, end = 0;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & first & end;
  }
};

/// The four ranks an alignment names besides its members, in BucketMerge::outlier order.
enum Outlier : uint8_t { kLatestStart = 0, kLatestEnd = 1, kLongest = 2, kShortest = 3, kOutliers = 4 };

/// A member event kept for an alignment's event_ids: the `depth`-th sampled row of rank `rank`.
struct MergedEvent {
  uint32_t depth = 0, rank = 0, row = 0;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & depth & rank & row;
  }
};

/// One (key, bucket) merged over a set of ranks: every figure an alignment row and the operator
/// findings read, kept so that merging two sets gives exactly what one pass over all their ranks
/// in rank order gives (counts and sums add; minima and maxima merge, an outlier rank ties to the
/// lower position as the rank-order pass's strict comparison does; member ranks as sorted runs; the
/// event ids as the first `max_event_ids_per_row` in (depth, rank) order, which holds every sampled
/// row whenever the row lists them all; the sampled rows of the four outlier ranks). Its size does
/// not grow with the member ranks unless their positions are scattered.
struct BucketMerge {
  uint32_t key = 0;
  int64_t bucket = 0;
  uint32_t member_ranks = 0;
  uint64_t member_count = 0;
  int64_t start_min_ns = 0, start_max_ns = 0, end_min_ns = 0, end_max_ns = 0;  ///< corrected clock; end_* over each rank's last end
  int64_t dur_min_ns = 0, dur_max_ns = 0, wait_max_ns = 0;
  int64_t raw_start_min_ns = 0, raw_start_max_ns = 0, raw_end_ns = 0;  ///< the members' own clocks (offsets added back)
  uint32_t outlier_rank[kOutliers] = {};
  std::vector<uint32_t> outlier_rows[kOutliers];  ///< each outlier rank's sampled rows
  std::vector<RankRange> ranges;                  ///< member rank positions, sorted, coalesced
  std::vector<MergedEvent> events;                ///< (depth, rank) order, at most max_event_ids_per_row

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & key & bucket & member_ranks & member_count & start_min_ns & start_max_ns & end_min_ns & end_max_ns & dur_min_ns &
        dur_max_ns & wait_max_ns & raw_start_min_ns & raw_start_max_ns & raw_end_ns & outlier_rank & outlier_rows &
        ranges & events;
  }
};

/// The operator buckets of a set of ranks of one root, merged: what a process sends up the
/// reduction tree instead of its ranks' partials (about one rank's worth of buckets however many
/// ranks it holds, when their buckets coincide).
struct OperatorBucketMerge {
  std::vector<OperatorKey> keys;      ///< distinct keys, first-seen order
  std::vector<BucketMerge> buckets;   ///< in the order they were first seen (a fold never moves them)
  std::vector<uint32_t> order;        ///< indices into buckets, sorted by (key index, bucket)
  uint32_t ranks = 0;                 ///< ranks folded in

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & keys & buckets & order & ranks;
  }
};

/// Folds one rank's partials (corrected clock; `offset_ns` is what they were folded with) into
/// `acc` as the member at `rank_position` (unique per rank of the root). An unbuilt `rank` is skipped.
void fold_rank_buckets(OperatorBucketMerge& acc, uint32_t rank_position, const RankOperatorBuckets& rank,
                       int64_t offset_ns, const knowledge::OperatorAlignmentRules& rules);

/// Merges `other` (ranks disjoint from acc's) into `acc`; the order of folds and merges does not
/// change the result.
void merge_bucket_merges(OperatorBucketMerge& acc, OperatorBucketMerge&& other,
                         const knowledge::OperatorAlignmentRules& rules);

/// One operator alignment: a bucket shared by at least two ranks. Compact (no strings): the key is
/// an index into OperatorAlignments::keys; member ranks, listed events and outlier rows are ranges
/// of OperatorAlignments::ranges / events / rows.
struct OperatorAlignment {
  uint32_t key = 0;
  int64_t bucket = 0;
  uint32_t member_ranks = 0;
  uint64_t member_count = 0;                    ///< events over all ranks
  int64_t start_ns = 0, end_ns = 0;             ///< corrected clock
  int64_t start_skew_ns = 0;                    ///< latest - earliest member start
  int64_t end_skew_ns = 0;                      ///< latest - earliest per-rank last end
  int64_t dur_min_ns = 0, dur_max_ns = 0, wait_max_ns = 0;
  int64_t raw_start_min_ns = 0, raw_start_max_ns = 0, raw_end_ns = 0;  ///< the members' own clocks
  double duration_ratio = 0;                    ///< max / max(1e-6 µs, min)
  uint32_t latest_start_rank = 0, latest_end_rank = 0, longest_rank = 0, shortest_rank = 0;  ///< rank positions
  uint8_t confidence = 0;                       ///< 0 low, 1 medium, 2 high
  uint32_t first_range = 0, range_count = 0;    ///< member rank positions
  uint32_t first_event = 0, event_count = 0;    ///< event_ids in output order
  uint32_t first_rows[kOutliers] = {}, row_counts[kOutliers] = {};  ///< each outlier rank's sampled rows
};

/// A listed member event: row `row` of the rank at position `rank`.
struct MemberEvent {
  uint32_t rank = 0, row = 0;
};

struct OperatorAlignments {
  std::vector<OperatorKey> keys;              ///< distinct keys over all ranks
  std::vector<OperatorAlignment> alignments;  ///< sorted by (role, start, key text)
  std::vector<RankRange> ranges;
  std::vector<MemberEvent> events;
  std::vector<uint32_t> rows;
  uint32_t ranks = 0;                         ///< ranks whose buckets were joined

  /// The sampled rows of `rank` in `a` when it is one of a's outlier ranks; empty otherwise.
  std::span<const uint32_t> outlier_rows(const OperatorAlignment& a, uint32_t rank) const;
};

/// The alignments of the merged buckets: every (key, bucket) present on at least two ranks, with
/// the reference's metrics and confidence.
OperatorAlignments finish_alignments(OperatorBucketMerge&& merged, const knowledge::OperatorAlignmentRules& rules);

/// fold_rank_buckets of every rank at its index in `per_rank` (null or unbuilt entries skipped), all
/// offsets 0, then finish_alignments: the one-process join.
OperatorAlignments align_operators(const std::vector<const RankOperatorBuckets*>& per_rank,
                                   const knowledge::OperatorAlignmentRules& rules);

/// "low" | "medium" | "high".
const char* confidence_name(uint8_t confidence);

}  // namespace ascprof::analysis

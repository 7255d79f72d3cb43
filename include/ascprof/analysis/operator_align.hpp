#pragma once
/// Cross-rank operator alignment (reference-analysis.md §2.7, time_bucket_v1), split so that event
/// tables never cross the network:
///   1. each rank picks its candidate kernels (operator_candidates; kept by the process that ran it),
///   2. once the coordinator has estimated the clock offsets, each rank folds its candidates into
///      per-bucket partials on its corrected clock (operator_buckets; kilobytes to a few MB, gathered),
///   3. the coordinator joins the partials of all ranks into alignments (align_operators).
/// A bucket key is (role, name key, shape signature or "no_shape", floor(corrected start / width)).
/// Roles, width and confidence thresholds: knowledge/operator_alignment.rules. Plain functions.
#include <cstdint>
#include <string>
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
  std::vector<uint32_t> rows;     ///< the first OperatorAlignmentRules::max_rows_per_rank member rows

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & key & bucket & count & start_min_ns & start_max_ns & end_max_ns & dur_min_ns & dur_max_ns & wait_max_ns & rows;
  }
};

/// A rank's bucket partials (gathered to the coordinator), ordered by (key, bucket).
struct RankOperatorBuckets {
  bool built = false;             ///< false: the rank ran no summarize stage or has no candidates
  std::vector<OperatorKey> keys;
  std::vector<BucketPartial> buckets;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & built & keys & buckets;
  }
};

/// The buckets as a compact byte string for the MPI gather (zigzag varints, deltas against the
/// previous bucket and the bucket's own start): about a fifth of the plain serialised size.
std::string pack_buckets(const RankOperatorBuckets& buckets);

/// Reads pack_buckets' bytes; false (and `out` untouched) when the bytes are damaged.
bool unpack_buckets(std::string_view bytes, RankOperatorBuckets* out);

/// Folds the candidates into buckets after subtracting `offset_ns` (the rank's clock offset).
RankOperatorBuckets operator_buckets(const OperatorCandidates& candidates, int64_t offset_ns,
                                     const knowledge::OperatorAlignmentRules& rules);

/// One operator alignment: a bucket shared by at least two ranks. Compact (no strings): the key is
/// an index into OperatorAlignments::keys, members are a range of OperatorAlignments::members.
struct OperatorAlignment {
  uint32_t key = 0;
  int64_t bucket = 0;
  uint32_t first_member = 0, member_ranks = 0;  ///< range of OperatorAlignments::members
  uint64_t member_count = 0;                    ///< events over all ranks
  int64_t start_ns = 0, end_ns = 0;             ///< corrected clock
  int64_t start_skew_ns = 0;                    ///< latest - earliest member start
  int64_t end_skew_ns = 0;                      ///< latest - earliest per-rank last end
  int64_t dur_min_ns = 0, dur_max_ns = 0, wait_max_ns = 0;
  double duration_ratio = 0;                    ///< max / max(1e-6 µs, min)
  uint32_t latest_start_rank = 0, latest_end_rank = 0, longest_rank = 0, shortest_rank = 0;  ///< rank positions
  uint8_t confidence = 0;                       ///< 0 low, 1 medium, 2 high
};

/// A member of an alignment: one rank's partial.
struct AlignmentMember {
  uint32_t rank = 0;     ///< position in the per-rank list given to align_operators
  uint32_t partial = 0;  ///< index into that rank's buckets
};

struct OperatorAlignments {
  std::vector<OperatorKey> keys;              ///< distinct keys over all ranks
  std::vector<OperatorAlignment> alignments;  ///< sorted by (role, start, key text)
  std::vector<AlignmentMember> members;
};

/// Joins the ranks' partials: every (key, bucket) present on at least two ranks becomes an
/// alignment with the reference's metrics and confidence. `per_rank[i]` may be unbuilt (skipped).
OperatorAlignments align_operators(const std::vector<const RankOperatorBuckets*>& per_rank,
                                   const knowledge::OperatorAlignmentRules& rules);

/// "low" | "medium" | "high".
const char* confidence_name(uint8_t confidence);

}  // namespace ascprof::analysis

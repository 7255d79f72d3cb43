#pragma once
/// The walls of one class's members on one process, held for exact order statistics (the p50 / p90
/// of class_merge.hpp) at about 2 bytes a value instead of 8.
///
/// Why: a 215k-row rank has ~43k blocks, layers and steps, each a member of a class; at 10,000 ranks
/// over 2 processes a process held 5,000 ranks' walls, ~1.7 GB as int64 (issue 22: ≤ 2 GB a process).
///
/// How: values arrive in any order into a tail; once the tail holds an eighth of the set's values
/// (at least kMinRun) it is sorted and becomes a run: the differences of consecutive values as
/// LEB128 varints (a block wall differs from its sorted neighbour by a few ns: one byte), with every
/// kSkip-th value also kept whole with its byte offset. Each value is sorted and encoded once; a set
/// of n values has O(log n) runs. count_le() is a binary search over a run's whole values and the
/// decoding of at most kSkip - 1 differences, per run; seal() first turns the tail into a run.
/// Exact: every value is kept (a multiset), nothing is sketched.
#include <cstdint>
#include <span>
#include <vector>

namespace ascprof::analysis {

class WallSet {
 public:
  static constexpr size_t kSkip = 64;
  static constexpr size_t kMinRun = 4096;

  void add(std::span<const int64_t> values);
  /// Sorts the tail into a run (before count_le).
  void seal();
  uint64_t size() const { return size_; }
  /// How many values are <= x. The set must be sealed.
  uint64_t count_le(int64_t x) const;
  /// Bytes held on the heap (capacities).
  size_t heap_bytes() const;
  /// Every value, ascending (tests).
  std::vector<int64_t> sorted() const;

 private:
  struct Run {
    uint64_t n = 0;
    std::vector<int64_t> whole;      ///< values 0, kSkip, 2 kSkip, ... of the run
    std::vector<uint64_t> offset;    ///< byte offset in `deltas` of the difference after each whole value
    std::vector<uint8_t> deltas;     ///< LEB128 differences of the other values to their predecessor
  };
  void seal_tail();
  static Run encode(std::span<const int64_t> sorted);

  std::vector<int64_t> tail_;
  std::vector<Run> runs_;
  uint64_t size_ = 0;
};

}  // namespace ascprof::analysis

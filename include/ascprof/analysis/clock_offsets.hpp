#pragma once
/// Clock offsets between the ranks of a root, from the end times of shared collectives: all members
/// of a collective leave it together (it completes when the last one arrives), so the difference of
/// two ranks' recorded end times for the same collective is the difference of their clocks. The k-th
/// op of a communicator is the same collective on every member, so a collective is identified by
/// (communicator thread name, sequence number). Plain functions: no files, no MPI.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/common/string_pool.hpp"
#include "ascprof/model/trace_tables.hpp"

namespace ascprof::analysis {

/// One collective as a rank recorded it.
struct CollectiveMark {
  uint32_t group = 0;  ///< index into CollectiveMarks::groups
  uint32_t seq = 0;    ///< position among this communicator's ops on the rank, from 0
  int64_t end_ns = 0;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & group & seq & end_ns;
  }
};

/// A rank's marks with its communicator names stored once (16 bytes a mark: with the name in every
/// mark they took ~100 bytes, 185 MB of the coordinator's memory at 10,000 ranks).
struct CollectiveMarks {
  std::vector<std::string> groups;    ///< communicator thread names, e.g. "Group group_name_1 Communication"
  std::vector<CollectiveMark> marks;

  /// Appends a mark, adding `group` to the names when it is new.
  void add(std::string_view group, uint32_t seq, int64_t end_ns);
  size_t size() const { return marks.size(); }
  bool empty() const { return marks.empty(); }

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & groups & marks;
  }
};

/// The rank's collectives from trace_view's communication op table, kept for sequence numbers
/// below `head` and every `stride`-th after (the same numbers on every rank, so the gathered payload
/// stays small on captures with 100k collectives per rank).
CollectiveMarks collective_marks(const model::CommOpTable& ops, const StringPool& pool, uint32_t head = 256,
                                 uint32_t stride = 64);

/// The estimate for one rank.
struct ClockOffset {
  std::string rank_id;
  bool estimated = false;     ///< false: shares no collective with the ranks already placed
  double offset_us = 0;       ///< this rank's clock minus the reference rank's (subtract to align)
  uint32_t collectives = 0;   ///< collectives the estimate rests on
  std::string via_rank;       ///< the rank it was measured against ("" for the reference)
  double spread_us = 0;       ///< median absolute deviation of those differences
};

/// Offsets of every rank relative to ranks[0] (the lowest rank of the root), by a breadth-first walk
/// over ranks that share collectives: each edge is the median of the end-time differences.
std::vector<ClockOffset> estimate_clock_offsets(const std::vector<std::string>& rank_ids,
                                                const std::vector<CollectiveMarks>& marks);
/// The same over the ranks' own marks (not copied).
std::vector<ClockOffset> estimate_clock_offsets(const std::vector<std::string>& rank_ids,
                                                const std::vector<const CollectiveMarks*>& marks);

}  // namespace ascprof::analysis

#pragma once
/// One in-kernel MoE trace (MoeTracing, ../shared/spec/moe-tracing.md) of one kernel call on one rank:
/// the paired phase intervals of every core, on each core's own clock (µs since that core's kernel
/// entry, T0), and what the reader had to leave out.
#include <cstdint>
#include <string>
#include <vector>

namespace ascprof::model {

/// One B/E pair (or X event) of one core.
struct MoePhaseInterval {
  uint32_t label = 0;      ///< StringPool id of the normalized label (name without " [extra:x]" and " #s")
  uint32_t core_type = 0;  ///< the collector's group index (0 cube, 1 / 2 vector in 1C2V)
  uint32_t core_id = 0;    ///< row within the group
  int64_t extra_id = 0;    ///< the name's [extra:x]: the 8-bit extraId (seq) or the whole extra word (legacy)
  int64_t index = 0;       ///< the name's #s: expert group, stage loop, token count... (seq) or ordinal (legacy)
  int64_t start_ns = 0, end_ns = 0;  ///< relative to the core's T0
};

/// One trace file of a rank: one call of the instrumented kernel.
struct MoeTraceCall {
  std::string file;          ///< path as found
  int64_t call_index = -1;   ///< "call<N>" in the file name; -1 when the name has none
  std::string variant;       ///< skill | umdk | array (bare array) | unknown
  int64_t trace_rank = -1;   ///< args.rank_id of the events kept
  std::vector<MoePhaseInterval> intervals;  ///< sorted by (core_type, core_id, start_ns, end_ns)
  /// Per core (core_type, core_id) with at least one record: T0 in cycles when the UMDK variant gives
  /// it (initial_timestamp), else -1; and the record count (B, E or X events).
  struct Core {
    uint32_t core_type = 0, core_id = 0;
    int64_t t0_cycles = -1;
    uint32_t records = 0;
  };
  std::vector<Core> cores;   ///< sorted by (core_type, core_id)
  double clock_divisor = 50;  ///< cycles per µs (otherData, default 50)
  uint64_t events = 0;               ///< B/E/X events of this rank read
  uint64_t unmatched_begin = 0, unmatched_end = 0;  ///< lone B / lone E (dropped)
  uint64_t unmapped_points = 0;      ///< otherData skipped_no_mapping / skipped_events (dropped by the collector)
  uint64_t bad_events = 0;           ///< events without a usable ts, dur, core or name (dropped)
  uint64_t full_cores = 0;           ///< cores whose record count reached the buffer's capacity
  uint64_t other_rank_events = 0;    ///< events of other ranks in the same file (not this rank's)
  std::string error;         ///< non-empty when the file could not be read ("FILE:PLACE: reason")
};

}  // namespace ascprof::model

#pragma once
// The events of one in-kernel MoE trace as a reader found them (the Chrome trace's B/E/X events, or
// the records decoded from rank*.pt), and the one place that turns them into a MoeTraceCall: which
// rank's events are kept, each core's records and T0, the labels, and the collector's B/E pairing.
// Private to this module.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/model/moe_trace.hpp"

namespace ascprof::importers::detail {

inline constexpr int64_t kNoRank = -1;

// One B, E or X event.
struct MoeRawEvent {
  int64_t rank = kNoRank;
  uint32_t core_type = 0, core_id = 0;
  uint32_t name = 0;  // index into MoeEvents::names
  char ph = 0;
  int64_t ts_ns = 0, dur_ns = 0;
  int64_t t0_cycles = -1;
};

struct MoeEvents {
  std::vector<MoeRawEvent> events;
  std::vector<std::string_view> names;  // distinct full names "<label> [extra:x] #s" (the caller keeps them alive)
  uint64_t bad = 0;                     // events dropped while reading
  std::vector<std::string> bad_samples;
  /// The cores as the device recorded them (rank*.pt: counter and T0 of every written slot); empty
  /// when the reader only has events (a Chrome trace), and the cores are then counted from them.
  std::vector<model::MoeTraceCall::Core> cores;
};

/// The number written right after `word` in a file's stem ("call" in "trace_call19", "rank" in
/// "rank003"; the last `word` when `last`, else the first), or -1 when none follows it.
int64_t number_after(const std::filesystem::path& file, std::string_view word, bool last);

/// Fills `call` from `ev`: the events of trace rank `rank_id` (else the only rank), cores (a core
/// with `records_per_core` records or more is full), labels interned in `pool`, and intervals paired
/// first-B-with-next-E per (core, full name). Counts what it leaves out in `call` and `stats`.
void finish_moe_call(const std::filesystem::path& path, int64_t rank_id, uint32_t records_per_core, StringPool& pool,
                     MoeEvents& ev, model::MoeTraceCall& call, Stats& stats);

}  // namespace ascprof::importers::detail

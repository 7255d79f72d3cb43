#pragma once
/// In-kernel MoE traces (MoeTracing Chrome traces written by trace_collector.py, both the skill and
/// the UMDK variant; ../shared/spec/moe-tracing.md §4). A file is a JSON object with traceEvents or a
/// bare array; events are B/E pairs or X events in any order. Threads are identified by args rank_id,
/// core_type and core_id (the tid `typeT_coreCCC` when args lack them), never by pid. B and E pair per
/// (core, full name) in time order, first open B with the next E, as the collector pairs them.
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/status.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/model/moe_trace.hpp"

namespace ascprof::importers {

/// The build's point ids, beside rank*.pt files in the traces' folder (not a trace itself).
inline constexpr const char* kMoePointMap = "point_map.json";

/// The trace files of a rank folder: `<rank_dir>/<folder>/*.json` (Chrome traces) and `*.pt` (the
/// device slots, read with the folder's point_map.json), sorted by name (empty when none); when there
/// is a `.pt`, the folder's point_map.json comes last (an input of those calls, fingerprinted with them).
std::vector<std::filesystem::path> find_moe_traces(const std::filesystem::path& rank_dir, std::string_view folder);

/// "call<N>" in a trace file's name (the Nth row of the instrumented kernel), or -1.
int64_t moe_trace_call_index(const std::filesystem::path& file);

/// Reads one trace file into `call`, keeping the events of trace rank `rank_id` (args rank_id); when
/// no event names that rank and the file holds one rank only, that rank's events are kept. Labels are
/// interned in `pool`. Bad content never fails the rank: a file that is not a readable trace sets
/// `call.error` ("FILE:byte N: reason") and counts moe_trace_unreadable; dropped events are counted
/// in `call` and `stats`. `records_per_core` is a core's buffer capacity (moe_trace.rules).
void import_moe_trace(const std::filesystem::path& path, int64_t rank_id, uint32_t records_per_core, StringPool& pool,
                      model::MoeTraceCall& call, Stats& stats);

/// Reads one rank*.pt (torch.save of the profiling slot groups: group = core_type, row = core_id) with
/// the build's point_map.json, decoding every written slot as the collectors do (ids from the front,
/// cycles from the back, `(cycle - T0) mod 2^64 / cycles_per_us` µs, seq names) but keeping each
/// core's T0 and device counter: a counter past the slot's capacity is an overflowed buffer
/// (moe_trace_core_buffer_full). The trace rank is the number after "rank" in the file name. A file
/// or map that cannot be read sets `call.error` and counts moe_trace_unreadable.
void import_moe_rank_pt(const std::filesystem::path& pt, const std::filesystem::path& point_map, int64_t rank_id,
                        double cycles_per_us, StringPool& pool, model::MoeTraceCall& call, Stats& stats);

}  // namespace ascprof::importers

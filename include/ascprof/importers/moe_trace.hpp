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

/// The trace files of a rank folder: `<rank_dir>/<folder>/*.json`, sorted by name (empty when none).
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

}  // namespace ascprof::importers

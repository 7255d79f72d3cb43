#pragma once
/// Streaming importer for Ascend PyTorch profiler `trace_view.json` (Chrome-trace events).
///
/// The file is never parsed as one JSON document: a scanner finds each top-level event object's byte
/// range in the mmap'd file, and each object is parsed on its own. So files beyond simdjson's 4 GiB
/// document limit work, RSS stays far below the file size, and the torch_npu concatenation defect
/// (`}][{`, `}{`, garbage between events) only costs the damaged bytes, which are reported as
/// DamagedSpan records and counted `tv_damaged_span`.
///
/// Processes are classified by their `process_name` metadata (never by pid value), and metadata may
/// come before or after the events it names: X events are staged compactly and partitioned into the
/// final tables once the whole file is read. Every output table is sorted by start time (stable).
#include <cstddef>
#include <filesystem>
#include <string_view>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/status.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/model/trace_tables.hpp"

namespace ascprof::importers {

/// Tuning and safety bounds for import_trace_view.
struct TraceViewOptions {
  /// An event object larger than this is skipped and counted `tv_event_too_large`.
  size_t max_event_bytes = size_t{64} << 20;
  /// true: parse each event in place in the mapping when enough bytes follow it (simdjson padding);
  /// false: always copy it into a reusable padded buffer first. Results are identical; a tuning knob.
  bool parse_in_place = true;
};

/// Imports `path` into `out` (replaced, not appended), interning strings into `pool`.
///
/// Errors (the file cannot be used at all): kIo when it cannot be opened or mapped; kParse when it is
/// empty or holds no JSON array ("FILE:byte N: reason"); kSchema for an object without a
/// "traceEvents" array. Everything else is repaired or skipped and counted in `stats` (tv_* counters):
/// truncated files keep every complete event, damaged spans are listed in `out.damaged_spans`.
Status import_trace_view(const std::filesystem::path& path, StringPool& pool, model::TraceTables& out, Stats& stats,
                         const TraceViewOptions& opts = {});

/// Same over an in-memory buffer (tests, fuzzing); `display_name` stands for the file name in messages.
/// `data` needs no padding.
Status import_trace_view(std::string_view data, std::string_view display_name, StringPool& pool,
                         model::TraceTables& out, Stats& stats, const TraceViewOptions& opts = {});

}  // namespace ascprof::importers

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
/// come before or after the events it names: an X event goes straight to its table when its process is
/// already named, torch_npu events (they carry "cat") of a not-yet-named pid go provisionally to
/// host_ops, anything else is staged; all of it is settled by the names once the file is read. Every
/// output table is sorted by start time (stable); `processes`/`threads` list every pid and (pid, tid)
/// seen (threads: those with X events or thread metadata) in order of first appearance. X events of
/// pids never named are dropped (counted `tv_unnamed_process`); their flows are kept.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/status.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/model/trace_tables.hpp"

namespace ascprof::importers {

/// How event objects are handed to simdjson. Both modes give identical results; they differ in speed.
/// Events are always parsed from a copy padded with spaces: simdjson 3.0.1 On-Demand reads the byte after
/// a document when it skips a malformed value, so parsing in place (followed by the next event's bytes)
/// could accept a broken event.
enum class TraceViewParseMode : uint8_t {
  /// Runs of cleanly separated events are copied into one reusable padded buffer as a JSON array and
  /// parsed as one document (one stage-1 pass per ~64 KiB); a batch with an error is re-parsed event by
  /// event so every error is still reported per event. The default.
  kBatched,
  /// One document per event, each copied into a reusable padded buffer.
  kPerEvent,
};

/// Tuning and safety bounds for import_trace_view.
struct TraceViewOptions {
  /// An event object larger than this is skipped and counted `tv_event_too_large`.
  size_t max_event_bytes = size_t{64} << 20;
  TraceViewParseMode parse_mode = TraceViewParseMode::kBatched;
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

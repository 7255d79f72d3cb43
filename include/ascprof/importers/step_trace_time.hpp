#pragma once
/// Importer for step_trace_time.csv (torch_npu's per-step time split), every header era:
///   E1  Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,
///       Communication(Not Overlapped and Exclude Receive)
///   E2  E1 + Preparing;   E3+  Device_id first, then E2.
/// Columns are found by trimmed, case-insensitive name; absent value columns read as NaN, an absent
/// Device_id column as -1, an empty Step as -1. Values are µs as written (Python float repr).
///
/// Errors: unreadable file -> kIo; empty file -> kSchema "empty file"; no `Step` column -> kSchema
/// "FILE:line 1: missing required column 'Step' (header has: ...)"; oversized field -> kLimit.
/// A row with a non-numeric value is skipped (step_trace_bad_row, sample "FILE:line N: ...").
/// On error `out` is left empty.
#include <filesystem>
#include <string_view>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/status.hpp"
#include "ascprof/model/capture_info.hpp"

namespace ascprof::importers {

/// Reads `path` into `out` (replacing its contents).
Status import_step_trace_time(const std::filesystem::path& path, model::StepTraceTable& out, Stats& stats);

/// Same, from text in memory; `display_name` names the input in messages.
Status import_step_trace_time(std::string_view content, std::string_view display_name, model::StepTraceTable& out,
                              Stats& stats);

}  // namespace ascprof::importers

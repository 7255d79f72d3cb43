#pragma once
/// Importer for kernel_details.csv (torch_npu ASCEND_PROFILER_OUTPUT), every header era (2023 -> 2026).
///
/// Columns are found by trimmed, case-insensitive header name, never by position, with the reference
/// tool's candidate lists and its per-row `pick` rule (the first candidate column whose trimmed cell
/// is non-empty wins):
///   name   Name, Op Name, Kernel Name, Operation Name            (required)
///   type   Task Type, Kernel Type, Type                           (the reference's task_type)
///   core   Accelerator Core, Core Type, Task Type, Kernel Type, Type
///   stream Stream ID, StreamId, Stream, stream_id
///   start  Start Time(us), Start Time, Start(us), Start, ts       (required)
///   dur    Duration(us), Duration, dur;  wait  Wait Time(us), Wait Time, Wait(us), wait
///   end    End Time(us), End Time, End(us), End  (only used to fill a missing duration)
/// plus Step Id, Device_id, Model ID, Task ID, OP State, Block Dim|Block Num, Mix Block Dim|Mix Block
/// Num, HF32 Eligible, Input/Output Shapes|Data Types|Formats, Context ID.
///
/// Metrics: every other column after `Context ID` goes to KernelTable::metrics under its exact
/// header name; other unknown columns are kept as metrics only if every non-null cell is a number.
/// The 11 pipeline columns are always stored under their canonical names (`aicore_time(us)`,
/// `aiv_time(us)`, `aic_mac_time(us)`, `aic_fixpipe_time(us)`, `aic_mte1_time(us)`,
/// `aic_mte2_time(us)`, `aic_scalar_time(us)`, `aiv_vec_time(us)`, `aiv_mte2_time(us)`,
/// `aiv_mte3_time(us)`, `aiv_scalar_time(us)`), also when the file used an alternative (the name
/// without "(us)", or `AI Core Time(us)` / `AI Vector Time(us)` for the two totals).
///
/// Values: times become exact integer ns (trailing TAB, quoted, variable decimals, exponent form);
/// numeric cells holding N/A (or empty) are absent (kAbsent*, NaN); string cells are kept trimmed as
/// written (so Level0's `N/A` Accelerator Core stays "N/A"); shape cells lose the one layer of quotes
/// CSV unquoting leaves (`"32,3,224,224"` -> `32,3,224,224`). Every column of the table has one entry
/// per kept row, whichever columns the file had.
///
/// Errors: unreadable file -> kIo; empty file -> kSchema "empty file"; no name or start column ->
/// kSchema "FILE:line 1: missing required column 'Start Time(us)' (header has: ...)"; a field or row
/// above CsvOptions' bound -> kLimit. A header-only file is ok with 0 rows. A row whose start time is
/// missing or not a number is dropped (kd_bad_start_time, sample "FILE:line N: ..."); other bad cells
/// are counted (kd_*) and read as absent/0. On error `out` is left empty.
#include <filesystem>
#include <string_view>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/status.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/importers/csv_reader.hpp"
#include "ascprof/model/kernel_table.hpp"

namespace ascprof::importers {

/// Canonical names of the 11 pipeline metric columns, in the reference's field order.
inline constexpr std::string_view kPipelineMetricNames[11] = {
    "aicore_time(us)",   "aiv_time(us)",      "aic_mac_time(us)",    "aic_fixpipe_time(us)",
    "aic_mte1_time(us)", "aic_mte2_time(us)", "aic_scalar_time(us)", "aiv_vec_time(us)",
    "aiv_mte2_time(us)", "aiv_mte3_time(us)", "aiv_scalar_time(us)"};

/// Maps and reads `path` into `out` (replacing its contents), interning strings in `pool`.
/// The file is memory-mapped and pages behind the cursor are released as it goes.
Status import_kernel_details(const std::filesystem::path& path, StringPool& pool, model::KernelTable& out, Stats& stats,
                             const CsvOptions& options = {});

/// Same, from text already in memory; `display_name` names the input in messages (tests, fuzzing).
Status import_kernel_details(std::string_view content, std::string_view display_name, StringPool& pool,
                             model::KernelTable& out, Stats& stats, const CsvOptions& options = {});

}  // namespace ascprof::importers

#pragma once
/// Importers for op_statistic.csv and api_statistic.csv (ASCEND_PROFILER_OUTPUT/ of a rank folder),
/// every header era:
///   op_statistic   E2  OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)
///                  E3+ Device_id first, then E2
///   api_statistic  E2  Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance
///                  E3+ Device_id first (an integer, or "host" for host APIs), then E2
/// Columns are found by trimmed, case-insensitive name, never by position; cells are trimmed
/// (CANN's trailing TAB), may be quoted; CRLF or LF line ends. Rows keep file order.
///
/// Required columns: op_statistic OP Type, Core Type, Count, Total Time(us); api_statistic API Name,
/// Time(us), Count. Other columns are optional: absent (or an empty/N/A cell) reads as NaN, an
/// absent Level as "", an absent Device_id as -1 (op) / "" (api).
///
/// Errors: unreadable file -> kIo; 0-byte or blank file -> kSchema "FILE: empty file"; missing
/// required column -> kSchema "FILE:line 1: missing required column 'Count' (header has: ...)";
/// oversized field -> kLimit. A header-only file gives an empty table and Ok. A bad record (field
/// count differs from the header's, a required number missing or not a number, Count not a
/// non-negative integer, an optional cell that is neither a number nor empty/N/A, op Device_id not an
/// integer) is skipped and counted (op_stat_bad_row / api_stat_bad_row, sample "FILE:line N: ...").
/// On error `out` is left empty.
#include <filesystem>
#include <string_view>
#include <vector>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/status.hpp"
#include "ascprof/model/op_statistics.hpp"

namespace ascprof::importers {

/// Reads op_statistic.csv at `path` into `out` (replacing its contents).
Status import_op_statistic(const std::filesystem::path& path, std::vector<model::OpStatisticRow>& out, Stats& stats);

/// Same, from text in memory; `display_name` names the input in messages.
Status import_op_statistic(std::string_view content, std::string_view display_name,
                           std::vector<model::OpStatisticRow>& out, Stats& stats);

/// Reads api_statistic.csv at `path` into `out` (replacing its contents).
Status import_api_statistic(const std::filesystem::path& path, std::vector<model::ApiStatisticRow>& out,
                            Stats& stats);

/// Same, from text in memory; `display_name` names the input in messages.
Status import_api_statistic(std::string_view content, std::string_view display_name,
                            std::vector<model::ApiStatisticRow>& out, Stats& stats);

}  // namespace ascprof::importers

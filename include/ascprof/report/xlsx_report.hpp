#pragma once
/// report/report.xlsx (reference-analysis.md §2.9, issue 5): the root's output tables as one
/// workbook, one sheet per table in the reference's order, written with libxlsxwriter in
/// constant-memory mode so peak memory does not grow with the row count.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ascprof/common/status.hpp"

namespace ascprof::report {

/// Data rows of the raw_kernel_index sheet (the reference's cap); the CSV keeps every row.
inline constexpr uint64_t kRawKernelIndexSheetRows = 200000;
/// Excel's rows per sheet (header and note rows included).
inline constexpr uint64_t kExcelMaxRows = 1048576;

/// What one sheet of the workbook holds.
struct XlsxSheet {
  std::string name;           ///< sheet name (the reference's)
  std::string source;         ///< file it comes from, relative to the root's output folder ("" for README)
  uint64_t rows_written = 0;  ///< data rows in the sheet (header and note rows not counted)
  uint64_t rows_total = 0;    ///< data rows in the source
  bool truncated = false;     ///< rows_written < rows_total; the sheet ends with a visible note row
};

/// The default of XlsxOptions::threads: the cores in this process's CPU affinity (1 under
/// mpirun's default binding to a core; `mpirun --bind-to none` frees them), in [1, 4].
unsigned default_xlsx_threads();

/// Limits (lowered only by tests) and threads.
struct XlsxOptions {
  uint64_t raw_kernel_index_rows = kRawKernelIndexSheetRows;  ///< data-row cap of raw_kernel_index
  uint64_t max_sheet_rows = kExcelMaxRows;  ///< rows per sheet, header and note row included (>= 3)
  /// Threads writing the table sheets (each sheet on one thread; the zip is written by one). The
  /// default is the cores this process may use, at most 4: past that the single-threaded zip dominates.
  unsigned threads = default_xlsx_threads();
};

/// Writes `xlsx_path` from the tables in `root_out` (OUT/<root-slug>): README, case_summary (from
/// the stage manifests), the summarize / cross-rank / diagnostics tables, bubble_windows (from
/// evidence/bubble_windows.jsonl) and raw_kernel_index (streamed, capped). Absent or empty tables
/// give a sheet with a note row. Cells are typed per column from its first 1000 rows (numbers as
/// numbers; `*_id`, `*_ids` columns always text; numbers Excel would round in their integer part or
/// first three decimals, such as epoch µs, stay text); strings are never written as formulas.
/// Header rows are frozen and filtered.
/// The file is written under a temporary name and renamed on success; on error no file is left and
/// the error names the table and line (kIo / kParse) or the libxlsxwriter reason.
Result<std::vector<XlsxSheet>> write_report_xlsx(const std::filesystem::path& root_out,
                                                 const std::filesystem::path& xlsx_path,
                                                 const XlsxOptions& options = {});

}  // namespace ascprof::report

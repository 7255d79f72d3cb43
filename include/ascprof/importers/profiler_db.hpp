#pragma once
/// Importer for torch_npu's SQLite exports (`export_type=db`, the default since 2025):
/// `ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{rank}.db` and the rank's `analysis.db`
/// (../shared/spec/db-format.md). It fills the same model tables as the text importers, so every
/// stage after ingest is unchanged and a rank's tables are the same whichever export it came from.
///
/// Files are opened read-only and immutable: nothing is written next to them (no journal, no lock,
/// no -wal/-shm), and a read-only file system is fine. Rows are streamed from prepared queries;
/// STRING_IDS values are resolved once per id into the rank's StringPool. The kernel tables
/// (TASK, COMPUTE_TASK_INFO, TASK_PMU_INFO) are read straight from their B-tree pages when the file
/// allows it (src/importers/sqlite/btree_scan.hpp; ~5x faster than SQLite's VM on PMU rows), with
/// SQLite's own answer, rows or error, taken whenever the scan refuses a table or a page.
///
/// What maps to what (the text export's equivalent in brackets):
///  - kernels [kernel_details.csv]: COMPUTE_TASK_INFO ⋈ TASK on globalTaskId (name, opType → Type,
///    taskType → Accelerator Core, blockNum|blockDim → Block Dim, mixBlockNum|mixBlockDim → Mix Block
///    Dim, opState, hf32Eligible, shapes/types/formats; start, duration, stream, task, model, context
///    and device ids from TASK) plus COMMUNICATION_OP (opName, opType; Accelerator Core "HCCL" for
///    schema 1.0, "COMMUNICATION" later, as the text exports of those eras spell it; Block Dim 0),
///    in start order (ties: compute rows first, then by globalTaskId / opId). Wait Time is derived as
///    torch_npu derives it for kernel_details.csv: max(0, start − the previous row's end). Step Id is
///    the STEP_TIME window holding the row's start (torch_npu's own rule); absent outside every window.
///    PMU metrics are TASK_PMU_INFO pivoted by metric name: `aic_total_time` → `aicore_time(us)`,
///    `aiv_total_time` → `aiv_time(us)`, any other `*_time` → `*_time(us)` (stored in ns, read in µs),
///    `cube_utilization` → `cube_utilization(%)`, the rest (ratios, cycles) by their own name.
///    `source_line` holds the globalTaskId (compute) or opId (communication) and `source_table` says
///    which, so every row traces back to its database row.
///  - trace tables [trace_view.json]: PYTORCH_API (op → cat cpu_op, queue → enqueue/dequeue, trace →
///    python_function, mstx) and CANN_API (name "<Level>@<api>", Level from ENUM_API_TYPE) as host ops;
///    STEP_TIME as ProfilerStep ranges; TASK as device tasks (name from COMPUTE_TASK_INFO or
///    COMMUNICATION_TASK_INFO, else the task type); COMMUNICATION_OP as comm ops; COMMUNICATION_TASK_INFO
///    ⋈ TASK as plane tasks; the node launches (CANN_API type 10000 `launch`) as HostToDevice flows
///    ('s' at the launch, 'f' at each TASK sharing its connectionId), CONNECTION_IDS as async_npu flows.
///    Processes get fixed synthetic pids (the database has no trace pids): see kDbPid*.
///  - communication [communication.json]: analysis.db CommAnalyzerTime ⋈ CommAnalyzerBandwidth (one
///    row per op; no "Total Op Info" rows, which the database does not store).
///  - step trace [step_trace_time.csv]: analysis.db StepTraceTime (µs, as the real exports store it).
///  - capture facts: META_DATA parallel_group_info / distributed_args (parsed as profiler_metadata.json
///    is), RANK_DEVICE_MAP (rank, device), SCHEMA_VERSION.
///
/// Errors name file, table and reason: not SQLite or a damaged header → kParse; a damaged page met
/// while reading a table → kParse "FILE:table TASK: database disk image is malformed"; a missing
/// required table or column → kSchema; schema major version other than 1 → kSchema. Optional tables
/// that are absent (no COMMUNICATION_* on TP1, no TASK_PMU_INFO without aic_metrics) read as empty.
/// Rows without a usable time or key are skipped and counted (db_bad_row); dangling string ids read
/// as "" and are counted (db_dangling_string_id).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/status.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/model/capture_info.hpp"
#include "ascprof/model/comm_table.hpp"
#include "ascprof/model/kernel_table.hpp"
#include "ascprof/model/trace_tables.hpp"

namespace ascprof::importers {

/// Synthetic pids of the database's trace tables (trace_view.json's pids are not stored).
inline constexpr int64_t kDbPidPython = 1, kDbPidCann = 2, kDbPidHardware = 3, kDbPidCommunication = 4;

/// What a profiler database says about itself and its rank.
struct ProfilerDbInfo {
  std::string schema_version;   ///< META_DATA SCHEMA_VERSION ("1.0.0" when absent)
  int64_t rank_id = -1;         ///< RANK_DEVICE_MAP.rankId, -1 when unset
  int32_t device_id = -1;       ///< RANK_DEVICE_MAP.deviceId, -1 when unset
  model::ProfilerMetadata metadata;  ///< parallel_group_info / distributed_args of META_DATA
};

/// Schema version, rank, device and parallel groups. Fails on a file that is not a readable
/// profiler database (the first thing the rank job reads, so a bad file fails the rank early).
Result<ProfilerDbInfo> read_profiler_db_info(const std::filesystem::path& db, Stats& stats);

/// Host ops, steps, device tasks, comm ops, plane tasks and flows (see the file comment).
Status import_db_trace(const std::filesystem::path& db, StringPool& pool, model::TraceTables& out, Stats& stats);

/// Kernel rows (see the file comment). `steps` (STEP_TIME, as import_db_trace read it) fills Step Id.
Status import_db_kernels(const std::filesystem::path& db, StringPool& pool, const model::StepMarkerTable& steps,
                         model::KernelTable& out, Stats& stats);

/// analysis.db CommAnalyzerTime / CommAnalyzerBandwidth as communication.json's rows.
Status import_analysis_db_communication(const std::filesystem::path& analysis_db, StringPool& pool,
                                        model::CommStatTable& out, Stats& stats);

/// analysis.db StepTraceTime as step_trace_time.csv's rows.
Status import_analysis_db_step_trace(const std::filesystem::path& analysis_db, model::StepTraceTable& out, Stats& stats);

}  // namespace ascprof::importers

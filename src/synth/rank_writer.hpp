#pragma once
/// Writes one rank's folder of a synthetic capture (internal to the synth module): profiler_info,
/// profiler_metadata and ASCEND_PROFILER_OUTPUT/{kernel_details.csv, trace_view.json,
/// communication.json, step_trace_time.csv, op_statistic.csv, api_statistic.csv}, streaming one
/// profiler step at a time (the two statistics files are aggregated while the steps stream).
/// With the db export (ExportKinds::db) the same data also goes into
/// ASCEND_PROFILER_OUTPUT/{ascend_pytorch_profiler_<rank>.db, analysis.db} (db_sink.hpp); without the
/// text export only profiler_info_<rank>.json and the two databases are written. With moe_trace, the
/// in-kernel trace of the rank's last FusedDeepMoe call goes to moe_trace/trace_call<K>.json (either export).
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "ascprof/common/status.hpp"
#include "module_writer.hpp"
#include "moe_trace_writer.hpp"
#include "scenario.hpp"
#include "simulate.hpp"

namespace ascprof::synth {

/// The exact E3 kernel_details.csv header (input-formats.md §2), without the line end.
extern const char* const kKernelDetailsHeaderE3;
/// The E3 step_trace_time.csv header (input-formats.md §5), without the line end.
extern const char* const kStepTraceHeaderE3;

/// Identity of a rank's folder and processes.
struct RankLayout {
  int rank = 0;
  int device = 0;
  int host_pid = 0;
  std::string folder_name;        ///< <worker>_<pid>_<YYYYmmddHHMMSSfff>_ascend_pt
  int64_t clock_offset_ns = 0;    ///< added to every timestamp written (clock_offset fault)
};

RankLayout rank_layout(const Scenario& sc, int rank);

/// trace_view.json process ids (input-formats.md §3 pid encoding).
struct TracePids {
  uint64_t python = 0, cann = 0, hardware = 0, freq = 0, comm = 0, overlap = 0;
};
TracePids trace_pids(int host_pid, int device);

/// Exact counts of what one step contributed.
struct StepCounts {
  int step = 0;                   ///< ProfilerStep#N
  uint64_t kernel_rows = 0;
  uint64_t comm_ops = 0;          ///< collective ops (communication.json / COMMUNICATION rows)
  int64_t start_ns = 0, end_ns = 0;  ///< ProfilerStep range as written (clock offset included)
  std::vector<int64_t> layer_first_row;   ///< 0-based kernel_details data row of each layer's first kernel
  std::vector<int64_t> layer_anchor_row;  ///< row of each layer's anchor kernel (-1 when none, e.g. dummy rank)
  int64_t island_first_row = -1, island_last_row = -1;  ///< interior_island fragment rows (-1 = none)
};

/// Exact counts of everything written for one rank.
struct RankCounts {
  uint64_t kernel_rows = 0, kernel_rows_compute = 0, kernel_rows_comm = 0, kernel_rows_aicpu = 0;
  uint64_t events = 0;
  std::array<uint64_t, 5> by_ph{};  ///< X, M, s, f, C
  uint64_t python_ops = 0;          ///< Python X events incl. ProfilerStep
  uint64_t profiler_steps = 0;
  uint64_t cann_ops = 0;
  uint64_t device_tasks = 0;        ///< Ascend Hardware X events
  uint64_t device_tasks_kernels = 0;///< ... of which match a compute kernel_details row
  uint64_t comm_ops = 0;            ///< Group thread X events (= COMMUNICATION rows)
  uint64_t plane_tasks = 0;
  std::array<uint64_t, 4> overlap{};///< Computing, Communication, Communication(Not Overlapped), Free
  uint64_t flows_host_to_device = 0;///< s+f events of cat HostToDevice
  uint64_t flows_async_npu = 0;     ///< s+f events of cat async_npu
  uint64_t counter_events = 0;
  uint64_t metadata_events = 0;
  uint64_t comm_json_ops = 0;       ///< op entries in communication.json (Total Op Info excluded)
  uint64_t step_trace_rows = 0;
  std::vector<StepCounts> steps;
  std::vector<std::string> slow_ops;  ///< first affected op names of a slow_collective fault on this rank
  uint64_t slow_op_count = 0;
  uint64_t island_aicpu_rows = 0;     ///< AI_CPU rows of an interior_island fragment
  /// Rows written per kernel name changed or inserted by an operator fault on this rank.
  std::map<std::string, uint64_t> fault_kernel_calls;
  int64_t kernel_span_ns = 0;       ///< first kernel_details row start to the last row end
  int64_t stream_sync_ns = 0;       ///< api_statistic StreamSynchronize total
  int64_t kernel_launch_ns = 0;     ///< api_statistic KernelLaunch total
  uint64_t bytes_kernel_details = 0, bytes_trace_view = 0, bytes_communication = 0, bytes_step_trace = 0,
           bytes_profiler_info = 0, bytes_metadata = 0, bytes_op_statistic = 0, bytes_api_statistic = 0;
  uint64_t bytes_profiler_db = 0, bytes_analysis_db = 0;  ///< ascend_pytorch_profiler_<rank>.db, analysis.db
  MoeTraceSummary moe;              ///< the in-kernel trace of the rank's last FusedDeepMoe call (moe_trace)
  ModuleTruth modules;              ///< nn.Module ranges and their exact device time (with_modules)
  uint64_t total_bytes() const {
    return bytes_kernel_details + bytes_trace_view + bytes_communication + bytes_step_trace + bytes_profiler_info +
           bytes_metadata + bytes_op_statistic + bytes_api_statistic + bytes_profiler_db + bytes_analysis_db + moe.bytes;
  }
};

/// Steps for which per-layer rows are recorded in RankCounts::steps (to keep ground truth small).
inline constexpr int kLayerRowSteps = 8;

/// Which exports a rank gets (SynthOptions::export_format "text" | "db" | "both").
struct ExportKinds {
  bool text = true;
  bool db = false;
};

/// Simulates rank `layout.rank` against `table` and writes its folder under `root`.
Status write_rank(const Scenario& sc, const SyncTable& table, const RankLayout& layout,
                  const std::filesystem::path& root, RankCounts* counts, ExportKinds exports = {});

}  // namespace ascprof::synth

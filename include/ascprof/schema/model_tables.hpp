#pragma once
/// The model tables of a rank's HDF5 file, OUT/<root-slug>/ranks/<rank_id>.h5, each declared once
/// (row_table.hpp, column_table.hpp): the table's path, then its columns in stored order. Written
/// by the normalize stage (pipeline/rank_store.cpp, which adds each table's attributes). StrId
/// columns are ids into the vlen UTF-8 table /strings (0 is ""), listed in the table's `id_columns`.
/// The tables whose columns depend on the input or the rules are written in rank_store.cpp:
/// /kernel_metrics (one column per metric header of the capture), /taxa (names from the
/// knowledge's vocabulary) and /communication (one column group per transport).
#include "ascprof/analysis/normalize.hpp"
#include "ascprof/model/capture_info.hpp"
#include "ascprof/model/kernel_table.hpp"
#include "ascprof/model/trace_tables.hpp"
#include "ascprof/schema/cells.hpp"
#include "ascprof/schema/row_table.hpp"

namespace ascprof::schema {

/// A rank's kernel rows: the kernel_details columns and what normalize added to each row.
struct KernelRows {
  const model::KernelTable& kernels;
  const analysis::NormalizedKernels& normalized;
};

/// One row per kernel_details.csv row (source_line traces every row to the file; for a database
/// rank, source_table names the table whose key source_line holds).
inline constexpr std::string_view kKernelsTable = "/kernels";
template <class V>
void describe_columns(KernelRows& r, V& v) {
  const model::KernelTable& k = r.kernels;
  v("source_line", k.source_line);
  v("step_id", k.step_id);
  v("device_id", k.device_id);
  v("model_id", k.model_id);
  v("task_id", k.task_id);
  v("stream_id", k.stream_id);
  v.ids("name", k.name);
  v.ids("type", k.type);
  v.ids("op_state", k.op_state);
  v.ids("accelerator_core", k.accelerator_core);
  v("start_ns", k.start_ns);
  v("dur_ns", k.dur_ns);
  v("wait_ns", k.wait_ns);
  v("block_dim", k.block_dim);
  v("mix_block_dim", k.mix_block_dim);
  v.ids("hf32_eligible", k.hf32_eligible);
  v.ids("input_shapes", k.input_shapes);
  v.ids("input_dtypes", k.input_dtypes);
  v.ids("input_formats", k.input_formats);
  v.ids("output_shapes", k.output_shapes);
  v.ids("output_dtypes", k.output_dtypes);
  v.ids("output_formats", k.output_formats);
  v("context_id", k.context_id);
  const analysis::NormalizedKernels& n = r.normalized;
  v("taxon", n.taxon);
  v("op_type", n.op_type);
  v.ids("shape_signature", n.shape_signature);
  v("pipeline_signal", n.pipeline_signal);
  if (!k.source_table.empty()) v("source_table", k.source_table);  // database ranks only
}

// ---- /trace: the trace_view.json (or database) tables -------------------------------------------

/// kind: ProcessKind (the table's kind_values attribute names them).
inline constexpr Table<model::ProcessInfo> kProcessesTable{"/trace/processes"};
template <class V>
void describe(model::ProcessInfo& r, V& v) {
  v("pid", r.pid);
  v.id("name", r.name);
  v.id("label", r.label);
  v("sort_index", r.sort_index);
  v("device_id", r.device_id);
  v("kind", r.kind);
}

inline constexpr Table<model::ThreadInfo> kThreadsTable{"/trace/threads"};
template <class V>
void describe(model::ThreadInfo& r, V& v) {
  v("pid", r.pid);
  v("tid", r.tid);
  v.id("name", r.name);
  v("sort_index", r.sort_index);
}

inline constexpr std::string_view kHostOpsTable = "/trace/host_ops";
template <class V>
void describe_columns(model::HostOpTable& t, V& v) {
  v.ids("name", t.name);
  v.ids("cat", t.cat);
  v("is_cann", t.is_cann);
  v("pid", t.pid);
  v("tid", t.tid);
  v("start_ns", t.start_ns);
  v("dur_ns", t.dur_ns);
  v("source_offset", t.source_offset);
  v("connection_id", t.connection_id);
}

/// ProfilerStep#N ranges.
inline constexpr std::string_view kStepsTable = "/trace/steps";
template <class V>
void describe_columns(model::StepMarkerTable& t, V& v) {
  v("step", t.step);
  v("start_ns", t.start_ns);
  v("end_ns", t.end_ns);
  v("source_offset", t.source_offset);
}

inline constexpr std::string_view kDeviceTasksTable = "/trace/device_tasks";
template <class V>
void describe_columns(model::DeviceTaskTable& t, V& v) {
  v.ids("name", t.name);
  v.ids("task_type", t.task_type);
  v("stream_id", t.stream_id);
  v("task_id", t.task_id);
  v("connection_id", t.connection_id);
  v("start_ns", t.start_ns);
  v("dur_ns", t.dur_ns);
  v("source_offset", t.source_offset);
}

inline constexpr std::string_view kCommOpsTable = "/trace/comm_ops";
template <class V>
void describe_columns(model::CommOpTable& t, V& v) {
  v.ids("name", t.name);
  v.ids("group", t.group);
  v.ids("data_type", t.data_type);
  v.ids("alg_type", t.alg_type);
  v("count", t.count);
  v("connection_id", t.connection_id);
  v("start_ns", t.start_ns);
  v("dur_ns", t.dur_ns);
  v("source_offset", t.source_offset);
}

inline constexpr std::string_view kCommPlaneTasksTable = "/trace/comm_plane_tasks";
template <class V>
void describe_columns(model::CommPlaneTaskTable& t, V& v) {
  v.ids("name", t.name);
  v("plane", t.plane);
  v.ids("task_type", t.task_type);
  v.ids("transport", t.transport);
  v.ids("link_type", t.link_type);
  v("src_rank", t.src_rank);
  v("dst_rank", t.dst_rank);
  v("size_bytes", t.size_bytes);
  v("bandwidth_gbps", t.bandwidth_gbps);
  v("start_ns", t.start_ns);
  v("dur_ns", t.dur_ns);
  v("source_offset", t.source_offset);
}

/// kind: OverlapKind (the table's kind_values attribute names them).
inline constexpr std::string_view kOverlapTable = "/trace/overlap";
template <class V>
void describe_columns(model::OverlapTable& t, V& v) {
  v("kind", t.kind);
  v("start_ns", t.start_ns);
  v("dur_ns", t.dur_ns);
}

inline constexpr std::string_view kAicoreFreqTable = "/trace/aicore_freq";
template <class V>
void describe_columns(model::AicoreFreqTable& t, V& v) {
  v("ts_ns", t.ts_ns);
  v("mhz", t.mhz);
}

inline constexpr std::string_view kFlowsTable = "/trace/flows";
template <class V>
void describe_columns(model::FlowTable& t, V& v) {
  v.ids("cat", t.cat);
  v.ids("name", t.name);
  v("id", t.id);
  v("phase", t.phase);
  v("pid", t.pid);
  v("tid", t.tid);
  v("ts_ns", t.ts_ns);
}

/// Byte ranges of trace_view.json skipped as invalid JSON.
inline constexpr Table<model::DamagedSpan> kDamagedSpansTable{"/trace/damaged_spans"};
template <class V>
void describe(model::DamagedSpan& r, V& v) {
  v("offset", r.offset);
  v("length", r.length);
  v("reason", r.reason);
}

// ---- capture info --------------------------------------------------------------------------------

/// profiler_metadata.json's parallel groups (global_ranks as "0,1,2").
inline constexpr Table<model::ParallelGroup> kParallelGroupsTable{"/parallel_groups"};
template <class V>
void describe(model::ParallelGroup& r, V& v) {
  v("comm_name", r.comm_name);
  v("group_name", r.group_name);
  v("group_rank", r.group_rank);
  v("global_ranks", r.global_ranks, kCommaInts);
  v("hash", r.hash);
}

/// step_trace_time.csv (µs as written).
inline constexpr std::string_view kStepTraceTable = "/step_trace";
template <class V>
void describe_columns(model::StepTraceTable& t, V& v) {
  v("device_id", t.device_id);
  v("step", t.step);
  v("computing_us", t.computing);
  v("comm_not_overlapped_us", t.comm_not_overlapped);
  v("overlapped_us", t.overlapped);
  v("communication_us", t.communication);
  v("free_us", t.free);
  v("stage_us", t.stage);
  v("bubble_us", t.bubble);
  v("comm_not_overlapped_excl_receive_us", t.comm_not_overlapped_excl_receive);
  v("preparing_us", t.preparing);
}

}  // namespace ascprof::schema

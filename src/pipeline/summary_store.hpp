#pragma once
// Persistence of the summarize-stage results (model::RankSummary) in a rank's HDF5 file,
// OUT/<root-slug>/ranks/<rank_id>.h5: "the same tables" as the per-rank CSVs, but with integer
// nanoseconds and every field needed to rebuild the RankSummary exactly. Small tables (at most a few
// hundred thousand rows), so strings are vlen UTF-8 columns (h5py: `f[...].asstr()[:]`), list / dict
// cells are compact JSON strings, numbers are typed columns.
//
// Layout (every table is a group of equal-length 1-D columns with `columns` and `row_count`):
//   /summary                   group (no attributes)
//   Metric columns (M), shared by /summary/segments, /summary/layers and /summary/rank, one per
//   WindowMetrics field:
//       event_count u64, row_start u32, row_end u32, start_ns i64, end_ns i64, wall_ns i64,
//       busy_union_ns i64, kernel_sum_ns i64, wait_sum_ns i64, total_cost_ns i64, underfeed_ns i64,
//       underfeed_ratio f64, internal_bubble_total_ns i64, largest_internal_bubble_ns i64,
//       bubble_count u32, stream_count u32,
//       task_type_counts s, role_counts s, category_counts s (compact JSON objects name -> count in
//       the model's order, e.g. {"AI_CORE":3,"AI_CPU":1}),
//       top_bubbles s (JSON array of {"bubble_index","start_ns","end_ns","before_row","after_row"}
//       objects, largest first; [] for layers)
//   /summary/segments          one row per SegmentSummary:
//       segment u32 (row of /structure/segments), M, anomaly_tags s (JSON array of strings),
//       has_attention u8, has_moe u8, has_communication u8, attention_event_count u64,
//       moe_event_count u64, comm_event_count u64, anatomy_kind s ("" for non-steps), then for W in
//       head, main, tail: W_empty u8, W_row_start u32, W_row_end u32, W_start_ns i64, W_end_ns i64,
//       W_wall_ns i64, W_busy_ns i64, W_bubble_ns i64, W_event_count u64; then head_ratio f64,
//       main_ratio f64, tail_ratio f64, bubble_ratio f64
//   /summary/layers            one row per LayerSummary: layer u32 (row of /structure/layers), M,
//       has_attention u8, has_moe u8, has_communication u8
//   /summary/rank              exactly one row: M for the whole rank
//   /summary/blocks            one row per BlockSummary: block u32 (row of /classes/blocks),
//       M (top_bubbles is [] for blocks), op_type_counts s (JSON object
//       as M's counts), dominant_op_type s, comm_duration_ns i64, comm_share f64, pipeline_signal u8,
//       pipeline_us s (as in /summary/operators), bound_stage s, bound_family s, dominant_core s,
//       top_ops s (JSON array of {"name","task_type","call_count","duration_sum_ns"} in model order),
//       has_attention u8, has_moe u8, has_communication u8
//   /summary/operators         one row per OperatorRow, in model order (total cost desc, then name):
//       name s, task_type s, roles s, categories s, call_count u64, duration_sum_ns i64,
//       wait_sum_ns i64, stream_count u32, row_ranges s (JSON [[start,end],...], inclusive),
//       sample_rows s (JSON array of rows), op_type s, bound_stage s, bound_family s,
//       dominant_core s, pipeline_signal u8, pipeline_us s (JSON array of µs per
//       PipelineRules::fields, shortest round-trip form; "" when empty; a non-finite value is null)
//   /summary/hccl              hccl_op_kind s, comm_aiv_fused u8, name_count u64, call_count u64,
//       duration_sum_ns i64, wait_sum_ns i64, duration_avg_us f64, duration_min_us f64,
//       duration_p50_us f64, duration_p90_us f64, duration_max_us f64, wait_ratio f64
//   /summary/wait_anchors      op u32 (row of /summary/operators), total_cost_avg_rank u32,
//       wait_ratio f64, is_false_hotspot_risk u8
//   /summary/aicpu             name s, call_count u64, duration_sum_ns i64,
//       overlap_with_ai_core_ns i64, masked_ratio f64, classification s, row_ranges s, sample_rows s
//       (JSON as in /summary/operators)
//
// Strings are stored as the store writes every string (invalid UTF-8 and NUL become U+FFFD), so a
// round trip is exact for valid UTF-8. Re-running the stage on an existing file (H5Writer::update):
// remove "/summary" first (H5Writer::remove), since creating an existing table fails.
#include <string>

#include "ascprof/common/status.hpp"
#include "ascprof/model/summary.hpp"
#include "ascprof/store/h5_writer.hpp"

namespace ascprof::pipeline {

/// Empty if the internal references of `s` are consistent (every wait anchor's op is a row of
/// s.operators); otherwise a reason naming the first bad entry.
std::string summary_inconsistency(const model::RankSummary& s);

/// Writes /summary (summarize stage). kInternal error if `s` is inconsistent (nothing written then);
/// kIo from the store on write failures (e.g. /summary already exists).
Status write_summary_tables(store::H5Writer& w, const model::RankSummary& s);

/// Reads /summary of `h5_path` back exactly as written. kIo if the file cannot be opened; kSchema
/// (naming the file and dataset) if /summary or a table is missing, a column is missing or has the
/// wrong type or length, /summary/rank does not have exactly one row, a JSON cell does not parse, or
/// a wait anchor names a missing operator (so callers can index without checks).
Result<model::RankSummary> read_summary_tables(const std::string& h5_path);

}  // namespace ascprof::pipeline

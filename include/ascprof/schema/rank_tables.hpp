#pragma once
/// The structure and summary tables of a rank's HDF5 file, OUT/<root-slug>/ranks/<rank_id>.h5,
/// each declared once (row_table.hpp): the table's path, then its columns in stored order. The
/// segment stage writes /structure, the classify stage /classes, the summarize stage /summary;
/// the root and --from-stage read them back exactly (pipeline/structure_store, summary_store).
///
/// Types on disk follow the fields (model/structure.hpp, model/summary.hpp): u32/i64/... as
/// declared there, bool as u8, text as UTF-8 strings, enums by name, lists and small records as
/// compact JSON cells (cells.hpp). Times are integer ns; rows are kernel_details row indices.
#include "ascprof/model/structure.hpp"
#include "ascprof/model/summary.hpp"
#include "ascprof/schema/cells.hpp"
#include "ascprof/schema/row_table.hpp"

namespace ascprof::schema {

inline constexpr EnumNames<model::SegmentType> kSegmentTypeNames{model::segment_type_name, 7};
inline constexpr EnumNames<model::LayerRole> kLayerRoleNames{model::layer_role_name, 4};
inline constexpr EnumNames<model::StepSource> kStepSourceNames{model::step_source_name, 3};
inline constexpr EnumNames<model::BlockKind> kBlockKindNames{model::block_kind_name, 5};
inline constexpr EnumNames<model::BoundarySource> kBoundarySourceNames{model::boundary_source_name, 3};

// ---- /structure (segment stage; the group's attributes: rank_id, event_count, step_source,
// anchor_family) ----------------------------------------------------------------------------------

/// One row per segment, in row order.
inline constexpr Table<model::StepSegment> kSegmentsTable{"/structure/segments"};
template <class V>
void describe(model::StepSegment& r, V& v) {
  v("segment_id", r.segment_id);
  v("segment_type", r.type, kSegmentTypeNames);
  v("complete", r.complete);
  v("row_start", r.row_start);
  v("row_end", r.row_end);
  v("start_ns", r.start_ns);
  v("end_ns", r.end_ns);
  v("step_family", r.step_family);
  v("main_layer_count", r.main_layer_count);
  v("speculative_layer_count", r.speculative_layer_count);
  v("structure_signature", r.structure_signature);
  v("cluster_id", r.cluster_id);
  v("first_layer", r.first_layer);
  v("layer_count", r.layer_count);
  v("step_source", r.source, kStepSourceNames);
  v("declared_step", r.declared_step);
  v("phase", r.phase);
  v("microbatch_count", r.microbatch_count);
  v("frame_reasons", r.frame_reasons, kStringList);
  v("frame_tags", r.frame_tags, kStringList);
  v("selection_rows", r.selection_rows, kIndexList);
}

/// The distinct layer signatures; a layer's `signature` is a row of this table.
inline constexpr Table<std::string> kLayerSignaturesTable{"/structure/layer_signatures"};
template <class V>
void describe(std::string& r, V& v) {
  v("signature", r);
}

/// One row per layer, grouped by segment.
inline constexpr Table<model::LayerSegment> kLayersTable{"/structure/layers"};
template <class V>
void describe(model::LayerSegment& r, V& v) {
  v("layer_id", r.layer_id);
  v("segment", r.segment);
  v("layer_index", r.layer_index);
  v("row_start", r.row_start);
  v("row_end", r.row_end);
  v("start_ns", r.start_ns);
  v("end_ns", r.end_ns);
  v("first_anchor_row", r.first_anchor_row);
  v("layer_role", r.role, kLayerRoleNames);
  v("microbatch", r.microbatch);
  v("boundary_source", r.boundary_source, kBoundarySourceNames);
  v("signature", r.signature);
}

inline constexpr Table<model::HardError> kHardErrorsTable{"/structure/hard_errors"};
template <class V>
void describe(model::HardError& r, V& v) {
  v("error_type", r.error_type);
  v("row_start", r.row_start);
  v("row_end", r.row_end);
  v("segment", r.segment);
  v("detail", r.detail);
}

/// One row per declared step, checked against the structural steps.
inline constexpr Table<model::StepBoundaryCheck> kBoundaryChecksTable{"/structure/boundary_checks"};
template <class V>
void describe(model::StepBoundaryCheck& r, V& v) {
  v("declared_step", r.declared_step);
  v("step_source", r.source, kStepSourceNames);
  v("row_start", r.row_start);
  v("row_end", r.row_end);
  v("structural_steps", r.structural_steps);
  v("agrees", r.agrees);
  v("note", r.note);
}

/// One row per (step, layer role).
inline constexpr Table<model::StructureObservation> kObservationsTable{"/structure/observations"};
template <class V>
void describe(model::StructureObservation& r, V& v) {
  v("segment", r.segment);
  v("layer_role", r.role, kLayerRoleNames);
  v("implementation_names", r.implementation_names, kStringList);
}

/// One row per (step, operator role): the reference's structure observations.
inline constexpr Table<model::StepRoleObservation> kRoleObservationsTable{"/structure/role_observations"};
template <class V>
void describe(model::StepRoleObservation& r, V& v) {
  v("segment", r.segment);
  v("role", r.role);
  v("implementation_names", r.implementation_names, kStringList);
  v("rows", r.rows, kIndexList);
}

// ---- /classes (classify stage; attribute rank_id; plus the 1-D int32 datasets layer_class and
// step_class: per layer / segment the row of its class, -1 for non-steps) -------------------------

/// One row per block, grouped by layer.
inline constexpr Table<model::BlockSegment> kBlocksTable{"/classes/blocks"};
template <class V>
void describe(model::BlockSegment& r, V& v) {
  v("block_id", r.block_id);
  v("layer", r.layer);
  v("block_index", r.block_index);
  v("block_kind", r.kind, kBlockKindNames);
  v("companion_layer", r.companion_layer);
  v("row_start", r.row_start);
  v("row_end", r.row_end);
  v("start_ns", r.start_ns);
  v("end_ns", r.end_ns);
  v("event_count", r.event_count);
  v("block_class", r.block_class);
}

/// The shape-strict classes of each scope; `members` are rows of the scope's table.
inline constexpr Table<model::ShapeClass> kBlockClassesTable{"/classes/block_classes"};
inline constexpr Table<model::ShapeClass> kLayerClassesTable{"/classes/layer_classes"};
inline constexpr Table<model::ShapeClass> kStepClassesTable{"/classes/step_classes"};
template <class V>
void describe(model::ShapeClass& r, V& v) {
  v("class_id", r.class_id);
  v("structure_signature", r.structure_signature);
  v("scope_label", r.scope_label);
  v("has_unknown_shape", r.has_unknown_shape);
  v("shape_pairs_count", r.shape_pairs_count);
  v("members", r.members, kIndexList);
  v("block_kind", r.block_kind, kBlockKindNames);
  v("companion_layer", r.companion_layer);
  v("block_kinds", r.block_kinds, kStringList);
  v("child_class_ids", r.child_class_ids, kStringList);
  v("main_layer_count", r.main_layer_count);
  v("layer_count", r.layer_count);
  v("step_family", r.step_family);
}

// ---- /summary (summarize stage) -----------------------------------------------------------------

/// The §2.5.1 metric columns of a window, shared by the segment, layer, block and rank tables.
template <class V>
void describe(model::WindowMetrics& r, V& v) {
  v("event_count", r.event_count);
  v("row_start", r.row_start);
  v("row_end", r.row_end);
  v("start_ns", r.start_ns);
  v("end_ns", r.end_ns);
  v("wall_ns", r.wall_ns);
  v("busy_union_ns", r.busy_union_ns);
  v("kernel_sum_ns", r.kernel_sum_ns);
  v("wait_sum_ns", r.wait_sum_ns);
  v("total_cost_ns", r.total_cost_ns);
  v("underfeed_ns", r.underfeed_ns);
  v("underfeed_ratio", r.underfeed_ratio);
  v("internal_bubble_total_ns", r.internal_bubble_total_ns);
  v("largest_internal_bubble_ns", r.largest_internal_bubble_ns);
  v("bubble_count", r.bubble_count);
  v("stream_count", r.stream_count);
  v("task_type_counts", r.task_type_counts, kNameCounts);
  v("role_counts", r.role_counts, kNameCounts);
  v("category_counts", r.category_counts, kNameCounts);
  v("top_bubbles", r.top_bubbles, kBubbles);
}

/// One anatomy window of a step, prefixed head_ / main_ / tail_.
template <class V>
void describe(model::AnatomyWindow& r, V& v) {
  v("empty", r.empty);
  v("row_start", r.row_start);
  v("row_end", r.row_end);
  v("start_ns", r.start_ns);
  v("end_ns", r.end_ns);
  v("wall_ns", r.wall_ns);
  v("busy_ns", r.busy_ns);
  v("bubble_ns", r.bubble_ns);
  v("event_count", r.event_count);
}

/// §2.6 bound classification of an operator or a block.
template <class V>
void describe(model::BoundClass& r, V& v) {
  v("bound_stage", r.bound_stage);
  v("bound_family", r.bound_family);
  v("dominant_core", r.dominant_core);
}

/// Exactly one row: the metrics of the whole rank.
inline constexpr Table<model::WindowMetrics> kRankSummaryTable{"/summary/rank", 1};

/// One row per segment (`segment`: its row of /structure/segments).
inline constexpr Table<model::SegmentSummary> kSegmentSummaryTable{"/summary/segments"};
template <class V>
void describe(model::SegmentSummary& r, V& v) {
  v("segment", r.segment);
  v.part("", r.metrics);
  v("anomaly_tags", r.anomaly_tags, kStringList);
  v("has_attention", r.has_attention);
  v("has_moe", r.has_moe);
  v("has_communication", r.has_communication);
  v("attention_event_count", r.attention_event_count);
  v("moe_event_count", r.moe_event_count);
  v("comm_event_count", r.comm_event_count);
  v("anatomy_kind", r.anatomy.anatomy_kind);
  v.part("head_", r.anatomy.head);
  v.part("main_", r.anatomy.main);
  v.part("tail_", r.anatomy.tail);
  v("head_ratio", r.anatomy.head_ratio);
  v("main_ratio", r.anatomy.main_ratio);
  v("tail_ratio", r.anatomy.tail_ratio);
  v("bubble_ratio", r.anatomy.bubble_ratio);
}

/// One row per layer (`layer`: its row of /structure/layers); top_bubbles is [].
inline constexpr Table<model::LayerSummary> kLayerSummaryTable{"/summary/layers"};
template <class V>
void describe(model::LayerSummary& r, V& v) {
  v("layer", r.layer);
  v.part("", r.metrics);
  v("has_attention", r.has_attention);
  v("has_moe", r.has_moe);
  v("has_communication", r.has_communication);
}

/// One row per block (`block`: its row of /classes/blocks); top_bubbles is [].
inline constexpr Table<model::BlockSummary> kBlockSummaryTable{"/summary/blocks"};
template <class V>
void describe(model::BlockSummary& r, V& v) {
  v("block", r.block);
  v.part("", r.metrics);
  v("op_type_counts", r.op_type_counts, kNameCounts);
  v("dominant_op_type", r.dominant_op_type);
  v("comm_duration_ns", r.comm_duration_ns);
  v("comm_share", r.comm_share);
  v("pipeline_signal", r.pipeline_signal);
  v("pipeline_us", r.pipeline_us, kDoubles);
  v.part("", r.bound);
  v("top_ops", r.top_ops, kTopOps);
  v("has_attention", r.has_attention);
  v("has_moe", r.has_moe);
  v("has_communication", r.has_communication);
}

/// One row per operator, in model order (total cost desc, then name).
inline constexpr Table<model::OperatorRow> kOperatorsTable{"/summary/operators"};
template <class V>
void describe(model::OperatorRow& r, V& v) {
  v("name", r.name);
  v("task_type", r.task_type);
  v("roles", r.roles);
  v("categories", r.categories);
  v("call_count", r.call_count);
  v("duration_sum_ns", r.duration_sum_ns);
  v("wait_sum_ns", r.wait_sum_ns);
  v("stream_count", r.stream_count);
  v("row_ranges", r.row_ranges, kRowRanges);
  v("sample_rows", r.sample_rows, kIndexList);
  v("op_type", r.op_type);
  v.part("", r.bound);
  v("pipeline_signal", r.pipeline_signal);
  v("pipeline_us", r.pipeline_us, kDoubles);
}

inline constexpr Table<model::HcclOpRow> kHcclTable{"/summary/hccl"};
template <class V>
void describe(model::HcclOpRow& r, V& v) {
  v("hccl_op_kind", r.hccl_op_kind);
  v("comm_aiv_fused", r.comm_aiv_fused);
  v("name_count", r.name_count);
  v("call_count", r.call_count);
  v("duration_sum_ns", r.duration_sum_ns);
  v("wait_sum_ns", r.wait_sum_ns);
  v("duration_avg_us", r.duration_avg_us);
  v("duration_min_us", r.duration_min_us);
  v("duration_p50_us", r.duration_p50_us);
  v("duration_p90_us", r.duration_p90_us);
  v("duration_max_us", r.duration_max_us);
  v("wait_ratio", r.wait_ratio);
}

/// `op`: a row of /summary/operators.
inline constexpr Table<model::WaitAnchorRow> kWaitAnchorsTable{"/summary/wait_anchors"};
template <class V>
void describe(model::WaitAnchorRow& r, V& v) {
  v("op", r.op);
  v("total_cost_avg_rank", r.total_cost_avg_rank);
  v("wait_ratio", r.wait_ratio);
  v("is_false_hotspot_risk", r.is_false_hotspot_risk);
}

inline constexpr Table<model::AicpuRow> kAicpuTable{"/summary/aicpu"};
template <class V>
void describe(model::AicpuRow& r, V& v) {
  v("name", r.name);
  v("call_count", r.call_count);
  v("duration_sum_ns", r.duration_sum_ns);
  v("overlap_with_ai_core_ns", r.overlap_with_ai_core_ns);
  v("masked_ratio", r.masked_ratio);
  v("classification", r.classification);
  v("row_ranges", r.row_ranges, kRowRanges);
  v("sample_rows", r.sample_rows, kIndexList);
}

// ---- the tables of each group, in stored order: f(table, rows) for each (writers and readers
// walk the same list) ----------------------------------------------------------------------------

/// (const) model::RankStructure
inline constexpr auto kStructureTables = [](auto& s, auto&& f) {
  f(kSegmentsTable, s.segments);
  f(kLayerSignaturesTable, s.layer_signatures);
  f(kLayersTable, s.layers);
  f(kHardErrorsTable, s.hard_errors);
  f(kBoundaryChecksTable, s.boundary_checks);
  f(kObservationsTable, s.observations);
  f(kRoleObservationsTable, s.role_observations);
};

/// (const) model::RankClasses
inline constexpr auto kClassTables = [](auto& c, auto&& f) {
  f(kBlocksTable, c.blocks);
  f(kBlockClassesTable, c.block_classes);
  f(kLayerClassesTable, c.layer_classes);
  f(kStepClassesTable, c.step_classes);
};

/// (const) model::RankSummary; /summary/rank apart (one row)
inline constexpr auto kSummaryTables = [](auto& s, auto&& f) {
  f(kSegmentSummaryTable, s.segments);
  f(kLayerSummaryTable, s.layers);
  f(kBlockSummaryTable, s.blocks);
  f(kOperatorsTable, s.operators);
  f(kHcclTable, s.hccl);
  f(kWaitAnchorsTable, s.wait_anchors);
  f(kAicpuTable, s.aicpu);
};

/// Writes every table `tables` lists for `group` (stopping at the first error).
template <class Group, class Tables>
Status write_tables(store::H5Writer& w, const Group& group, Tables tables) {
  Status st;
  tables(group, [&](auto table, const auto& rows) {
    if (st.ok()) st = write_rows(w, table, rows);
  });
  return st;
}

/// Reads every table `tables` lists into `group` (stopping at the first error).
template <class Group, class Tables>
Status read_tables(const store::H5Reader& r, Group& group, Tables tables) {
  Status st;
  tables(group, [&](auto table, auto& rows) {
    if (st.ok()) st = read_rows(r, table, &rows);
  });
  return st;
}

}  // namespace ascprof::schema

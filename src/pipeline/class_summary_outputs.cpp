#include "ascprof/pipeline/class_summary_outputs.hpp"

#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>

#include "ascprof/common/csv_writer.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/layout/out_layout.hpp"
#include "pipeline_columns.hpp"

namespace ascprof::pipeline {

namespace fs = std::filesystem;

namespace {

// Numbers inside JSON cells: fixed decimals, as summary_outputs.cpp writes top_ops.
std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

void append_string(std::string& out, std::string_view s) {
  out += '"';
  json_escape_append(out, s);
  out += '"';
}

std::string strings_json(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    append_string(out, v[i]);
  }
  return out + "]";
}

std::string counts_json(const model::Counts& c) {
  std::string out = "{";
  for (size_t i = 0; i < c.size(); ++i) {
    if (i) out += ',';
    append_string(out, c[i].first);
    out += ':' + std::to_string(c[i].second);
  }
  return out + "}";
}

std::string doubles_json(const std::vector<std::pair<std::string, double>>& d) {
  std::string out = "{";
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) out += ',';
    append_string(out, d[i].first);
    out += ':' + fixed(d[i].second, 6);
  }
  return out + "}";
}

// The reference's key order: name, task_type, duration_sum_us, call_count.
std::string top_ops_json(const std::vector<analysis::ClassTopOp>& ops) {
  std::string out = "[";
  for (size_t i = 0; i < ops.size(); ++i) {
    const auto& t = ops[i];
    out += i ? ",{\"name\":" : "{\"name\":";
    append_string(out, t.name);
    out += ",\"task_type\":";
    append_string(out, t.task_type);
    out += ",\"duration_sum_us\":" + fixed(static_cast<double>(t.duration_sum_ns) / 1e3, 3) +
           ",\"call_count\":" + std::to_string(t.call_count) + "}";
  }
  return out + "]";
}

std::string top_layer_classes_json(const std::vector<analysis::TopLayerClass>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    out += i ? ",{\"layer_class_id\":" : "{\"layer_class_id\":";
    append_string(out, v[i].layer_class_id);
    out += ",\"wall_ms_sum\":" + fixed(v[i].wall_ms_sum, 3) + ",\"member_count\":" + std::to_string(v[i].member_count) +
           "}";
  }
  return out + "]";
}

void wall_cells(CsvRow& r, double sum, double mean, double p50, double p90) {
  r.number(sum, 3).number(mean).number(p50).number(p90);
}

// A table's text: header + rows, or nothing at all without rows (the reference's convention).
Status write_table(const fs::path& path, std::initializer_list<std::string_view> columns, const std::string& rows,
                   std::vector<fs::path>& written) {
  ASCPROF_RETURN_IF_ERROR(write_file_atomic(path, rows.empty() ? std::string() : csv_header(columns) + rows));
  written.push_back(path);
  return {};
}

}  // namespace

const std::vector<std::string>& class_summary_tables() {
  static const std::vector<std::string> t = {layout::kBlockClassSummaryCsv, layout::kLayerClassSummaryCsv,
                                             layout::kStepClassSummaryCsv};
  return t;
}

Result<std::vector<fs::path>> write_root_structure_class_summaries(const fs::path& root_out,
                                                                   const analysis::ClassSummaries& cs,
                                                                   const knowledge::Knowledge& kb) {
  std::vector<fs::path> written;
  CsvRow r;
  std::string rows;

  for (const auto& b : cs.blocks) {
    r.text(b.block_class_id).text(b.block_kind).boolean(b.companion_layer).number(b.member_count);
    r.number(uint64_t{b.rank_count}).boolean(b.has_unknown_shape);
    wall_cells(r, b.wall_ms_sum, b.wall_ms_mean, b.wall_ms_p50, b.wall_ms_p90);
    r.number(b.busy_ms_sum, 3).number(b.busy_ms_mean).number(b.bubble_ms_mean);
    r.number(b.comm_share_mean).number(b.comm_duration_us_sum, 3).boolean(b.pipeline_signal);
    r.text(output_field_name(b.bound.bound_stage)).text(b.bound.bound_family).text(b.bound.dominant_core).text(b.dominant_op_type);
    r.json(counts_json(b.bound_family_member_histogram)).json(counts_json(b.op_type_counts)).json(top_ops_json(b.top_ops));
    pipeline_cells(r, b.pipeline_us, kb.pipeline.fields().size());
    rows += r.take_line();
  }
  {
    CsvRow h;
    for (const auto& c : columns({{"block_class_id", "block_kind", "companion_layer", "member_count", "rank_count",
                                   "has_unknown_shape", "wall_ms_sum", "wall_ms_mean", "wall_ms_p50", "wall_ms_p90",
                                   "busy_ms_sum", "busy_ms_mean", "bubble_ms_mean", "comm_share_mean",
                                   "comm_duration_us_sum", "pipeline_signal", "bound_stage", "bound_family",
                                   "dominant_core", "dominant_op_type", "bound_family_member_histogram",
                                   "op_type_counts", "top_ops"},
                                  pipeline_columns(kb)}))
      h.text(c);
    const std::string header = h.take_line();
    ASCPROF_RETURN_IF_ERROR(write_file_atomic(root_out / layout::kBlockClassSummaryCsv, rows.empty() ? std::string() : header + rows));
    written.push_back(root_out / layout::kBlockClassSummaryCsv);
  }

  rows.clear();
  for (const auto& l : cs.layers) {
    r.text(l.layer_class_id).text(l.structure_signature).json(strings_json(l.block_kinds));
    r.json(strings_json(l.block_class_ids)).boolean(l.companion_layer).boolean(l.has_unknown_shape);
    r.number(l.member_count).number(uint64_t{l.rank_count});
    wall_cells(r, l.wall_ms_sum, l.wall_ms_mean, l.wall_ms_p50, l.wall_ms_p90);
    r.number(l.busy_ms_mean).number(l.bubble_ms_mean);
    r.json(doubles_json(l.block_kind_wall_ms_mean)).json(doubles_json(l.block_kind_wall_ms_share_mean));
    r.json(top_ops_json(l.top_ops));
    rows += r.take_line();
  }
  ASCPROF_RETURN_IF_ERROR(write_table(
      root_out / layout::kLayerClassSummaryCsv,
      {"layer_class_id", "structure_signature", "block_kinds", "block_class_ids", "companion_layer",
       "has_unknown_shape", "member_count", "rank_count", "wall_ms_sum", "wall_ms_mean", "wall_ms_p50", "wall_ms_p90",
       "busy_ms_mean", "bubble_ms_mean", "block_kind_wall_ms_mean", "block_kind_wall_ms_share_mean", "top_ops"},
      rows, written));

  rows.clear();
  for (const auto& s : cs.steps) {
    r.text(s.step_class_id).text(s.structure_signature).text(s.step_family);
    r.number(uint64_t{s.main_layer_count}).number(uint64_t{s.layer_count}).boolean(s.has_unknown_shape);
    r.number(s.member_count).number(uint64_t{s.rank_count});
    wall_cells(r, s.wall_ms_sum, s.wall_ms_mean, s.wall_ms_p50, s.wall_ms_p90);
    r.number(s.busy_ms_mean).number(s.bubble_ms_mean);
    r.number(s.head_ms_mean).number(s.main_ms_mean).number(s.tail_ms_mean);
    r.number(s.head_ratio_mean).number(s.main_ratio_mean).number(s.tail_ratio_mean).number(s.bubble_ratio_mean);
    r.json(top_layer_classes_json(s.top_layer_classes)).json(top_ops_json(s.top_ops));
    rows += r.take_line();
  }
  ASCPROF_RETURN_IF_ERROR(write_table(
      root_out / layout::kStepClassSummaryCsv,
      {"step_class_id", "structure_signature", "step_family", "main_layer_count", "layer_count", "has_unknown_shape",
       "member_count", "rank_count", "wall_ms_sum", "wall_ms_mean", "wall_ms_p50", "wall_ms_p90", "busy_ms_mean",
       "bubble_ms_mean", "head_ms_mean", "main_ms_mean", "tail_ms_mean", "head_ratio_mean", "main_ratio_mean",
       "tail_ratio_mean", "bubble_ratio_mean", "top_layer_classes", "top_ops"},
      rows, written));
  return written;
}

}  // namespace ascprof::pipeline

// Layout of OUT/<root-slug>/ranks/<rank_id>.h5 (readable with h5py/h5dump; each table is one
// compound dataset, store::TableWriter, whose columns are declared in include/ascprof/schema/
// model_tables.hpp and rank_tables.hpp; string-id columns are uint32 ids into the vlen UTF-8
// dataset /strings, listed in the table's `id_columns` / `id_tables` attributes):
//   /            attrs: tool_version, stage, schema_version, complete, rank_id, rank_dir, source (text|db), rank_path,
//                rank_id_source, device_id, profiler_level, header_era, input fingerprints
//   /strings     interned strings (index = id; 0 is "")
//   /kernels     one row per kernel_details.csv row (source_line traces every row to the file; for a
//                database rank, source_table names the table whose key source_line holds)
//   /kernel_metrics  the metric columns by header name ('/' in a name becomes '_per_')
//   /taxa        distinct (name, type, core) with categories, roles, op_type, hccl_op_kind, name_key
//   /trace/{processes,threads,host_ops,steps,device_tasks,comm_ops,comm_plane_tasks,overlap,flows,aicore_freq,
//           damaged_spans}
//   /communication, /parallel_groups, /step_trace, /stats
//   /moe_trace/{intervals,cores,calls,phases,bubbles}  in-kernel MoE traces, when the rank has any
//                (moe_trace_store.cpp): every paired interval (call, core, label, extra id, index, start/end ns
//                on the core's own clock), each core's T0, each call's file, status and kernel row, its
//                phases per core group, its bubbles
//   /modules/{summary,calls}  the module breakdown, when the trace has nn.Module ranges (module_store.cpp):
//                per module path (text) its depth, calls, host ns, self / total device ns, tasks and wait ns; per
//                call its row, thread, start/end ns, device ns and the event's source_offset; the group's
//                attributes say where every device task's time went (module_ns, outside_ns, unlaunched_ns,
//                their task counts, device_ns, and how launches were placed: by_launch_thread,
//                by_task_queue, by_torch_op)
#include <algorithm>
#include <cmath>
#include <string>

#include "ascprof/common/join.hpp"
#include "ascprof/schema/column_table.hpp"
#include "ascprof/schema/model_tables.hpp"
#include "ascprof/store/h5_writer.hpp"
#include "ascprof/store/stats_table.hpp"
#include "rank_store.hpp"

namespace ascprof::pipeline {

namespace {


std::string dataset_name(std::string_view header) {
  std::string out;
  for (char c : header) {
    if (c == '/') out += "_per_";
    else if (c == '.') out += '_';
    else out += c;
  }
  return out.empty() ? std::string("unnamed") : out;
}

}  // namespace

static Status write_taxa(store::H5Writer& w, const analysis::NormalizedKernels& n, const knowledge::Knowledge& kb) {
  const size_t rows = n.taxa.size();
  std::vector<StrId> name(rows), type(rows), core(rows), key(rows);
  std::vector<std::string> cats(rows), roles(rows);
  std::vector<uint8_t> op_type(rows), hccl(rows);
  for (size_t i = 0; i < rows; ++i) {
    const auto& e = n.taxa[i];
    name[i] = e.name;
    type[i] = e.type;
    core[i] = e.core;
    key[i] = e.name_key;
    cats[i] = join(analysis::category_names(e.categories, kb.vocab), ',');
    roles[i] = join(analysis::role_names(e.roles, kb.vocab), ',');
    op_type[i] = e.op_type;
    hccl[i] = e.hccl_kind;
  }
  store::TableWriter t(w, "/taxa", rows);
  t.id_column("name", name);
  t.id_column("type", type);
  t.id_column("accelerator_core", core);
  t.string_column("op_categories", cats);
  t.string_column("op_roles", roles);
  t.column("op_type", op_type);
  t.column("hccl_op_kind", hccl);
  t.id_column("name_key", key);
  ASCPROF_RETURN_IF_ERROR(t.finish());
  // Enum columns store indices into these vocabularies (also used by /kernels/op_type).
  ASCPROF_RETURN_IF_ERROR(w.set_string_array_attr("/taxa", "op_type_values", kb.vocab.op_types()));
  return w.set_string_array_attr("/taxa", "hccl_op_kind_values", kb.vocab.hccl_kinds());
}

Status write_kernel_tables(store::H5Writer& w, const model::KernelTable& k, const analysis::NormalizedKernels& n,
                           const knowledge::Knowledge& kb) {
  ASCPROF_RETURN_IF_ERROR(schema::write_columns(w, schema::kKernelsTable, k.size(), schema::KernelRows{k, n}));
  if (!k.source_table.empty())
    ASCPROF_RETURN_IF_ERROR(w.set_string_array_attr(
        "/kernels", "source_table_values",
        std::vector<std::string>(std::begin(model::kKernelSourceNames), std::end(model::kKernelSourceNames))));
  ASCPROF_RETURN_IF_ERROR(w.set_string_attr("/kernels", "header", join(k.header.columns, ',')));
  ASCPROF_RETURN_IF_ERROR(w.set_string_attr("/kernels", "era", k.header.era));

  store::TableWriter m(w, "/kernel_metrics", k.size(), store::TableWriter::Values::kBorrow);
  std::vector<std::string> headers;
  for (const auto& col : k.metrics) {
    m.column(dataset_name(col.name), col.values);
    headers.push_back(col.name);
  }
  ASCPROF_RETURN_IF_ERROR(m.finish());
  ASCPROF_RETURN_IF_ERROR(w.set_string_array_attr("/kernel_metrics", "headers", headers));
  return write_taxa(w, n, kb);
}

Status write_trace_tables(store::H5Writer& w, const model::TraceTables& tr) {
  ASCPROF_RETURN_IF_ERROR(schema::write_rows(w, schema::kProcessesTable, tr.processes));
  const std::vector<std::string> process_kinds = {"unknown", "python", "cann", "ascend_hardware", "communication",
                                                  "overlap_analysis", "counter"};
  ASCPROF_RETURN_IF_ERROR(w.set_string_array_attr(schema::kProcessesTable.path, "kind_values", process_kinds));
  ASCPROF_RETURN_IF_ERROR(schema::write_rows(w, schema::kThreadsTable, tr.threads));
  ASCPROF_RETURN_IF_ERROR(schema::write_columns(w, schema::kHostOpsTable, tr.host_ops.size(), tr.host_ops));
  ASCPROF_RETURN_IF_ERROR(schema::write_columns(w, schema::kStepsTable, tr.steps.size(), tr.steps));
  ASCPROF_RETURN_IF_ERROR(schema::write_columns(w, schema::kDeviceTasksTable, tr.device_tasks.size(), tr.device_tasks));
  ASCPROF_RETURN_IF_ERROR(schema::write_columns(w, schema::kCommOpsTable, tr.comm_ops.size(), tr.comm_ops));
  ASCPROF_RETURN_IF_ERROR(
      schema::write_columns(w, schema::kCommPlaneTasksTable, tr.comm_plane_tasks.size(), tr.comm_plane_tasks));
  ASCPROF_RETURN_IF_ERROR(schema::write_columns(w, schema::kOverlapTable, tr.overlap.size(), tr.overlap));
  const std::vector<std::string> overlap_kinds = {"Computing", "Communication", "Communication(Not Overlapped)", "Free"};
  ASCPROF_RETURN_IF_ERROR(w.set_string_array_attr(schema::kOverlapTable, "kind_values", overlap_kinds));
  ASCPROF_RETURN_IF_ERROR(schema::write_columns(w, schema::kAicoreFreqTable, tr.aicore_freq.size(), tr.aicore_freq));
  ASCPROF_RETURN_IF_ERROR(schema::write_columns(w, schema::kFlowsTable, tr.flows.size(), tr.flows));
  ASCPROF_RETURN_IF_ERROR(schema::write_rows(w, schema::kDamagedSpansTable, tr.damaged_spans));
  ASCPROF_RETURN_IF_ERROR(w.set_uint_attr("/trace", "events_total", tr.events_total));
  ASCPROF_RETURN_IF_ERROR(w.set_uint_attr("/trace", "counter_events", tr.counter_events));
  ASCPROF_RETURN_IF_ERROR(w.set_uint_attr("/trace", "metadata_events", tr.metadata_events));
  return w.set_uint_attr("/trace", "file_bytes", tr.file_bytes);
}

Status write_comm_tables(store::H5Writer& w, const model::CommStatTable& c, const std::vector<int32_t>& comm_group,
                  const model::ProfilerMetadata& meta) {
  const size_t n = c.size();
  std::vector<std::string> comm_name(n), group_name(n);
  for (size_t i = 0; i < n; ++i) {
    const int32_t g = i < comm_group.size() ? comm_group[i] : -1;
    if (g >= 0) {
      comm_name[i] = meta.groups[static_cast<size_t>(g)].comm_name;
      group_name[i] = meta.groups[static_cast<size_t>(g)].group_name;
    }
  }
  store::TableWriter t(w, "/communication", n);
  t.column("step", c.step);
  t.column("is_p2p", c.is_p2p);
  t.column("is_total", c.is_total);
  t.id_column("op_name", c.op_name);
  t.column("group_hash", c.group_hash);
  t.id_column("op_kind", c.op_kind);
  t.string_column("comm_name", comm_name);
  t.string_column("group_name", group_name);
  t.column("start_ns", c.start_ns);
  t.column("elapse_ms", c.elapse_ms);
  t.column("transit_ms", c.transit_ms);
  t.column("wait_ms", c.wait_ms);
  t.column("sync_ms", c.sync_ms);
  t.column("idle_ms", c.idle_ms);
  t.column("wait_ratio", c.wait_ratio);
  t.column("sync_ratio", c.sync_ratio);
  for (size_t tr = 0; tr < model::kTransportCount; ++tr) {
    std::string p = model::kTransportNames[tr];
    std::transform(p.begin(), p.end(), p.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    t.column(p + "_size_mb", c.transport[tr].size_mb);
    t.column(p + "_time_ms", c.transport[tr].time_ms);
    t.column(p + "_bandwidth_gbps", c.transport[tr].bandwidth_gbps);
    t.column(p + "_large_packet_ratio", c.transport[tr].large_packet_ratio);
  }
  ASCPROF_RETURN_IF_ERROR(t.finish());

  return schema::write_rows(w, schema::kParallelGroupsTable, meta.groups);
}

Status write_step_trace_table(store::H5Writer& w, const model::StepTraceTable& s) {
  return schema::write_columns(w, schema::kStepTraceTable, s.size(), s);
}

Status write_rank_attributes(store::H5Writer& w, const RankTask& task, int64_t device_id,
                             const std::string& profiler_level, const std::string& header_era) {
  ASCPROF_RETURN_IF_ERROR(w.set_string_attr("/", "rank_id", task.rank_id));
  ASCPROF_RETURN_IF_ERROR(w.set_string_attr("/", "rank_dir", task.rank_dir));
  ASCPROF_RETURN_IF_ERROR(w.set_string_attr("/", "source", task.source));
  ASCPROF_RETURN_IF_ERROR(w.set_string_attr("/", "rank_path", task.rank_path));
  ASCPROF_RETURN_IF_ERROR(w.set_string_attr("/", "rank_id_source", task.rank_id_source));
  ASCPROF_RETURN_IF_ERROR(w.set_int_attr("/", "device_id", device_id));
  ASCPROF_RETURN_IF_ERROR(w.set_string_attr("/", "profiler_level", profiler_level));
  return w.set_string_attr("/", "header_era", header_era);
}

}  // namespace ascprof::pipeline

// Layout of OUT/<root-slug>/ranks/<rank_id>.h5 (readable with h5py/h5dump; each table is one
// compound dataset, store::TableWriter; string-id columns are uint32 ids into the vlen UTF-8
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

#include "ascprof/store/h5_writer.hpp"
#include "ascprof/store/stats_table.hpp"
#include "rank_store.hpp"

namespace ascprof::pipeline {

namespace {

std::string join(const std::vector<std::string>& v, char sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += sep;
    out += v[i];
  }
  return out;
}

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
  store::TableWriter t(w, "/kernels", k.size(), store::TableWriter::Values::kBorrow);
  t.column("source_line", k.source_line);
  t.column("step_id", k.step_id);
  t.column("device_id", k.device_id);
  t.column("model_id", k.model_id);
  t.column("task_id", k.task_id);
  t.column("stream_id", k.stream_id);
  t.id_column("name", k.name);
  t.id_column("type", k.type);
  t.id_column("op_state", k.op_state);
  t.id_column("accelerator_core", k.accelerator_core);
  t.column("start_ns", k.start_ns);
  t.column("dur_ns", k.dur_ns);
  t.column("wait_ns", k.wait_ns);
  t.column("block_dim", k.block_dim);
  t.column("mix_block_dim", k.mix_block_dim);
  t.id_column("hf32_eligible", k.hf32_eligible);
  t.id_column("input_shapes", k.input_shapes);
  t.id_column("input_dtypes", k.input_dtypes);
  t.id_column("input_formats", k.input_formats);
  t.id_column("output_shapes", k.output_shapes);
  t.id_column("output_dtypes", k.output_dtypes);
  t.id_column("output_formats", k.output_formats);
  t.column("context_id", k.context_id);
  t.column("taxon", n.taxon);
  t.column("op_type", n.op_type);
  t.id_column("shape_signature", n.shape_signature);
  t.column("pipeline_signal", n.pipeline_signal);
  // A database rank: source_line holds the row's key in the table source_table names.
  if (!k.source_table.empty()) t.column("source_table", k.source_table);
  ASCPROF_RETURN_IF_ERROR(t.finish());
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
  {
    const size_t n = tr.processes.size();
    std::vector<int64_t> pid(n);
    std::vector<StrId> name(n), label(n);
    std::vector<int32_t> sort(n), dev(n);
    std::vector<uint8_t> kind(n);
    for (size_t i = 0; i < n; ++i) {
      const auto& p = tr.processes[i];
      pid[i] = p.pid;
      name[i] = p.name;
      label[i] = p.label;
      sort[i] = p.sort_index;
      dev[i] = p.device_id;
      kind[i] = static_cast<uint8_t>(p.kind);
    }
    store::TableWriter t(w, "/trace/processes", n);
    t.column("pid", pid);
    t.id_column("name", name);
    t.id_column("label", label);
    t.column("sort_index", sort);
    t.column("device_id", dev);
    t.column("kind", kind);
    ASCPROF_RETURN_IF_ERROR(t.finish());
    const std::vector<std::string> kinds = {"unknown", "python", "cann", "ascend_hardware", "communication",
                                            "overlap_analysis", "counter"};
    ASCPROF_RETURN_IF_ERROR(w.set_string_array_attr("/trace/processes", "kind_values", kinds));
  }
  {
    const size_t n = tr.threads.size();
    std::vector<int64_t> pid(n), tid(n);
    std::vector<StrId> name(n);
    std::vector<int32_t> sort(n);
    for (size_t i = 0; i < n; ++i) {
      pid[i] = tr.threads[i].pid;
      tid[i] = tr.threads[i].tid;
      name[i] = tr.threads[i].name;
      sort[i] = tr.threads[i].sort_index;
    }
    store::TableWriter t(w, "/trace/threads", n);
    t.column("pid", pid);
    t.column("tid", tid);
    t.id_column("name", name);
    t.column("sort_index", sort);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  {
    const auto& h = tr.host_ops;
    store::TableWriter t(w, "/trace/host_ops", h.size(), store::TableWriter::Values::kBorrow);
    t.id_column("name", h.name);
    t.id_column("cat", h.cat);
    t.column("is_cann", h.is_cann);
    t.column("pid", h.pid);
    t.column("tid", h.tid);
    t.column("start_ns", h.start_ns);
    t.column("dur_ns", h.dur_ns);
    t.column("source_offset", h.source_offset);
    t.column("connection_id", h.connection_id);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  {
    const auto& s = tr.steps;
    store::TableWriter t(w, "/trace/steps", s.size(), store::TableWriter::Values::kBorrow);
    t.column("step", s.step);
    t.column("start_ns", s.start_ns);
    t.column("end_ns", s.end_ns);
    t.column("source_offset", s.source_offset);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  {
    const auto& d = tr.device_tasks;
    store::TableWriter t(w, "/trace/device_tasks", d.size(), store::TableWriter::Values::kBorrow);
    t.id_column("name", d.name);
    t.id_column("task_type", d.task_type);
    t.column("stream_id", d.stream_id);
    t.column("task_id", d.task_id);
    t.column("connection_id", d.connection_id);
    t.column("start_ns", d.start_ns);
    t.column("dur_ns", d.dur_ns);
    t.column("source_offset", d.source_offset);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  {
    const auto& c = tr.comm_ops;
    store::TableWriter t(w, "/trace/comm_ops", c.size(), store::TableWriter::Values::kBorrow);
    t.id_column("name", c.name);
    t.id_column("group", c.group);
    t.id_column("data_type", c.data_type);
    t.id_column("alg_type", c.alg_type);
    t.column("count", c.count);
    t.column("connection_id", c.connection_id);
    t.column("start_ns", c.start_ns);
    t.column("dur_ns", c.dur_ns);
    t.column("source_offset", c.source_offset);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  {
    const auto& p = tr.comm_plane_tasks;
    store::TableWriter t(w, "/trace/comm_plane_tasks", p.size(), store::TableWriter::Values::kBorrow);
    t.id_column("name", p.name);
    t.column("plane", p.plane);
    t.id_column("task_type", p.task_type);
    t.id_column("transport", p.transport);
    t.id_column("link_type", p.link_type);
    t.column("src_rank", p.src_rank);
    t.column("dst_rank", p.dst_rank);
    t.column("size_bytes", p.size_bytes);
    t.column("bandwidth_gbps", p.bandwidth_gbps);
    t.column("start_ns", p.start_ns);
    t.column("dur_ns", p.dur_ns);
    t.column("source_offset", p.source_offset);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  {
    const auto& o = tr.overlap;
    store::TableWriter t(w, "/trace/overlap", o.size(), store::TableWriter::Values::kBorrow);
    t.column("kind", o.kind);
    t.column("start_ns", o.start_ns);
    t.column("dur_ns", o.dur_ns);
    ASCPROF_RETURN_IF_ERROR(t.finish());
    const std::vector<std::string> kinds = {"Computing", "Communication", "Communication(Not Overlapped)", "Free"};
    ASCPROF_RETURN_IF_ERROR(w.set_string_array_attr("/trace/overlap", "kind_values", kinds));
  }
  {
    const auto& a = tr.aicore_freq;
    store::TableWriter t(w, "/trace/aicore_freq", a.size(), store::TableWriter::Values::kBorrow);
    t.column("ts_ns", a.ts_ns);
    t.column("mhz", a.mhz);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  {
    const auto& f = tr.flows;
    store::TableWriter t(w, "/trace/flows", f.size(), store::TableWriter::Values::kBorrow);
    t.id_column("cat", f.cat);
    t.id_column("name", f.name);
    t.column("id", f.id);
    t.column("phase", f.phase);
    t.column("pid", f.pid);
    t.column("tid", f.tid);
    t.column("ts_ns", f.ts_ns);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  {
    const size_t n = tr.damaged_spans.size();
    std::vector<uint64_t> off(n), len(n);
    std::vector<std::string> reason(n);
    for (size_t i = 0; i < n; ++i) {
      off[i] = tr.damaged_spans[i].offset;
      len[i] = tr.damaged_spans[i].length;
      reason[i] = tr.damaged_spans[i].reason;
    }
    store::TableWriter t(w, "/trace/damaged_spans", n);
    t.column("offset", off);
    t.column("length", len);
    t.string_column("reason", reason);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
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

  const auto& groups = meta.groups;
  std::vector<std::string> cn, gn, ranks;
  std::vector<int64_t> grank;
  std::vector<uint64_t> hash;
  for (const auto& g : groups) {
    cn.push_back(g.comm_name);
    gn.push_back(g.group_name);
    grank.push_back(g.group_rank);
    hash.push_back(g.hash);
    std::string r;
    for (size_t i = 0; i < g.global_ranks.size(); ++i) r += (i ? "," : "") + std::to_string(g.global_ranks[i]);
    ranks.push_back(r);
  }
  store::TableWriter pg(w, "/parallel_groups", groups.size());
  pg.string_column("comm_name", cn);
  pg.string_column("group_name", gn);
  pg.column("group_rank", grank);
  pg.string_column("global_ranks", ranks);
  pg.column("hash", hash);
  return pg.finish();
}

Status write_step_trace_table(store::H5Writer& w, const model::StepTraceTable& s) {
  store::TableWriter t(w, "/step_trace", s.size());
  t.column("device_id", s.device_id);
  t.column("step", s.step);
  t.column("computing_us", s.computing);
  t.column("comm_not_overlapped_us", s.comm_not_overlapped);
  t.column("overlapped_us", s.overlapped);
  t.column("communication_us", s.communication);
  t.column("free_us", s.free);
  t.column("stage_us", s.stage);
  t.column("bubble_us", s.bubble);
  t.column("comm_not_overlapped_excl_receive_us", s.comm_not_overlapped_excl_receive);
  t.column("preparing_us", s.preparing);
  return t.finish();
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

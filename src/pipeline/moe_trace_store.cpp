// /moe_trace/* of a rank's HDF5 file: the in-kernel MoE traces of the rank (layout in rank_store.cpp).
#include "ascprof/store/h5_writer.hpp"
#include "rank_store.hpp"

namespace ascprof::pipeline {

Status write_moe_trace_tables(store::H5Writer& w, const std::vector<model::MoeTraceCall>& calls,
                              const analysis::MoeRankSummary& summary, const StringPool& pool) {
  {
    size_t n = 0;
    for (const auto& c : calls) n += c.intervals.size();
    // labels as text, not ids into /strings: the timeline reads this table without the rank's string pool
    std::vector<uint32_t> call, core_type, core_id;
    std::vector<std::string> label;
    std::vector<int64_t> extra, index, start, end;
    for (size_t k = 0; k < calls.size(); ++k)
      for (const auto& iv : calls[k].intervals) {
        call.push_back(static_cast<uint32_t>(k));
        core_type.push_back(iv.core_type);
        core_id.push_back(iv.core_id);
        label.emplace_back(pool.view(iv.label));
        extra.push_back(iv.extra_id);
        index.push_back(iv.index);
        start.push_back(iv.start_ns);
        end.push_back(iv.end_ns);
      }
    store::TableWriter t(w, "/moe_trace/intervals", n);
    t.column("call", call).column("core_type", core_type).column("core_id", core_id);
    t.string_column("label", label);
    t.column("extra_id", extra).column("index", index).column("start_ns", start).column("end_ns", end);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  {
    // each core's T0 (cycles; -1 when the trace does not give it) and record count
    std::vector<uint32_t> call, core_type, core_id, records;
    std::vector<int64_t> t0;
    std::vector<double> divisor;
    for (size_t k = 0; k < calls.size(); ++k)
      for (const auto& c : calls[k].cores) {
        call.push_back(static_cast<uint32_t>(k));
        core_type.push_back(c.core_type);
        core_id.push_back(c.core_id);
        records.push_back(c.records);
        t0.push_back(c.t0_cycles);
        divisor.push_back(calls[k].clock_divisor);
      }
    store::TableWriter t(w, "/moe_trace/cores", call.size());
    t.column("call", call).column("core_type", core_type).column("core_id", core_id).column("records", records);
    t.column("t0_cycles", t0).column("cycles_per_us", divisor);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  const auto& cs = summary.calls;
  {
    std::vector<std::string> file, variant, status, detail, kernel_name;
    std::vector<int64_t> call_index, kernel_row, kernel_call, kernel_start, kernel_dur, span;
    std::vector<uint64_t> intervals, cores, unmatched, unmapped, bad, full;
    for (const auto& c : cs) {
      file.push_back(c.file);
      variant.push_back(c.variant);
      status.push_back(c.status);
      detail.push_back(c.detail);
      kernel_name.push_back(c.kernel_name);
      call_index.push_back(c.call_index);
      kernel_row.push_back(c.kernel_row);
      kernel_call.push_back(c.kernel_call);
      kernel_start.push_back(c.kernel_start_ns);
      kernel_dur.push_back(c.kernel_duration_ns);
      span.push_back(c.span_ns);
      intervals.push_back(c.intervals);
      cores.push_back(c.cores);
      unmatched.push_back(c.unmatched);
      unmapped.push_back(c.unmapped);
      bad.push_back(c.bad_events);
      full.push_back(c.full_cores);
    }
    store::TableWriter t(w, "/moe_trace/calls", cs.size());
    t.string_column("file", file).column("call_index", call_index).string_column("variant", variant);
    t.string_column("status", status).string_column("detail", detail);
    t.column("kernel_row", kernel_row).column("kernel_call", kernel_call).string_column("kernel_name", kernel_name);
    t.column("kernel_start_ns", kernel_start).column("kernel_duration_ns", kernel_dur).column("span_ns", span);
    t.column("intervals", intervals).column("cores", cores).column("unmatched", unmatched);
    t.column("unmapped", unmapped).column("bad_events", bad).column("full_cores", full);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  {
    std::vector<uint32_t> call, core_type, cores, max_core_id;
    std::vector<std::string> label, group, role;
    std::vector<int64_t> extra, index, total, uni, first, max_core, median_core, min_core;
    std::vector<uint64_t> count;
    for (size_t k = 0; k < cs.size(); ++k)
      for (const auto& p : cs[k].phases) {
        call.push_back(static_cast<uint32_t>(k));
        label.push_back(p.label);
        group.push_back(p.core_group);
        role.push_back(p.role);
        core_type.push_back(p.core_type);
        extra.push_back(p.extra_id);
        index.push_back(p.index);
        count.push_back(p.count);
        cores.push_back(p.cores);
        total.push_back(p.total_ns);
        uni.push_back(p.union_ns);
        first.push_back(p.first_start_ns);
        max_core.push_back(p.max_core_ns);
        median_core.push_back(p.median_core_ns);
        min_core.push_back(p.min_core_ns);
        max_core_id.push_back(p.max_core_id);
      }
    store::TableWriter t(w, "/moe_trace/phases", call.size());
    t.column("call", call).string_column("label", label).string_column("core_group", group).string_column("role", role);
    t.column("core_type", core_type).column("extra_id", extra).column("index", index).column("count", count);
    t.column("cores", cores).column("total_ns", total).column("union_ns", uni).column("first_start_ns", first);
    t.column("max_core_ns", max_core).column("median_core_ns", median_core).column("min_core_ns", min_core);
    t.column("max_core_id", max_core_id);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  std::vector<uint32_t> call, core_type, max_core_id;
  std::vector<std::string> container, group;
  std::vector<int64_t> total, max_core;
  for (size_t k = 0; k < cs.size(); ++k)
    for (const auto& b : cs[k].bubbles) {
      call.push_back(static_cast<uint32_t>(k));
      container.push_back(b.container);
      group.push_back(b.core_group);
      core_type.push_back(b.core_type);
      total.push_back(b.total_ns);
      max_core.push_back(b.max_core_ns);
      max_core_id.push_back(b.max_core_id);
    }
  store::TableWriter t(w, "/moe_trace/bubbles", call.size());
  t.column("call", call).string_column("container", container).string_column("core_group", group);
  t.column("core_type", core_type).column("total_ns", total).column("max_core_ns", max_core).column("max_core_id", max_core_id);
  return t.finish();
}

}  // namespace ascprof::pipeline

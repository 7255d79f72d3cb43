// /moe_trace/* of a rank's HDF5 file: the in-kernel MoE traces of the rank (layout in rank_store.cpp).
#include <functional>
#include <type_traits>

#include "ascprof/store/h5_writer.hpp"
#include "pluck.hpp"
#include "rank_store.hpp"

namespace ascprof::pipeline {

namespace {

// The rows of every call, each with its call's index.
template <class Row, class Calls, class RowsOf>
std::vector<std::pair<uint32_t, const Row*>> with_call(const Calls& calls, RowsOf rows_of) {
  std::vector<std::pair<uint32_t, const Row*>> out;
  for (size_t k = 0; k < calls.size(); ++k)
    for (const Row& r : std::invoke(rows_of, calls[k])) out.emplace_back(static_cast<uint32_t>(k), &r);
  return out;
}

template <class Row>
auto field(auto Row::*member) {
  return [member](const std::pair<uint32_t, const Row*>& p) { return p.second->*member; };
}
template <class Row>
uint32_t call_of(const std::pair<uint32_t, const Row*>& p) {
  return p.first;
}

}  // namespace

Status write_moe_trace_tables(store::H5Writer& w, const std::vector<model::MoeTraceCall>& calls,
                              const analysis::MoeRankSummary& summary, const StringPool& pool) {
  using Interval = model::MoePhaseInterval;
  using Core = model::MoeTraceCall::Core;
  {
    // labels as text, not ids into /strings: the timeline reads this table without the rank's string pool
    const auto rows = with_call<Interval>(calls, &model::MoeTraceCall::intervals);
    store::TableWriter t(w, "/moe_trace/intervals", rows.size());
    t.column("call", pluck(rows, call_of<Interval>)).column("core_type", pluck(rows, field(&Interval::core_type)));
    t.column("core_id", pluck(rows, field(&Interval::core_id)));
    t.string_column("label", pluck(rows, [&pool](const auto& p) { return std::string(pool.view(p.second->label)); }));
    t.column("extra_id", pluck(rows, field(&Interval::extra_id))).column("index", pluck(rows, field(&Interval::index)));
    t.column("start_ns", pluck(rows, field(&Interval::start_ns))).column("end_ns", pluck(rows, field(&Interval::end_ns)));
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  {
    // each core's T0 (cycles; -1 when the trace does not give it) and record count
    const auto rows = with_call<Core>(calls, &model::MoeTraceCall::cores);
    store::TableWriter t(w, "/moe_trace/cores", rows.size());
    t.column("call", pluck(rows, call_of<Core>)).column("core_type", pluck(rows, field(&Core::core_type)));
    t.column("core_id", pluck(rows, field(&Core::core_id))).column("records", pluck(rows, field(&Core::records)));
    t.column("t0_cycles", pluck(rows, field(&Core::t0_cycles)));
    t.column("cycles_per_us", pluck(rows, [&calls](const auto& p) { return calls[p.first].clock_divisor; }));
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  using C = analysis::MoeCallSummary;
  const auto& cs = summary.calls;
  {
    store::TableWriter t(w, "/moe_trace/calls", cs.size());
    t.string_column("file", pluck(cs, &C::file)).column("call_index", pluck(cs, &C::call_index));
    t.string_column("variant", pluck(cs, &C::variant)).string_column("status", pluck(cs, &C::status));
    t.string_column("detail", pluck(cs, &C::detail)).column("kernel_row", pluck(cs, &C::kernel_row));
    t.column("kernel_call", pluck(cs, &C::kernel_call)).string_column("kernel_name", pluck(cs, &C::kernel_name));
    t.column("kernel_start_ns", pluck(cs, &C::kernel_start_ns)).column("kernel_duration_ns", pluck(cs, &C::kernel_duration_ns));
    t.column("span_ns", pluck(cs, &C::span_ns)).column("intervals", pluck(cs, &C::intervals));
    t.column("cores", pluck(cs, &C::cores)).column("unmatched", pluck(cs, &C::unmatched));
    t.column("unmapped", pluck(cs, &C::unmapped)).column("bad_events", pluck(cs, &C::bad_events));
    t.column("full_cores", pluck(cs, &C::full_cores));
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  {
    using P = analysis::MoePhaseStats;
    const auto rows = with_call<P>(cs, &C::phases);
    store::TableWriter t(w, "/moe_trace/phases", rows.size());
    t.column("call", pluck(rows, call_of<P>)).string_column("label", pluck(rows, field(&P::label)));
    t.string_column("core_group", pluck(rows, field(&P::core_group))).string_column("role", pluck(rows, field(&P::role)));
    t.column("core_type", pluck(rows, field(&P::core_type))).column("extra_id", pluck(rows, field(&P::extra_id)));
    t.column("index", pluck(rows, field(&P::index))).column("count", pluck(rows, field(&P::count)));
    t.column("cores", pluck(rows, field(&P::cores))).column("total_ns", pluck(rows, field(&P::total_ns)));
    t.column("union_ns", pluck(rows, field(&P::union_ns))).column("first_start_ns", pluck(rows, field(&P::first_start_ns)));
    t.column("max_core_ns", pluck(rows, field(&P::max_core_ns))).column("median_core_ns", pluck(rows, field(&P::median_core_ns)));
    t.column("min_core_ns", pluck(rows, field(&P::min_core_ns))).column("max_core_id", pluck(rows, field(&P::max_core_id)));
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  using B = analysis::MoeBubble;
  const auto rows = with_call<B>(cs, &C::bubbles);
  store::TableWriter t(w, "/moe_trace/bubbles", rows.size());
  t.column("call", pluck(rows, call_of<B>)).string_column("container", pluck(rows, field(&B::container)));
  t.string_column("core_group", pluck(rows, field(&B::core_group))).column("core_type", pluck(rows, field(&B::core_type)));
  t.column("total_ns", pluck(rows, field(&B::total_ns))).column("max_core_ns", pluck(rows, field(&B::max_core_ns)));
  t.column("max_core_id", pluck(rows, field(&B::max_core_id)));
  return t.finish();
}

}  // namespace ascprof::pipeline

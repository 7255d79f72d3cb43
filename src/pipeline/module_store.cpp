// /modules/* of a rank's HDF5 file: the module breakdown of the rank (layout in rank_store.cpp).
#include <functional>
#include <type_traits>

#include "ascprof/store/h5_writer.hpp"
#include "pluck.hpp"
#include "rank_store.hpp"

namespace ascprof::pipeline {

Status write_module_tables(store::H5Writer& w, const analysis::ModuleBreakdown& b) {
  using R = analysis::ModuleRow;
  using C = analysis::ModuleCall;
  const auto& s = b.summary;
  {
    // paths as text, not ids into /strings: the timeline reads these tables without the rank's pool
    store::TableWriter t(w, "/modules/summary", s.rows.size());
    t.string_column("module_path", pluck(s.rows, &R::path)).string_column("module", pluck(s.rows, &R::module));
    t.column("depth", pluck(s.rows, &R::depth)).column("calls", pluck(s.rows, &R::calls));
    t.column("host_ns", pluck(s.rows, &R::host_ns)).column("self_device_ns", pluck(s.rows, &R::self_device_ns));
    t.column("total_device_ns", pluck(s.rows, &R::total_device_ns)).column("self_tasks", pluck(s.rows, &R::self_tasks));
    t.column("tasks", pluck(s.rows, &R::tasks)).column("self_wait_ns", pluck(s.rows, &R::self_wait_ns));
    t.column("total_wait_ns", pluck(s.rows, &R::total_wait_ns)).column("first_start_ns", pluck(s.rows, &R::first_start_ns));
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  {
    // row = index into /modules/summary; source_offset leads back to the event in trace_view.json
    store::TableWriter t(w, "/modules/calls", b.calls.size());
    t.column("row", pluck(b.calls, &C::row)).column("tid", pluck(b.calls, &C::tid));
    t.column("start_ns", pluck(b.calls, &C::start_ns)).column("end_ns", pluck(b.calls, &C::end_ns));
    t.column("self_device_ns", pluck(b.calls, &C::self_device_ns)).column("total_device_ns", pluck(b.calls, &C::total_device_ns));
    t.column("tasks", pluck(b.calls, &C::tasks)).column("source_offset", pluck(b.calls, &C::source_offset));
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  // where every device task's time went, as attributes of the group (one value each)
  const std::pair<const char*, int64_t> totals[] = {
      {"ranges", static_cast<int64_t>(s.ranges)},
      {"threads", static_cast<int64_t>(s.threads)},
      {"improperly_nested", static_cast<int64_t>(s.improperly_nested)},
      {"tasks", static_cast<int64_t>(s.tasks)},
      {"device_ns", s.device_ns},
      {"module_tasks", static_cast<int64_t>(s.module_tasks)},
      {"module_ns", s.module_ns},
      {"outside_tasks", static_cast<int64_t>(s.outside_tasks)},
      {"outside_ns", s.outside_ns},
      {"unlaunched_tasks", static_cast<int64_t>(s.unlaunched_tasks)},
      {"unlaunched_ns", s.unlaunched_ns},
      {"by_launch_thread", static_cast<int64_t>(s.by_launch_thread)},
      {"by_task_queue", static_cast<int64_t>(s.by_task_queue)},
      {"by_torch_op", static_cast<int64_t>(s.by_torch_op)}};
  for (const auto& [name, value] : totals) ASCPROF_RETURN_IF_ERROR(w.set_int_attr("/modules", name, value));
  return {};
}

}  // namespace ascprof::pipeline

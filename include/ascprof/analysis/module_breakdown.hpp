#pragma once
/// Module breakdown (issue 21): device time per nn.Module of a rank. With torch_npu's with_modules=True
/// the trace holds one X event per module forward call on the Python thread ("nn.Module: Conv2d_0",
/// knowledge/modules.rules says which events). Plain function over the rank's trace tables.
///
/// Attribution. Every device task is bound to its host launch by bind_launches (launch_binding.hpp, the
/// binding host-bound uses). The launch is placed on a thread that holds module ranges:
///  - the launch's own thread, when it holds module ranges (synchronous dispatch: the CANN launch runs
///    on the Python thread, as the launch thread's tid is the Python thread's);
///  - else, with torch_npu's task queue (the CANN launch on a dequeue thread), the Enqueue the launch's
///    Dequeue slice came from: the 's' end of the async_task_queue flow that ends in that slice;
///  - else the task's torch op (its async_npu flow's 's' end), when it has one (a database rank, whose
///    queue rows carry no flows);
///  - else the launch itself (a thread without modules: the task is outside every module).
/// The task's device time (its duration) goes to the innermost module range on that thread whose
/// [start, end) holds the placed time; a waiting task's (modules.rules [device]) also to its wait time. Hierarchy by time containment on each thread; a module's path
/// joins the names from the outermost down with "/" ("DistributedDataParallel_0/AlexNet_0/..."). Tasks
/// with a launch in no module and tasks without a launch are counted, never dropped.
///
/// Cost: ranges and tasks are sorted once per thread and swept with a stack (no pairwise scan); a
/// capture without module ranges returns at once.
#include <cstdint>
#include <string>
#include <vector>

#include "ascprof/analysis/launch_binding.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/knowledge/module_rules.hpp"
#include "ascprof/model/trace_tables.hpp"

namespace ascprof::analysis {

/// One module path of a rank, summed over its calls.
struct ModuleRow {
  std::string path;            ///< "Net_0/Conv2d_0"
  std::string module;          ///< the last name of the path ("Conv2d_0")
  uint32_t depth = 0;          ///< 0 for an outermost module
  uint64_t calls = 0;          ///< ranges with this path
  int64_t host_ns = 0;         ///< sum of the ranges' durations
  int64_t self_device_ns = 0;  ///< device time of the tasks attributed to the module itself
  int64_t total_device_ns = 0; ///< self + every module below it
  uint64_t self_tasks = 0, tasks = 0;  ///< device tasks behind self_device_ns and total_device_ns
  /// The part of self / total device time spent by waiting tasks (modules.rules [device]
  /// wait_task_types: a collective's Notify_Wait, a stream's EVENT_WAIT); total - wait is busy time.
  int64_t self_wait_ns = 0, total_wait_ns = 0;
  int64_t first_start_ns = 0;  ///< start of its first call (rows are in this order, parents first)

  int64_t busy_ns() const { return total_device_ns - total_wait_ns; }
  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & path & module & depth & calls & host_ns & self_device_ns & total_device_ns & self_tasks & tasks & self_wait_ns &
        total_wait_ns & first_start_ns;
  }
};

/// A rank's module table and where every device task's time went (compact: gathered to the root).
struct ModuleRankSummary {
  std::vector<ModuleRow> rows;     ///< by first call, a parent before its children
  uint64_t ranges = 0;             ///< module ranges (calls) of the rank
  uint32_t threads = 0;            ///< threads holding them
  uint64_t improperly_nested = 0;  ///< ranges that overlap a range without lying inside it (closed early)
  uint64_t tasks = 0;              ///< every device task of the rank...
  int64_t device_ns = 0;           ///< ...and their summed durations (the shares' denominator)
  uint64_t module_tasks = 0;       ///< tasks attributed to a module
  int64_t module_ns = 0;
  uint64_t outside_tasks = 0;      ///< launch found, placed in no module
  int64_t outside_ns = 0;
  uint64_t unlaunched_tasks = 0;   ///< no launch found
  int64_t unlaunched_ns = 0;
  /// How tasks with a launch were placed on a thread (see the file comment); the rest of them were
  /// left at a launch on a thread without modules.
  uint64_t by_launch_thread = 0, by_task_queue = 0, by_torch_op = 0;

  bool present() const { return ranges > 0; }
  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & rows & ranges & threads & improperly_nested & tasks & device_ns & module_tasks & module_ns & outside_tasks &
        outside_ns & unlaunched_tasks & unlaunched_ns & by_launch_thread & by_task_queue & by_torch_op;
  }
};

/// One module call (range), for the rank's HDF5 file and the timeline's module lane.
struct ModuleCall {
  uint32_t row = 0;              ///< index into ModuleRankSummary::rows
  int64_t tid = 0;
  int64_t start_ns = 0, end_ns = 0;
  int64_t self_device_ns = 0, total_device_ns = 0;
  uint64_t tasks = 0;            ///< tasks behind total_device_ns
  uint64_t source_offset = 0;    ///< the event's byte offset in trace_view.json (database: its row id)
};

struct ModuleBreakdown {
  ModuleRankSummary summary;
  std::vector<ModuleCall> calls;  ///< in start order
};

/// True when the trace holds a module range (then bind with torch ops for the breakdown).
bool has_module_ranges(const model::TraceTables& trace, const StringPool& pool, const knowledge::ModuleRules& rules);

/// The breakdown of one rank. Empty (summary.present() false) when the trace has no module range.
/// `links` should carry torch ops (bind_launches(..., true)); without them that placement is not tried.
ModuleBreakdown module_breakdown(const model::TraceTables& trace, const StringPool& pool, const LaunchBinding& links,
                                 const knowledge::ModuleRules& rules);

}  // namespace ascprof::analysis

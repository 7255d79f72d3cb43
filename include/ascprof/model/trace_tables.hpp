#pragma once
/// Columnar tables of what the analysis keeps from trace_view.json for one profiling rank.
///
/// Processes and threads are identified by their process_name / thread_name metadata (never by pid
/// value). Every kept event records `source_offset`, the byte offset of its object in the file, so a
/// finding can be traced back. Times are integer ns.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "ascprof/common/string_pool.hpp"

namespace ascprof::model {

enum class ProcessKind : uint8_t {
  kUnknown = 0,
  kPython,           ///< "Python": torch ops, ProfilerStep#N, python functions
  kCann,             ///< "CANN": AscendCL / Node@launch / Runtime APIs
  kAscendHardware,   ///< "Ascend Hardware": device tasks, one thread per stream
  kCommunication,    ///< "HCCL" (<= CANN 8.0) or "Communication" (CANN 8.2+)
  kOverlapAnalysis,  ///< "Overlap Analysis"
  kCounter,          ///< counter processes (AI Core Freq, HBM, ...)
};

struct ProcessInfo {
  int64_t pid = 0;
  StrId name = 0;
  StrId label = 0;          ///< process_labels: "CPU", "NPU", "NPU 4"
  int32_t sort_index = -1;
  int32_t device_id = -1;   ///< from "NPU <id>" labels when present
  ProcessKind kind = ProcessKind::kUnknown;
};

struct ThreadInfo {
  int64_t pid = 0;
  int64_t tid = 0;
  StrId name = 0;
  int32_t sort_index = -1;
};

/// Host-side X events of the Python and CANN processes.
struct HostOpTable {
  std::vector<StrId> name;
  std::vector<StrId> cat;
  std::vector<uint8_t> is_cann;   ///< 1 for the CANN process, 0 for Python
  std::vector<int64_t> pid;
  std::vector<int64_t> tid;
  std::vector<int64_t> start_ns;
  std::vector<int64_t> dur_ns;
  std::vector<uint64_t> source_offset;
  /// CANN events: args "connection_id", which the device tasks they launched carry too (-1 absent,
  /// and for Python events)
  std::vector<int64_t> connection_id;
  size_t size() const { return start_ns.size(); }
};

/// ProfilerStep#N ranges from the Python process.
struct StepMarkerTable {
  std::vector<int64_t> step;      ///< N
  std::vector<int64_t> start_ns;
  std::vector<int64_t> end_ns;
  std::vector<uint64_t> source_offset;
  size_t size() const { return step.size(); }
};

/// Device tasks of the "Ascend Hardware" process (one thread per stream).
struct DeviceTaskTable {
  std::vector<StrId> name;
  std::vector<StrId> task_type;   ///< args "Task Type"
  std::vector<int32_t> stream_id; ///< from thread_name "Stream <id>", else args stream id, else tid
  std::vector<int64_t> task_id;   ///< args "Task Id" (-1 absent)
  std::vector<int64_t> connection_id;  ///< args "connection_id" (-1 absent)
  std::vector<int64_t> start_ns;
  std::vector<int64_t> dur_ns;
  std::vector<uint64_t> source_offset;
  size_t size() const { return start_ns.size(); }
};

/// Communication ops: X events on "Group … Communication" threads of the HCCL/Communication process.
struct CommOpTable {
  std::vector<StrId> name;        ///< e.g. hcom_allReduce__586_0_1
  std::vector<StrId> group;       ///< thread name of the group thread
  std::vector<StrId> data_type;
  std::vector<StrId> alg_type;
  std::vector<int64_t> count;     ///< args "count" (-1 absent)
  std::vector<int64_t> connection_id;
  std::vector<int64_t> start_ns;
  std::vector<int64_t> dur_ns;
  std::vector<uint64_t> source_offset;
  size_t size() const { return start_ns.size(); }
};

/// Per-link plane tasks: X events on "Plane <k>" threads of the HCCL/Communication process.
struct CommPlaneTaskTable {
  std::vector<StrId> name;
  std::vector<int32_t> plane;        ///< k of "Plane k" (-1 if not parseable)
  std::vector<StrId> task_type;      ///< args "task type"
  std::vector<StrId> transport;      ///< args "transport type"
  std::vector<StrId> link_type;      ///< args "link type"
  std::vector<int64_t> src_rank;     ///< 4294967295 = local, -1 absent
  std::vector<int64_t> dst_rank;
  std::vector<int64_t> size_bytes;   ///< -1 absent
  std::vector<double> bandwidth_gbps;///< NaN absent
  std::vector<int64_t> start_ns;
  std::vector<int64_t> dur_ns;
  std::vector<uint64_t> source_offset;
  size_t size() const { return start_ns.size(); }
};

/// AI Core frequency samples (the trace's `AI Core Freq` counter, ph C; the database's AICORE_FREQ):
/// the cores run at `mhz` from `ts_ns` until the next sample. In start order.
struct AicoreFreqTable {
  std::vector<int64_t> ts_ns;
  std::vector<uint32_t> mhz;
  size_t size() const { return ts_ns.size(); }
};

/// Puts the samples in start order (a trace need not write them in order; ties keep file order).
inline void sort_aicore_freq(AicoreFreqTable& t) {
  if (std::is_sorted(t.ts_ns.begin(), t.ts_ns.end())) return;
  std::vector<size_t> order(t.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&t](size_t a, size_t b) { return t.ts_ns[a] < t.ts_ns[b]; });
  AicoreFreqTable sorted;
  for (const size_t i : order) {
    sorted.ts_ns.push_back(t.ts_ns[i]);
    sorted.mhz.push_back(t.mhz[i]);
  }
  t = std::move(sorted);
}

enum class OverlapKind : uint8_t { kComputing = 0, kCommunication = 1, kCommNotOverlapped = 2, kFree = 3 };

struct OverlapTable {
  std::vector<uint8_t> kind;  ///< OverlapKind
  std::vector<int64_t> start_ns;
  std::vector<int64_t> dur_ns;
  std::vector<uint64_t> source_offset;
  size_t size() const { return start_ns.size(); }
};

/// Flow events (ph s/f): link host launches to device tasks.
struct FlowTable {
  std::vector<StrId> cat;       ///< async_npu, HostToDevice, async_task_queue, fwdbwd, ...
  std::vector<StrId> name;      ///< event name without a trailing copy of its id ("HostToDevice1225" -> "HostToDevice")
  std::vector<int64_t> id;      ///< numeric id; non-numeric string ids are interned and stored as -(StrId+1)
  std::vector<uint8_t> phase;   ///< 's' or 'f'
  std::vector<int64_t> pid;
  std::vector<int64_t> tid;
  std::vector<int64_t> ts_ns;
  std::vector<uint64_t> source_offset;
  size_t size() const { return ts_ns.size(); }
};

/// A byte range of the file that was skipped because it was not valid JSON.
struct DamagedSpan {
  uint64_t offset = 0;
  uint64_t length = 0;
  std::string reason;
};

struct TraceTables {
  std::vector<ProcessInfo> processes;
  std::vector<ThreadInfo> threads;
  HostOpTable host_ops;
  StepMarkerTable steps;
  DeviceTaskTable device_tasks;
  CommOpTable comm_ops;
  CommPlaneTaskTable comm_plane_tasks;
  OverlapTable overlap;
  FlowTable flows;
  AicoreFreqTable aicore_freq;
  std::vector<DamagedSpan> damaged_spans;
  uint64_t events_total = 0;     ///< every event object seen (all ph)
  uint64_t counter_events = 0;   ///< ph C (counted; only AI Core Freq is kept, in aicore_freq)
  uint64_t metadata_events = 0;  ///< ph M
  uint64_t file_bytes = 0;
};

}  // namespace ascprof::model

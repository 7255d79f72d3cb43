#pragma once
/// Which host launch put each device task on the device: the one binding that host-bound dispatch and
/// the module breakdown share, so both read the same launch for the same task.
///
/// A device task's launch is found through every link the capture has, bound as the trace format
/// defines flows (../shared/spec/input-formats.md, "Binding flows to slices"), in this order:
///  1. a HostToDevice flow whose 'f' end lies on the task's stream at the task's start; its 's' end is
///     at the CANN launch (the latest such 's' when several flows end at the task);
///  2. else an async_npu torch_to_npu flow ending there; its 's' end is at the torch op;
///  3. else the CANN events (AscendCL call, Node@launch) carrying the task's connection_id, the latest
///     of them (the node launch inside the call is when the task was handed to the device);
///  4. else a HostToDevice flow whose id equals the task's connection_id (ids are opaque: real captures
///     mix ids equal to a connection_id with 20-digit ids beyond 64 bits that equal none).
/// A database rank's node launches (CANN_API joined with TASK on connectionId) come in as HostToDevice
/// flows and its CONNECTION_IDS as async_npu flows, bound the same way.
#include <cstdint>
#include <limits>
#include <vector>

#include "ascprof/common/string_pool.hpp"
#include "ascprof/model/trace_tables.hpp"

namespace ascprof::analysis {

/// How a task's launch was found (the numbered links above).
enum class LaunchLink : uint8_t { kNone = 0, kHostToDevice, kTorchToNpu, kCannLaunch, kConnectionId };

/// A place on the host timeline: the time and thread (tid) of a launching slice's flow end or event.
struct HostEnd {
  static constexpr int64_t kNoTime = std::numeric_limits<int64_t>::min();
  int64_t ts_ns = kNoTime;
  int64_t tid = 0;
  bool found() const { return ts_ns != kNoTime; }
};

/// Per device task, in DeviceTaskTable row order.
struct LaunchBinding {
  std::vector<LaunchLink> link;  ///< kNone: no launch found
  std::vector<HostEnd> launch;   ///< the launch by the first link that has one (what host-bound times)
  /// The torch op that issued the task, where an async_npu flow ends at it (its 's' end, on the
  /// thread that ran the op), whatever link gave `launch`; not found otherwise. With torch_npu's task
  /// queue the CANN launch runs on the queue's dequeue thread, and this is the Python-side end. Empty
  /// unless asked for (only the module breakdown reads it: 16 bytes a task saved otherwise).
  std::vector<HostEnd> torch_op;
  size_t size() const { return link.size(); }
};

/// Binds every device task of `trace` to its launch. Linear in events (hash maps, no pairwise scan).
LaunchBinding bind_launches(const model::TraceTables& trace, const StringPool& pool, bool with_torch_ops = false);

}  // namespace ascprof::analysis

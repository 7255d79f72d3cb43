#pragma once
/// Host-bound dispatch from trace_view.json: the device sits idle between kernels, and the kernel
/// that ends the idle gap was launched by the host only after the gap had begun (its HostToDevice
/// flow starts late). That part of the idle time is host-bound; the rest has other causes
/// (synchronisation, waiting for peers). Plain function over the rank's trace tables.
#include <cstdint>

#include "ascprof/common/string_pool.hpp"
#include "ascprof/model/trace_tables.hpp"

namespace ascprof::analysis {

struct HostBoundStats {
  int64_t device_wall_ns = 0;   ///< first device task start to last end
  int64_t idle_ns = 0;          ///< gaps of the union of device tasks (all streams)
  int64_t host_bound_ns = 0;    ///< the part of those gaps before the next task's host launch
  uint32_t gaps = 0, host_bound_gaps = 0;
  uint32_t tasks_with_launch = 0, tasks = 0;  ///< device tasks whose HostToDevice flow was found
  /// What linked tasks to launches, for the finding's limitations: "trace_view.json HostToDevice
  /// flows" or, for a database rank, its CANN_API node launches (connectionId).
  std::string launch_links = "trace_view.json HostToDevice flows";

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & device_wall_ns & idle_ns & host_bound_ns & gaps & host_bound_gaps & tasks_with_launch & tasks & launch_links;
  }
};

HostBoundStats host_bound_stats(const model::TraceTables& trace, const StringPool& pool);

}  // namespace ascprof::analysis

#pragma once
/// Host-bound dispatch from the trace tables: the device sits idle between kernels, and the kernel
/// that ends the idle gap was launched by the host only after the gap had begun. That part of the
/// idle time is host-bound; the rest has other causes (synchronisation, waiting for peers). Plain
/// function over the rank's trace tables.
///
/// A device task's launch is the one bind_launches finds (launch_binding.hpp: HostToDevice or
/// async_npu flows bound at the task, CANN events carrying its connection_id, a HostToDevice id equal to
/// it; a database rank's node launches and CONNECTION_IDS come in as such flows).
#include <cstdint>
#include <string>

#include "ascprof/analysis/launch_binding.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/model/trace_tables.hpp"

namespace ascprof::analysis {

struct HostBoundStats {
  int64_t device_wall_ns = 0;   ///< first device task start to last end
  int64_t idle_ns = 0;          ///< gaps of the union of device tasks (all streams)
  int64_t host_bound_ns = 0;    ///< the part of those gaps before the next task's host launch
  uint32_t gaps = 0, host_bound_gaps = 0;
  uint32_t tasks_with_launch = 0, tasks = 0;  ///< device tasks whose launch was found
  uint32_t by_host_to_device = 0, by_torch_to_npu = 0, by_cann_launch = 0, by_connection_id = 0;  ///< ...and how
  /// Where the launch links came from, for the finding's limitations: "trace_view.json" or, for a
  /// database rank, "the database's CANN_API node launches (connectionId) and CONNECTION_IDS".
  std::string launch_links = "trace_view.json";

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & device_wall_ns & idle_ns & host_bound_ns & gaps & host_bound_gaps & tasks_with_launch & tasks & by_host_to_device &
        by_torch_to_npu & by_cann_launch & by_connection_id & launch_links;
  }
};

HostBoundStats host_bound_stats(const model::TraceTables& trace, const StringPool& pool);
/// The same from a binding already made (the rank job binds once for host-bound and modules).
HostBoundStats host_bound_stats(const model::TraceTables& trace, const LaunchBinding& links);

/// "180 by HostToDevice flows, 6 by async_npu torch_to_npu flows" (or "none"): for limitations.
std::string launch_links_text(const HostBoundStats& stats);

}  // namespace ascprof::analysis

#pragma once
/// The in-kernel MoE phases placed on the timeline (issue 20): each attached call's intervals nested
/// under its kernel row, one lane per core, on the rank's corrected clock. A core's times count from
/// its own kernel entry (T0); when the trace gives every core's T0 (the UMDK collector) a core starts
/// at the row's start + (its T0 - the earliest T0) / the clock's cycles per µs, otherwise every core
/// starts at the row's start. Either way the placement is approximate (the trace does not say how long
/// the kernel ran before the first core's T0), and `approximate` says so.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "ascprof/common/status.hpp"

namespace ascprof::report {

struct MoeLaneInterval {
  uint32_t core_type = 0, core_id = 0;
  uint32_t label = 0;   ///< index into MoeCallLanes::labels
  int64_t index = 0;    ///< the name's #s (expert group ...)
  /// µs from the kernel row's start (small numbers: epoch µs in a double keep only quarter-µs steps)
  double start_us = 0, end_us = 0;
};

/// One attached call of one rank.
struct MoeCallLanes {
  std::string rank_id, file, kernel_event_id, kernel_name;
  double kernel_start_us = 0, kernel_end_us = 0;   ///< the kernel row, corrected clock (epoch µs)
  bool t0_aligned = false;                         ///< cores placed by their T0 (else all at the row start)
  std::vector<std::string> core_groups;            ///< core_type -> group name
  std::vector<std::string> labels, roles;          ///< distinct labels and their roles
  std::vector<MoeLaneInterval> intervals;          ///< by core type, core, start
};

/// Reads moe_trace_calls.csv, moe_phase_summary.csv (roles and group names) and each attached call's
/// /moe_trace tables from ranks/<rank_id>.h5; `offset_us` is each rank's clock offset (subtracted).
/// A root without traces gives none. kIo / kSchema errors name the file.
Result<std::vector<MoeCallLanes>> read_moe_lanes(const std::filesystem::path& root_out,
                                                 const std::map<std::string, double>& offset_us);

}  // namespace ascprof::report

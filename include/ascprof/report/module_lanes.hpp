#pragma once
/// The module lane of the timeline (issue 21): each rank's nn.Module calls as nested slices, one lane
/// per Python thread that ran modules, on the rank's corrected clock.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ascprof/common/status.hpp"

namespace ascprof::report {

struct ModuleLaneCall {
  int64_t tid = 0;
  int64_t start_ns = 0, end_ns = 0;  ///< the rank's own clock (ns: epoch µs in a double keep only ~0.25 µs)
  uint32_t row = 0;                 ///< index into ModuleLanes::paths
  double self_device_us = 0, total_device_us = 0;
  uint64_t tasks = 0;
};

/// One rank's module calls.
struct ModuleLanes {
  std::string rank_id;
  std::vector<std::string> paths, names;  ///< per module row: its path and last name
  std::vector<ModuleLaneCall> calls;      ///< in start order
  size_t threads = 0;                     ///< distinct tids among the calls
};

/// Reads the ranks of module_summary.csv and each one's /modules tables from ranks/<rank_id>.h5 (the
/// caller applies the clock offsets). A root without modules gives none. kIo / kSchema errors name the file.
Result<std::vector<ModuleLanes>> read_module_lanes(const std::filesystem::path& root_out);

}  // namespace ascprof::report

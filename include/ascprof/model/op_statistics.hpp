#pragma once
/// Per-rank operator and API statistics as torch_npu copies them from CANN into
/// ASCEND_PROFILER_OUTPUT/: op_statistic.csv (one row per (OP Type, Core Type)) and
/// api_statistic.csv (one row per (Level, API Name)). These files are small (tens to thousands of
/// rows), so plain row structs are used. Times are µs exactly as written.
#include <cstdint>
#include <limits>
#include <string>

namespace ascprof::model {

/// One row of op_statistic.csv. Optional columns absent from the file read as NaN; `device_id` is
/// -1 when the file has no Device_id column (E2) or the cell is empty.
struct OpStatisticRow {
  std::string op_type;    ///< OP Type, e.g. "ForeachAddList"
  std::string core_type;  ///< Core Type (Accelerator Core enum), e.g. "AI_VECTOR_CORE"
  int32_t device_id = -1;
  uint64_t count = 0;
  double total_us = 0;
  double min_us = std::numeric_limits<double>::quiet_NaN();
  double avg_us = std::numeric_limits<double>::quiet_NaN();
  double max_us = std::numeric_limits<double>::quiet_NaN();
  double ratio_pct = std::numeric_limits<double>::quiet_NaN();  ///< Ratio(%), 3 dp in CANN output
  uint64_t source_line = 0;  ///< 1-based physical line of the row in the file

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & op_type & core_type & device_id & count & total_us & min_us & avg_us & max_us & ratio_pct & source_line;
  }
};

/// One row of api_statistic.csv. Optional columns absent from the file read as NaN (numbers) or ""
/// (level); `device_id` is the Device_id cell as text ("0", "host") and "" when the file has none (E2).
struct ApiStatisticRow {
  std::string level;     ///< acl, runtime, node, hccl, model, communication
  std::string api_name;  ///< API Name, e.g. "StreamSynchronize"
  std::string device_id;
  double time_us = 0;  ///< Time(us): total over all calls
  uint64_t count = 0;
  double avg_us = std::numeric_limits<double>::quiet_NaN();
  double min_us = std::numeric_limits<double>::quiet_NaN();
  double max_us = std::numeric_limits<double>::quiet_NaN();
  double variance = std::numeric_limits<double>::quiet_NaN();
  uint64_t source_line = 0;  ///< 1-based physical line of the row in the file

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & level & api_name & device_id & time_us & count & avg_us & min_us & max_us & variance & source_line;
  }
};

}  // namespace ascprof::model

#pragma once
/// Columnar table of kernel_details.csv rows for one profiling rank.
///
/// One entry per data row, in file order (row index = position). Strings are interned in the rank's
/// StringPool. Times are integer nanoseconds (exact for 16-digit epoch µs values). Absent integers are
/// kAbsentI32/kAbsentI64; absent metric values are NaN. Nothing here depends on the header era: the
/// importer maps whichever columns exist by name.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ascprof/common/string_pool.hpp"

namespace ascprof::model {

inline constexpr int32_t kAbsentI32 = std::numeric_limits<int32_t>::min();
inline constexpr int64_t kAbsentI64 = std::numeric_limits<int64_t>::min();

/// What the header of a kernel_details.csv looked like (for era reporting and tests).
struct KernelHeaderInfo {
  std::vector<std::string> columns;  ///< header names as written (trimmed)
  bool has_step_id = false;
  bool has_device_id = false;
  bool has_op_state = false;
  bool has_hf32 = false;
  bool has_stream_id = false;        ///< a stream column exists (its N/A cells are then "N/A", not "unknown")
  bool level0_short = false;         ///< no Model ID/Task ID/Stream ID (Level0 form)
  std::string block_column;          ///< "Block Dim", "Block Num" or "" if absent
  std::string era;                   ///< "E1", "E2", "E3", "E4", "level0-E2", ... best guess
};

/// A metric column (every column after `Context ID` and any unknown numeric column), by header name.
struct MetricColumn {
  std::string name;              ///< exact header text, e.g. "aic_mac_time(us)"
  std::vector<double> values;    ///< NaN where the cell was N/A, empty or not a number
};

/// source_table values: where a database row came from (its key is in source_line).
enum class KernelSource : uint8_t { kCsvLine = 0, kComputeTask = 1, kCommunicationOp = 2 };
inline constexpr const char* kKernelSourceNames[] = {"kernel_details.csv line", "COMPUTE_TASK_INFO.globalTaskId",
                                                     "COMMUNICATION_OP.opId"};

struct KernelTable {
  std::vector<uint64_t> source_line;  ///< 1-based line where the row starts (header is line 1), or the
                                      ///< database key named by source_table
  /// Empty for a CSV; for a database export one entry per row: which key source_line holds.
  std::vector<uint8_t> source_table;
  std::vector<int32_t> step_id;
  std::vector<int32_t> device_id;
  std::vector<int64_t> model_id;
  std::vector<int64_t> task_id;
  std::vector<int32_t> stream_id;
  std::vector<StrId> name;
  std::vector<StrId> type;
  std::vector<StrId> op_state;
  std::vector<StrId> accelerator_core;  ///< as written (upper-casing happens in normalize)
  std::vector<int64_t> start_ns;
  std::vector<int64_t> dur_ns;
  std::vector<int64_t> wait_ns;
  std::vector<int32_t> block_dim;      ///< "Block Dim" or "Block Num"
  std::vector<int32_t> mix_block_dim;  ///< "Mix Block Dim" or "Mix Block Num"
  std::vector<StrId> hf32_eligible;
  std::vector<StrId> input_shapes;     ///< cell value with the outer quotes removed
  std::vector<StrId> input_dtypes;
  std::vector<StrId> input_formats;
  std::vector<StrId> output_shapes;
  std::vector<StrId> output_dtypes;
  std::vector<StrId> output_formats;
  std::vector<int32_t> context_id;
  std::vector<MetricColumn> metrics;
  KernelHeaderInfo header;

  size_t size() const { return start_ns.size(); }
  /// Index of the metric named `name` (exact), or -1.
  int metric_index(std::string_view metric_name) const {
    for (size_t i = 0; i < metrics.size(); ++i)
      if (metrics[i].name == metric_name) return static_cast<int>(i);
    return -1;
  }
};

}  // namespace ascprof::model

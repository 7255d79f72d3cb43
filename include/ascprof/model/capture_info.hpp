#pragma once
/// Per-rank capture facts from profiler_info_<N>.json, profiler_metadata.json and step_trace_time.csv.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ascprof::model {

/// One communicator of profiler_metadata.json `parallel_group_info`.
struct ParallelGroup {
  std::string comm_name;            ///< the key, e.g. "group_name_0" or "10.1.2.3%eth0_55000_0_1738..."
  std::string group_name;           ///< "dp", "tp", "default_group", ...
  int64_t group_rank = -1;
  std::vector<int64_t> global_ranks;
  uint64_t hash = 0;                ///< double_hash(comm_name): the @suffix in communication files
};

struct ProfilerInfo {
  std::optional<int64_t> rank_id_from_name;  ///< N of profiler_info_<N>.json
  std::optional<int64_t> rank_id_from_body;  ///< "rank_id" field, int or string
  std::string profiler_level;                ///< "Level0", "Level1", "Level2", "Level_none", ""
  std::string aic_metrics;
  std::string torch_npu_version;
  std::string cann_version;
  bool record_shapes = false;
  // Added with the profiler_info reader (capture_info importer):
  bool profile_memory = false;
  bool with_stack = false;
  std::string export_type;                   ///< "text", "db"; a list is joined with ',' ("text,db")
  /// common_config.schedule (E1 spells the keys "_wait", "_warmup"...); -1 when absent.
  int64_t schedule_wait = -1;
  int64_t schedule_warmup = -1;
  int64_t schedule_active = -1;
  int64_t schedule_repeat = -1;
  int64_t schedule_skip_first = -1;
  int64_t syscnt_freq_mhz = -1;              ///< start_info.freq; -1 when absent
  int64_t start_cnt = -1;                    ///< start_info.start_cnt (syscnt ticks); -1 when absent
  int64_t start_monotonic_ns = -1;           ///< start_info.start_monotonic; -1 when absent
  int64_t collection_time_end_ns = -1;       ///< end_info.collectionTimeEnd (wall clock ns); -1 when absent
  int64_t monotonic_time_end_ns = -1;        ///< end_info.MonotonicTimeEnd; -1 when absent
};

struct ProfilerMetadata {
  std::vector<ParallelGroup> groups;
  std::vector<std::pair<std::string, std::string>> distributed_args;  ///< key, value as text
};

/// step_trace_time.csv, one row per (device, step). Values in µs; NaN where absent.
struct StepTraceTable {
  std::vector<int32_t> device_id;   ///< -1 when the column is absent
  std::vector<int64_t> step;        ///< -1 when empty
  std::vector<double> computing;
  std::vector<double> comm_not_overlapped;
  std::vector<double> overlapped;
  std::vector<double> communication;
  std::vector<double> free;
  std::vector<double> stage;
  std::vector<double> bubble;
  std::vector<double> comm_not_overlapped_excl_receive;
  std::vector<double> preparing;
  size_t size() const { return step.size(); }
};

}  // namespace ascprof::model

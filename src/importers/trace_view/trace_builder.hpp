#pragma once
/// Collects parsed trace_view events into TraceTables.
///
/// Metadata (process/thread names) may arrive after the events it names, so X events are staged in a
/// compact columnar table keyed by track (pid, tid) and partitioned into the final tables by
/// finish(), once every process_name / thread_name is known. Flows go straight to their table.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/model/trace_tables.hpp"
#include "event_fields.hpp"

namespace ascprof::importers::tv {

/// Direct-mapped cache in front of StringPool::intern (most names repeat; the pool's map is slower).
class InternCache {
 public:
  explicit InternCache(StringPool& pool);
  StrId intern(std::string_view s);

 private:
  struct Slot {
    uint64_t hash = 0;
    const char* data = nullptr;  // the pool's stable copy
    uint32_t size = 0;
    StrId id = 0;
  };
  static constexpr size_t kSlots = 1 << 13;
  StringPool& pool_;
  std::vector<Slot> slots_;
};

class TraceBuilder {
 public:
  TraceBuilder(std::string file, StringPool& pool, model::TraceTables& out, Stats& stats);

  /// Reserves staging capacity for a file of this size (address space only; avoids regrowth copies).
  void reserve_for(size_t file_bytes);

  /// Process kind of `pid` from the metadata seen so far (kUnknown if no process_name yet).
  model::ProcessKind known_kind(int64_t pid);

  /// ph M.
  void add_metadata(const EventFields& ev, uint64_t offset);
  /// ph X.
  void add_complete(const EventFields& ev, uint64_t offset);
  /// ph s / f.
  void add_flow(const EventFields& ev, uint64_t offset, uint8_t phase);
  /// Any other event with a pid (counters, unknown ph): only counted per process.
  void add_other(const EventFields& ev);

  /// Partitions staged events into the final tables, fills processes/threads, sorts every table by
  /// start time and reports unnamed processes.
  void finish();

  /// "FILE:byte N: reason" sample text for stats.
  std::string where(uint64_t offset, std::string_view reason) const;

 private:
  struct ProcState {
    int64_t pid = 0;
    StrId name = 0;
    StrId label = 0;
    int32_t sort_index = -1;
    int32_t device_id = -1;
    bool named = false;
    model::ProcessKind kind = model::ProcessKind::kUnknown;
    uint64_t events = 0;        // non-metadata events
    uint64_t first_offset = 0;  // of its first non-metadata event
  };
  struct TrackState {
    int64_t pid = 0;
    int64_t tid = 0;
    uint32_t proc = 0;
    StrId name = 0;
    int32_t sort_index = -1;
    bool named = false;
    int64_t last_start = INT64_MIN;
  };
  struct TrackKey {
    int64_t pid;
    int64_t tid;
    bool operator==(const TrackKey& o) const { return pid == o.pid && tid == o.tid; }
  };
  struct TrackKeyHash {
    size_t operator()(const TrackKey& k) const {
      uint64_t h = static_cast<uint64_t>(k.pid) * 0x9E3779B97F4A7C15ULL;
      h ^= static_cast<uint64_t>(k.tid) + 0x7F4A7C159E3779B9ULL + (h << 6) + (h >> 2);
      return static_cast<size_t>(h);
    }
  };
  // X events, one row each, in file order.
  struct Staging {
    std::vector<uint32_t> track;
    std::vector<StrId> name;
    std::vector<StrId> cat;
    std::vector<int64_t> start;
    std::vector<int64_t> dur;
    std::vector<uint64_t> offset;
    std::vector<uint32_t> args_row;  // kNoArgs when no interesting args
  };
  // Interesting args of staged X events (device tasks and communication mostly).
  struct ArgStaging {
    std::vector<uint32_t> present;
    std::vector<StrId> task_type, data_type, alg_type, plane_task_type, transport, link_type;
    std::vector<int64_t> task_id, connection_id, stream_id, count, src_rank, dst_rank, size_bytes;
    std::vector<double> bandwidth;
  };
  static constexpr uint32_t kNoArgs = UINT32_MAX;

  uint32_t proc_slot(int64_t pid);
  uint32_t track_slot(int64_t pid, int64_t tid);
  int64_t tid_of(const EventFields& ev);
  void partition();
  void sort_tables();

  std::string file_;
  StringPool& pool_;
  InternCache strings_;
  model::TraceTables& out_;
  Stats& stats_;

  std::vector<ProcState> procs_;
  std::unordered_map<int64_t, uint32_t> proc_index_;
  int64_t last_pid_ = 0;
  uint32_t last_proc_ = UINT32_MAX;

  std::vector<TrackState> tracks_;
  std::unordered_map<TrackKey, uint32_t, TrackKeyHash> track_index_;
  TrackKey last_track_key_{0, 0};
  uint32_t last_track_ = UINT32_MAX;

  Staging staged_;
  ArgStaging args_;
};

}  // namespace ascprof::importers::tv

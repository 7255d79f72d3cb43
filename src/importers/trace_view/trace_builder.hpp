#pragma once
/// Collects parsed trace_view events into TraceTables.
///
/// Metadata (process/thread names) may arrive after the events it names. An X event goes straight to its
/// table when its process is known, provisionally to host ops when it is a torch_npu event (has "cat")
/// of a pid not named yet, else to a compact staging table; finish() settles all of it by the final
/// names (re-reading args of provisional rows that turn out not to be host ops). Flows go straight in.
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

  /// One call site's previous string: checked before hashing (a field often repeats event after event).
  struct Recent {
    const char* data = nullptr;  // the pool's stable copy
    size_t size = 0;
    StrId id = 0;
  };
  /// Same result as intern(s); `recent` is updated to s.
  StrId intern(std::string_view s, Recent& recent);

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

  /// Reserves table capacity for a file of this size (address space only; avoids regrowth copies).
  void reserve_for(size_t file_bytes);

  /// Process kind of `pid` from the metadata seen so far (kUnknown if no process_name yet);
  /// `named` tells whether a process_name was seen at all.
  model::ProcessKind known_kind(int64_t pid, bool* named = nullptr);

  /// Re-reads the args of the event at a byte offset (for events placed before their process was
  /// known, whose args were not read). Returns false if the event cannot be read again.
  using ArgsReader = bool (*)(void* ctx, uint64_t offset, ArgFields* out);
  void set_args_reader(ArgsReader fn, void* ctx) {
    reread_ = fn;
    reread_ctx_ = ctx;
  }

  /// ph M.
  void add_metadata(const EventFields& ev, uint64_t offset);
  /// ph X.
  void add_complete(const EventFields& ev, uint64_t offset);
  /// ph s / f.
  void add_flow(const EventFields& ev, uint64_t offset, uint8_t phase);
  /// Any other event with a pid (counters, unknown ph): only counted per process.
  void add_other(const EventFields& ev, uint64_t offset);

  /// Settles tentative and staged events into the final tables, fills processes/threads, sorts every
  /// table by start time and reports unnamed processes.
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
    // Derived from the thread name when it arrives.
    int32_t stream = -1;   // "Stream <id>"
    int32_t plane = -1;    // "Plane <k>"
    int8_t comm_sub = 0;   // 1 "Group ... Communication", 2 "Plane k", 0 other / unnamed
    int8_t overlap = -1;   // OverlapKind of "Computing", "Free", ...
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
  // X events whose table cannot be decided yet (process or thread name still unknown), in file order.
  struct Staging {
    std::vector<uint32_t> track;
    std::vector<StrId> name;
    std::vector<StrId> cat;
    std::vector<int64_t> start;
    std::vector<int64_t> dur;
    std::vector<uint64_t> offset;
    std::vector<uint32_t> args_row;  // kNoArgs when no interesting args
  };
  // The args an X row's table may need, with strings interned.
  struct ArgValues {
    uint32_t present = 0;  // ArgBit
    StrId task_type = 0, data_type = 0, alg_type = 0, plane_task_type = 0, transport = 0, link_type = 0;
    int64_t task_id = -1, connection_id = -1, stream_id = -1, count = -1, src_rank = -1, dst_rank = -1,
            size_bytes = -1;
    double bandwidth = 0;
  };
  static constexpr uint32_t kNoArgs = UINT32_MAX;
  // Everything a table row needs, whether it comes from the parser or from staging.
  struct XRow {
    uint32_t track;
    StrId name;
    StrId cat;
    int64_t start;
    int64_t dur;
    uint64_t offset;
    const ArgValues* args;  // nullptr when no interesting args
    uint32_t args_row;      // index in args_ when already stored there, else kNoArgs
  };

  uint32_t proc_slot(int64_t pid);
  uint32_t track_slot(int64_t pid, int64_t tid);
  int64_t tid_of(const EventFields& ev);
  ArgValues arg_values(const ArgFields& a);
  uint32_t keep_args(const XRow& row);
  void place(const XRow& row, bool tentative_ok);
  void stage(const XRow& row);
  void append_host(const XRow& row, uint8_t is_cann);
  void append_device(const XRow& row);
  void append_comm_op(const XRow& row);
  void append_plane(const XRow& row);
  void append_overlap(const XRow& row, int kind);
  void note_unused(const XRow& row);
  void note_unclassified(const XRow& row, bool comm);
  void settle_tentative_host();
  void partition();
  void fix_up();
  void derive_steps();
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
  std::vector<ArgValues> args_;  // args of staged and tentative rows
  // Host rows placed before their process was named (torch_npu events carry "cat"): checked by finish().
  bool any_tentative_ = false;
  ArgsReader reread_ = nullptr;
  void* reread_ctx_ = nullptr;
  // Track of every device / overlap row, to apply thread names that arrive after the events.
  std::vector<uint32_t> dev_track_;
  std::vector<uint32_t> ovl_track_;
  InternCache::Recent x_name_, x_cat_, flow_name_, flow_cat_;
  uint64_t unused_ = 0;
  uint64_t unclassified_ = 0;
};

}  // namespace ascprof::importers::tv

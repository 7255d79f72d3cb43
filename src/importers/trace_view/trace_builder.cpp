#include "trace_builder.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <type_traits>

#include "ascprof/common/numbers.hpp"
#include "mem_advice.hpp"

namespace ascprof::importers::tv {

using model::OverlapKind;
using model::ProcessKind;

namespace {

uint64_t hash_bytes(const char* p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ (n * 0xC2B2AE3D27D4EB4FULL);
  while (n >= 8) {
    uint64_t w = 0;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
    h ^= h >> 32;
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  std::memcpy(&w, p, n);
  h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL;
  h ^= h >> 29;
  return h;
}

ProcessKind kind_from_name(std::string_view n) {
  if (n == "Python") return ProcessKind::kPython;
  if (n == "CANN") return ProcessKind::kCann;
  if (n == "Ascend Hardware") return ProcessKind::kAscendHardware;
  if (n == "HCCL" || n == "Communication") return ProcessKind::kCommunication;
  if (n == "Overlap Analysis") return ProcessKind::kOverlapAnalysis;
  static constexpr std::string_view kCounters[] = {
      "AI Core Freq", "NPU MEM", "HBM", "LLC", "QoS", "Acc PMU", "Stars Soc Info", "SIO", "HCCS",
      "PCIe", "NIC", "RoCE", "DDR", "Stars Chip Trans", "AI Core Utilization", "Stars Chip Info"};
  for (std::string_view c : kCounters)
    if (n == c) return ProcessKind::kCounter;
  return ProcessKind::kUnknown;
}

// "<prefix><integer>" -> integer, else -1.
int64_t suffix_int(std::string_view s, std::string_view prefix) {
  if (s.size() <= prefix.size() || s.substr(0, prefix.size()) != prefix) return -1;
  const auto v = parse_int64(s.substr(prefix.size()));
  return v && *v >= 0 ? *v : -1;
}

int overlap_kind_of(std::string_view n) {
  if (n == "Computing") return static_cast<int>(OverlapKind::kComputing);
  if (n == "Communication") return static_cast<int>(OverlapKind::kCommunication);
  if (n == "Communication(Not Overlapped)") return static_cast<int>(OverlapKind::kCommNotOverlapped);
  if (n == "Free") return static_cast<int>(OverlapKind::kFree);
  return -1;
}

bool is_group_thread(std::string_view n) {
  constexpr std::string_view kPrefix = "Group ", kSuffix = "Communication";
  return n.size() >= kPrefix.size() + kSuffix.size() && n.substr(0, kPrefix.size()) == kPrefix &&
         n.substr(n.size() - kSuffix.size()) == kSuffix;
}

// Tables that are a few sorted sequences interleaved (flows: each "s" is followed by its later "f") are
// split greedily into at most kMaxRuns non-decreasing subsequences and merged by (time, row): the same
// order as a stable sort, in linear time. `perm[k]` is the row that goes to position k. Returns false
// (perm untouched) when more runs would be needed.
bool merge_sorted_runs(const std::vector<int64_t>& key, std::vector<uint32_t>& perm) {
  constexpr size_t kMaxRuns = 4;
  const size_t n = key.size();
  if (n >= UINT32_MAX) return false;
  std::unique_ptr<uint8_t[]> run_of(new uint8_t[n]);
  int64_t tail[kMaxRuns];
  size_t count[kMaxRuns] = {};
  size_t runs = 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t t = key[i];
    size_t r = 0;
    while (r < runs && tail[r] > t) ++r;
    if (r == runs) {
      if (runs == kMaxRuns) return false;
      ++runs;
    }
    tail[r] = t;
    run_of[i] = static_cast<uint8_t>(r);
    ++count[r];
  }
  // Row indices of each run, in file order, packed one run after another.
  std::unique_ptr<uint32_t[]> rows(new uint32_t[n]);
  size_t begin[kMaxRuns + 1] = {};
  for (size_t r = 0; r < runs; ++r) begin[r + 1] = begin[r] + count[r];
  size_t at[kMaxRuns];
  std::copy(begin, begin + kMaxRuns, at);
  for (size_t i = 0; i < n; ++i) rows[at[run_of[i]]++] = static_cast<uint32_t>(i);
  run_of.reset();
  std::copy(begin, begin + kMaxRuns, at);
  reserve_huge(n, perm);
  perm.resize(n);
  for (size_t o = 0; o < n; ++o) {
    size_t best = kMaxRuns;
    for (size_t r = 0; r < runs; ++r) {
      if (at[r] == begin[r + 1]) continue;
      if (best == kMaxRuns) {
        best = r;
        continue;
      }
      const uint32_t x = rows[at[r]], y = rows[at[best]];
      if (key[x] < key[y] || (key[x] == key[y] && x < y)) best = r;
    }
    perm[o] = rows[at[best]++];
  }
  return true;
}

// Stable sort of a table by its time column; `cols` are permuted alongside. Cheap when already sorted.
template <typename... Cols>
void sort_by_time(std::vector<int64_t>& key, Cols&... cols) {
  if (std::is_sorted(key.begin(), key.end())) return;
  const size_t n = key.size();
  // Moves every column through one uninitialised scratch buffer (all are trivially copyable, at most 8
  // bytes wide); row_at(k) is the row that goes to position k.
  auto permute = [&](auto row_at) {
    std::unique_ptr<uint64_t[]> scratch(new uint64_t[n]);
    advise_huge_pages(scratch.get(), n * sizeof(uint64_t));
    auto apply = [&](auto& col) {
      using T = typename std::remove_reference_t<decltype(col)>::value_type;
      static_assert(sizeof(T) <= sizeof(uint64_t) && std::is_trivially_copyable_v<T>);
      T* tmp = reinterpret_cast<T*>(scratch.get());
      for (size_t k = 0; k < n; ++k) tmp[k] = col[row_at(k)];
      std::memcpy(col.data(), tmp, n * sizeof(T));
    };
    apply(key);
    (apply(cols), ...);
  };
  std::vector<uint32_t> perm;
  if (merge_sorted_runs(key, perm)) {
    permute([&perm](size_t k) { return perm[k]; });
    return;
  }
  struct Entry {
    int64_t t;
    size_t i;
  };
  std::vector<Entry> order;
  reserve_huge(n, order);
  order.resize(n);
  for (size_t i = 0; i < n; ++i) order[i] = {key[i], i};
  std::stable_sort(order.begin(), order.end(), [](const Entry& x, const Entry& y) { return x.t < y.t; });
  permute([&order](size_t k) { return order[k].i; });
}

}  // namespace

InternCache::InternCache(StringPool& pool) : pool_(pool), slots_(kSlots) {}

StrId InternCache::intern(std::string_view s) {
  if (s.empty()) return 0;
  const uint64_t h = hash_bytes(s.data(), s.size());
  Slot& slot = slots_[h & (kSlots - 1)];
  if (slot.hash == h && slot.size == s.size() && std::memcmp(slot.data, s.data(), s.size()) == 0) return slot.id;
  const StrId id = pool_.intern(s);
  const std::string_view stored = pool_.view(id);
  if (stored.size() <= UINT32_MAX) slot = Slot{h, stored.data(), static_cast<uint32_t>(stored.size()), id};
  return id;
}

StrId InternCache::intern(std::string_view s, Recent& recent) {
  if (s.size() == recent.size && recent.data != nullptr && std::memcmp(recent.data, s.data(), s.size()) == 0)
    return recent.id;
  const StrId id = intern(s);
  if (id != 0) {
    const std::string_view stored = pool_.view(id);
    recent = Recent{stored.data(), stored.size(), id};
  }
  return id;
}

TraceBuilder::TraceBuilder(std::string file, StringPool& pool, model::TraceTables& out, Stats& stats)
    : file_(std::move(file)), pool_(pool), strings_(pool), out_(out), stats_(stats) {}

std::string TraceBuilder::where(uint64_t offset, std::string_view reason) const {
  std::string s = file_;
  s += ":byte ";
  s += std::to_string(offset);
  s += ": ";
  s += reason;
  return s;
}

uint32_t TraceBuilder::proc_slot(int64_t pid) {
  if (last_proc_ != UINT32_MAX && last_pid_ == pid) return last_proc_;
  auto [it, inserted] = proc_index_.try_emplace(pid, static_cast<uint32_t>(procs_.size()));
  if (inserted) {
    ProcState p;
    p.pid = pid;
    procs_.push_back(p);
  }
  last_pid_ = pid;
  last_proc_ = it->second;
  return it->second;
}

uint32_t TraceBuilder::track_slot(int64_t pid, int64_t tid) {
  const TrackKey key{pid, tid};
  if (last_track_ != UINT32_MAX && last_track_key_ == key) return last_track_;
  auto [it, inserted] = track_index_.try_emplace(key, static_cast<uint32_t>(tracks_.size()));
  if (inserted) {
    TrackState t;
    t.pid = pid;
    t.tid = tid;
    t.proc = proc_slot(pid);
    tracks_.push_back(t);
  }
  last_track_key_ = key;
  last_track_ = it->second;
  return it->second;
}

int64_t TraceBuilder::tid_of(const EventFields& ev) {
  if ((ev.has & kTidIsString) != 0) return -static_cast<int64_t>(strings_.intern(ev.tid_str)) - 1;
  return (ev.has & kHasTid) != 0 && (ev.bad & kBadTid) == 0 ? ev.tid : 0;
}

void TraceBuilder::reserve_for(size_t file_bytes) {
  // Rough bytes-per-row of each table in real and synthetic captures, on the dense side. Reserving costs
  // only address space (untouched capacity is never faulted in) and saves regrowth copies; tables that
  // turn out larger still grow normally.
  auto rows = [file_bytes](size_t bytes_per_row) { return std::min(file_bytes / bytes_per_row, size_t{1} << 28) + 16; };
  model::HostOpTable& h = out_.host_ops;
  reserve_huge(rows(300), h.name, h.cat, h.is_cann, h.pid, h.tid, h.start_ns, h.dur_ns, h.source_offset, h.connection_id);
  model::DeviceTaskTable& d = out_.device_tasks;
  reserve_huge(rows(800), d.name, d.task_type, d.stream_id, d.task_id, d.connection_id, d.start_ns, d.dur_ns,
               d.source_offset, dev_track_);
  model::CommPlaneTaskTable& p = out_.comm_plane_tasks;
  reserve_huge(rows(3000), p.name, p.plane, p.task_type, p.transport, p.link_type, p.src_rank, p.dst_rank,
               p.size_bytes, p.bandwidth_gbps, p.start_ns, p.dur_ns, p.source_offset);
  model::OverlapTable& o = out_.overlap;
  reserve_huge(rows(3000), o.kind, o.start_ns, o.dur_ns, o.source_offset, ovl_track_);
  model::FlowTable& f = out_.flows;
  reserve_huge(rows(400), f.cat, f.name, f.id, f.phase, f.pid, f.tid, f.ts_ns, f.source_offset);
  // X events of processes named only after them (Overlap Analysis is typically written before its name).
  reserve_huge(rows(800), staged_.track, staged_.name, staged_.cat, staged_.start, staged_.dur, staged_.offset,
               staged_.args_row);
}

ProcessKind TraceBuilder::known_kind(int64_t pid, bool* named) {
  const ProcState& p = procs_[proc_slot(pid)];
  if (named != nullptr) *named = p.named;
  return p.kind;
}

void TraceBuilder::add_metadata(const EventFields& ev, uint64_t offset) {
  if ((ev.has & kHasName) == 0 || (ev.has & kHasPid) == 0 || (ev.bad & kBadPid) != 0) {
    stats_.note(Stat::tv_event_missing_field, where(offset, "metadata event without name or integer pid"));
    return;
  }
  const std::string_view n = ev.name;
  const ArgFields& a = ev.args;
  auto missing = [&](const char* what) {
    stats_.note(Stat::tv_event_missing_field, where(offset, std::string(n) + " metadata event without args." + what));
  };
  // Names are first-wins: events may already be in tables chosen by the first name.
  if (n == "process_name") {
    if ((a.present & kArgMetaName) == 0) return missing("name");
    ProcState& p = procs_[proc_slot(ev.pid)];
    if (p.named) return;
    p.name = strings_.intern(a.meta_name);
    p.named = true;
    p.kind = kind_from_name(a.meta_name);
  } else if (n == "process_labels") {
    if ((a.present & kArgLabels) == 0) return missing("labels");
    ProcState& p = procs_[proc_slot(ev.pid)];
    p.label = strings_.intern(a.labels);
    const int64_t dev = suffix_int(a.labels, "NPU ");
    if (dev >= 0 && dev <= INT32_MAX) p.device_id = static_cast<int32_t>(dev);
  } else if (n == "process_sort_index") {
    if ((a.present & kArgSortIndex) == 0) return missing("sort_index");
    procs_[proc_slot(ev.pid)].sort_index = static_cast<int32_t>(a.sort_index);
  } else if (n == "thread_name") {
    if ((a.present & kArgMetaName) == 0) return missing("name");
    TrackState& t = tracks_[track_slot(ev.pid, tid_of(ev))];
    if (t.named) return;
    t.name = strings_.intern(a.meta_name);
    t.named = true;
    const std::string_view tn = a.meta_name;
    const int64_t stream = suffix_int(tn, "Stream ");
    const int64_t plane = suffix_int(tn, "Plane ");
    t.stream = stream <= INT32_MAX ? static_cast<int32_t>(stream) : -1;
    t.plane = plane <= INT32_MAX ? static_cast<int32_t>(plane) : -1;
    t.comm_sub = is_group_thread(tn) ? 1 : tn.substr(0, 6) == "Plane " ? 2 : 0;
    t.overlap = static_cast<int8_t>(overlap_kind_of(tn));
  } else if (n == "thread_sort_index") {
    if ((a.present & kArgSortIndex) == 0) return missing("sort_index");
    tracks_[track_slot(ev.pid, tid_of(ev))].sort_index = static_cast<int32_t>(a.sort_index);
  }
}

TraceBuilder::ArgValues TraceBuilder::arg_values(const ArgFields& a) {
  const uint32_t m = a.present;
  auto str = [&](uint32_t bit, std::string_view v) -> StrId { return (m & bit) != 0 ? strings_.intern(v) : 0; };
  auto num = [&](uint32_t bit, int64_t v) -> int64_t { return (m & bit) != 0 ? v : -1; };
  ArgValues v;
  v.present = m;
  v.task_type = str(kArgTaskType, a.task_type);
  v.data_type = str(kArgDataType, a.data_type);
  v.alg_type = str(kArgAlgType, a.alg_type);
  v.plane_task_type = str(kArgPlaneTaskType, a.plane_task_type);
  v.transport = str(kArgTransport, a.transport);
  v.link_type = str(kArgLinkType, a.link_type);
  v.task_id = num(kArgTaskId, a.task_id);
  v.connection_id = num(kArgConnectionId, a.connection_id);
  v.stream_id = num(kArgStreamId, a.stream_id);
  v.count = num(kArgCount, a.count);
  v.src_rank = num(kArgSrcRank, a.src_rank);
  v.dst_rank = num(kArgDstRank, a.dst_rank);
  v.size_bytes = num(kArgSize, a.size_bytes);
  v.bandwidth = (m & kArgBandwidth) != 0 ? a.bandwidth : std::numeric_limits<double>::quiet_NaN();
  return v;
}

// Index of the row's args in args_ (stored now if needed), or kNoArgs.
uint32_t TraceBuilder::keep_args(const XRow& row) {
  if (row.args_row != kNoArgs || row.args == nullptr) return row.args_row;
  args_.push_back(*row.args);
  return static_cast<uint32_t>(args_.size() - 1);
}

void TraceBuilder::add_complete(const EventFields& ev, uint64_t offset) {
  constexpr uint32_t kRequired = kHasName | kHasPid | kHasTs | kHasDur;
  if ((ev.has & kRequired) != kRequired || (ev.bad & kBadPid) != 0) {
    std::string what = "X event without";
    if ((ev.has & kHasName) == 0) what += " name";
    if ((ev.has & kHasPid) == 0) what += " pid";
    if ((ev.bad & kBadPid) != 0) what += " an integer pid";
    if ((ev.has & kHasTs) == 0) what += " ts";
    if ((ev.has & kHasDur) == 0) what += " dur";
    stats_.note(Stat::tv_event_missing_field, where(offset, what));
    return;
  }
  if ((ev.bad & (kBadTs | kBadDur)) != 0) {
    stats_.note(Stat::tv_bad_ts, where(offset, (ev.bad & kBadTs) != 0 ? "ts is not a number" : "dur is not a number"));
    return;
  }
  const uint32_t tr = track_slot(ev.pid, tid_of(ev));
  TrackState& t = tracks_[tr];
  ProcState& p = procs_[t.proc];
  if (p.events++ == 0) p.first_offset = offset;
  if (ev.ts_ns < t.last_start) {
    if (stats_.samples(Stat::tv_events_out_of_order).size() < Stats::kMaxSamples)
      stats_.note(Stat::tv_events_out_of_order, where(offset, "starts before the previous event of its track"));
    else
      stats_.inc(Stat::tv_events_out_of_order);
  }
  t.last_start = ev.ts_ns;

  XRow row{tr,
           strings_.intern(ev.name, x_name_),
           (ev.has & kHasCat) != 0 ? strings_.intern(ev.cat, x_cat_) : 0,
           ev.ts_ns,
           ev.dur_ns,
           offset,
           nullptr,
           kNoArgs};
  // Only tables that read args need them (device tasks, communication, or not known yet).
  ArgValues args;
  if ((ev.args.present & kXArgMask) != 0) {
    switch (p.kind) {
      case ProcessKind::kPython:
      case ProcessKind::kOverlapAnalysis:
      case ProcessKind::kCounter: break;
      default:
        if (p.kind == ProcessKind::kUnknown && p.named) break;
        args = arg_values(ev.args);
        row.args = &args;
        break;
    }
  }
  place(row, true);
}

// Puts an X row into its table if its process (and, where it matters, thread) is already known; else
// tentatively into host ops (torch_npu events, which carry "cat") or into staging.
void TraceBuilder::place(const XRow& row, bool tentative_ok) {
  const TrackState& t = tracks_[row.track];
  const ProcState& p = procs_[t.proc];
  const uint32_t present = row.args == nullptr ? 0 : row.args->present;
  switch (p.kind) {
    case ProcessKind::kPython: return append_host(row, 0);
    case ProcessKind::kCann: return append_host(row, 1);
    case ProcessKind::kAscendHardware: return append_device(row);
    case ProcessKind::kCommunication: {
      int sub = t.comm_sub;
      if (sub == 0 && t.named) sub = (present & kPlaneArgMask) != 0 ? 2 : (present & kCommOpArgMask) != 0 ? 1 : 0;
      if (sub == 1) return append_comm_op(row);
      if (sub == 2) return append_plane(row);
      if (!t.named && tentative_ok) return stage(row);  // the thread name may still come
      if (!t.named) {  // end of file: decide by args
        if ((present & kPlaneArgMask) != 0) return append_plane(row);
        if ((present & kCommOpArgMask) != 0) return append_comm_op(row);
      }
      return note_unclassified(row, true);
    }
    case ProcessKind::kOverlapAnalysis: {
      int kind = t.named ? t.overlap : -1;
      if (kind < 0) kind = overlap_kind_of(pool_.view(row.name));
      if (kind >= 0) return append_overlap(row, kind);
      if (!t.named && tentative_ok) return stage(row);
      return note_unclassified(row, false);
    }
    case ProcessKind::kCounter: return note_unused(row);
    case ProcessKind::kUnknown:
      if (p.named) return note_unused(row);
      if (!tentative_ok) return;  // never named: reported per process as tv_unnamed_process
      if (row.cat != 0) {  // torch_npu event: almost surely the Python process; args re-read if not
        any_tentative_ = true;
        return append_host(row, 0);
      }
      return stage(row);
  }
}

void TraceBuilder::stage(const XRow& row) {
  staged_.track.push_back(row.track);
  staged_.name.push_back(row.name);
  staged_.cat.push_back(row.cat);
  staged_.start.push_back(row.start);
  staged_.dur.push_back(row.dur);
  staged_.offset.push_back(row.offset);
  staged_.args_row.push_back(keep_args(row));
}

void TraceBuilder::append_host(const XRow& row, uint8_t is_cann) {
  const TrackState& t = tracks_[row.track];
  model::HostOpTable& h = out_.host_ops;
  h.name.push_back(row.name);
  h.cat.push_back(row.cat);
  h.is_cann.push_back(is_cann);
  h.pid.push_back(t.pid);
  h.tid.push_back(t.tid);
  h.start_ns.push_back(row.start);
  h.dur_ns.push_back(row.dur);
  h.source_offset.push_back(row.offset);
  h.connection_id.push_back(is_cann != 0 && row.args != nullptr ? row.args->connection_id : -1);
}

void TraceBuilder::append_device(const XRow& row) {
  const TrackState& t = tracks_[row.track];
  const ArgValues* a = row.args;
  // Stream: thread name "Stream <id>" (fixed up by finish() if it comes later), else args, else tid.
  int64_t stream = t.stream;
  if (stream < 0 && a != nullptr && (a->present & kArgStreamId) != 0) stream = a->stream_id;
  model::DeviceTaskTable& d = out_.device_tasks;
  d.name.push_back(row.name);
  d.task_type.push_back(a == nullptr ? 0 : a->task_type);
  d.stream_id.push_back(stream >= INT32_MIN && stream <= INT32_MAX ? static_cast<int32_t>(stream) : -1);
  d.task_id.push_back(a == nullptr ? -1 : a->task_id);
  d.connection_id.push_back(a == nullptr ? -1 : a->connection_id);
  d.start_ns.push_back(row.start);
  d.dur_ns.push_back(row.dur);
  d.source_offset.push_back(row.offset);
  dev_track_.push_back(row.track);

}

void TraceBuilder::append_comm_op(const XRow& row) {
  const TrackState& t = tracks_[row.track];
  const ArgValues* a = row.args;
  model::CommOpTable& c = out_.comm_ops;
  c.name.push_back(row.name);
  c.group.push_back(t.named ? t.name : 0);
  c.data_type.push_back(a == nullptr ? 0 : a->data_type);
  c.alg_type.push_back(a == nullptr ? 0 : a->alg_type);
  c.count.push_back(a == nullptr ? -1 : a->count);
  c.connection_id.push_back(a == nullptr ? -1 : a->connection_id);
  c.start_ns.push_back(row.start);
  c.dur_ns.push_back(row.dur);
  c.source_offset.push_back(row.offset);

}

void TraceBuilder::append_plane(const XRow& row) {
  const TrackState& t = tracks_[row.track];
  const ArgValues* a = row.args;
  model::CommPlaneTaskTable& p = out_.comm_plane_tasks;
  p.name.push_back(row.name);
  p.plane.push_back(t.plane);
  p.task_type.push_back(a == nullptr ? 0 : a->plane_task_type);
  p.transport.push_back(a == nullptr ? 0 : a->transport);
  p.link_type.push_back(a == nullptr ? 0 : a->link_type);
  p.src_rank.push_back(a == nullptr ? -1 : a->src_rank);
  p.dst_rank.push_back(a == nullptr ? -1 : a->dst_rank);
  p.size_bytes.push_back(a == nullptr ? -1 : a->size_bytes);
  p.bandwidth_gbps.push_back(a == nullptr ? std::numeric_limits<double>::quiet_NaN() : a->bandwidth);
  p.start_ns.push_back(row.start);
  p.dur_ns.push_back(row.dur);
  p.source_offset.push_back(row.offset);

}

void TraceBuilder::append_overlap(const XRow& row, int kind) {
  model::OverlapTable& o = out_.overlap;
  o.kind.push_back(static_cast<uint8_t>(kind));
  o.start_ns.push_back(row.start);
  o.dur_ns.push_back(row.dur);
  o.source_offset.push_back(row.offset);
  ovl_track_.push_back(row.track);
}

void TraceBuilder::note_unused(const XRow& row) {
  const ProcState& p = procs_[tracks_[row.track].proc];
  if (unused_++ < Stats::kMaxSamples)
    stats_.note(Stat::tv_unused_process_event,
                where(row.offset, "X event on process '" + std::string(pool_.view(p.name)) + "' (not analysed)"));
  else
    stats_.inc(Stat::tv_unused_process_event);
}

void TraceBuilder::note_unclassified(const XRow& row, bool comm) {
  const TrackState& t = tracks_[row.track];
  if (unclassified_++ >= Stats::kMaxSamples) return stats_.inc(Stat::tv_unclassified_event);
  const std::string what = comm ? "communication event on thread '" + std::string(pool_.view(t.name)) +
                                      "' is neither a Group ... Communication op nor a Plane task"
                                : "Overlap Analysis event '" + std::string(pool_.view(row.name)) +
                                      "' on a thread that is not Computing/Communication/Free";
  stats_.note(Stat::tv_unclassified_event, where(row.offset, what));
}

// CANN flow names repeat their id ("HostToDevice1225" with id "1225"). Interned whole they would add
// one string per flow (millions per rank); without the id suffix they share one entry, and name + id
// rebuild the original.
static std::string_view flow_name_without_id(const EventFields& ev) {
  std::string_view name = ev.name;
  if (name.empty() || name.back() < '0' || name.back() > '9') return name;
  char buf[24];
  std::string_view id_text;
  if ((ev.has & kIdIsString) != 0) {
    id_text = ev.id_str;
  } else {
    auto r = std::to_chars(buf, buf + sizeof buf, ev.id);
    id_text = std::string_view(buf, static_cast<size_t>(r.ptr - buf));
  }
  if (!id_text.empty() && name.size() > id_text.size() && name.ends_with(id_text))
    name.remove_suffix(id_text.size());
  return name;
}

void TraceBuilder::add_flow(const EventFields& ev, uint64_t offset, uint8_t phase) {
  constexpr uint32_t kRequired = kHasPid | kHasTs | kHasId;
  if ((ev.has & kRequired) != kRequired || (ev.bad & (kBadPid | kBadId)) != 0) {
    stats_.note(Stat::tv_event_missing_field, where(offset, "flow event without pid, ts or id"));
    return;
  }
  if ((ev.bad & kBadTs) != 0) {
    stats_.note(Stat::tv_bad_ts, where(offset, "ts is not a number"));
    return;
  }
  ProcState& p = procs_[proc_slot(ev.pid)];
  if (p.events++ == 0) p.first_offset = offset;
  model::FlowTable& f = out_.flows;
  f.cat.push_back((ev.has & kHasCat) != 0 ? strings_.intern(ev.cat, flow_cat_) : 0);
  f.name.push_back((ev.has & kHasName) != 0 ? strings_.intern(flow_name_without_id(ev), flow_name_) : 0);
  f.id.push_back((ev.has & kIdIsString) != 0 ? -static_cast<int64_t>(strings_.intern(ev.id_str)) - 1 : ev.id);
  f.phase.push_back(phase);
  f.pid.push_back(ev.pid);
  f.tid.push_back(tid_of(ev));
  f.ts_ns.push_back(ev.ts_ns);
  f.source_offset.push_back(offset);
}

void TraceBuilder::add_other(const EventFields& ev, uint64_t offset) {
  if ((ev.has & kHasPid) == 0 || (ev.bad & kBadPid) != 0) return;
  ProcState& p = procs_[proc_slot(ev.pid)];
  if (p.events++ == 0) p.first_offset = offset;
}

// Host rows placed on the guess that an unnamed pid was the Python process: keep them where the guess
// was right, move the others to staging for partition(), re-reading their args (not read at first).
void TraceBuilder::settle_tentative_host() {
  if (!any_tentative_) return;
  model::HostOpTable& h = out_.host_ops;
  size_t w = 0;
  for (size_t r = 0; r < h.size(); ++r) {
    const ProcState& p = procs_[proc_slot(h.pid[r])];
    if (p.kind == ProcessKind::kPython || p.kind == ProcessKind::kCann) {
      h.is_cann[r] = p.kind == ProcessKind::kCann ? 1 : 0;
    } else {
      ArgFields fields;
      ArgValues values;
      const ArgValues* args = nullptr;
      if (p.named && reread_ != nullptr && reread_(reread_ctx_, h.source_offset[r], &fields) &&
          (fields.present & kXArgMask) != 0) {
        values = arg_values(fields);
        args = &values;
      }
      stage(XRow{track_slot(h.pid[r], h.tid[r]), h.name[r], h.cat[r], h.start_ns[r], h.dur_ns[r],
                 h.source_offset[r], args, kNoArgs});
      continue;
    }
    if (w != r) {
      h.name[w] = h.name[r];
      h.cat[w] = h.cat[r];
      h.is_cann[w] = h.is_cann[r];
      h.pid[w] = h.pid[r];
      h.tid[w] = h.tid[r];
      h.start_ns[w] = h.start_ns[r];
      h.dur_ns[w] = h.dur_ns[r];
      h.source_offset[w] = h.source_offset[r];
      h.connection_id[w] = h.connection_id[r];
    }
    ++w;
  }
  auto shrink = [w](auto&... cols) { (cols.resize(w), ...); };
  shrink(h.name, h.cat, h.is_cann, h.pid, h.tid, h.start_ns, h.dur_ns, h.source_offset, h.connection_id);
}

// Staged rows now that every name is known (same rules as place(), without tentative placement).
void TraceBuilder::partition() {
  // Staged rows land in the overlap / communication tables: room for all of them there up front, so the
  // tables do not regrow (copy and fault in) while the rows are placed.
  const size_t n = staged_.start.size();
  model::OverlapTable& o = out_.overlap;
  if (n != 0) reserve_huge(o.size() + n, o.kind, o.start_ns, o.dur_ns, o.source_offset, ovl_track_);
  for (size_t r = 0; r < staged_.start.size(); ++r)
    place(XRow{staged_.track[r], staged_.name[r], staged_.cat[r], staged_.start[r], staged_.dur[r],
               staged_.offset[r], staged_.args_row[r] == kNoArgs ? nullptr : &args_[staged_.args_row[r]],
               staged_.args_row[r]},
          false);
  staged_ = Staging{};
}

// Thread names that arrived after their events: device streams and overlap kinds.
void TraceBuilder::fix_up() {
  model::DeviceTaskTable& d = out_.device_tasks;
  for (size_t i = 0; i < d.size(); ++i) {
    const TrackState& t = tracks_[dev_track_[i]];
    if (t.stream >= 0) d.stream_id[i] = t.stream;
    else if (d.stream_id[i] < 0)
      d.stream_id[i] = t.tid >= INT32_MIN && t.tid <= INT32_MAX ? static_cast<int32_t>(t.tid) : -1;
  }
  model::OverlapTable& o = out_.overlap;
  for (size_t i = 0; i < o.size(); ++i) {
    const TrackState& t = tracks_[ovl_track_[i]];
    if (t.named && t.overlap >= 0) o.kind[i] = static_cast<uint8_t>(t.overlap);
  }
  dev_track_ = {};
  ovl_track_ = {};
  args_ = {};
}

void TraceBuilder::derive_steps() {
  const model::HostOpTable& h = out_.host_ops;
  model::StepMarkerTable& s = out_.steps;
  for (size_t i = 0; i < h.size(); ++i) {
    if (h.is_cann[i] != 0) continue;
    const std::string_view name = pool_.view(h.name[i]);
    if (name.size() <= 13 || name[0] != 'P' || name.substr(0, 13) != "ProfilerStep#") continue;
    const int64_t step = suffix_int(name, "ProfilerStep#");
    if (step < 0) continue;
    s.step.push_back(step);
    s.start_ns.push_back(h.start_ns[i]);
    s.end_ns.push_back(h.start_ns[i] + h.dur_ns[i]);
    s.source_offset.push_back(h.source_offset[i]);
  }
}

void TraceBuilder::sort_tables() {
  auto& h = out_.host_ops;
  sort_by_time(h.start_ns, h.name, h.cat, h.is_cann, h.pid, h.tid, h.dur_ns, h.source_offset, h.connection_id);
  auto& s = out_.steps;
  sort_by_time(s.start_ns, s.step, s.end_ns, s.source_offset);
  auto& d = out_.device_tasks;
  sort_by_time(d.start_ns, d.name, d.task_type, d.stream_id, d.task_id, d.connection_id, d.dur_ns, d.source_offset);
  auto& c = out_.comm_ops;
  sort_by_time(c.start_ns, c.name, c.group, c.data_type, c.alg_type, c.count, c.connection_id, c.dur_ns,
               c.source_offset);
  auto& p = out_.comm_plane_tasks;
  sort_by_time(p.start_ns, p.name, p.plane, p.task_type, p.transport, p.link_type, p.src_rank, p.dst_rank,
               p.size_bytes, p.bandwidth_gbps, p.dur_ns, p.source_offset);
  auto& o = out_.overlap;
  sort_by_time(o.start_ns, o.kind, o.dur_ns, o.source_offset);
  auto& f = out_.flows;
  sort_by_time(f.ts_ns, f.cat, f.name, f.id, f.phase, f.pid, f.tid, f.source_offset);
}

void TraceBuilder::finish() {
  settle_tentative_host();
  partition();
  fix_up();
  derive_steps();
  sort_tables();
  out_.processes.reserve(procs_.size());
  for (const ProcState& p : procs_) {
    model::ProcessInfo info;
    info.pid = p.pid;
    info.name = p.name;
    info.label = p.label;
    info.sort_index = p.sort_index;
    info.device_id = p.device_id;
    info.kind = p.kind;
    out_.processes.push_back(info);
    if (!p.named && p.events > 0) {
      stats_.note(Stat::tv_unnamed_process,
                  where(p.first_offset, "pid " + std::to_string(p.pid) + " has no process_name metadata (" +
                                            std::to_string(p.events) + " events)"));
      stats_.inc(Stat::tv_unnamed_process, p.events - 1);
    }
  }
  out_.threads.reserve(tracks_.size());
  for (const TrackState& t : tracks_) {
    model::ThreadInfo info;
    info.pid = t.pid;
    info.tid = t.tid;
    info.name = t.name;
    info.sort_index = t.sort_index;
    out_.threads.push_back(info);
  }
}

}  // namespace ascprof::importers::tv

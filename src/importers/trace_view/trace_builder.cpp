#include "trace_builder.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
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

// Stable sort of a table by its time column; `cols` are permuted alongside. Cheap when already sorted.
template <typename... Cols>
void sort_by_time(std::vector<int64_t>& key, Cols&... cols) {
  if (std::is_sorted(key.begin(), key.end())) return;
  struct Entry {
    int64_t t;
    size_t i;
  };
  std::vector<Entry> order;
  reserve_huge(key.size(), order);
  order.resize(key.size());
  for (size_t i = 0; i < key.size(); ++i) order[i] = {key[i], i};
  std::stable_sort(order.begin(), order.end(), [](const Entry& a, const Entry& b) { return a.t < b.t; });
  for (size_t i = 0; i < order.size(); ++i) key[i] = order[i].t;
  // One scratch buffer for every column (all are trivially copyable, at most 8 bytes wide).
  std::vector<uint64_t> scratch;
  reserve_huge(order.size(), scratch);
  scratch.resize(order.size());
  auto apply = [&](auto& col) {
    using T = typename std::remove_reference_t<decltype(col)>::value_type;
    static_assert(sizeof(T) <= sizeof(uint64_t) && std::is_trivially_copyable_v<T>);
    T* tmp = reinterpret_cast<T*>(scratch.data());
    for (size_t i = 0; i < order.size(); ++i) tmp[i] = col[order[i].i];
    std::memcpy(col.data(), tmp, order.size() * sizeof(T));
  };
  (apply(cols), ...);
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
  // Typical events are 150-300 bytes; reserving for the dense end costs only address space (untouched
  // capacity is never faulted in) and saves the copies and page faults of repeated regrowth.
  const size_t rows = file_bytes / 160 + 16;
    reserve_huge(rows, staged_.track, staged_.name, staged_.cat, staged_.start, staged_.dur, staged_.offset,
          staged_.args_row);
  const size_t arg_rows = file_bytes / 480 + 16;
  reserve_huge(arg_rows, args_.present, args_.task_type, args_.data_type, args_.alg_type, args_.plane_task_type,
          args_.transport, args_.link_type, args_.task_id, args_.connection_id, args_.stream_id, args_.count,
          args_.src_rank, args_.dst_rank, args_.size_bytes, args_.bandwidth);
  const size_t flow_rows = file_bytes / 1000 + 16;
  model::FlowTable& f = out_.flows;
  reserve_huge(flow_rows, f.cat, f.name, f.id, f.phase, f.pid, f.tid, f.ts_ns, f.source_offset);
}

ProcessKind TraceBuilder::known_kind(int64_t pid) { return procs_[proc_slot(pid)].kind; }

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
  if (n == "process_name") {
    if ((a.present & kArgMetaName) == 0) return missing("name");
    ProcState& p = procs_[proc_slot(ev.pid)];
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
    t.name = strings_.intern(a.meta_name);
    t.named = true;
  } else if (n == "thread_sort_index") {
    if ((a.present & kArgSortIndex) == 0) return missing("sort_index");
    tracks_[track_slot(ev.pid, tid_of(ev))].sort_index = static_cast<int32_t>(a.sort_index);
  }
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

  staged_.track.push_back(tr);
  staged_.name.push_back(strings_.intern(ev.name));
  staged_.cat.push_back((ev.has & kHasCat) != 0 ? strings_.intern(ev.cat) : 0);
  staged_.start.push_back(ev.ts_ns);
  staged_.dur.push_back(ev.dur_ns);
  staged_.offset.push_back(offset);
  const ArgFields& a = ev.args;
  if ((a.present & kXArgMask) == 0) {
    staged_.args_row.push_back(kNoArgs);
    return;
  }
  staged_.args_row.push_back(static_cast<uint32_t>(args_.present.size()));
  const uint32_t m = a.present;
  auto str = [&](uint32_t bit, std::string_view v) -> StrId { return (m & bit) != 0 ? strings_.intern(v) : 0; };
  auto num = [&](uint32_t bit, int64_t v) -> int64_t { return (m & bit) != 0 ? v : -1; };
  args_.present.push_back(m);
  args_.task_type.push_back(str(kArgTaskType, a.task_type));
  args_.data_type.push_back(str(kArgDataType, a.data_type));
  args_.alg_type.push_back(str(kArgAlgType, a.alg_type));
  args_.plane_task_type.push_back(str(kArgPlaneTaskType, a.plane_task_type));
  args_.transport.push_back(str(kArgTransport, a.transport));
  args_.link_type.push_back(str(kArgLinkType, a.link_type));
  args_.task_id.push_back(num(kArgTaskId, a.task_id));
  args_.connection_id.push_back(num(kArgConnectionId, a.connection_id));
  args_.stream_id.push_back(num(kArgStreamId, a.stream_id));
  args_.count.push_back(num(kArgCount, a.count));
  args_.src_rank.push_back(num(kArgSrcRank, a.src_rank));
  args_.dst_rank.push_back(num(kArgDstRank, a.dst_rank));
  args_.size_bytes.push_back(num(kArgSize, a.size_bytes));
  args_.bandwidth.push_back((m & kArgBandwidth) != 0 ? a.bandwidth : std::numeric_limits<double>::quiet_NaN());
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
  f.cat.push_back((ev.has & kHasCat) != 0 ? strings_.intern(ev.cat) : 0);
  f.name.push_back((ev.has & kHasName) != 0 ? strings_.intern(ev.name) : 0);
  f.id.push_back((ev.has & kIdIsString) != 0 ? -static_cast<int64_t>(strings_.intern(ev.id_str)) - 1 : ev.id);
  f.phase.push_back(phase);
  f.pid.push_back(ev.pid);
  f.tid.push_back(tid_of(ev));
  f.ts_ns.push_back(ev.ts_ns);
  f.source_offset.push_back(offset);
}

void TraceBuilder::add_other(const EventFields& ev) {
  if ((ev.has & kHasPid) == 0 || (ev.bad & kBadPid) != 0) return;
  ProcState& p = procs_[proc_slot(ev.pid)];
  ++p.events;
}

void TraceBuilder::partition() {
  // Per-track destination, decided once now that every thread/process name is known.
  enum Dest : uint8_t { kDrop, kHost, kDevice, kComm, kOverlap };
  struct TrackClass {
    Dest dest = kDrop;
    uint8_t is_cann = 0;
    int8_t comm_sub = 0;  // 1 op, 2 plane, 0 decide per event by args
    int overlap = -1;
    int64_t stream = -1;
    int64_t plane = -1;
  };
  std::vector<TrackClass> cls(tracks_.size());
  for (size_t i = 0; i < tracks_.size(); ++i) {
    const TrackState& t = tracks_[i];
    const ProcState& p = procs_[t.proc];
    const std::string_view tname = t.named ? pool_.view(t.name) : std::string_view();
    TrackClass& c = cls[i];
    switch (p.kind) {
      case ProcessKind::kPython: c.dest = kHost; break;
      case ProcessKind::kCann:
        c.dest = kHost;
        c.is_cann = 1;
        break;
      case ProcessKind::kAscendHardware:
        c.dest = kDevice;
        c.stream = suffix_int(tname, "Stream ");
        break;
      case ProcessKind::kCommunication:
        c.dest = kComm;
        if (is_group_thread(tname)) c.comm_sub = 1;
        else if (tname.substr(0, 6) == "Plane ") c.comm_sub = 2;
        c.plane = suffix_int(tname, "Plane ");
        break;
      case ProcessKind::kOverlapAnalysis:
        c.dest = kOverlap;
        c.overlap = overlap_kind_of(tname);
        break;
      default: c.dest = kDrop; break;
    }
  }

  // Pass 1: final destination of every row, so the tables can be sized exactly (no regrowth copies).
  enum Code : uint8_t {
    kCodeDropUnnamed, kCodeDropUnused, kCodeUnclassified, kCodeHost, kCodeHostStep, kCodeDevice, kCodeCommOp,
    kCodePlane, kCodeOverlap0  // + OverlapKind
  };
  const size_t rows = staged_.start.size();
  std::vector<uint8_t> code(rows);
  size_t counts[kCodeOverlap0 + 4] = {};
  for (size_t r = 0; r < rows; ++r) {
    const TrackClass& c = cls[staged_.track[r]];
    const uint32_t ar = staged_.args_row[r];
    const uint32_t present = ar == kNoArgs ? 0 : args_.present[ar];
    uint8_t k = kCodeDropUnused;
    switch (c.dest) {
      case kHost:
        k = kCodeHost;
        if (c.is_cann == 0 && suffix_int(pool_.view(staged_.name[r]), "ProfilerStep#") >= 0) k = kCodeHostStep;
        break;
      case kDevice: k = kCodeDevice; break;
      case kComm: {
        int sub = c.comm_sub;
        if (sub == 0) sub = (present & kPlaneArgMask) != 0 ? 2 : (present & kCommOpArgMask) != 0 ? 1 : 0;
        k = sub == 1 ? kCodeCommOp : sub == 2 ? kCodePlane : kCodeUnclassified;
        break;
      }
      case kOverlap: {
        int kind = c.overlap;
        if (kind < 0) kind = overlap_kind_of(pool_.view(staged_.name[r]));
        k = kind < 0 ? static_cast<uint8_t>(kCodeUnclassified) : static_cast<uint8_t>(kCodeOverlap0 + kind);
        break;
      }
      case kDrop: k = procs_[tracks_[staged_.track[r]].proc].named ? kCodeDropUnused : kCodeDropUnnamed; break;
    }
    code[r] = k;
    ++counts[k];
  }

  model::HostOpTable& host = out_.host_ops;
  model::StepMarkerTable& steps = out_.steps;
  model::DeviceTaskTable& dev = out_.device_tasks;
  model::CommOpTable& ops = out_.comm_ops;
  model::CommPlaneTaskTable& plane = out_.comm_plane_tasks;
  model::OverlapTable& ovl = out_.overlap;
  auto reserve = [](size_t n, auto&... cols) { reserve_huge(n, cols...); };
  const size_t n_host = counts[kCodeHost] + counts[kCodeHostStep];
  reserve(n_host, host.name, host.cat, host.is_cann, host.pid, host.tid, host.start_ns, host.dur_ns,
          host.source_offset);
  reserve(counts[kCodeHostStep], steps.step, steps.start_ns, steps.end_ns, steps.source_offset);
  reserve(counts[kCodeDevice], dev.name, dev.task_type, dev.stream_id, dev.task_id, dev.connection_id, dev.start_ns,
          dev.dur_ns, dev.source_offset);
  reserve(counts[kCodeCommOp], ops.name, ops.group, ops.data_type, ops.alg_type, ops.count, ops.connection_id,
          ops.start_ns, ops.dur_ns, ops.source_offset);
  reserve(counts[kCodePlane], plane.name, plane.plane, plane.task_type, plane.transport, plane.link_type,
          plane.src_rank, plane.dst_rank, plane.size_bytes, plane.bandwidth_gbps, plane.start_ns, plane.dur_ns,
          plane.source_offset);
  const size_t n_ovl = counts[kCodeOverlap0] + counts[kCodeOverlap0 + 1] + counts[kCodeOverlap0 + 2] +
                       counts[kCodeOverlap0 + 3];
  reserve(n_ovl, ovl.kind, ovl.start_ns, ovl.dur_ns, ovl.source_offset);

  // Pass 2: append.
  uint64_t unused = 0, unclassified = 0;
  for (size_t r = 0; r < rows; ++r) {
    const TrackState& t = tracks_[staged_.track[r]];
    const TrackClass& c = cls[staged_.track[r]];
    const uint32_t ar = staged_.args_row[r];
    const uint32_t present = ar == kNoArgs ? 0 : args_.present[ar];
    const int64_t start = staged_.start[r];
    const int64_t dur = staged_.dur[r];
    const uint64_t off = staged_.offset[r];
    const uint8_t k = code[r];
    switch (k) {
      case kCodeHost:
      case kCodeHostStep:
        host.name.push_back(staged_.name[r]);
        host.cat.push_back(staged_.cat[r]);
        host.is_cann.push_back(c.is_cann);
        host.pid.push_back(t.pid);
        host.tid.push_back(t.tid);
        host.start_ns.push_back(start);
        host.dur_ns.push_back(dur);
        host.source_offset.push_back(off);
        if (k == kCodeHostStep) {
          steps.step.push_back(suffix_int(pool_.view(staged_.name[r]), "ProfilerStep#"));
          steps.start_ns.push_back(start);
          steps.end_ns.push_back(start + dur);
          steps.source_offset.push_back(off);
        }
        break;
      case kCodeDevice: {
        int64_t stream = c.stream;
        if (stream < 0) stream = (present & kArgStreamId) != 0 ? args_.stream_id[ar] : t.tid;
        dev.name.push_back(staged_.name[r]);
        dev.task_type.push_back(ar == kNoArgs ? 0 : args_.task_type[ar]);
        dev.stream_id.push_back(static_cast<int32_t>(stream));
        dev.task_id.push_back(ar == kNoArgs ? -1 : args_.task_id[ar]);
        dev.connection_id.push_back(ar == kNoArgs ? -1 : args_.connection_id[ar]);
        dev.start_ns.push_back(start);
        dev.dur_ns.push_back(dur);
        dev.source_offset.push_back(off);
        break;
      }
      case kCodeCommOp:
        ops.name.push_back(staged_.name[r]);
        ops.group.push_back(t.named ? t.name : 0);
        ops.data_type.push_back(ar == kNoArgs ? 0 : args_.data_type[ar]);
        ops.alg_type.push_back(ar == kNoArgs ? 0 : args_.alg_type[ar]);
        ops.count.push_back(ar == kNoArgs ? -1 : args_.count[ar]);
        ops.connection_id.push_back(ar == kNoArgs ? -1 : args_.connection_id[ar]);
        ops.start_ns.push_back(start);
        ops.dur_ns.push_back(dur);
        ops.source_offset.push_back(off);
        break;
      case kCodePlane:
        plane.name.push_back(staged_.name[r]);
        plane.plane.push_back(static_cast<int32_t>(c.plane));
        plane.task_type.push_back(ar == kNoArgs ? 0 : args_.plane_task_type[ar]);
        plane.transport.push_back(ar == kNoArgs ? 0 : args_.transport[ar]);
        plane.link_type.push_back(ar == kNoArgs ? 0 : args_.link_type[ar]);
        plane.src_rank.push_back(ar == kNoArgs ? -1 : args_.src_rank[ar]);
        plane.dst_rank.push_back(ar == kNoArgs ? -1 : args_.dst_rank[ar]);
        plane.size_bytes.push_back(ar == kNoArgs ? -1 : args_.size_bytes[ar]);
        plane.bandwidth_gbps.push_back(ar == kNoArgs ? std::numeric_limits<double>::quiet_NaN() : args_.bandwidth[ar]);
        plane.start_ns.push_back(start);
        plane.dur_ns.push_back(dur);
        plane.source_offset.push_back(off);
        break;
      case kCodeUnclassified: {
        std::string what = c.dest == kComm ? "communication event on thread '" + std::string(pool_.view(t.name)) +
                                                 "' is neither a Group ... Communication op nor a Plane task"
                                           : "Overlap Analysis event '" + std::string(pool_.view(staged_.name[r])) +
                                                 "' on a thread that is not Computing/Communication/Free";
        if (unclassified++ < Stats::kMaxSamples) stats_.note(Stat::tv_unclassified_event, where(off, what));
        else stats_.inc(Stat::tv_unclassified_event);
        break;
      }
      case kCodeDropUnused: {
        const ProcState& p = procs_[t.proc];
        if (unused++ < Stats::kMaxSamples)
          stats_.note(Stat::tv_unused_process_event,
                      where(off, "X event on process '" + std::string(pool_.view(p.name)) + "' (not analysed)"));
        else
          stats_.inc(Stat::tv_unused_process_event);
        break;
      }
      case kCodeDropUnnamed: break;  // reported once per process as tv_unnamed_process
      default:
        ovl.kind.push_back(static_cast<uint8_t>(k - kCodeOverlap0));
        ovl.start_ns.push_back(start);
        ovl.dur_ns.push_back(dur);
        ovl.source_offset.push_back(off);
        break;
    }
  }
  staged_ = Staging{};
  args_ = ArgStaging{};
}

void TraceBuilder::sort_tables() {
  auto& h = out_.host_ops;
  sort_by_time(h.start_ns, h.name, h.cat, h.is_cann, h.pid, h.tid, h.dur_ns, h.source_offset);
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
  partition();
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

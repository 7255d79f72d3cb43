#include "ascprof/analysis/launch_binding.hpp"

#include <string_view>
#include <unordered_map>

namespace ascprof::analysis {

namespace {

// (stream, start) of a device task, the place a flow's 'f' end binds to.
struct TaskKey {
  int64_t stream, ts;
  bool operator==(const TaskKey& o) const { return stream == o.stream && ts == o.ts; }
};
struct TaskKeyHash {
  size_t operator()(const TaskKey& k) const {
    // unsigned: the product of an epoch-ns time wraps, which is fine for a hash (and defined)
    return std::hash<uint64_t>()(static_cast<uint64_t>(k.ts) * 1000003u + static_cast<uint64_t>(k.stream));
  }
};

// Stream of a device thread: its "Stream <id>" name, else its tid (as the trace importer does).
int64_t stream_of(const std::string_view name, int64_t tid) {
  if (name.size() > 7 && name.substr(0, 7) == "Stream ") {
    int64_t v = 0;
    for (const char c : name.substr(7)) {
      if (c < '0' || c > '9') return tid;
      v = v * 10 + (c - '0');
    }
    return v;
  }
  return tid;
}

// Keeps the latest host end: several links of one kind may name one task (an AscendCL call and its
// Node@launch share a connection_id); the latest is when the task was handed over. Ties keep the first.
void keep_latest(HostEnd& into, int64_t ts, int64_t tid) {
  if (!into.found() || ts > into.ts_ns) into = {ts, tid};
}

}  // namespace

LaunchBinding bind_launches(const model::TraceTables& tr, const StringPool& pool, bool with_torch_ops) {
  const auto& d = tr.device_tasks;
  LaunchBinding out;
  out.link.assign(d.size(), LaunchLink::kNone);
  out.launch.assign(d.size(), HostEnd{});
  if (with_torch_ops) out.torch_op.assign(d.size(), HostEnd{});
  if (d.size() == 0) return out;

  // A flow id pairs only its own 's' and 'f' ends; the 's' end is at the launching slice
  // (HostToDevice: the CANN launch; async_npu: the torch op), the 'f' end at the device task starting
  // at its ts on its stream.
  StrId h2d = 0, npu = 0;
  const bool have_h2d = pool.find("HostToDevice", &h2d), have_npu = pool.find("async_npu", &npu);
  std::unordered_map<int64_t, HostEnd> h2d_start, npu_start;  // flow id -> its 's' end
  const auto& f = tr.flows;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f.phase[i] != 's') continue;
    if (have_h2d && f.cat[i] == h2d) h2d_start.emplace(f.id[i], HostEnd{f.ts_ns[i], f.tid[i]});
    else if (have_npu && f.cat[i] == npu) npu_start.emplace(f.id[i], HostEnd{f.ts_ns[i], f.tid[i]});
  }
  std::unordered_map<int64_t, bool> device_pid;
  for (const auto& p : tr.processes) device_pid[p.pid] = p.kind == model::ProcessKind::kAscendHardware;
  std::unordered_map<int64_t, std::unordered_map<int64_t, int64_t>> stream_of_thread;  // pid -> tid -> stream
  for (const auto& t : tr.threads) stream_of_thread[t.pid][t.tid] = stream_of(pool.view(t.name), t.tid);
  struct Bound {
    HostEnd h2d, npu;  // by link kind
  };
  std::unordered_map<TaskKey, Bound, TaskKeyHash> bound;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f.phase[i] != 'f') continue;
    const bool is_h2d = have_h2d && f.cat[i] == h2d, is_npu = have_npu && f.cat[i] == npu;
    if (!is_h2d && !is_npu) continue;
    const auto dp = device_pid.find(f.pid[i]);
    if (dp == device_pid.end() || !dp->second) continue;  // an end on the HCCL process or elsewhere
    const auto& starts = is_h2d ? h2d_start : npu_start;
    const auto s = starts.find(f.id[i]);
    if (s == starts.end()) continue;
    int64_t stream = f.tid[i];
    if (const auto p = stream_of_thread.find(f.pid[i]); p != stream_of_thread.end())
      if (const auto t = p->second.find(f.tid[i]); t != p->second.end()) stream = t->second;
    Bound& b = bound[TaskKey{stream, f.ts_ns[i]}];
    keep_latest(is_h2d ? b.h2d : b.npu, s->second.ts_ns, s->second.tid);
  }

  // CANN events carrying a connection_id: the latest of them per id.
  std::unordered_map<int64_t, HostEnd> cann_launch;
  const auto& h = tr.host_ops;
  for (size_t i = 0; i < h.size() && i < h.connection_id.size(); ++i)
    if (h.is_cann[i] != 0 && h.connection_id[i] >= 0) keep_latest(cann_launch[h.connection_id[i]], h.start_ns[i], h.tid[i]);

  for (size_t i = 0; i < d.size(); ++i) {
    if (const auto b = bound.find(TaskKey{d.stream_id[i], d.start_ns[i]}); b != bound.end()) {
      if (with_torch_ops) out.torch_op[i] = b->second.npu;
      if (b->second.h2d.found()) {
        out.launch[i] = b->second.h2d;
        out.link[i] = LaunchLink::kHostToDevice;
      } else {
        out.launch[i] = b->second.npu;
        out.link[i] = LaunchLink::kTorchToNpu;
      }
    } else if (d.connection_id[i] >= 0) {  // no flow end at the task: the launch sharing its connection id
      if (const auto c = cann_launch.find(d.connection_id[i]); c != cann_launch.end()) {
        out.launch[i] = c->second;
        out.link[i] = LaunchLink::kCannLaunch;
      } else if (const auto f2 = h2d_start.find(d.connection_id[i]); f2 != h2d_start.end()) {
        out.launch[i] = f2->second;
        out.link[i] = LaunchLink::kConnectionId;
      }
    }
  }
  return out;
}

}  // namespace ascprof::analysis

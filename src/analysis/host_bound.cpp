#include "ascprof/analysis/host_bound.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
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

}  // namespace

HostBoundStats host_bound_stats(const model::TraceTables& tr, const StringPool& pool) {
  HostBoundStats st;
  const auto& d = tr.device_tasks;
  st.tasks = static_cast<uint32_t>(d.size());
  if (d.size() == 0) return st;

  // Launch links, bound as the trace format defines flows: a flow id pairs only its own 's' and
  // 'f' ends (ids are opaque: many HostToDevice ids equal no connection_id, some exceed 64 bits);
  // the 's' end is at the launching slice (HostToDevice: the CANN launch; async_npu: the torch op),
  // the 'f' end at the device task starting at its ts on its stream.
  StrId h2d = 0, npu = 0;
  const bool have_h2d = pool.find("HostToDevice", &h2d), have_npu = pool.find("async_npu", &npu);
  std::unordered_map<int64_t, int64_t> h2d_start, npu_start;  // flow id -> launch time
  const auto& f = tr.flows;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f.phase[i] != 's') continue;
    if (have_h2d && f.cat[i] == h2d) h2d_start.emplace(f.id[i], f.ts_ns[i]);
    else if (have_npu && f.cat[i] == npu) npu_start.emplace(f.id[i], f.ts_ns[i]);
  }
  std::unordered_map<int64_t, bool> device_pid;
  for (const auto& p : tr.processes) device_pid[p.pid] = p.kind == model::ProcessKind::kAscendHardware;
  std::unordered_map<int64_t, std::unordered_map<int64_t, int64_t>> stream_of_thread;  // pid -> tid -> stream
  for (const auto& t : tr.threads) stream_of_thread[t.pid][t.tid] = stream_of(pool.view(t.name), t.tid);
  constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  struct Launch {
    int64_t h2d = std::numeric_limits<int64_t>::min(), npu = std::numeric_limits<int64_t>::min();  // by link kind
  };
  std::unordered_map<TaskKey, Launch, TaskKeyHash> bound;
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
    Launch& l = bound[TaskKey{stream, f.ts_ns[i]}];
    (is_h2d ? l.h2d : l.npu) = std::max(is_h2d ? l.h2d : l.npu, s->second);
  }

  // CANN events carrying the task's connection_id (AscendCL@ call and its Node@launch): the latest
  // of them, the node launch inside the call, is when the task was handed to the device.
  std::unordered_map<int64_t, int64_t> cann_launch;
  const auto& h = tr.host_ops;
  for (size_t i = 0; i < h.size() && i < h.connection_id.size(); ++i)
    if (h.is_cann[i] != 0 && h.connection_id[i] >= 0) {
      auto [it, fresh] = cann_launch.emplace(h.connection_id[i], h.start_ns[i]);
      if (!fresh) it->second = std::max(it->second, h.start_ns[i]);
    }

  std::vector<int64_t> launch(d.size(), kNone);
  for (size_t i = 0; i < d.size(); ++i) {
    if (const auto b = bound.find(TaskKey{d.stream_id[i], d.start_ns[i]}); b != bound.end()) {
      if (b->second.h2d != kNone) {
        launch[i] = b->second.h2d;
        ++st.by_host_to_device;
      } else {
        launch[i] = b->second.npu;
        ++st.by_torch_to_npu;
      }
    } else if (d.connection_id[i] >= 0) {  // no flow end at the task: the launch sharing its connection id
      if (const auto c = cann_launch.find(d.connection_id[i]); c != cann_launch.end()) {
        launch[i] = c->second;
        ++st.by_cann_launch;
      } else if (const auto f2 = h2d_start.find(d.connection_id[i]); f2 != h2d_start.end()) {
        launch[i] = f2->second;
        ++st.by_connection_id;
      }
    }
  }

  std::vector<size_t> order(d.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&d](size_t a, size_t b) { return d.start_ns[a] < d.start_ns[b]; });
  int64_t run_end = d.start_ns[order[0]] + std::max<int64_t>(0, d.dur_ns[order[0]]);
  const int64_t first = d.start_ns[order[0]];
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t i = order[k];
    if (launch[i] != kNone) ++st.tasks_with_launch;
    const int64_t s = d.start_ns[i], e = s + std::max<int64_t>(0, d.dur_ns[i]);
    if (k > 0 && s > run_end) {  // an idle gap [run_end, s) ended by task i
      ++st.gaps;
      st.idle_ns += s - run_end;
      if (launch[i] != kNone && launch[i] > run_end) {
        ++st.host_bound_gaps;
        st.host_bound_ns += std::min(s, launch[i]) - run_end;
      }
    }
    run_end = std::max(run_end, e);
  }
  st.device_wall_ns = run_end - first;
  return st;
}

std::string launch_links_text(const HostBoundStats& s) {
  std::string out;
  auto add = [&out](uint32_t n, const char* what) {
    if (n == 0) return;
    if (!out.empty()) out += ", ";
    out += std::to_string(n) + " by " + what;
  };
  add(s.by_host_to_device, "HostToDevice flows");
  add(s.by_torch_to_npu, "async_npu torch_to_npu flows");
  add(s.by_cann_launch, "CANN launch events with the task's connection_id");
  add(s.by_connection_id, "a HostToDevice id equal to the task's connection_id");
  return out.empty() ? "none" : out;
}

}  // namespace ascprof::analysis

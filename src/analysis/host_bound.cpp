#include "ascprof/analysis/host_bound.hpp"

#include <algorithm>
#include <numeric>
#include <string>

namespace ascprof::analysis {

HostBoundStats host_bound_stats(const model::TraceTables& tr, const StringPool& pool) {
  return host_bound_stats(tr, bind_launches(tr, pool));
}

HostBoundStats host_bound_stats(const model::TraceTables& tr, const LaunchBinding& links) {
  HostBoundStats st;
  const auto& d = tr.device_tasks;
  st.tasks = static_cast<uint32_t>(d.size());
  if (d.size() == 0) return st;
  for (const LaunchLink l : links.link) {
    st.by_host_to_device += l == LaunchLink::kHostToDevice ? 1 : 0;
    st.by_torch_to_npu += l == LaunchLink::kTorchToNpu ? 1 : 0;
    st.by_cann_launch += l == LaunchLink::kCannLaunch ? 1 : 0;
    st.by_connection_id += l == LaunchLink::kConnectionId ? 1 : 0;
  }
  const std::vector<HostEnd>& launch = links.launch;

  std::vector<size_t> order(d.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&d](size_t a, size_t b) { return d.start_ns[a] < d.start_ns[b]; });
  int64_t run_end = d.start_ns[order[0]] + std::max<int64_t>(0, d.dur_ns[order[0]]);
  const int64_t first = d.start_ns[order[0]];
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t i = order[k];
    if (launch[i].found()) ++st.tasks_with_launch;
    const int64_t s = d.start_ns[i], e = s + std::max<int64_t>(0, d.dur_ns[i]);
    if (k > 0 && s > run_end) {  // an idle gap [run_end, s) ended by task i
      ++st.gaps;
      st.idle_ns += s - run_end;
      if (launch[i].found() && launch[i].ts_ns > run_end) {
        ++st.host_bound_gaps;
        st.host_bound_ns += std::min(s, launch[i].ts_ns) - run_end;
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

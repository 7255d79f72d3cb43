#include "ascprof/analysis/host_bound.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace ascprof::analysis {

HostBoundStats host_bound_stats(const model::TraceTables& tr, const StringPool& pool) {
  HostBoundStats st;
  const auto& d = tr.device_tasks;
  st.tasks = static_cast<uint32_t>(d.size());
  if (d.size() == 0) return st;
  // launch time of each HostToDevice flow id (its 's' end, on the host)
  StrId h2d = 0;
  const bool have_cat = pool.find("HostToDevice", &h2d);
  std::unordered_map<int64_t, int64_t> launch;
  if (have_cat)
    for (size_t i = 0; i < tr.flows.size(); ++i)
      if (tr.flows.cat[i] == h2d && tr.flows.phase[i] == 's') launch.emplace(tr.flows.id[i], tr.flows.ts_ns[i]);
  std::vector<size_t> order(d.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&d](size_t a, size_t b) { return d.start_ns[a] < d.start_ns[b]; });
  int64_t run_end = d.start_ns[order[0]] + std::max<int64_t>(0, d.dur_ns[order[0]]);
  const int64_t first = d.start_ns[order[0]];
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t i = order[k];
    const auto it = d.connection_id[i] >= 0 ? launch.find(d.connection_id[i]) : launch.end();
    if (it != launch.end()) ++st.tasks_with_launch;
    const int64_t s = d.start_ns[i], e = s + std::max<int64_t>(0, d.dur_ns[i]);
    if (k > 0 && s > run_end) {  // an idle gap [run_end, s) ended by task i
      ++st.gaps;
      st.idle_ns += s - run_end;
      if (it != launch.end() && it->second > run_end) {
        ++st.host_bound_gaps;
        st.host_bound_ns += std::min(s, it->second) - run_end;
      }
    }
    run_end = std::max(run_end, e);
  }
  st.device_wall_ns = run_end - first;
  return st;
}

}  // namespace ascprof::analysis

#include "ascprof/analysis/module_breakdown.hpp"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <numeric>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace ascprof::analysis {

namespace {

struct Range {
  int64_t tid, start, end;
  size_t host;  // row of the host op table
};

// A device task placed on a thread holding module ranges.
struct Query {
  int64_t tid, ts;
  uint32_t task;
};

// torch_npu's task queue: a Dequeue slice on the dequeue thread, and the Enqueue end ('s') of the
// queue flow that ends ('f') inside it. A launch inside the slice was enqueued there.
class TaskQueue {
 public:
  TaskQueue(const model::TraceTables& tr, const StringPool& pool, const knowledge::ModuleRules& rules) {
    StrId dequeue = 0, flow = 0;
    if (!pool.find(rules.dequeue_category, &dequeue) || !pool.find(rules.queue_flow_category, &flow)) return;
    const auto& h = tr.host_ops;
    for (size_t i = 0; i < h.size(); ++i)  // in start order: each thread's slices come sorted
      if (h.is_cann[i] == 0 && h.cat[i] == dequeue)
        by_tid_[h.tid[i]].push_back({h.start_ns[i], h.start_ns[i] + std::max<int64_t>(0, h.dur_ns[i]), HostEnd{}});
    if (by_tid_.empty()) return;
    const auto& f = tr.flows;
    std::unordered_map<int64_t, HostEnd> enqueue;  // flow id -> its 's' end
    for (size_t i = 0; i < f.size(); ++i)
      if (f.cat[i] == flow && f.phase[i] == 's') enqueue.emplace(f.id[i], HostEnd{f.ts_ns[i], f.tid[i]});
    for (size_t i = 0; i < f.size(); ++i) {
      if (f.cat[i] != flow || f.phase[i] != 'f') continue;
      const auto t = by_tid_.find(f.tid[i]);
      const auto e = enqueue.find(f.id[i]);
      if (t == by_tid_.end() || e == enqueue.end()) continue;
      const ptrdiff_t s = enclosing(t->second, f.ts_ns[i]);
      if (s >= 0 && !t->second[static_cast<size_t>(s)].origin.found()) t->second[static_cast<size_t>(s)].origin = e->second;
    }
  }

  /// Where the launch at (tid, ts) was enqueued, when it lies in a Dequeue slice with a queue flow.
  HostEnd origin(int64_t tid, int64_t ts) const {
    const auto t = by_tid_.find(tid);
    if (t == by_tid_.end()) return {};
    const ptrdiff_t s = enclosing(t->second, ts);
    return s < 0 ? HostEnd{} : t->second[static_cast<size_t>(s)].origin;
  }

 private:
  struct Slice {
    int64_t start, end;
    HostEnd origin;
  };
  // The slice of `v` (one thread's, by start) holding `ts` ([start, end], as a flow end binds), or -1.
  // Slices of one thread do not overlap (one dequeue at a time): the last one starting at or before ts.
  static ptrdiff_t enclosing(const std::vector<Slice>& v, int64_t ts) {
    const auto s = std::upper_bound(v.begin(), v.end(), ts, [](int64_t t, const Slice& x) { return t < x.start; });
    if (s == v.begin() || ts > std::prev(s)->end) return -1;
    return std::prev(s) - v.begin();
  }
  std::unordered_map<int64_t, std::vector<Slice>> by_tid_;
};

// Calls `f(row)` for every module range of the host op table, stopping when it returns false.
template <class F>
void for_each_range(const model::TraceTables& tr, const StringPool& pool, const knowledge::ModuleRules& rules, F f) {
  const auto& h = tr.host_ops;
  StrId cat = 0;
  const bool any_cat = rules.category.empty();
  if (!any_cat && !pool.find(rules.category, &cat)) return;  // no event of the category at all
  const std::string_view prefix = rules.prefix;
  for (size_t i = 0; i < h.size(); ++i) {
    if (h.is_cann[i] != 0 || (!any_cat && h.cat[i] != cat)) continue;
    const std::string_view name = pool.view(h.name[i]);
    if (name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix && !f(i)) return;
  }
}

// One distinct path: its parent path and last name.
struct PathNode {
  int32_t parent;
  StrId name;
  uint32_t depth;
};

}  // namespace

bool has_module_ranges(const model::TraceTables& tr, const StringPool& pool, const knowledge::ModuleRules& rules) {
  bool any = false;
  for_each_range(tr, pool, rules, [&any](size_t) {
    any = true;
    return false;  // one is enough
  });
  return any;
}

ModuleBreakdown module_breakdown(const model::TraceTables& tr, const StringPool& pool, const LaunchBinding& links,
                                 const knowledge::ModuleRules& rules) {
  ModuleBreakdown out;
  ModuleRankSummary& sum = out.summary;
  const auto& h = tr.host_ops;
  const std::string_view prefix = rules.prefix;
  std::vector<Range> ranges;
  for_each_range(tr, pool, rules, [&](size_t i) {
    ranges.push_back({h.tid[i], h.start_ns[i], h.start_ns[i] + std::max<int64_t>(0, h.dur_ns[i]), i});
    return true;
  });
  if (ranges.empty()) return out;
  // per thread by start, an enclosing range before the ranges it holds (longer first on a tie)
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    return std::tie(a.tid, a.start, b.end, a.host) < std::tie(b.tid, b.start, a.end, b.host);
  });
  std::vector<int64_t> module_tids;
  for (const Range& r : ranges)
    if (module_tids.empty() || module_tids.back() != r.tid) module_tids.push_back(r.tid);
  auto holds_modules = [&module_tids](int64_t tid) { return std::binary_search(module_tids.begin(), module_tids.end(), tid); };
  sum.ranges = ranges.size();
  sum.threads = static_cast<uint32_t>(module_tids.size());

  // Place every device task on a thread (see the header); count the ones that land on no module thread.
  const auto& d = tr.device_tasks;
  const TaskQueue queue(tr, pool, rules);
  std::vector<Query> queries;
  for (size_t i = 0; i < d.size(); ++i) {
    const int64_t dur = std::max<int64_t>(0, d.dur_ns[i]);
    ++sum.tasks;
    sum.device_ns += dur;
    if (i >= links.size() || links.link[i] == LaunchLink::kNone) {
      ++sum.unlaunched_tasks;
      sum.unlaunched_ns += dur;
      continue;
    }
    HostEnd at = links.launch[i];
    if (holds_modules(at.tid)) {
      ++sum.by_launch_thread;
    } else if (const HostEnd enq = queue.origin(at.tid, at.ts_ns); enq.found()) {
      at = enq;
      ++sum.by_task_queue;
    } else if (i < links.torch_op.size() && links.torch_op[i].found()) {
      at = links.torch_op[i];
      ++sum.by_torch_op;
    }
    if (holds_modules(at.tid)) {
      queries.push_back({at.tid, at.ts_ns, static_cast<uint32_t>(i)});
    } else {
      ++sum.outside_tasks;
      sum.outside_ns += dur;
    }
  }
  std::sort(queries.begin(), queries.end(),
            [](const Query& a, const Query& b) { return std::tie(a.tid, a.ts, a.task) < std::tie(b.tid, b.ts, b.task); });

  // One sweep per thread over its ranges and placed tasks: the stack holds the open ranges, innermost
  // on top; a range's parent is the top when it opens, a task's module the top at its time.
  const size_t n = ranges.size();
  std::vector<int32_t> parent(n, -1);
  std::vector<int64_t> total_ns(n, 0);
  std::vector<uint64_t> total_tasks(n, 0);
  std::vector<int64_t> self_ns(n, 0), self_wait(n, 0), total_wait(n, 0);
  std::vector<uint64_t> self_tasks(n, 0);
  std::vector<StrId> wait_types;  // the waiting Task Types this trace has
  for (const std::string& t : rules.wait_task_types)
    if (StrId id = 0; pool.find(t, &id)) wait_types.push_back(id);
  auto waits = [&](uint32_t task) {
    return std::find(wait_types.begin(), wait_types.end(), d.task_type[task]) != wait_types.end();
  };
  std::vector<uint32_t> stack;
  size_t q = 0;
  for (size_t r = 0; r < n;) {
    const int64_t tid = ranges[r].tid;
    size_t r_end = r;
    while (r_end < n && ranges[r_end].tid == tid) ++r_end;
    stack.clear();
    auto open = [&](size_t k) {
      while (!stack.empty() && ranges[stack.back()].end <= ranges[k].start) stack.pop_back();
      // a range that ends inside k: not nested; closed here so k and what follows nest correctly
      while (!stack.empty() && ranges[stack.back()].end < ranges[k].end) {
        ++sum.improperly_nested;
        stack.pop_back();
      }
      parent[k] = stack.empty() ? -1 : static_cast<int32_t>(stack.back());
      stack.push_back(static_cast<uint32_t>(k));
    };
    size_t k = r;
    for (; q < queries.size() && queries[q].tid == tid; ++q) {
      const int64_t ts = queries[q].ts;
      while (k < r_end && ranges[k].start <= ts) open(k++);
      while (!stack.empty() && ranges[stack.back()].end <= ts) stack.pop_back();
      const int64_t dur = std::max<int64_t>(0, d.dur_ns[queries[q].task]);
      if (stack.empty()) {  // on a module thread, between modules
        ++sum.outside_tasks;
        sum.outside_ns += dur;
        continue;
      }
      self_ns[stack.back()] += dur;
      ++self_tasks[stack.back()];
      if (waits(queries[q].task)) self_wait[stack.back()] += dur;
      ++sum.module_tasks;
      sum.module_ns += dur;
    }
    while (k < r_end) open(k++);
    r = r_end;
  }

  // Totals: a parent precedes its children in `ranges`, so a backward pass adds children first.
  for (size_t k = 0; k < n; ++k) {
    total_ns[k] = self_ns[k];
    total_tasks[k] = self_tasks[k];
    total_wait[k] = self_wait[k];
  }
  for (size_t k = n; k-- > 0;)
    if (parent[k] >= 0) {
      total_ns[static_cast<size_t>(parent[k])] += total_ns[k];
      total_tasks[static_cast<size_t>(parent[k])] += total_tasks[k];
      total_wait[static_cast<size_t>(parent[k])] += total_wait[k];
    }

  // Paths: (parent path, name) -> path; parents are met first, so a path's parent has a lower index.
  std::vector<PathNode> nodes;
  std::unordered_map<uint64_t, uint32_t> node_of;
  std::vector<uint32_t> path_of(n);
  for (size_t k = 0; k < n; ++k) {
    const int32_t pp = parent[k] < 0 ? -1 : static_cast<int32_t>(path_of[static_cast<size_t>(parent[k])]);
    const StrId name = h.name[ranges[k].host];
    const uint64_t key = (static_cast<uint64_t>(pp + 1) << 32) | name;
    auto [it, fresh] = node_of.emplace(key, static_cast<uint32_t>(nodes.size()));
    if (fresh) nodes.push_back({pp, name, pp < 0 ? 0u : nodes[static_cast<size_t>(pp)].depth + 1});
    path_of[k] = it->second;
  }
  std::vector<ModuleRow> rows(nodes.size());
  for (size_t p = 0; p < nodes.size(); ++p) {
    ModuleRow& row = rows[p];
    row.module = std::string(pool.view(nodes[p].name).substr(prefix.size()));
    row.path = nodes[p].parent < 0 ? row.module : rows[static_cast<size_t>(nodes[p].parent)].path + "/" + row.module;
    row.depth = nodes[p].depth;
  }
  for (size_t k = 0; k < n; ++k) {
    ModuleRow& row = rows[path_of[k]];
    if (row.calls == 0 || ranges[k].start < row.first_start_ns) row.first_start_ns = ranges[k].start;
    ++row.calls;
    row.host_ns += ranges[k].end - ranges[k].start;
    row.self_device_ns += self_ns[k];
    row.self_tasks += self_tasks[k];
    row.total_device_ns += total_ns[k];  // a path's ranges never nest in one another: no double count
    row.tasks += total_tasks[k];
    row.self_wait_ns += self_wait[k];
    row.total_wait_ns += total_wait[k];
  }
  // rows by first call (a parent starts no later than its children; on a tie the shallower first)
  std::vector<uint32_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&rows](uint32_t a, uint32_t b) {
    return std::tie(rows[a].first_start_ns, rows[a].depth, rows[a].path) <
           std::tie(rows[b].first_start_ns, rows[b].depth, rows[b].path);
  });
  std::vector<uint32_t> row_at(rows.size());
  sum.rows.reserve(rows.size());
  for (uint32_t i = 0; i < order.size(); ++i) {
    row_at[order[i]] = i;
    sum.rows.push_back(std::move(rows[order[i]]));
  }

  out.calls.reserve(n);
  for (size_t k = 0; k < n; ++k)
    out.calls.push_back({row_at[path_of[k]], ranges[k].tid, ranges[k].start, ranges[k].end, self_ns[k], total_ns[k],
                         total_tasks[k], h.source_offset[ranges[k].host]});
  std::sort(out.calls.begin(), out.calls.end(), [](const ModuleCall& a, const ModuleCall& b) {
    return std::tie(a.start_ns, b.end_ns, a.row, a.tid) < std::tie(b.start_ns, a.end_ns, b.row, b.tid);
  });
  return out;
}

}  // namespace ascprof::analysis

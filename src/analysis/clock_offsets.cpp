#include "ascprof/analysis/clock_offsets.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace ascprof::analysis {

void CollectiveMarks::add(std::string_view group, uint32_t seq, int64_t end_ns) {
  // a rank has a handful of communicators: a linear look-up beats a map
  uint32_t g = 0;
  while (g < groups.size() && groups[g] != group) ++g;
  if (g == groups.size()) groups.emplace_back(group);
  marks.push_back({g, seq, end_ns});
}

CollectiveMarks collective_marks(const model::CommOpTable& ops, const StringPool& pool, uint32_t head,
                                 uint32_t stride) {
  // ops are in time order per group thread after the importer's sort; number them per group
  std::vector<size_t> order(ops.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&ops](size_t a, size_t b) { return ops.start_ns[a] < ops.start_ns[b]; });
  std::unordered_map<StrId, uint32_t> next_seq;
  CollectiveMarks out;
  for (const size_t i : order) {
    const uint32_t seq = next_seq[ops.group[i]]++;
    if (seq >= head && (stride == 0 || seq % stride != 0)) continue;
    out.add(pool.view(ops.group[i]), seq, ops.start_ns[i] + std::max<int64_t>(0, ops.dur_ns[i]));
  }
  return out;
}

namespace {

int64_t median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

}  // namespace

std::vector<ClockOffset> estimate_clock_offsets(const std::vector<std::string>& rank_ids,
                                                const std::vector<CollectiveMarks>& marks) {
  std::vector<const CollectiveMarks*> refs;
  refs.reserve(marks.size());
  for (const auto& m : marks) refs.push_back(&m);
  return estimate_clock_offsets(rank_ids, refs);
}

std::vector<ClockOffset> estimate_clock_offsets(const std::vector<std::string>& rank_ids,
                                                const std::vector<const CollectiveMarks*>& marks) {
  const size_t n = rank_ids.size();
  std::vector<ClockOffset> out(n);
  for (size_t r = 0; r < n; ++r) out[r].rank_id = rank_ids[r];
  if (n == 0) return out;
  // members of each collective: (group, seq) -> [(rank, end)]; the names are the marks' own
  std::map<std::pair<std::string_view, uint32_t>, std::vector<std::pair<size_t, int64_t>>> members;
  for (size_t r = 0; r < n && r < marks.size(); ++r)
    for (const auto& m : marks[r]->marks) members[{marks[r]->groups[m.group], m.seq}].emplace_back(r, m.end_ns);
  // end-time differences per ordered rank pair (b - a, a < b), against each collective's first member
  std::map<std::pair<size_t, size_t>, std::vector<int64_t>> diffs;
  for (const auto& [key, list] : members) {
    if (list.size() < 2) continue;
    const auto& first = *std::min_element(list.begin(), list.end());
    for (const auto& m : list)
      if (m.first != first.first) diffs[{first.first, m.first}].push_back(m.second - first.second);
  }
  std::vector<std::vector<std::pair<size_t, const std::vector<int64_t>*>>> adj(n);
  for (const auto& [pair, d] : diffs) {
    adj[pair.first].push_back({pair.second, &d});
    adj[pair.second].push_back({pair.first, &d});
  }
  std::vector<int64_t> offset(n, 0);
  out[0].estimated = true;
  std::vector<size_t> queue{0};
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    const size_t a = queue[qi];
    for (const auto& [b, d] : adj[a]) {
      if (out[b].estimated) continue;
      // diffs are stored as (higher index) - (lower index)
      const int64_t med = median(*d);
      const int64_t delta = b > a ? med : -med;
      offset[b] = offset[a] + delta;
      std::vector<int64_t> dev;
      for (const int64_t x : *d) dev.push_back(x > med ? x - med : med - x);
      out[b].estimated = true;
      out[b].offset_us = static_cast<double>(offset[b]) / 1000.0;
      out[b].collectives = static_cast<uint32_t>(d->size());
      out[b].via_rank = rank_ids[a];
      out[b].spread_us = static_cast<double>(median(dev)) / 1000.0;
      queue.push_back(b);
    }
  }
  return out;
}

}  // namespace ascprof::analysis

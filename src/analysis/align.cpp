#include "ascprof/analysis/align.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "ascprof/common/stable_id.hpp"

namespace ascprof::analysis {

std::vector<StepAlignment> align_steps(const std::vector<StepWindow>& w, const std::vector<int64_t>& offset_ns,
                                       const knowledge::DiagnosticsRules& rules) {
  const double min_overlap_ratio = rules.align_min_overlap_ratio;
  const size_t n = w.size();
  std::vector<int64_t> start(n), end(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t off = i < offset_ns.size() ? offset_ns[i] : 0;
    start[i] = w[i].start_ns - off;
    end[i] = w[i].end_ns - off;
  }
  // windows of each rank sorted by start, for a binary search per (step, other rank)
  std::map<std::string, std::vector<size_t>> by_rank;
  for (size_t i = 0; i < n; ++i) by_rank[w[i].rank_id].push_back(i);
  for (auto& [rank, idx] : by_rank)
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return start[a] < start[b]; });
  std::vector<StepAlignment> out;
  std::set<std::vector<std::string>> seen;
  for (size_t i = 0; i < n; ++i) {
    StepAlignment a;
    a.members.push_back(i);
    for (const auto& [rank, idx] : by_rank) {
      if (rank == w[i].rank_id) continue;
      // candidates end after i starts: scan from the first window starting before i's end backwards
      auto it = std::lower_bound(idx.begin(), idx.end(), end[i], [&](size_t x, int64_t v) { return start[x] < v; });
      for (auto k = it; k != idx.begin();) {
        --k;
        const size_t j = *k;
        if (end[j] <= start[i]) {
          // windows of one rank do not nest, so earlier ones end earlier still
          break;
        }
        const int64_t overlap = std::min(end[i], end[j]) - std::max(start[i], start[j]);
        const int64_t shorter = std::max<int64_t>(1000, std::min(end[i] - start[i], end[j] - start[j]));
        if (overlap > 0 && static_cast<double>(overlap) / static_cast<double>(shorter) >= min_overlap_ratio)
          a.members.push_back(j);
      }
    }
    std::set<std::string> ranks;
    for (const size_t m : a.members) ranks.insert(w[m].rank_id);
    if (ranks.size() < 2) continue;
    std::vector<std::string> ids;
    for (const size_t m : a.members) ids.push_back(w[m].segment_id);
    std::vector<std::string> key = ids;
    std::sort(key.begin(), key.end());
    if (!seen.insert(key).second) continue;
    std::sort(a.members.begin() + 1, a.members.end());
    int64_t dmin = INT64_MAX, dmax = INT64_MIN;
    std::set<std::pair<std::string, uint32_t>> shapes;
    a.start_ns = INT64_MAX;
    a.end_ns = INT64_MIN;
    for (const size_t m : a.members) {
      if (std::find(a.rank_ids.begin(), a.rank_ids.end(), w[m].rank_id) == a.rank_ids.end()) a.rank_ids.push_back(w[m].rank_id);
      dmin = std::min(dmin, end[m] - start[m]);
      dmax = std::max(dmax, end[m] - start[m]);
      a.start_ns = std::min(a.start_ns, start[m]);
      a.end_ns = std::max(a.end_ns, end[m]);
      shapes.insert({w[m].step_family, w[m].main_layer_count});
    }
    a.wall_skew_us = static_cast<double>(dmax - dmin) / 1000.0;
    a.is_structure_mismatch = shapes.size() > 1;
    if (a.is_structure_mismatch) a.confidence = "low";
    else if (a.members.size() >= rules.align_high_min_members && a.wall_skew_us <= rules.align_high_max_skew_us)
      a.confidence = "high";
    else if (a.members.size() >= 2 && a.wall_skew_us <= rules.align_medium_max_skew_us) a.confidence = "medium";
    else a.confidence = "low";
    std::string joined;
    for (const auto& id : key) joined += id + ",";
    a.alignment_id = stable_id("align", {"time_window", joined});
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace ascprof::analysis

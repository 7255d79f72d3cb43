#include "ascprof/analysis/align.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <numeric>
#include <queue>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "ascprof/common/stable_id.hpp"

namespace ascprof::analysis {
namespace {

// The windows as the coordinator sees them: corrected times and an interned rank, so the passes
// below compare integers, never strings (10,000 ranks × hundreds of steps is millions of windows).
struct Windows {
  std::vector<int64_t> start, end;
  std::vector<uint32_t> rank;
  uint32_t rank_count = 0;
  double min_overlap_ratio = 0;

  int64_t duration(size_t i) const { return end[i] - start[i]; }
  // The reference's pair test: other ranks, overlap ≥ ratio × the shorter (floored at 1 µs)
  bool aligned(size_t i, size_t j) const {
    if (rank[i] == rank[j]) return false;
    const int64_t overlap = std::min(end[i], end[j]) - std::max(start[i], start[j]);
    const int64_t shorter = std::max<int64_t>(1000, std::min(duration(i), duration(j)));
    return overlap > 0 && static_cast<double>(overlap) / static_cast<double>(shorter) >= min_overlap_ratio;
  }
};

// One member set found, with the lowest-indexed anchor that gives it (the reference keeps the
// first anchor in window order, and lists the alignments in that order).
struct FoundSet {
  size_t anchor;
  std::vector<size_t> sorted;  // every member, by window index
};

// A segment id with its first 16 bytes as two big-endian integers: sorting the ids of an alignment
// (10,000 of them at 10,000 ranks) compares integers and reads the strings, scattered over the
// windows, only on a tie. Orders as std::string_view's operator< (unsigned bytes, shorter first).
struct IdKey {
  uint64_t hi = 0, lo = 0;
  std::string_view id;

  static IdKey of(std::string_view s) {
    IdKey k{0, 0, s};
    for (size_t b = 0; b < 16; ++b) {
      const uint64_t byte = b < s.size() ? static_cast<unsigned char>(s[b]) : 0;
      (b < 8 ? k.hi : k.lo) |= byte << (8 * (7 - b % 8));
    }
    return k;
  }
  bool operator<(const IdKey& o) const {
    if (hi != o.hi) return hi < o.hi;
    if (lo != o.lo) return lo < o.lo;
    return id < o.id;
  }
};

uint64_t hash_indices(const std::vector<size_t>& v) {
  uint64_t h = 1469598103934665603ull;
  for (const size_t x : v) h = (h ^ x) * 1099511628211ull;
  return h;
}

// A group (contiguous in start order) in which every pair passes the test and no rank appears
// twice: then every anchor's set is the whole group, found in O(m).
// Sufficient condition: the common intersection L = min end − max start is positive and at least
// ratio × the longest "shorter" any pair can have (the second-longest duration, floored at 1 µs);
// each pair's overlap is ≥ L and its shorter ≤ that bound, and a/b in double is monotone.
bool is_clique(const Windows& w, const size_t* first, const size_t* last, std::vector<char>& rank_seen) {
  int64_t min_end = INT64_MAX, max_start = INT64_MIN, d1 = INT64_MIN, d2 = INT64_MIN;
  bool distinct = true;
  for (const size_t* p = first; p != last; ++p) {
    const size_t i = *p;
    min_end = std::min(min_end, w.end[i]);
    max_start = std::max(max_start, w.start[i]);
    const int64_t d = w.duration(i);
    if (d > d1) d2 = std::exchange(d1, d);
    else if (d > d2) d2 = d;
    if (rank_seen[w.rank[i]]) distinct = false;
    rank_seen[w.rank[i]] = 1;
  }
  for (const size_t* p = first; p != last; ++p) rank_seen[w.rank[*p]] = 0;
  const int64_t common = min_end - max_start;
  return distinct && common > 0 &&
         static_cast<double>(common) / static_cast<double>(std::max<int64_t>(1000, d2)) >= w.min_overlap_ratio;
}

// Any other group: each anchor's set exactly, from the windows of the group that can
// overlap it (starting within the longest duration before it, before it ends). Sets are kept once.
void exact_sets(const Windows& w, const size_t* first, const size_t* last, std::vector<FoundSet>& found) {
  int64_t longest = 0;
  for (const size_t* p = first; p != last; ++p) longest = std::max(longest, w.duration(*p));
  std::vector<size_t> anchors(first, last);
  std::sort(anchors.begin(), anchors.end());
  std::unordered_map<uint64_t, std::vector<size_t>> by_hash;  // hash → positions in found
  std::vector<size_t> set;
  for (const size_t i : anchors) {
    set.assign(1, i);
    const size_t* hi = std::lower_bound(first, last, w.end[i], [&](size_t x, int64_t v) { return w.start[x] < v; });
    for (const size_t* k = hi; k != first;) {
      --k;
      if (w.start[*k] <= w.start[i] - longest) break;  // ends by i's start at the latest
      if (*k != i && w.aligned(i, *k)) set.push_back(*k);
    }
    if (set.size() < 2) continue;  // a single rank (aligned() admits other ranks only)
    std::sort(set.begin(), set.end());
    auto& same_hash = by_hash[hash_indices(set)];
    if (std::any_of(same_hash.begin(), same_hash.end(), [&](size_t f) { return found[f].sorted == set; })) continue;
    same_hash.push_back(found.size());
    found.push_back({i, set});
  }
}

// Where to cut the windows (in start order) into groups no passing pair spans. A pair across the cut
// before position q has i before q and j at or after it, so its overlap is at most X = (latest end
// before q) − start_q, and only windows that can overlap across the cut matter for its shorter:
// those before q still running at start_q, and those from q starting before that latest end. The cut
// holds when X over the least duration among them (floored at 1 µs) is below the ratio — in double,
// as the pair test, whose quotient can only be smaller. O(W log W): a lazy min-heap of the running
// windows' durations and a sliding-window minimum over the ones after the cut.
std::vector<size_t> group_cuts(const Windows& w, const std::vector<size_t>& order) {
  const size_t n = order.size();
  std::vector<size_t> cuts;
  using Running = std::pair<int64_t, int64_t>;  // duration, end
  std::priority_queue<Running, std::vector<Running>, std::greater<>> running;
  std::deque<size_t> ahead;  // positions in [q, reach), durations increasing
  size_t reach = 0;
  int64_t latest_end = INT64_MIN;
  for (size_t q = 0; q < n; ++q) {
    const size_t i = order[q];
    if (q > 0) {
      bool cut = latest_end <= w.start[i];
      if (!cut) {
        // the window that ends latest is still running, so the heap keeps one; q itself is ahead
        while (running.top().second <= w.start[i]) running.pop();
        for (; reach < n && w.start[order[reach]] < latest_end; ++reach) {
          while (!ahead.empty() && w.duration(order[ahead.back()]) >= w.duration(order[reach])) ahead.pop_back();
          ahead.push_back(reach);
        }
        while (ahead.front() < q) ahead.pop_front();
        const int64_t least = std::min(running.top().first, w.duration(order[ahead.front()]));
        cut = static_cast<double>(latest_end - w.start[i]) / static_cast<double>(std::max<int64_t>(1000, least)) <
              w.min_overlap_ratio;
      }
      if (cut) cuts.push_back(q);
    }
    latest_end = std::max(latest_end, w.end[i]);
    running.emplace(w.duration(i), w.end[i]);
  }
  return cuts;
}

// `rank_listed`: one flag per rank, all clear, left clear (one buffer for every alignment: a capture
// whose windows scatter can have as many alignments as windows).
StepAlignment make_alignment(const StepWindows& win, const Windows& w, const FoundSet& f,
                             const knowledge::DiagnosticsRules& rules, std::string joined, std::vector<char>& rank_listed) {
  StepAlignment a;
  a.members.reserve(f.sorted.size());
  a.members.push_back(f.anchor);
  for (const size_t m : f.sorted)
    if (m != f.anchor) a.members.push_back(m);
  int64_t dmin = INT64_MAX, dmax = INT64_MIN;
  std::set<std::pair<std::string_view, uint32_t>> shapes;
  a.start_ns = INT64_MAX;
  a.end_ns = INT64_MIN;
  for (const size_t m : a.members) {
    if (!rank_listed[w.rank[m]]) {
      rank_listed[w.rank[m]] = 1;
      a.rank_ids.emplace_back(win[m].rank_id);
    }
    dmin = std::min(dmin, w.duration(m));
    dmax = std::max(dmax, w.duration(m));
    a.start_ns = std::min(a.start_ns, w.start[m]);
    a.end_ns = std::max(a.end_ns, w.end[m]);
    shapes.insert({win[m].step_family, win[m].main_layer_count});
  }
  for (const size_t m : a.members) rank_listed[w.rank[m]] = 0;
  a.wall_skew_us = static_cast<double>(dmax - dmin) / 1000.0;
  a.is_structure_mismatch = shapes.size() > 1;
  if (a.is_structure_mismatch) a.confidence = "low";
  else if (a.members.size() >= rules.align_high_min_members && a.wall_skew_us <= rules.align_high_max_skew_us)
    a.confidence = "high";
  else if (a.members.size() >= 2 && a.wall_skew_us <= rules.align_medium_max_skew_us) a.confidence = "medium";
  else a.confidence = "low";
  a.alignment_id = stable_id("align", {"time_window", joined});
  return a;
}

}  // namespace

std::vector<StepAlignment> align_steps(const StepWindows& win, const std::vector<int64_t>& offset_ns,
                                       const knowledge::DiagnosticsRules& rules) {
  const size_t n = win.size();
  Windows w;
  w.min_overlap_ratio = rules.align_min_overlap_ratio;
  w.start.resize(n);
  w.end.resize(n);
  w.rank.resize(n);
  std::unordered_map<std::string_view, uint32_t> rank_index;
  for (size_t i = 0; i < n; ++i) {
    const int64_t off = i < offset_ns.size() ? offset_ns[i] : 0;
    w.start[i] = win[i].start_ns - off;
    w.end[i] = win[i].end_ns - off;
    w.rank[i] = rank_index.try_emplace(win[i].rank_id, static_cast<uint32_t>(rank_index.size())).first->second;
  }
  w.rank_count = static_cast<uint32_t>(rank_index.size());

  // Groups: windows in start order, cut wherever no window before the cut and one after it can pass
  // the test (typically between two steps, even when the slowest rank's step ends after the fastest
  // one's next step began). Each group is then a clique (every anchor's set is the whole group, O(m))
  // or, rarely, has its sets found exactly within the group.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return w.start[a] != w.start[b] ? w.start[a] < w.start[b] : a < b; });
  std::vector<FoundSet> found;
  std::vector<char> rank_seen(w.rank_count, 0);
  const auto close_group = [&](size_t b, size_t e) {
    const size_t* first = order.data() + b;
    const size_t* last = order.data() + e;
    if (e - b < 2) return;
    if (is_clique(w, first, last, rank_seen)) {
      std::vector<size_t> all(first, last);
      std::sort(all.begin(), all.end());
      found.push_back({all.front(), std::move(all)});
    } else {
      exact_sets(w, first, last, found);
    }
  };
  size_t group_begin = 0;
  for (const size_t q : group_cuts(w, order)) {
    close_group(group_begin, q);
    group_begin = q;
  }
  close_group(group_begin, n);

  // In anchor order, as the reference lists them; a set is kept once by its sorted segment ids.
  std::sort(found.begin(), found.end(), [](const FoundSet& x, const FoundSet& y) { return x.anchor < y.anchor; });
  std::vector<StepAlignment> out;
  out.reserve(found.size());
  std::unordered_set<std::string> seen;
  std::vector<IdKey> ids;
  for (const FoundSet& f : found) {
    ids.clear();
    for (const size_t m : f.sorted) ids.push_back(IdKey::of(win[m].segment_id));
    std::sort(ids.begin(), ids.end());
    std::string joined;
    for (const auto& id : ids) joined.append(id.id).push_back(',');
    if (!seen.insert(joined).second) continue;
    out.push_back(make_alignment(win, w, f, rules, std::move(joined), rank_seen));
  }
  return out;
}

}  // namespace ascprof::analysis

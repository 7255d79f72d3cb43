#include "ascprof/analysis/operator_align.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>
#include <unordered_map>

namespace ascprof::analysis {

namespace {

// floor division for negative corrected times (a rank whose clock runs ahead of the reference)
int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::string key_text(const OperatorKey& k) {
  std::string s = std::to_string(k.role);
  s += '\x1f';
  s += k.name_key;
  s += '\x1f';
  s += k.shape;
  return s;
}

}  // namespace

const char* confidence_name(uint8_t c) { return c >= 2 ? "high" : (c == 1 ? "medium" : "low"); }

OperatorCandidates operator_candidates(const model::KernelTable& k, const NormalizedKernels& norm, const StringPool& pool,
                                       const knowledge::Knowledge& kb) {
  const auto& rules = kb.operator_alignment;
  OperatorCandidates c;
  // the role is a function of the taxon; the key of (taxon, shape): memoise both
  std::vector<int> role_of_taxon(norm.taxa.size());
  for (size_t t = 0; t < norm.taxa.size(); ++t) role_of_taxon[t] = rules.role_of(norm.taxa[t].categories);
  std::unordered_map<uint64_t, uint32_t> key_of;  // (taxon << 32 | shape StrId) -> key
  const size_t n = k.start_ns.size();
  for (size_t r = 0; r < n && r < norm.taxon.size(); ++r) {
    const uint32_t taxon = norm.taxon[r];
    const int role = role_of_taxon[taxon];
    if (role < 0) continue;
    const StrId shape = r < norm.shape_signature.size() ? norm.shape_signature[r] : 0;
    const uint64_t memo = (static_cast<uint64_t>(taxon) << 32) | shape;
    auto [it, inserted] = key_of.emplace(memo, static_cast<uint32_t>(c.keys.size()));
    if (inserted) {
      const auto& rr = rules.roles[static_cast<size_t>(role)];
      OperatorKey key;
      key.role = static_cast<uint32_t>(role);
      key.name_key = rr.raw_name_key ? std::string(pool.view(k.name[r])) : rr.name;
      key.shape = shape != 0 ? std::string(pool.view(shape)) : std::string("no_shape");
      c.keys.push_back(std::move(key));
    }
    c.key.push_back(it->second);
    c.start_ns.push_back(k.start_ns[r]);
    c.dur_ns.push_back(std::max<int64_t>(0, k.dur_ns[r]));
    c.wait_ns.push_back(r < k.wait_ns.size() ? std::max<int64_t>(0, k.wait_ns[r]) : 0);
    c.row.push_back(static_cast<uint32_t>(r));
  }
  // several taxa (names) can share a role key: merge equal keys so a bucket has one partial per rank
  std::unordered_map<std::string, uint32_t> distinct;
  std::vector<uint32_t> remap(c.keys.size());
  std::vector<OperatorKey> keys;
  for (size_t i = 0; i < c.keys.size(); ++i) {
    auto [it, inserted] = distinct.emplace(key_text(c.keys[i]), static_cast<uint32_t>(keys.size()));
    if (inserted) keys.push_back(std::move(c.keys[i]));
    remap[i] = it->second;
  }
  for (auto& x : c.key) x = remap[x];
  c.keys = std::move(keys);
  return c;
}

RankOperatorBuckets operator_buckets(const OperatorCandidates& c, int64_t offset_ns,
                                     const knowledge::OperatorAlignmentRules& rules) {
  RankOperatorBuckets out;
  out.built = true;
  out.keys = c.keys;
  const auto width_ns = std::max<int64_t>(1, std::llround(rules.bucket_us * 1000.0));
  const size_t n = c.size();
  // (key, bucket, row) sorted on one contiguous array: rows stay in file order inside a bucket, so
  // the sampled rows are the first
  struct Item {
    uint32_t key;
    uint32_t row;
    int64_t bucket;
    uint32_t e;
  };
  std::vector<Item> items(n);
  for (size_t i = 0; i < n; ++i)
    items[i] = {c.key[i], c.row[i], floor_div(c.start_ns[i] - offset_ns, width_ns), static_cast<uint32_t>(i)};
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    if (a.key != b.key) return a.key < b.key;
    if (a.bucket != b.bucket) return a.bucket < b.bucket;
    return a.row < b.row;
  });
  for (size_t i = 0; i < n;) {
    BucketPartial p;
    p.key = items[i].key;
    p.bucket = items[i].bucket;
    p.start_min_ns = INT64_MAX;
    p.start_max_ns = INT64_MIN;
    p.end_max_ns = INT64_MIN;
    p.dur_min_ns = INT64_MAX;
    p.dur_max_ns = INT64_MIN;
    p.wait_max_ns = 0;
    p.first_row = static_cast<uint32_t>(out.rows.size());
    for (; i < n && items[i].key == p.key && items[i].bucket == p.bucket; ++i) {
      const uint32_t e = items[i].e;
      const int64_t s = c.start_ns[e] - offset_ns;
      ++p.count;
      p.start_min_ns = std::min(p.start_min_ns, s);
      p.start_max_ns = std::max(p.start_max_ns, s);
      p.end_max_ns = std::max(p.end_max_ns, s + c.dur_ns[e]);
      p.dur_min_ns = std::min(p.dur_min_ns, c.dur_ns[e]);
      p.dur_max_ns = std::max(p.dur_max_ns, c.dur_ns[e]);
      p.wait_max_ns = std::max(p.wait_max_ns, c.wait_ns[e]);
      if (p.row_count < rules.max_rows_per_rank) {
        out.rows.push_back(items[i].row);
        ++p.row_count;
      }
    }
    out.buckets.push_back(p);
  }
  return out;
}

namespace {

// (depth, rank) order of the event_ids when they do not all fit
bool event_before(const MergedEvent& a, const MergedEvent& b) {
  return a.depth != b.depth ? a.depth < b.depth : a.rank < b.rank;
}

// Merges `add` (sorted) into `events` (sorted), keeping the first `cap`. Called once per bucket
// and rank: no allocation past the list's own growth (a per-thread scratch for the interleaving case).
void merge_events(std::vector<MergedEvent>& events, const MergedEvent* add, size_t n, size_t cap) {
  if (n == 0 || cap == 0) return;
  if (events.size() >= cap && !event_before(add[0], events.back())) return;  // the usual case past `cap` ranks
  if (events.empty() || event_before(events.back(), add[0])) {  // all after the list (and it has room)
    events.insert(events.end(), add, add + std::min(n, cap - events.size()));
    return;
  }
  thread_local std::vector<MergedEvent> out;
  out.clear();
  size_t i = 0, j = 0;
  while (out.size() < cap && (i < events.size() || j < n)) {
    if (j == n || (i < events.size() && !event_before(add[j], events[i]))) out.push_back(events[i++]);
    else out.push_back(add[j++]);
  }
  events.assign(out.begin(), out.end());
}

// Adds the runs `add` (sorted, disjoint from `ranges`) to `ranges`, coalescing neighbours.
void merge_ranges(std::vector<RankRange>& ranges, const RankRange* add, size_t n) {
  if (n == 0) return;
  if (ranges.empty() || add[0].first >= ranges.back().end) {  // the usual case: folds in rank order
    for (size_t k = 0; k < n; ++k) {
      if (!ranges.empty() && ranges.back().end == add[k].first) ranges.back().end = add[k].end;
      else ranges.push_back(add[k]);
    }
    return;
  }
  thread_local std::vector<RankRange> out;
  out.clear();
  size_t i = 0, j = 0;
  while (i < ranges.size() || j < n) {
    const RankRange r = (j == n || (i < ranges.size() && ranges[i].first < add[j].first)) ? ranges[i++] : add[j++];
    if (!out.empty() && out.back().end == r.first) out.back().end = r.end;
    else out.push_back(r);
  }
  ranges.assign(out.begin(), out.end());
}

// `candidate` replaces `current` as an outlier when it is further out, or as far at a lower position.
bool wins(int64_t candidate, uint32_t candidate_rank, int64_t current, uint32_t current_rank, bool larger) {
  if (candidate != current) return larger ? candidate > current : candidate < current;
  return candidate_rank < current_rank;
}

// One rank's partial as a merge of one member.
BucketMerge single(uint32_t key, const BucketPartial& p, std::span<const uint32_t> rows, uint32_t rank, int64_t offset_ns,
                   size_t cap) {
  BucketMerge m;
  m.key = key;
  m.bucket = p.bucket;
  m.member_ranks = 1;
  m.member_count = p.count;
  m.start_min_ns = p.start_min_ns;
  m.start_max_ns = p.start_max_ns;
  m.end_min_ns = m.end_max_ns = p.end_max_ns;
  m.dur_min_ns = p.dur_min_ns;
  m.dur_max_ns = p.dur_max_ns;
  m.wait_max_ns = p.wait_max_ns;
  m.raw_start_min_ns = p.start_min_ns + offset_ns;
  m.raw_start_max_ns = p.start_max_ns + offset_ns;
  m.raw_end_ns = p.end_max_ns + offset_ns;
  for (int o = 0; o < kOutliers; ++o) {
    m.outlier_rank[o] = rank;
    m.outlier_rows[o].assign(rows.begin(), rows.end());
  }
  m.ranges.push_back({rank, rank + 1});
  for (size_t d = 0; d < rows.size() && d < cap; ++d) m.events.push_back({static_cast<uint32_t>(d), rank, rows[d]});
  return m;
}

// Merges `b` into `a` (same key and bucket, disjoint ranks).
void merge_into(BucketMerge& a, BucketMerge&& b, size_t cap) {
  a.member_ranks += b.member_ranks;
  a.member_count += b.member_count;
  a.start_min_ns = std::min(a.start_min_ns, b.start_min_ns);
  a.end_min_ns = std::min(a.end_min_ns, b.end_min_ns);
  a.wait_max_ns = std::max(a.wait_max_ns, b.wait_max_ns);
  a.raw_start_min_ns = std::min(a.raw_start_min_ns, b.raw_start_min_ns);
  a.raw_start_max_ns = std::max(a.raw_start_max_ns, b.raw_start_max_ns);
  a.raw_end_ns = std::max(a.raw_end_ns, b.raw_end_ns);
  auto outlier = [&](Outlier o, int64_t& av, int64_t bv, bool larger) {
    if (!wins(bv, b.outlier_rank[o], av, a.outlier_rank[o], larger)) return;
    av = bv;
    a.outlier_rank[o] = b.outlier_rank[o];
    a.outlier_rows[o] = std::move(b.outlier_rows[o]);
  };
  outlier(kLatestStart, a.start_max_ns, b.start_max_ns, true);
  outlier(kLatestEnd, a.end_max_ns, b.end_max_ns, true);
  outlier(kLongest, a.dur_max_ns, b.dur_max_ns, true);
  outlier(kShortest, a.dur_min_ns, b.dur_min_ns, false);
  merge_ranges(a.ranges, b.ranges.data(), b.ranges.size());
  merge_events(a.events, b.events.data(), b.events.size(), cap);
}

// Merges one rank's partial into `a` without building a BucketMerge for it (the fold's hot path).
void merge_partial(BucketMerge& a, const BucketPartial& p, std::span<const uint32_t> rows, uint32_t rank, int64_t offset_ns,
                   size_t cap) {
  a.member_ranks += 1;
  a.member_count += p.count;
  a.start_min_ns = std::min(a.start_min_ns, p.start_min_ns);
  a.end_min_ns = std::min(a.end_min_ns, p.end_max_ns);
  a.wait_max_ns = std::max(a.wait_max_ns, p.wait_max_ns);
  a.raw_start_min_ns = std::min(a.raw_start_min_ns, p.start_min_ns + offset_ns);
  a.raw_start_max_ns = std::max(a.raw_start_max_ns, p.start_max_ns + offset_ns);
  a.raw_end_ns = std::max(a.raw_end_ns, p.end_max_ns + offset_ns);
  auto outlier = [&](Outlier o, int64_t& av, int64_t pv, bool larger) {
    if (!wins(pv, rank, av, a.outlier_rank[o], larger)) return;
    av = pv;
    a.outlier_rank[o] = rank;
    a.outlier_rows[o].assign(rows.begin(), rows.end());
  };
  outlier(kLatestStart, a.start_max_ns, p.start_max_ns, true);
  outlier(kLatestEnd, a.end_max_ns, p.end_max_ns, true);
  outlier(kLongest, a.dur_max_ns, p.dur_max_ns, true);
  outlier(kShortest, a.dur_min_ns, p.dur_min_ns, false);
  const RankRange r{rank, rank + 1};
  merge_ranges(a.ranges, &r, 1);
  thread_local std::vector<MergedEvent> add;  // reused: no allocation per partial
  add.clear();
  for (size_t d = 0; d < rows.size() && d < cap; ++d) add.push_back({static_cast<uint32_t>(d), rank, rows[d]});
  merge_events(a.events, add.data(), add.size(), cap);
}

// The order in which `keys` (indices into one key table) must be visited so that the buckets they
// group, remapped through `to_acc`, come out sorted by accumulator key: runs of equal key index
// `[begin, end)` in `key_of` order, visited by ascending `to_acc`.
template <class KeyOf>
std::vector<std::pair<size_t, size_t>> runs_by_acc_key(size_t n, KeyOf key_of, const std::vector<uint32_t>& to_acc) {
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && key_of(j) == key_of(i)) ++j;
    runs.push_back({i, j});
    i = j;
  }
  std::sort(runs.begin(), runs.end(), [&](const auto& x, const auto& y) {
    return to_acc[key_of(x.first)] < to_acc[key_of(y.first)];
  });
  return runs;
}

// `own` (indices into b, in (own key, bucket) order) reordered to (acc key, bucket) order: its runs of
// one key, visited by the key's acc index; entries out of range (damaged input) are left out.
template <class Bucket>
std::vector<uint32_t> acc_key_order(const std::vector<Bucket>& b, const std::vector<uint32_t>& own,
                                    const std::vector<uint32_t>& to_acc) {
  std::vector<uint32_t> valid;
  valid.reserve(own.size());
  for (const uint32_t p : own)
    if (p < b.size() && b[p].key < to_acc.size()) valid.push_back(p);
  std::vector<uint32_t> order;
  order.reserve(valid.size());
  for (const auto& [first, end] : runs_by_acc_key(valid.size(), [&](size_t i) { return b[valid[i]].key; }, to_acc))
    for (size_t i = first; i < end; ++i) order.push_back(valid[i]);
  return order;
}

// Indices of `keys` in acc.keys (appending the new ones).
std::vector<uint32_t> map_keys(OperatorBucketMerge& acc, const std::vector<OperatorKey>& keys) {
  std::unordered_map<std::string, uint32_t> index;
  index.reserve(acc.keys.size() + keys.size());
  for (uint32_t k = 0; k < acc.keys.size(); ++k) index.emplace(key_text(acc.keys[k]), k);
  std::vector<uint32_t> to_acc(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) {
    auto [it, inserted] = index.emplace(key_text(keys[k]), static_cast<uint32_t>(acc.keys.size()));
    if (inserted) acc.keys.push_back(keys[k]);
    to_acc[k] = it->second;
  }
  return to_acc;
}

bool merge_before(const BucketMerge& a, uint32_t key, int64_t bucket) {
  return a.key != key ? a.key < key : a.bucket < bucket;
}

// Merges the sequence `key_bucket(j)` (j < n, sorted by (acc key, bucket)) into acc: in place
// while every entry is already there, else one pass that rebuilds acc.order (4 bytes a bucket; the
// buckets themselves never move, new ones are appended to acc.buckets).
template <class KeyBucket, class Merge, class Make>
void merge_sorted(OperatorBucketMerge& acc, size_t n, KeyBucket key_bucket, Merge merge, Make make) {
  auto& pool = acc.buckets;
  auto& order = acc.order;
  size_t i = 0, j = 0;
  for (; j < n; ++j) {
    const auto [key, bucket] = key_bucket(j);
    while (i < order.size() && merge_before(pool[order[i]], key, bucket)) ++i;
    if (i == order.size() || pool[order[i]].key != key || pool[order[i]].bucket != bucket) break;
    merge(pool[order[i]], j);
  }
  if (j == n) return;
  std::vector<uint32_t> out;
  out.reserve(order.size() + (n - j));
  out.assign(order.begin(), order.begin() + static_cast<ptrdiff_t>(i));
  for (; j < n; ++j) {
    const auto [key, bucket] = key_bucket(j);
    while (i < order.size() && merge_before(pool[order[i]], key, bucket)) out.push_back(order[i++]);
    if (i < order.size() && pool[order[i]].key == key && pool[order[i]].bucket == bucket) {
      merge(pool[order[i]], j);
      out.push_back(order[i++]);
    } else {
      pool.push_back(make(j));
      out.push_back(static_cast<uint32_t>(pool.size() - 1));
    }
  }
  out.insert(out.end(), order.begin() + static_cast<ptrdiff_t>(i), order.end());
  order = std::move(out);
}

}  // namespace

void fold_rank_buckets(OperatorBucketMerge& acc, uint32_t rank_position, const RankOperatorBuckets& rank,
                       int64_t offset_ns, const knowledge::OperatorAlignmentRules& rules) {
  if (!rank.built) return;
  ++acc.ranks;
  const auto to_acc = map_keys(acc, rank.keys);
  const auto& b = rank.buckets;
  std::vector<uint32_t> own(b.size());  // the rank's buckets are in (own key, bucket) order
  std::iota(own.begin(), own.end(), 0u);
  const std::vector<uint32_t> order = acc_key_order(b, own, to_acc);
  const size_t cap = rules.max_event_ids_per_row;
  merge_sorted(
      acc, order.size(),
      [&](size_t j) { return std::pair<uint32_t, int64_t>(to_acc[b[order[j]].key], b[order[j]].bucket); },
      [&](BucketMerge& m, size_t j) { merge_partial(m, b[order[j]], rank.rows_of(b[order[j]]), rank_position, offset_ns, cap); },
      [&](size_t j) {
        return single(to_acc[b[order[j]].key], b[order[j]], rank.rows_of(b[order[j]]), rank_position, offset_ns, cap);
      });
}

void merge_bucket_merges(OperatorBucketMerge& acc, OperatorBucketMerge&& other,
                         const knowledge::OperatorAlignmentRules& rules) {
  acc.ranks += other.ranks;
  const auto to_acc = map_keys(acc, other.keys);
  auto& b = other.buckets;
  const std::vector<uint32_t> order = acc_key_order(b, other.order, to_acc);
  const size_t cap = rules.max_event_ids_per_row;
  merge_sorted(
      acc, order.size(),
      [&](size_t j) { return std::pair<uint32_t, int64_t>(to_acc[b[order[j]].key], b[order[j]].bucket); },
      [&](BucketMerge& m, size_t j) { merge_into(m, std::move(b[order[j]]), cap); },
      [&](size_t j) {
        BucketMerge m = std::move(b[order[j]]);
        m.key = to_acc[m.key];
        return m;
      });
  other = {};
}

std::span<const uint32_t> OperatorAlignments::outlier_rows(const OperatorAlignment& a, uint32_t rank) const {
  const uint32_t by_outlier[kOutliers] = {a.latest_start_rank, a.latest_end_rank, a.longest_rank, a.shortest_rank};
  for (int o = 0; o < kOutliers; ++o)
    if (by_outlier[o] == rank) return {rows.data() + a.first_rows[o], a.row_counts[o]};
  return {};
}

OperatorAlignments finish_alignments(OperatorBucketMerge&& merged, const knowledge::OperatorAlignmentRules& rules) {
  OperatorAlignments out;
  out.keys = std::move(merged.keys);
  out.ranks = merged.ranks;
  for (BucketMerge& m : merged.buckets) {
    if (m.member_ranks < 2) continue;
    OperatorAlignment a;
    a.key = m.key;
    a.bucket = m.bucket;
    a.member_ranks = m.member_ranks;
    a.member_count = m.member_count;
    a.start_ns = m.start_min_ns;
    a.end_ns = m.end_max_ns;
    a.start_skew_ns = m.start_max_ns - m.start_min_ns;
    a.end_skew_ns = m.end_max_ns - m.end_min_ns;
    a.dur_min_ns = m.dur_min_ns;
    a.dur_max_ns = m.dur_max_ns;
    a.wait_max_ns = m.wait_max_ns;
    a.raw_start_min_ns = m.raw_start_min_ns;
    a.raw_start_max_ns = m.raw_start_max_ns;
    a.raw_end_ns = m.raw_end_ns;
    a.latest_start_rank = m.outlier_rank[kLatestStart];
    a.latest_end_rank = m.outlier_rank[kLatestEnd];
    a.longest_rank = m.outlier_rank[kLongest];
    a.shortest_rank = m.outlier_rank[kShortest];
    const double dmin_us = static_cast<double>(a.dur_min_ns) / 1000.0;
    const double dmax_us = static_cast<double>(a.dur_max_ns) / 1000.0;
    a.duration_ratio = dmax_us / std::max(1e-6, dmin_us);
    const double skew_us = static_cast<double>(a.start_skew_ns) / 1000.0;
    if (a.duration_ratio >= rules.low_min_duration_ratio || skew_us >= rules.low_min_start_skew_us) a.confidence = 0;
    else if (a.member_count >= rules.high_min_members && a.duration_ratio <= rules.high_max_duration_ratio &&
             skew_us <= rules.high_max_start_skew_us)
      a.confidence = 2;
    else if (a.member_count >= 2 && a.duration_ratio <= rules.medium_max_duration_ratio &&
             skew_us <= rules.medium_max_start_skew_us)
      a.confidence = 1;
    else a.confidence = 0;
    a.first_range = static_cast<uint32_t>(out.ranges.size());
    a.range_count = static_cast<uint32_t>(m.ranges.size());
    out.ranges.insert(out.ranges.end(), m.ranges.begin(), m.ranges.end());
    // event ids rank by rank, as the reference lists them, when they all fit under the cap (then
    // the merge kept them all); else round-robin over the ranks, each rank's first row before any
    // second one, as merged
    if (a.member_count <= rules.max_event_ids_per_row)
      std::sort(m.events.begin(), m.events.end(), [](const MergedEvent& x, const MergedEvent& y) {
        return x.rank != y.rank ? x.rank < y.rank : x.depth < y.depth;
      });
    a.first_event = static_cast<uint32_t>(out.events.size());
    a.event_count = static_cast<uint32_t>(m.events.size());
    for (const MergedEvent& e : m.events) out.events.push_back({e.rank, e.row});
    for (int o = 0; o < kOutliers; ++o) {
      a.first_rows[o] = static_cast<uint32_t>(out.rows.size());
      a.row_counts[o] = static_cast<uint32_t>(m.outlier_rows[o].size());
      out.rows.insert(out.rows.end(), m.outlier_rows[o].begin(), m.outlier_rows[o].end());
    }
    out.alignments.push_back(a);
    m = {};  // frees its vectors as the walk goes
  }
  merged = {};
  // output order: (role, start), then the key's text so ties are deterministic
  std::sort(out.alignments.begin(), out.alignments.end(), [&out](const OperatorAlignment& a, const OperatorAlignment& b) {
    const auto& ka = out.keys[a.key];
    const auto& kb = out.keys[b.key];
    if (ka.role != kb.role) return ka.role < kb.role;
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    if (ka.name_key != kb.name_key) return ka.name_key < kb.name_key;
    return ka.shape < kb.shape;
  });
  return out;
}

OperatorAlignments align_operators(const std::vector<const RankOperatorBuckets*>& per_rank,
                                   const knowledge::OperatorAlignmentRules& rules) {
  OperatorBucketMerge acc;
  for (uint32_t rank = 0; rank < per_rank.size(); ++rank)
    if (per_rank[rank] != nullptr) fold_rank_buckets(acc, rank, *per_rank[rank], 0, rules);
  return finish_alignments(std::move(acc), rules);
}

}  // namespace ascprof::analysis

#include "ascprof/analysis/operator_align.hpp"

#include <algorithm>
#include <cmath>
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
  std::vector<int64_t> bucket(n);
  for (size_t i = 0; i < n; ++i) bucket[i] = floor_div(c.start_ns[i] - offset_ns, width_ns);
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  // (key, bucket, row): rows stay in file order inside a bucket, so the sampled rows are the first
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (c.key[a] != c.key[b]) return c.key[a] < c.key[b];
    if (bucket[a] != bucket[b]) return bucket[a] < bucket[b];
    return c.row[a] < c.row[b];
  });
  for (size_t i = 0; i < n;) {
    const uint32_t first = order[i];
    BucketPartial p;
    p.key = c.key[first];
    p.bucket = bucket[first];
    p.start_min_ns = INT64_MAX;
    p.start_max_ns = INT64_MIN;
    p.end_max_ns = INT64_MIN;
    p.dur_min_ns = INT64_MAX;
    p.dur_max_ns = INT64_MIN;
    p.wait_max_ns = 0;
    for (; i < n && c.key[order[i]] == p.key && bucket[order[i]] == p.bucket; ++i) {
      const uint32_t e = order[i];
      const int64_t s = c.start_ns[e] - offset_ns;
      ++p.count;
      p.start_min_ns = std::min(p.start_min_ns, s);
      p.start_max_ns = std::max(p.start_max_ns, s);
      p.end_max_ns = std::max(p.end_max_ns, s + c.dur_ns[e]);
      p.dur_min_ns = std::min(p.dur_min_ns, c.dur_ns[e]);
      p.dur_max_ns = std::max(p.dur_max_ns, c.dur_ns[e]);
      p.wait_max_ns = std::max(p.wait_max_ns, c.wait_ns[e]);
      if (p.rows.size() < rules.max_rows_per_rank) p.rows.push_back(c.row[e]);
    }
    out.buckets.push_back(std::move(p));
  }
  return out;
}

OperatorAlignments align_operators(const std::vector<const RankOperatorBuckets*>& per_rank,
                                   const knowledge::OperatorAlignmentRules& rules) {
  OperatorAlignments out;
  // global keys, and every partial as (global key, bucket, rank, partial)
  std::unordered_map<std::string, uint32_t> global;
  struct Ref {
    uint32_t key;
    int64_t bucket;
    uint32_t rank, partial;
  };
  std::vector<Ref> refs;
  size_t total = 0;
  for (const auto* r : per_rank) total += (r != nullptr && r->built) ? r->buckets.size() : 0;
  refs.reserve(total);
  for (uint32_t rank = 0; rank < per_rank.size(); ++rank) {
    const auto* r = per_rank[rank];
    if (r == nullptr || !r->built) continue;
    std::vector<uint32_t> to_global(r->keys.size());
    for (size_t k = 0; k < r->keys.size(); ++k) {
      auto [it, inserted] = global.emplace(key_text(r->keys[k]), static_cast<uint32_t>(out.keys.size()));
      if (inserted) out.keys.push_back(r->keys[k]);
      to_global[k] = it->second;
    }
    for (uint32_t p = 0; p < r->buckets.size(); ++p) {
      const auto& b = r->buckets[p];
      if (b.key < to_global.size()) refs.push_back({to_global[b.key], b.bucket, rank, p});
    }
  }
  std::sort(refs.begin(), refs.end(), [](const Ref& a, const Ref& b) {
    if (a.key != b.key) return a.key < b.key;
    if (a.bucket != b.bucket) return a.bucket < b.bucket;
    return a.rank < b.rank;
  });
  for (size_t i = 0; i < refs.size();) {
    size_t j = i;
    while (j < refs.size() && refs[j].key == refs[i].key && refs[j].bucket == refs[i].bucket) ++j;
    if (j - i >= 2) {  // one partial per rank and bucket: j - i ranks
      OperatorAlignment a;
      a.key = refs[i].key;
      a.bucket = refs[i].bucket;
      a.first_member = static_cast<uint32_t>(out.members.size());
      a.member_ranks = static_cast<uint32_t>(j - i);
      int64_t start_min = INT64_MAX, start_max = INT64_MIN, end_min = INT64_MAX, end_max = INT64_MIN;
      a.dur_min_ns = INT64_MAX;
      a.dur_max_ns = INT64_MIN;
      for (size_t m = i; m < j; ++m) {
        const auto& b = per_rank[refs[m].rank]->buckets[refs[m].partial];
        out.members.push_back({refs[m].rank, refs[m].partial});
        a.member_count += b.count;
        if (b.start_min_ns < start_min) start_min = b.start_min_ns;
        if (b.start_max_ns > start_max) {
          start_max = b.start_max_ns;
          a.latest_start_rank = refs[m].rank;
        }
        end_min = std::min(end_min, b.end_max_ns);
        if (b.end_max_ns > end_max) {
          end_max = b.end_max_ns;
          a.latest_end_rank = refs[m].rank;
        }
        if (b.dur_min_ns < a.dur_min_ns) {
          a.dur_min_ns = b.dur_min_ns;
          a.shortest_rank = refs[m].rank;
        }
        if (b.dur_max_ns > a.dur_max_ns) {
          a.dur_max_ns = b.dur_max_ns;
          a.longest_rank = refs[m].rank;
        }
        a.wait_max_ns = std::max(a.wait_max_ns, b.wait_max_ns);
      }
      a.start_ns = start_min;
      a.end_ns = end_max;
      a.start_skew_ns = start_max - start_min;
      a.end_skew_ns = end_max - end_min;
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
      out.alignments.push_back(a);
    }
    i = j;
  }
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

}  // namespace ascprof::analysis

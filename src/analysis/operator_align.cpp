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

// Varints: unsigned LEB128; signed values zigzag-mapped first.
void put_u(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void put_s(std::string& out, int64_t v) {
  put_u(out, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}
void put_text(std::string& out, const std::string& t) {
  put_u(out, t.size());
  out += t;
}

class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  bool u(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= b_.size()) return false;
      const auto c = static_cast<uint8_t>(b_[pos_++]);
      *v |= static_cast<uint64_t>(c & 0x7f) << shift;
      if ((c & 0x80) == 0) return true;
    }
    return false;
  }
  bool s(int64_t* v) {
    uint64_t z = 0;
    if (!u(&z)) return false;
    *v = static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1));
    return true;
  }
  bool text(std::string* t) {
    uint64_t n = 0;
    if (!u(&n) || n > b_.size() - pos_) return false;
    t->assign(b_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  bool done() const { return pos_ == b_.size(); }

 private:
  std::string_view b_;
  size_t pos_ = 0;
};

}  // namespace

std::string pack_buckets(const RankOperatorBuckets& r) {
  std::string out;
  out.reserve(16 + r.buckets.size() * 24);
  put_u(out, r.built ? 1 : 0);
  put_u(out, r.keys.size());
  for (const auto& k : r.keys) {
    put_u(out, k.role);
    put_text(out, k.name_key);
    put_text(out, k.shape);
  }
  put_u(out, r.buckets.size());
  uint32_t key = 0;
  int64_t bucket = 0;
  for (const auto& b : r.buckets) {
    put_s(out, static_cast<int64_t>(b.key) - key);
    put_s(out, b.bucket - bucket);
    key = b.key;
    bucket = b.bucket;
    put_u(out, b.count);
    put_s(out, b.start_min_ns);  // absolute once per bucket: the others are relative to it
    put_s(out, b.start_max_ns - b.start_min_ns);
    put_s(out, b.end_max_ns - b.start_max_ns);
    put_s(out, b.dur_min_ns);
    put_s(out, b.dur_max_ns - b.dur_min_ns);
    put_s(out, b.wait_max_ns);
    put_u(out, b.rows.size());
    int64_t row = 0;
    for (const uint32_t x : b.rows) {
      put_s(out, static_cast<int64_t>(x) - row);
      row = x;
    }
  }
  return out;
}

bool unpack_buckets(std::string_view bytes, RankOperatorBuckets* out) {
  Reader in(bytes);
  RankOperatorBuckets r;
  uint64_t built = 0, nkeys = 0, nbuckets = 0;
  if (!in.u(&built) || !in.u(&nkeys) || nkeys > bytes.size()) return false;
  r.built = built != 0;
  r.keys.resize(nkeys);
  for (auto& k : r.keys) {
    uint64_t role = 0;
    if (!in.u(&role) || !in.text(&k.name_key) || !in.text(&k.shape)) return false;
    k.role = static_cast<uint32_t>(role);
  }
  if (!in.u(&nbuckets) || nbuckets > bytes.size()) return false;
  r.buckets.resize(nbuckets);
  int64_t key = 0, bucket = 0;
  for (auto& b : r.buckets) {
    int64_t dk = 0, db = 0, smin = 0, sspan = 0, eoff = 0, dmin = 0, dspan = 0, wait = 0;
    uint64_t count = 0, nrows = 0;
    if (!in.s(&dk) || !in.s(&db) || !in.u(&count) || !in.s(&smin) || !in.s(&sspan) || !in.s(&eoff) || !in.s(&dmin) ||
        !in.s(&dspan) || !in.s(&wait) || !in.u(&nrows) || nrows > bytes.size())
      return false;
    key += dk;
    bucket += db;
    if (key < 0 || static_cast<uint64_t>(key) >= nkeys) return false;
    b.key = static_cast<uint32_t>(key);
    b.bucket = bucket;
    b.count = static_cast<uint32_t>(count);
    b.start_min_ns = smin;
    b.start_max_ns = smin + sspan;
    b.end_max_ns = b.start_max_ns + eoff;
    b.dur_min_ns = dmin;
    b.dur_max_ns = dmin + dspan;
    b.wait_max_ns = wait;
    b.rows.resize(nrows);
    int64_t row = 0;
    for (auto& x : b.rows) {
      int64_t d = 0;
      if (!in.s(&d)) return false;
      row += d;
      x = static_cast<uint32_t>(row);
    }
  }
  if (!in.done()) return false;
  *out = std::move(r);
  return true;
}

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

// Class walls as sorted delta-coded runs (see wall_set.hpp).
#include "ascprof/analysis/wall_set.hpp"

#include <algorithm>

namespace ascprof::analysis {

namespace {

void put_varint(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

uint64_t get_varint(const uint8_t*& p) {
  uint64_t v = 0;
  for (unsigned shift = 0;; shift += 7) {
    const uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) return v;
  }
}

}  // namespace

WallSet::Run WallSet::encode(std::span<const int64_t> sorted) {
  Run r;
  r.n = sorted.size();
  r.whole.reserve((sorted.size() + kSkip - 1) / kSkip);
  r.offset.reserve(r.whole.capacity());
  r.deltas.reserve(sorted.size());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i % kSkip == 0) {
      r.whole.push_back(sorted[i]);
      r.offset.push_back(r.deltas.size());
      continue;
    }
    // ascending, so the difference fits in 64 unsigned bits even across the int64 range
    put_varint(r.deltas, static_cast<uint64_t>(sorted[i]) - static_cast<uint64_t>(sorted[i - 1]));
  }
  r.deltas.shrink_to_fit();
  return r;
}

void WallSet::add(std::span<const int64_t> values) {
  tail_.insert(tail_.end(), values.begin(), values.end());
  size_ += values.size();
  if (tail_.size() >= std::max<uint64_t>(kMinRun, size_ / 8)) seal_tail();
}

void WallSet::seal_tail() {
  if (tail_.empty()) return;
  std::sort(tail_.begin(), tail_.end());
  runs_.push_back(encode(tail_));
  tail_.clear();
}

void WallSet::seal() {
  seal_tail();
  tail_.shrink_to_fit();
}

uint64_t WallSet::count_le(int64_t x) const {
  uint64_t n = 0;
  for (const Run& r : runs_) {
    // the last block whose first value is <= x; every value before it is <= x
    const auto it = std::upper_bound(r.whole.begin(), r.whole.end(), x);
    if (it == r.whole.begin()) continue;
    const size_t b = static_cast<size_t>(it - r.whole.begin()) - 1;
    n += b * kSkip + 1;
    const size_t in_block = static_cast<size_t>(std::min<uint64_t>(kSkip, r.n - b * kSkip)) - 1;
    const uint8_t* p = r.deltas.data() + r.offset[b];
    uint64_t v = static_cast<uint64_t>(r.whole[b]);
    for (size_t i = 0; i < in_block; ++i) {
      v += get_varint(p);
      if (static_cast<int64_t>(v) > x) break;
      ++n;
    }
  }
  for (const int64_t v : tail_) n += v <= x ? 1 : 0;  // unsealed: still exact, only slower
  return n;
}

size_t WallSet::heap_bytes() const {
  size_t b = tail_.capacity() * sizeof(int64_t) + runs_.capacity() * sizeof(Run);
  for (const Run& r : runs_)
    b += r.whole.capacity() * sizeof(int64_t) + r.offset.capacity() * sizeof(uint64_t) + r.deltas.capacity();
  return b;
}

std::vector<int64_t> WallSet::sorted() const {
  std::vector<int64_t> out(tail_);
  for (const Run& r : runs_)
    for (size_t b = 0; b < r.whole.size(); ++b) {
      uint64_t v = static_cast<uint64_t>(r.whole[b]);
      out.push_back(static_cast<int64_t>(v));
      const uint8_t* p = r.deltas.data() + r.offset[b];
      const size_t in_block = static_cast<size_t>(std::min<uint64_t>(kSkip, r.n - b * kSkip)) - 1;
      for (size_t i = 0; i < in_block; ++i) {
        v += get_varint(p);
        out.push_back(static_cast<int64_t>(v));
      }
    }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ascprof::analysis

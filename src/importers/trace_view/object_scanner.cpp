#include "object_scanner.hpp"

#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#define ASCPROF_TV_X86 1
#include <immintrin.h>
#endif

namespace ascprof::importers::tv {

namespace {

// Bit masks of one 64-byte block: bit i describes byte i.
struct BlockMasks {
  uint64_t quote;
  uint64_t backslash;
  uint64_t open;
  uint64_t close;
};

struct PortableClassifier {
  static inline BlockMasks classify(const char* p) {
    BlockMasks m{0, 0, 0, 0};
#if defined(__SSE2__)
    const __m128i q = _mm_set1_epi8('"');
    const __m128i bs = _mm_set1_epi8('\\');
    const __m128i op = _mm_set1_epi8('{');
    const __m128i cl = _mm_set1_epi8('}');
    for (int i = 0; i < 4; ++i) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
      const int shift = 16 * i;
      m.quote |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, q)))) << shift;
      m.backslash |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, bs)))) << shift;
      m.open |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, op)))) << shift;
      m.close |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, cl)))) << shift;
    }
#else
    for (int i = 0; i < 64; ++i) {
      const uint64_t bit = uint64_t{1} << i;
      switch (p[i]) {
        case '"': m.quote |= bit; break;
        case '\\': m.backslash |= bit; break;
        case '{': m.open |= bit; break;
        case '}': m.close |= bit; break;
        default: break;
      }
    }
#endif
    return m;
  }
};

#ifdef ASCPROF_TV_X86
struct Avx2Classifier {
  __attribute__((target("avx2"))) static inline uint64_t mask(__m256i lo, __m256i hi, char c) {
    const __m256i x = _mm256_set1_epi8(c);
    const auto l = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, x)));
    const auto h = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, x)));
    return static_cast<uint64_t>(l) | static_cast<uint64_t>(h) << 32;
  }
  __attribute__((target("avx2"))) static inline BlockMasks classify(const char* p) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
    return BlockMasks{mask(lo, hi, '"'), mask(lo, hi, '\\'), mask(lo, hi, '{'), mask(lo, hi, '}')};
  }
};
#endif

// Which bytes are escaped by a preceding odd run of backslashes (carrying runs across blocks). This is
// the branchless odd-run trick used by simdjson's stage 1.
inline uint64_t find_escaped(uint64_t backslash, uint64_t& prev_escaped) {
  backslash &= ~prev_escaped;
  const uint64_t follows_escape = backslash << 1 | prev_escaped;
  constexpr uint64_t kEvenBits = 0x5555555555555555ULL;
  const uint64_t odd_sequence_starts = backslash & ~kEvenBits & ~follows_escape;
  uint64_t sequences_starting_on_even_bits = 0;
  prev_escaped = __builtin_add_overflow(odd_sequence_starts, backslash, &sequences_starting_on_even_bits) ? 1 : 0;
  const uint64_t invert_mask = sequences_starting_on_even_bits << 1;
  return (kEvenBits ^ invert_mask) & follows_escape;
}

// Bits set from each unescaped quote up to (not including) the next one.
inline uint64_t prefix_xor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

inline int popcount64(uint64_t x) { return __builtin_popcountll(x); }

constexpr size_t kPrefetchAhead = 4096;

template <typename Classifier>
inline size_t scan_impl(std::string_view data, size_t start) {
  const char* base = data.data();
  const size_t n = data.size();
  uint64_t prev_escaped = 0;
  uint64_t prev_in_string = 0;  // all ones when the previous block ended inside a string
  int64_t depth = 0;
  alignas(16) char tail[64];
  for (size_t pos = start; pos < n; pos += 64) {
    const char* block = base + pos;
    const size_t avail = n - pos;
    if (avail < 64) {
      // Never read past the data: pad the last partial block with spaces (neutral bytes).
      std::memset(tail, ' ', sizeof tail);
      std::memcpy(tail, block, avail);
      block = tail;
    }
    // The file bytes are read here first (cold): fetch well ahead, across page boundaries where the
    // hardware prefetcher stops. A prefetch past the end of the data is harmless (never faults).
    __builtin_prefetch(block + kPrefetchAhead);
    const BlockMasks m = Classifier::classify(block);
    const uint64_t escaped = find_escaped(m.backslash, prev_escaped);
    const uint64_t quotes = m.quote & ~escaped;
    const uint64_t in_string = prefix_xor(quotes) ^ prev_in_string;
    prev_in_string = static_cast<uint64_t>(static_cast<int64_t>(in_string) >> 63);
    uint64_t open = m.open & ~in_string;
    uint64_t close = m.close & ~in_string;
    if (open == 0 && close == 0) continue;
    // Fast path: no close brace here cannot end the object.
    if (close == 0) {
      depth += popcount64(open);
      continue;
    }
    // Fewer closes than open levels: the object cannot end here (no per-brace walk).
    const int closes = popcount64(close);
    if (depth > closes) {
      depth += popcount64(open) - closes;
      continue;
    }
    // Depth just after each close = depth + opens before it - closes up to it; the first zero ends the
    // object. Only the (few) closes are visited.
    int64_t seen = 0;
    for (uint64_t c = close; c != 0; c &= c - 1) {
      const int bit = __builtin_ctzll(c);
      ++seen;
      const uint64_t before = (uint64_t{1} << bit) - 1;
      if (depth + popcount64(open & before) - seen == 0) {
        const size_t at = pos + static_cast<size_t>(bit);
        return at < n ? at : kNpos;
      }
    }
    depth += popcount64(open) - closes;
  }
  return kNpos;
}

#ifdef ASCPROF_TV_X86
// flatten: scan_impl and the AVX2 classifier are inlined here and compiled for AVX2.
__attribute__((target("avx2,popcnt"), flatten)) size_t find_object_end_avx2(std::string_view data, size_t start) {
  return scan_impl<Avx2Classifier>(data, start);
}
#endif

using ScanFn = size_t (*)(std::string_view, size_t);
size_t portable_entry(std::string_view data, size_t start) { return scan_impl<PortableClassifier>(data, start); }

ScanFn pick_scanner() {
#ifdef ASCPROF_TV_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt")) return find_object_end_avx2;
#endif
  return portable_entry;
}

}  // namespace

size_t find_object_end_portable(std::string_view data, size_t start) {
  return scan_impl<PortableClassifier>(data, start);
}

size_t find_object_end(std::string_view data, size_t start) {
  static const ScanFn scan = pick_scanner();
  return scan(data, start);
}

size_t find_object_end_scalar(std::string_view data, size_t start) {
  // Same rules as the SIMD path: a backslash escapes the next byte anywhere (so an escaped quote never
  // toggles the string state), and braces count only outside strings.
  int64_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (size_t i = start; i < data.size(); ++i) {
    const char c = data[i];
    if (escaped) {
      escaped = false;
      if (c == '"' || c == '\\') continue;
    } else if (c == '\\') {
      escaped = true;
      continue;
    } else if (c == '"') {
      in_string = !in_string;
      continue;
    }
    if (in_string) continue;
    if (c == '{') ++depth;
    else if (c == '}' && --depth == 0) return i;
  }
  return kNpos;
}

size_t skip_string(std::string_view data, size_t pos) {
  for (size_t i = pos + 1; i < data.size(); ++i) {
    if (data[i] == '\\') ++i;
    else if (data[i] == '"') return i + 1;
  }
  return kNpos;
}

size_t skip_value(std::string_view data, size_t pos) {
  if (pos >= data.size()) return kNpos;
  const char c0 = data[pos];
  if (c0 == '"') return skip_string(data, pos);
  if (c0 == '{' || c0 == '[') {
    int64_t depth = 0;
    for (size_t i = pos; i < data.size(); ++i) {
      const char c = data[i];
      if (c == '"') {
        const size_t e = skip_string(data, i);
        if (e == kNpos) return kNpos;
        i = e - 1;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if ((c == '}' || c == ']') && --depth == 0) {
        return i + 1;
      }
    }
    return kNpos;
  }
  // Scalar: up to the next delimiter.
  size_t i = pos;
  while (i < data.size() && data[i] != ',' && data[i] != '}' && data[i] != ']' && !is_json_ws(data[i])) ++i;
  return i < data.size() ? i : kNpos;
}

size_t find_resync_point(std::string_view data, size_t from, size_t to) {
  if (to > data.size()) to = data.size();
  for (size_t i = from + 1; i < to; ++i) {
    const void* hit = std::memchr(data.data() + i, '{', to - i);
    if (hit == nullptr) return kNpos;
    i = static_cast<size_t>(static_cast<const char*>(hit) - data.data());
    size_t b = i;
    while (b > from && is_json_ws(data[b - 1])) --b;
    if (b <= from || (data[b - 1] != '[' && data[b - 1] != '}')) continue;
    size_t a = i + 1;
    while (a < data.size() && is_json_ws(data[a])) ++a;
    if (a < data.size() && data[a] == '"') return i;
  }
  return kNpos;
}

}  // namespace ascprof::importers::tv

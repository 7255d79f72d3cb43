#include "ascprof/common/blake2b.hpp"

#include <array>
#include <cstring>

namespace ascprof {
namespace {

constexpr std::array<uint64_t, 8> kIv = {
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
    0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};

constexpr uint8_t kSigma[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};

inline uint64_t rotr(uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

inline uint64_t load64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The 16 state words live in locals (not an array indexed at run time) so they stay in registers:
// ids are hashed for every segment, layer and block, and this made the hash ~2x faster.
#define ASCPROF_B2B_G(a, b, c, d, x, y) \
  do {                                  \
    a = a + b + (x);                    \
    d = rotr(d ^ a, 32);                \
    c = c + d;                          \
    b = rotr(b ^ c, 24);                \
    a = a + b + (y);                    \
    d = rotr(d ^ a, 16);                \
    c = c + d;                          \
    b = rotr(b ^ c, 63);                \
  } while (0)

#define ASCPROF_B2B_ROUND(r)                                                   \
  do {                                                                         \
    const uint8_t* s = kSigma[r];                                              \
    ASCPROF_B2B_G(v0, v4, v8, v12, m[s[0]], m[s[1]]);                          \
    ASCPROF_B2B_G(v1, v5, v9, v13, m[s[2]], m[s[3]]);                          \
    ASCPROF_B2B_G(v2, v6, v10, v14, m[s[4]], m[s[5]]);                         \
    ASCPROF_B2B_G(v3, v7, v11, v15, m[s[6]], m[s[7]]);                         \
    ASCPROF_B2B_G(v0, v5, v10, v15, m[s[8]], m[s[9]]);                         \
    ASCPROF_B2B_G(v1, v6, v11, v12, m[s[10]], m[s[11]]);                       \
    ASCPROF_B2B_G(v2, v7, v8, v13, m[s[12]], m[s[13]]);                        \
    ASCPROF_B2B_G(v3, v4, v9, v14, m[s[14]], m[s[15]]);                        \
  } while (0)

void compress(std::array<uint64_t, 8>& h, const uint8_t* block, uint64_t t0, uint64_t t1, bool last) {
  uint64_t m[16];
  for (int i = 0; i < 16; ++i) m[i] = load64(block + 8 * i);
  uint64_t v0 = h[0], v1 = h[1], v2 = h[2], v3 = h[3], v4 = h[4], v5 = h[5], v6 = h[6], v7 = h[7];
  uint64_t v8 = kIv[0], v9 = kIv[1], v10 = kIv[2], v11 = kIv[3];
  uint64_t v12 = kIv[4] ^ t0, v13 = kIv[5] ^ t1, v14 = last ? ~kIv[6] : kIv[6], v15 = kIv[7];
  ASCPROF_B2B_ROUND(0);
  ASCPROF_B2B_ROUND(1);
  ASCPROF_B2B_ROUND(2);
  ASCPROF_B2B_ROUND(3);
  ASCPROF_B2B_ROUND(4);
  ASCPROF_B2B_ROUND(5);
  ASCPROF_B2B_ROUND(6);
  ASCPROF_B2B_ROUND(7);
  ASCPROF_B2B_ROUND(8);
  ASCPROF_B2B_ROUND(9);
  ASCPROF_B2B_ROUND(10);
  ASCPROF_B2B_ROUND(11);
  h[0] ^= v0 ^ v8;
  h[1] ^= v1 ^ v9;
  h[2] ^= v2 ^ v10;
  h[3] ^= v3 ^ v11;
  h[4] ^= v4 ^ v12;
  h[5] ^= v5 ^ v13;
  h[6] ^= v6 ^ v14;
  h[7] ^= v7 ^ v15;
}

#undef ASCPROF_B2B_ROUND
#undef ASCPROF_B2B_G

}  // namespace

void blake2b(std::string_view data, size_t digest_bytes, uint8_t* out) {
  if (digest_bytes == 0 || digest_bytes > 64) digest_bytes = 64;
  std::array<uint64_t, 8> h = kIv;
  h[0] ^= 0x01010000ULL ^ digest_bytes;
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  size_t n = data.size();
  uint64_t t0 = 0, t1 = 0;
  auto add_counter = [&](uint64_t k) {
    t0 += k;
    if (t0 < k) ++t1;
  };
  while (n > 128) {
    add_counter(128);
    compress(h, p, t0, t1, false);
    p += 128;
    n -= 128;
  }
  uint8_t last[128] = {};
  if (n > 0) std::memcpy(last, p, n);
  add_counter(n);
  compress(h, last, t0, t1, true);
  for (size_t i = 0; i < digest_bytes; ++i) out[i] = static_cast<uint8_t>(h[i / 8] >> (8 * (i % 8)));
}

std::string blake2b_hex(std::string_view data, size_t digest_bytes) {
  if (digest_bytes == 0 || digest_bytes > 64) digest_bytes = 64;
  uint8_t digest[64];
  blake2b(data, digest_bytes, digest);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(digest_bytes * 2);
  for (size_t i = 0; i < digest_bytes; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

}  // namespace ascprof

#include "ascprof/common/double_hash.hpp"

#include <cstddef>

namespace ascprof {

namespace {
// Next Unicode code point of UTF-8 text (Python hashes ord() of characters, not bytes); an
// invalid sequence yields its first byte, like a Latin-1 reading.
uint32_t next_code_point(std::string_view s, size_t* i) {
  const auto b0 = static_cast<unsigned char>(s[*i]);
  size_t len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
  if (len <= 1 || *i + len > s.size()) {
    ++*i;
    return b0;
  }
  uint32_t cp = b0 & (0x7Fu >> len);
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[*i + k]);
    if ((b & 0xC0) != 0x80) {
      ++*i;
      return b0;
    }
    cp = (cp << 6) | (b & 0x3Fu);
  }
  *i += len;
  return cp;
}
}  // namespace

uint64_t double_hash(std::string_view comm_name) {
  // uint32_t arithmetic wraps exactly like msprof-analyze's "& 0xFFFFFFFF".
  uint32_t h0 = 0, h1 = 0;
  for (size_t i = 0; i < comm_name.size();) {
    const uint32_t c = next_code_point(comm_name, &i);
    h0 = h0 * 29u + c;
    h1 = h1 * 131u + c;
  }
  return (static_cast<uint64_t>(h0) << 32) | h1;
}

}  // namespace ascprof

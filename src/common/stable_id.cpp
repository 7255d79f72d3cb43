#include "ascprof/common/stable_id.hpp"

#include <cstdint>

#include "ascprof/common/blake2b.hpp"

namespace ascprof {

std::string stable_id_n(std::string_view prefix, std::initializer_list<std::string_view> parts, size_t hex_chars) {
  // parts joined with 0x1F in a reused buffer (ids are short; the buffer grows once per thread)
  thread_local std::string joined;
  joined.clear();
  bool first = true;
  for (const std::string_view p : parts) {
    if (!first) joined += '\x1f';
    joined += p;
    first = false;
  }
  uint8_t digest[16];
  blake2b(joined, sizeof digest, digest);
  static constexpr char kHex[] = "0123456789abcdef";
  if (hex_chars > 32) hex_chars = 32;
  std::string out;
  out.reserve(prefix.size() + 1 + hex_chars);
  out += prefix;
  out += '_';
  for (size_t i = 0; i < hex_chars; ++i) out += kHex[(digest[i / 2] >> (i % 2 == 0 ? 4 : 0)) & 15];
  return out;
}

std::string stable_id(std::string_view prefix, std::initializer_list<std::string_view> parts) {
  return stable_id_n(prefix, parts, 16);
}

}  // namespace ascprof

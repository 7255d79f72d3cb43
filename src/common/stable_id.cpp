#include "ascprof/common/stable_id.hpp"

#include "ascprof/common/blake2b.hpp"

namespace ascprof {

std::string stable_id_n(std::string_view prefix, const std::vector<std::string>& parts, size_t hex_chars) {
  std::string joined;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) joined += '\x1f';
    joined += parts[i];
  }
  return std::string(prefix) + "_" + blake2b_hex(joined, 16).substr(0, hex_chars);
}

std::string stable_id(std::string_view prefix, const std::vector<std::string>& parts) {
  return stable_id_n(prefix, parts, 16);
}

}  // namespace ascprof

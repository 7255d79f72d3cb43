#pragma once
/// Joining strings with a separator: ["a","b"] -> "a,b" (the cells and messages many stages write).
#include <string>
#include <string_view>
#include <vector>

namespace ascprof {

inline std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}
inline std::string join(const std::vector<std::string>& parts, char sep) { return join(parts, std::string_view(&sep, 1)); }

}  // namespace ascprof

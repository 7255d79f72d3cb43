#include <charconv>
#include <cstdint>

#include "ascprof/importers/capture_info.hpp"

namespace ascprof::importers {

std::optional<int64_t> rank_from_profiler_info_name(std::string_view name) {
  constexpr std::string_view kPrefix = "profiler_info_";
  constexpr std::string_view kSuffix = ".json";
  if (name.size() <= kPrefix.size() + kSuffix.size() || name.substr(0, kPrefix.size()) != kPrefix ||
      name.substr(name.size() - kSuffix.size()) != kSuffix)
    return std::nullopt;
  std::string_view digits = name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  if (digits.empty() || digits.front() < '0' || digits.front() > '9') return std::nullopt;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || p != digits.data() + digits.size()) return std::nullopt;
  return v;
}

}  // namespace ascprof::importers

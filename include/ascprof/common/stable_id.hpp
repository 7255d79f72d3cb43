#pragma once
/// The reference's `stable_id(prefix, *parts)` (reference-analysis.md §2.0): parts joined with 0x1F,
/// BLAKE2b-16 hex, first 16 hex characters, "<prefix>_<hex>". Ids are content-derived, so reruns and
/// other processes produce the same ids.
#include <string>
#include <string_view>
#include <vector>

namespace ascprof {

std::string stable_id(std::string_view prefix, const std::vector<std::string>& parts);

/// Same, keeping `hex_chars` characters of the digest (the reference's cluster ids keep 12).
std::string stable_id_n(std::string_view prefix, const std::vector<std::string>& parts, size_t hex_chars);

}  // namespace ascprof

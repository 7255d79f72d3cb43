#pragma once
/// The reference's `stable_id(prefix, *parts)` (reference-analysis.md §2.0): parts joined with 0x1F,
/// BLAKE2b-16 hex, first 16 hex characters, "<prefix>_<hex>". Ids are content-derived, so reruns and
/// other processes produce the same ids.
#include <initializer_list>
#include <string>
#include <string_view>

namespace ascprof {

/// Ids are made for every segment, layer and block of every rank, so this allocates only the result.
std::string stable_id(std::string_view prefix, std::initializer_list<std::string_view> parts);

/// Same, keeping `hex_chars` (<= 32) characters of the digest (the reference's cluster ids keep 12).
std::string stable_id_n(std::string_view prefix, std::initializer_list<std::string_view> parts, size_t hex_chars);

}  // namespace ascprof

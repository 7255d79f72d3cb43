#pragma once
/// BLAKE2b (RFC 7693), unkeyed, digest 1..64 bytes: the hash the reference tool uses for ids and
/// shape signatures, so ours are built the same way.
#include <cstdint>
#include <string>
#include <string_view>

namespace ascprof {

/// Hex digest (2 * digest_bytes lower-case characters) of BLAKE2b over `data`.
std::string blake2b_hex(std::string_view data, size_t digest_bytes);

/// Raw digest: writes `digest_bytes` (1..64) bytes of BLAKE2b over `data` to `out`.
void blake2b(std::string_view data, size_t digest_bytes, uint8_t* out);

}  // namespace ascprof

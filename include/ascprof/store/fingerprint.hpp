#pragma once
/// Input fingerprints: enough to tell whether a checkpoint was made from the same input file
/// without re-reading the whole input (path, size, mtime and a hash of the first 64 KiB).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "ascprof/common/status.hpp"

namespace ascprof::store {

/// Bytes from the start of a file that go into Fingerprint::prefix_hash. 64 KiB: a rewritten
/// capture differs in its first rows (ids, timestamps) as well as in mtime; at 1 MiB the prefix was
/// all of a small rank's input, read a second time (~5 % of a rank job on a 1,024-rank root).
inline constexpr uint64_t kFingerprintPrefixBytes = 64u << 10;

/// Identity of one input file at the time it was read.
struct Fingerprint {
  std::string path;          ///< as given to fingerprint_file (not made absolute)
  uint64_t size = 0;         ///< bytes
  int64_t mtime_ns = 0;      ///< modification time, ns since the Unix epoch
  uint64_t prefix_hash = 0;  ///< fnv1a64_words of the first min(size, kFingerprintPrefixBytes) bytes

  /// True when size, mtime and prefix hash agree (the path may differ: captures get moved).
  bool same_content(const Fingerprint& o) const {
    return size == o.size && mtime_ns == o.mtime_ns && prefix_hash == o.prefix_hash;
  }
  bool operator==(const Fingerprint&) const = default;
};

/// 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3, one byte per step).
/// `seed` continues a previous hash (pass the result of an earlier call).
uint64_t fnv1a64(std::string_view bytes, uint64_t seed = 0xcbf29ce484222325ull);

/// FNV-1a over the bytes as little-endian 64-bit words (then the last size % 8 bytes one at a time),
/// same basis and prime: the input fingerprints' hash. A word per multiply makes it ~8x faster than
/// fnv1a64 (the byte-wise hash took ~1 ms per MiB, ~3 % of a run over 1,024 small ranks, whose
/// every input was under the then 1 MiB prefix), and it is still a few lines of Python:
///   h = 0xcbf29ce484222325; n = len(b) // 8 * 8
///   for (w,) in struct.iter_unpack('<Q', b[:n]): h = ((h ^ w) * 0x100000001b3) % 2**64
///   for c in b[n:]: h = ((h ^ c) * 0x100000001b3) % 2**64
uint64_t fnv1a64_words(std::string_view bytes);

/// Stats `path` and hashes its first kFingerprintPrefixBytes (fnv1a64_words). kIo error naming the
/// file if it is missing, not a regular file or unreadable.
Result<Fingerprint> fingerprint_file(const std::filesystem::path& path);

}  // namespace ascprof::store

#include "ascprof/store/fingerprint.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

namespace ascprof::store {

uint64_t fnv1a64(std::string_view bytes, uint64_t seed) {
  uint64_t h = seed;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t fnv1a64_words(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  const size_t whole = bytes.size() / 8 * 8;
  for (size_t i = 0; i < whole; i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, bytes.data() + i, 8);
    if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap64(w);
    h ^= w;
    h *= 0x100000001b3ull;
  }
  return fnv1a64(bytes.substr(whole), h);
}

Result<Fingerprint> fingerprint_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return file_error(ErrorCode::kIo, path.string(), "fingerprint", std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (fstat(fd, &st) != 0) return file_error(ErrorCode::kIo, path.string(), "fingerprint", std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return file_error(ErrorCode::kIo, path.string(), "fingerprint", "not a regular file");

  Fingerprint fp;
  fp.path = path.string();
  fp.size = static_cast<uint64_t>(st.st_size);
  fp.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  const size_t want = static_cast<size_t>(std::min<uint64_t>(fp.size, kFingerprintPrefixBytes));
  auto buf = std::make_unique<char[]>(want > 0 ? want : 1);
  size_t got = 0;
  while (got < want) {
    const ssize_t r = ::pread(fd, buf.get() + got, want - got, static_cast<off_t>(got));
    if (r < 0) {
      if (errno == EINTR) continue;
      return file_error(ErrorCode::kIo, path.string(), "byte " + std::to_string(got), std::strerror(errno));
    }
    if (r == 0) break;  // file shrank since fstat: hash what is there
    got += static_cast<size_t>(r);
  }
  fp.prefix_hash = fnv1a64_words(std::string_view(buf.get(), got));
  return fp;
}

}  // namespace ascprof::store

#include "text_sink.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <string>

#include "ascprof/common/files.hpp"

namespace ascprof::synth {

namespace fs = std::filesystem;

TextSink::~TextSink() { abandon(); }

Status TextSink::open(const fs::path& path, size_t buffer_bytes) {
  abandon();
  path_ = path;
  tmp_ = temp_sibling(path);
  cap_ = buffer_bytes < (64u << 10) ? (64u << 10) : buffer_bytes;
  buf_.reset(new char[cap_]);  // not value-initialised: untouched pages of small files cost nothing
  len_ = 0;
  flushed_ = 0;
  error_ = Status();
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    error_ = file_error(ErrorCode::kIo, tmp_.string(), "", std::strerror(errno));
    return error_;
  }
  return {};
}

bool TextSink::write_all(const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      error_ = file_error(ErrorCode::kIo, tmp_.string(), "byte " + std::to_string(flushed_),
                          std::string("write failed: ") + std::strerror(errno));
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
    flushed_ += static_cast<uint64_t>(w);
  }
  return true;
}

bool TextSink::flush() {
  if (!error_.ok() || fd_ < 0) {
    len_ = 0;
    return false;
  }
  const size_t n = len_;
  len_ = 0;
  return write_all(buf_.get(), n);
}

bool TextSink::flush_for(size_t) { return flush(); }

void TextSink::write_direct(std::string_view s) {
  if (error_.ok() && fd_ >= 0) write_all(s.data(), s.size());
}

Status TextSink::close() {
  if (fd_ < 0) return error_;
  flush();
  if (::close(fd_) != 0 && error_.ok())
    error_ = file_error(ErrorCode::kIo, tmp_.string(), "", std::string("close failed: ") + std::strerror(errno));
  fd_ = -1;
  buf_.reset();
  cap_ = 0;
  std::error_code ec;
  if (error_.ok()) {
    fs::rename(tmp_, path_, ec);
    if (ec) error_ = file_error(ErrorCode::kIo, path_.string(), "", "rename failed: " + ec.message());
  }
  if (!error_.ok()) fs::remove(tmp_, ec);
  return error_;
}

void TextSink::abandon() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    std::error_code ec;
    fs::remove(tmp_, ec);
  }
  buf_.reset();
  cap_ = 0;
  len_ = 0;
}

void TextSink::u64(uint64_t v) {
  char* p = reserve(24);
  if (p == nullptr) return;
  len_ += static_cast<size_t>(std::to_chars(p, p + 24, v).ptr - p);
}

void TextSink::i64(int64_t v) {
  char* p = reserve(24);
  if (p == nullptr) return;
  len_ += static_cast<size_t>(std::to_chars(p, p + 24, v).ptr - p);
}

namespace {
// Writes "<int>.<3 digits>" of v/1000 at p; returns the end. Handles negatives.
char* fixed3(char* p, int64_t v) {
  uint64_t u;
  if (v < 0) {
    *p++ = '-';
    u = static_cast<uint64_t>(-(v + 1)) + 1;
  } else {
    u = static_cast<uint64_t>(v);
  }
  p = std::to_chars(p, p + 24, u / 1000).ptr;
  const auto f = static_cast<unsigned>(u % 1000);
  p[0] = '.';
  p[1] = static_cast<char>('0' + f / 100);
  p[2] = static_cast<char>('0' + f / 10 % 10);
  p[3] = static_cast<char>('0' + f % 10);
  return p + 4;
}
}  // namespace

void TextSink::us3(int64_t ns) {
  char* p = reserve(32);
  if (p == nullptr) return;
  len_ += static_cast<size_t>(fixed3(p, ns) - p);
}

void TextSink::milli3(int64_t milli) { us3(milli); }

void TextSink::us6(int64_t ns) {
  char* p = reserve(36);
  if (p == nullptr) return;
  char* e = fixed3(p, ns);
  e[0] = e[1] = e[2] = '0';
  len_ += static_cast<size_t>(e + 3 - p);
}

void TextSink::us_trim(int64_t ns) {
  char* p = reserve(32);
  if (p == nullptr) return;
  char* e = fixed3(p, ns);
  // keep at least one fractional digit, like Python's float repr
  while (e[-1] == '0' && e[-2] != '.') --e;
  len_ += static_cast<size_t>(e - p);
}

void TextSink::dbl(double v) {
  char* p = reserve(40);
  if (p == nullptr) return;
  if (!std::isfinite(v)) v = 0.0;
  char* e = std::to_chars(p, p + 40, v).ptr;
  bool plain_int = true;
  for (char* q = p; q < e; ++q)
    if (*q == '.' || *q == 'e' || *q == 'E') plain_int = false;
  if (plain_int) {
    e[0] = '.';
    e[1] = '0';
    e += 2;
  }
  len_ += static_cast<size_t>(e - p);
}

}  // namespace ascprof::synth

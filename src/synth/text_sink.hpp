#pragma once
/// TextSink: a large-buffer, append-only file writer with integer-exact number formatting for the
/// synthetic generator (no iostreams, no printf in the hot path).
///
/// The file is written under a temporary sibling name and renamed into place by close(), so an
/// interrupted run never leaves a half-written file under the final name. The first write error is
/// kept; later appends become no-ops and close() returns it.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string_view>

#include "ascprof/common/status.hpp"

namespace ascprof::synth {

class TextSink {
 public:
  TextSink() = default;
  ~TextSink();
  TextSink(const TextSink&) = delete;
  TextSink& operator=(const TextSink&) = delete;

  /// Creates `path`'s temporary sibling for writing with a `buffer_bytes` buffer (>= 64 KiB).
  Status open(const std::filesystem::path& path, size_t buffer_bytes);
  /// Flushes, closes and renames into place. Returns the first error seen.
  Status close();
  /// Removes the temporary file without renaming (after an error elsewhere).
  void abandon();

  /// Bytes appended so far (flushed or not).
  uint64_t bytes() const { return flushed_ + len_; }
  bool is_open() const { return fd_ >= 0; }

  void put(std::string_view s) {
    if (len_ + s.size() > cap_) {
      if (!flush_for(s.size())) return;
      if (s.size() > cap_) {
        write_direct(s);
        return;
      }
    }
    std::memcpy(buf_.get() + len_, s.data(), s.size());
    len_ += s.size();
  }
  void put(char c) {
    if (len_ + 1 > cap_ && !flush_for(1)) return;
    buf_[len_++] = c;
  }
  /// Unsigned / signed decimal.
  void u64(uint64_t v);
  void i64(int64_t v);
  /// `ns` as microseconds with exactly 3 decimals ("1764246877073569.640"); exact, no double.
  void us3(int64_t ns);
  /// `ns` as microseconds, trailing fractional zeros trimmed but at least one decimal ("12.5", "3.0").
  void us_trim(int64_t ns);
  /// `ns` as microseconds with exactly 6 decimals ("1881.080000").
  void us6(int64_t ns);
  /// `milli` / 1000 with exactly 3 decimals ("0.512").
  void milli3(int64_t milli);
  /// Shortest round-trip decimal of a double (Python repr-like; "0.0" for zero, integers keep ".0").
  void dbl(double v);

 private:
  bool flush_for(size_t need);
  bool flush();
  void write_direct(std::string_view s);
  bool write_all(const char* p, size_t n);
  char* reserve(size_t n) {  // pointer to n writable bytes, or nullptr after an error
    if (len_ + n > cap_ && !flush_for(n)) return nullptr;
    return buf_.get() + len_;
  }

  std::filesystem::path path_, tmp_;
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0, len_ = 0;
  uint64_t flushed_ = 0;
  int fd_ = -1;
  Status error_;
};

}  // namespace ascprof::synth

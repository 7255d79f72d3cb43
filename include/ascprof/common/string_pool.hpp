#pragma once
/// Interned strings: each distinct string is stored once and named by a dense uint32 id.
/// Id 0 is always the empty string. Views returned by view() stay valid for the pool's lifetime
/// (storage is chunked and never moves), so tables hold ids, not strings.
#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ascprof {

using StrId = uint32_t;

class StringPool {
 public:
  StringPool();
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;
  StringPool(StringPool&&) noexcept = default;
  StringPool& operator=(StringPool&&) noexcept = default;

  /// Returns the id of `s`, adding it if new.
  StrId intern(std::string_view s);
  /// Returns the id of `s` if present.
  bool find(std::string_view s, StrId* id) const;
  std::string_view view(StrId id) const { return views_[id]; }
  size_t size() const { return views_.size(); }
  /// Bytes of string payload held (for memory reporting).
  size_t payload_bytes() const { return payload_bytes_; }

 private:
  std::string_view store(std::string_view s);
  std::vector<std::unique_ptr<char[]>> chunks_;
  size_t chunk_used_ = 0;
  size_t chunk_cap_ = 0;
  size_t payload_bytes_ = 0;
  std::vector<std::string_view> views_;
  std::unordered_map<std::string_view, StrId> index_;
};

}  // namespace ascprof

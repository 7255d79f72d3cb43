#include "ascprof/common/string_pool.hpp"

#include <algorithm>
#include <cstring>

namespace ascprof {

namespace {
constexpr size_t kChunkSize = 1 << 16;
}

StringPool::StringPool() {
  views_.emplace_back();
  index_.emplace(std::string_view(), 0);
}

std::string_view StringPool::store(std::string_view s) {
  if (s.empty()) return {};
  if (chunk_used_ + s.size() > chunk_cap_) {
    const size_t cap = std::max(kChunkSize, s.size());
    chunks_.push_back(std::make_unique<char[]>(cap));
    chunk_cap_ = cap;
    chunk_used_ = 0;
  }
  char* dst = chunks_.back().get() + chunk_used_;
  std::memcpy(dst, s.data(), s.size());
  chunk_used_ += s.size();
  payload_bytes_ += s.size();
  return {dst, s.size()};
}

StrId StringPool::intern(std::string_view s) {
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  const auto id = static_cast<StrId>(views_.size());
  const std::string_view stored = store(s);
  views_.push_back(stored);
  index_.emplace(stored, id);
  return id;
}

bool StringPool::find(std::string_view s, StrId* id) const {
  auto it = index_.find(s);
  if (it == index_.end()) return false;
  *id = it->second;
  return true;
}

}  // namespace ascprof

// OUT's names (out_layout.hpp).
#include "ascprof/layout/out_layout.hpp"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace ascprof::layout {
namespace fs = std::filesystem;

namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

std::string normal_absolute(const fs::path& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  if (ec) a = p;
  std::string s = a.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string in_ranks(std::string_view rank_id, std::string_view suffix) {
  std::string out = "ranks/";
  out += rank_id;
  out += suffix;
  return out;
}

}  // namespace

std::string root_slug(const fs::path& root) {
  const std::string abs = normal_absolute(root);
  std::vector<std::string> parts;
  for (const auto& part : fs::path(abs)) {
    std::string s = part.string();
    if (s.empty() || s == "/") continue;
    parts.push_back(std::move(s));
  }
  std::string joined;
  const size_t first = parts.size() > 3 ? parts.size() - 3 : 0;
  for (size_t i = first; i < parts.size(); ++i) {
    if (!joined.empty()) joined += '_';
    joined += parts[i];
  }
  std::string slug;
  for (char c : joined) {
    c = lower(c);
    const bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
    if (keep) slug += c;
    else if (slug.empty() || slug.back() != '_') slug += '_';
  }
  auto trim_char = [](char c) { return c == '_' || c == '.' || c == '-'; };
  while (!slug.empty() && trim_char(slug.front())) slug.erase(slug.begin());
  while (!slug.empty() && trim_char(slug.back())) slug.pop_back();
  if (slug.size() > 80) {
    slug = slug.substr(slug.size() - 80);
    while (!slug.empty() && trim_char(slug.front())) slug.erase(slug.begin());
  }
  if (slug.empty()) slug = "root";
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(fnv1a64(abs) & 0xFFFFFFFFu));
  return slug + "-" + hex;
}

fs::path root_dir(const fs::path& out, const fs::path& root) { return out / root_slug(root); }

std::string rank_h5(std::string_view rank_id) { return in_ranks(rank_id, ".h5"); }
std::vector<std::string> rank_legacy_files(std::string_view rank_id) {
  return {in_ranks(rank_id, ".outcome"), in_ranks(rank_id, ".summary")};
}
std::string rank_parts(std::string_view rank_id) { return in_ranks(rank_id, ".parts"); }

}  // namespace ascprof::layout

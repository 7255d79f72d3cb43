#include "support/test_support.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

namespace ascprof::testing {
namespace fs = std::filesystem;

fs::path real_fixtures_dir() {
  fs::path p;
  if (const char* env = std::getenv("ASCPROF_REAL_FIXTURES"); env != nullptr && *env != '\0') p = env;
  else p = ASCPROF_DEFAULT_FIXTURES;
  std::error_code ec;
  if (!fs::is_directory(p, ec)) return {};
  return p;
}

fs::path knowledge_dir() {
  if (const char* env = std::getenv("ASCPROF_KNOWLEDGE_DIR"); env != nullptr && *env != '\0') return env;
  return fs::path(ASCPROF_SOURCE_DIR) / "knowledge";
}

ScratchDir::ScratchDir(std::string_view tag) {
  static std::atomic<int> counter{0};
  path_ = fs::temp_directory_path() /
          (std::string(tag) + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::remove_all(path_);
  fs::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path_, ec);
}

void write_text(const fs::path& path, std::string_view content) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  ASSERT_TRUE(out.good()) << "cannot write " << path;
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

std::vector<std::map<std::string, std::string>> plain_csv_rows(const fs::path& path) {
  std::vector<std::map<std::string, std::string>> rows;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::string line;
  std::vector<std::string> head;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream l(line);
    for (std::string c; std::getline(l, c, ',');) cells.push_back(c);
    if (!line.empty() && line.back() == ',') cells.emplace_back();  // a last empty cell
    if (head.empty()) {
      head = cells;
      continue;
    }
    auto& row = rows.emplace_back();
    for (size_t i = 0; i < head.size() && i < cells.size(); ++i) row[head[i]] = cells[i];
  }
  return rows;
}

std::vector<std::map<std::string, std::string>> csv_rows(const fs::path& path) {
  std::vector<std::map<std::string, std::string>> rows;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::vector<std::string>> records(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        records.back().back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        records.back().back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      records.back().emplace_back();
    } else if (c == '\n') {
      records.emplace_back(1);
    } else if (c != '\r') {
      records.back().back() += c;
    }
  }
  if (records.back().size() == 1 && records.back()[0].empty()) records.pop_back();  // the final line break
  for (size_t r = 1; r < records.size(); ++r) {
    auto& row = rows.emplace_back();
    for (size_t i = 0; i < records[0].size() && i < records[r].size(); ++i) row[records[0][i]] = records[r][i];
  }
  return rows;
}

}  // namespace ascprof::testing

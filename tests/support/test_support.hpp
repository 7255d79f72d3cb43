#pragma once
/// Shared helpers for tests: where the real fixtures are, scratch folders, small file writers.
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/common/status.hpp"

namespace ascprof::testing {

/// The read-only real captures (../shared/fixtures/real beside the repo, or $ASCPROF_REAL_FIXTURES).
/// Empty path when absent: tests then GTEST_SKIP() with a message naming the folder.
std::filesystem::path real_fixtures_dir();

/// The project's knowledge/ folder ($ASCPROF_KNOWLEDGE_DIR or <source>/knowledge).
std::filesystem::path knowledge_dir();

/// A fresh empty folder under the system temp dir, removed when the object dies.
class ScratchDir {
 public:
  explicit ScratchDir(std::string_view tag = "ascprof");
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view rel) const { return path_ / rel; }

 private:
  std::filesystem::path path_;
};

/// Writes `content` to `path`, creating parent folders (test set-up only; aborts the test on failure).
void write_text(const std::filesystem::path& path, std::string_view content);

/// A CSV table whose cells hold no comma or quote (ids, names, numbers) as rows of column -> cell; an
/// unreadable file is a test failure and no rows.
std::vector<std::map<std::string, std::string>> plain_csv_rows(const std::filesystem::path& path);

/// Any CSV table (RFC 4180: quoted cells, doubled quotes, line breaks inside quotes) as rows of
/// column -> cell; an unreadable file is a test failure and no rows.
std::vector<std::map<std::string, std::string>> csv_rows(const std::filesystem::path& path);

/// The text of a Status or of a Result's status, for assertion messages.
inline std::string status_text(const Status& s) { return s.to_string(); }
template <class T>
std::string status_text(const Result<T>& r) {
  return r.status().to_string();
}

}  // namespace ascprof::testing

/// Skips the current test when the real fixtures are absent.
#define ASCPROF_REQUIRE_REAL_FIXTURES()                                                              \
  do {                                                                                               \
    if (::ascprof::testing::real_fixtures_dir().empty())                                             \
      GTEST_SKIP() << "real fixtures not found (../shared/fixtures/real or $ASCPROF_REAL_FIXTURES)"; \
  } while (0)

/// Asserts that a Status- or Result-returning expression succeeded, printing the error if not.
#define ASCPROF_ASSERT_OK(expr)                                                     \
  do {                                                                              \
    const auto& ascprof_r_ = (expr);                                                \
    ASSERT_TRUE(ascprof_r_.ok()) << ::ascprof::testing::status_text(ascprof_r_);     \
  } while (0)

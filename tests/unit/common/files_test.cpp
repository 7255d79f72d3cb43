// Safe writes: atomic files never go through a planted symlink, and output folders holding a link
// that leads outside them are found.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "ascprof/common/files.hpp"
#include "support/test_support.hpp"

namespace ascprof {
namespace {

namespace fs = std::filesystem;

TEST(Files, EscapingSymlinkInsideAnOutputFolderIsFound) {
  ascprof::testing::ScratchDir dir("files-links");
  const fs::path out = dir.path() / "out";
  fs::create_directories(out / "root" / "ranks");
  fs::create_directories(dir.path() / "elsewhere");
  EXPECT_EQ(find_escaping_symlink(out), "");
  fs::create_directory_symlink(out / "root", out / "alias");  // stays inside: fine
  EXPECT_EQ(find_escaping_symlink(out), "");
  fs::create_directory_symlink(dir.path() / "elsewhere", out / "root" / "ranks" / "escape");
  const std::string found = find_escaping_symlink(out);
  EXPECT_NE(found.find("ranks/escape -> "), std::string::npos) << found;
  EXPECT_NE(found.find("elsewhere"), std::string::npos) << found;
  fs::remove(out / "root" / "ranks" / "escape");
  fs::create_symlink("/etc/passwd", out / "report.md");  // a file link too
  EXPECT_NE(find_escaping_symlink(out).find("report.md -> /etc/passwd"), std::string::npos);
  EXPECT_EQ(find_escaping_symlink(dir.path() / "absent"), "");
}

TEST(Files, AtomicWritesNeverFollowAPlantedLink) {
  ascprof::testing::ScratchDir dir("files-atomic");
  const fs::path victim = dir.path() / "victim.txt";
  ascprof::testing::write_text(victim, "keep");
  const fs::path target = dir.path() / "out.csv";
  fs::create_symlink(victim, temp_sibling(target));  // planted at the temporary name
  ASSERT_TRUE(write_file_atomic(target, "new").ok());
  EXPECT_EQ(*read_file(victim), "keep");
  EXPECT_EQ(*read_file(target), "new");
  EXPECT_FALSE(fs::is_symlink(target));
  // the final name being a link: rename replaces the link, the file it pointed to is untouched
  fs::remove(target);
  fs::create_symlink(victim, target);
  AtomicFileWriter w;
  fs::create_symlink(victim, temp_sibling(target));
  ASSERT_TRUE(w.open(target).ok());
  w.write("streamed");
  ASSERT_TRUE(w.commit().ok());
  EXPECT_EQ(*read_file(victim), "keep");
  EXPECT_FALSE(fs::is_symlink(target));
  EXPECT_EQ(*read_file(target), "streamed");
}

TEST(Files, FamilyOfTablesIsWrittenInOrderAndRemovedWhereItExists) {
  ascprof::testing::ScratchDir dir("files-family");
  const std::vector<std::string> names = {"a.csv", "b.csv", "c.csv"};
  auto written = write_files_atomic(dir.path(), names, {"1\n", "2\n", "3\n"});
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  ASSERT_EQ(written->size(), 3u);
  EXPECT_EQ((*written)[1], dir.path() / "b.csv");
  EXPECT_EQ(*read_file(dir.path() / "c.csv"), "3\n");
  std::filesystem::remove(dir.path() / "b.csv");  // one already gone: not an error
  ASSERT_TRUE(remove_files(dir.path(), names).ok());
  for (const auto& n : names) EXPECT_FALSE(std::filesystem::exists(dir.path() / n)) << n;
  // a name that cannot be removed (a non-empty folder) is an error naming it
  std::filesystem::create_directories(dir.path() / "a.csv" / "x");
  const Status st = remove_files(dir.path(), names);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.to_string().find("a.csv"), std::string::npos) << st.to_string();
  // names and texts that disagree in number: an error, nothing written
  EXPECT_FALSE(write_files_atomic(dir.path(), {"d.csv", "e.csv"}, {"4\n"}).ok());
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "d.csv"));
}

}  // namespace
}  // namespace ascprof

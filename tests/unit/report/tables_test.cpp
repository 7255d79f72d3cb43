// Reading the root's own tables back: header, cells by column name, numbers, caps, empty files.
#include <gtest/gtest.h>

#include <cmath>

#include "ascprof/report/tables.hpp"
#include "support/test_support.hpp"

namespace ascprof::report {
namespace {

TEST(ReportTables, CellsByNameNumbersAndCaps) {
  ascprof::testing::ScratchDir dir("report-tables");
  ascprof::testing::write_text(dir.path() / "t.csv", "a,b,name\n1,2.5,\"x,y\"\n3,,z\n5,N/A,w\n");
  auto t = read_table(dir.path() / "t.csv", 2);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->header, (std::vector<std::string>{"a", "b", "name"}));
  EXPECT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->total_rows, 3u);
  EXPECT_EQ(t->cell(0, "name"), "x,y");
  EXPECT_DOUBLE_EQ(t->number(0, "b"), 2.5);
  EXPECT_TRUE(std::isnan(t->number(1, "b")));
  EXPECT_EQ(t->cell(5, "a"), "");
  EXPECT_EQ(t->column("missing"), -1);  // probing a column that may be absent
}

TEST(ReportTables, AnUnknownColumnFailsLoudlyNamingFileAndColumn) {
  ascprof::testing::ScratchDir dir("report-tables-unknown");
  ascprof::testing::write_text(dir.path() / "t.csv", "wall_ms,rank_id\n1.5,rank0\n");
  auto t = read_table(dir.path() / "t.csv");
  ASSERT_TRUE(t.ok());
  try {
    (void)t->number(0, "wal_ms");  // misspelt
    ADD_FAILURE() << "no error for a misspelt column";
  } catch (const UnknownColumn& e) {
    EXPECT_NE(std::string(e.what()).find((dir.path() / "t.csv").string() + ": no column 'wal_ms'"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)t->cell(0, "rank"), UnknownColumn);
}

TEST(ReportTables, EmptyAndAbsentFilesAreEmptyTables) {
  ascprof::testing::ScratchDir dir("report-tables-empty");
  ascprof::testing::write_text(dir.path() / "e.csv", "");
  for (const char* f : {"e.csv", "absent.csv"}) {
    auto t = read_table(dir.path() / f);
    ASSERT_TRUE(t.ok());
    EXPECT_TRUE(t->header.empty());
    EXPECT_TRUE(t->empty());
  }
}

}  // namespace
}  // namespace ascprof::report

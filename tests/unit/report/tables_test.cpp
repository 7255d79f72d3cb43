// Reading the root's own tables back: header, cells by column name, numbers, caps, empty files.
#include <gtest/gtest.h>

#include <zlib.h>

#include <cmath>

#include "ascprof/report/tables.hpp"
#include "ascprof/store/table_index.hpp"
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

// A table the root kept as an index of the ranks' ranges (store/table_index.hpp) reads as the same
// rows in the same order as its copy, quoted cells spanning nothing across ranges, a deflated range
// (as the part packs store their sections) inflated; a range that no longer lies inside its file,
// or no longer inflates, is an error naming that file, not rows that silently stop.
TEST(ReportTables, AnIndexedTableReadsAsItsCopy) {
  ascprof::testing::ScratchDir dir("report-tables-indexed");
  const std::string header = "rank_id,name,v\n";
  const std::string r0 = "0,\"a,b\",1\n0,c,2\n", r1 = "1,\"d\"\"e\",3\n";
  // the ranks' rows inside larger files, at offsets, as in part packs
  ascprof::testing::write_text(dir.path() / "ranks/0.parts", "xxxx" + r0 + "yy");
  std::string z1(compressBound(static_cast<uLong>(r1.size())), '\0');
  uLongf z1_len = static_cast<uLongf>(z1.size());
  ASSERT_EQ(compress(reinterpret_cast<Bytef*>(z1.data()), &z1_len, reinterpret_cast<const Bytef*>(r1.data()), r1.size()), Z_OK);
  z1.resize(z1_len);
  ascprof::testing::write_text(dir.path() / "ranks/1.parts", "z" + z1);
  ascprof::testing::write_text(dir.path() / "copy.csv", header + r0 + r1);
  store::TableIndex idx;
  idx.table = "t.csv";
  idx.header = header;
  idx.rows = 3;
  idx.parts = {{"0", "ranks/0.parts", 4, r0.size(), 2, r0.size(), false}, {"1", "ranks/1.parts", 1, z1.size(), 1, r1.size(), true}};
  ASSERT_TRUE(store::write_table_index(dir.path() / "t.csv", idx).ok());
  EXPECT_TRUE(table_present(dir.path() / "t.csv"));
  EXPECT_FALSE(table_present(dir.path() / "other.csv"));
  auto rows = [](const std::filesystem::path& p) {
    std::vector<std::vector<std::string>> out;
    const Status st = for_each_row(p, [&](const std::vector<std::string_view>& f, bool is_header) {
      out.emplace_back(f.begin(), f.end());
      out.back().push_back(is_header ? "H" : "R");
      return true;
    });
    EXPECT_TRUE(st.ok()) << st.to_string();
    return out;
  };
  const auto copy = rows(dir.path() / "copy.csv");
  ASSERT_EQ(copy.size(), 4u);
  EXPECT_EQ(rows(dir.path() / "t.csv"), copy);
  auto t = read_table(dir.path() / "t.csv");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->cell(0, "name"), "a,b");
  EXPECT_EQ(t->cell(2, "name"), "d\"e");

  ascprof::testing::write_text(dir.path() / "ranks/1.parts", "z" + std::string(z1.size(), 'x'));  // same size, not zlib
  Status st = for_each_row(dir.path() / "t.csv", [](const std::vector<std::string_view>&, bool) { return true; });
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("ranks/1.parts"), std::string::npos) << st.to_string();
  EXPECT_NE(st.message().find("inflate"), std::string::npos) << st.to_string();
  ascprof::testing::write_text(dir.path() / "ranks/1.parts", "z");  // rewritten shorter since the index
  st = for_each_row(dir.path() / "t.csv", [](const std::vector<std::string_view>&, bool) { return true; });
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("ranks/1.parts"), std::string::npos) << st.to_string();
}

}  // namespace
}  // namespace ascprof::report

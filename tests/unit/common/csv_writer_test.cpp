#include "ascprof/common/csv_writer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace ascprof {
namespace {

TEST(CsvWriter, QuotesOnlyWhatNeedsQuoting) {
  CsvRow r;
  r.text("plain").text("a,b").text("say \"hi\"").text("two\nlines").number(int64_t{-3}).number(uint64_t{7});
  EXPECT_EQ(r.take_line(), "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",-3,7\n");
}

// A damaged kernel name must not make the whole CSV undecodable (issue 21): bytes that are not UTF-8
// become visible \xNN escapes; valid UTF-8 is written as it is.
TEST(CsvWriter, BytesThatAreNotUtf8AreEscapedValidTextIsKept) {
  CsvRow r;
  r.text("Mat\x80Mul").text("caf\xC3\xA9,\xE4\xB8\xAD").text(std::string("n\0ul", 4));
  EXPECT_EQ(r.take_line(), "Mat\\x80Mul,\"caf\xC3\xA9,\xE4\xB8\xAD\",n\\x00ul\n");
}

TEST(CsvWriter, FormulaLikeTextIsWrittenAsText) {
  CsvRow r;
  r.text("=HYPERLINK(\"x\")").text("+1").text("-cmd").text("@SUM(A1)").text("a=b");
  EXPECT_EQ(r.take_line(), "\"'=HYPERLINK(\"\"x\"\")\",'+1,'-cmd,'@SUM(A1),a=b\n");
  // numbers are never guarded
  r.number(-1.5);
  EXPECT_EQ(r.take_line(), "-1.5\n");
}

TEST(CsvWriter, NumbersAndEmptyCells) {
  CsvRow r;
  r.number(1.0).number(0.1234567).number(2.5, 3).number(std::numeric_limits<double>::quiet_NaN()).empty().boolean(true);
  EXPECT_EQ(r.take_line(), "1,0.123457,2.5,,,True\n");
  EXPECT_EQ(csv_header({"a", "b,c"}), "a,\"b,c\"\n");
  r.json("{\"k\":[1,2]}");
  EXPECT_EQ(r.take_line(), "\"{\"\"k\"\":[1,2]}\"\n");
}

// Doubles are written as printf("%.*f") would, then trimmed: the tables' bytes did not change when
// the writer moved to to_chars. Random magnitudes from 1e-9 to 1e15, both signs, ties included.
TEST(CsvWriter, DoublesMatchPrintfFixedThenTrimmed) {
  const auto reference = [](double v, int decimals) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    std::string s(buf);
    if (s.find('.') != std::string::npos) {
      while (s.back() == '0') s.pop_back();
      if (s.back() == '.') s.pop_back();
    }
    return s == "-0" ? std::string("0") : s;
  };
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-9, 15), mantissa(1, 10);
  std::vector<double> values = {0.0, -0.0, 0.5, 1.5, 2.5, 0.0005, 0.0015, 0.0000005, 1e300, -1e-300, 123456.7890125};
  for (int i = 0; i < 20000; ++i) {
    const double v = mantissa(rng) * std::pow(10.0, exponent(rng));
    values.push_back(i % 2 ? -v : v);
  }
  for (const double v : values)
    for (const int decimals : {0, 3, 6, 9}) {
      CsvRow row;
      row.number(v, decimals);
      ASSERT_EQ(row.take_line(), reference(v, decimals) + "\n") << v << " with " << decimals << " decimals";
    }
}

}  // namespace
}  // namespace ascprof


namespace ascprof {
namespace {

// A table rendered in the writer's order is written in the file's order: quoted cells, empty
// cells and the first and last cell move intact.
TEST(CsvLayout, WritesTheCellsInFileOrder) {
  const CsvLayout layout({"a", "b", "c", "d"}, {"c", "a", "d", "b"});
  EXPECT_EQ(layout.header(), "c,a,d,b\n");
  CsvRow r;
  r.text("x,y").empty().number(int64_t{3}).json("{\"k\":1}");
  EXPECT_EQ(layout.take_line(r), "3,\"x,y\",\"{\"\"k\"\":1}\",\n");
  // the row is reset and reusable
  r.number(int64_t{1}).number(int64_t{2}).number(int64_t{3}).number(int64_t{4});
  EXPECT_EQ(layout.take_line(r), "3,1,4,2\n");
}

// Lists that do not name the same columns, and rows of another width, would put values under the
// wrong names: they stop the program, naming the column.
TEST(CsvLayoutDeathTest, MismatchedColumnsOrRowWidthAbort) {
  EXPECT_DEATH(CsvLayout({"a", "b"}, {"a", "c"}), "no writer for column 'c'");
  EXPECT_DEATH(CsvLayout({"a", "b"}, {"a"}), "differ in length");
  EXPECT_DEATH(CsvLayout({"a", "b"}, {"a", "a"}), "repeats column 'a'");
  const CsvLayout layout({"a", "b"}, {"b", "a"});
  CsvRow r;
  r.number(int64_t{1});
  EXPECT_DEATH(layout.take_line(r), "a row of 1 cells for a table of 2 columns");
}

}  // namespace
}  // namespace ascprof

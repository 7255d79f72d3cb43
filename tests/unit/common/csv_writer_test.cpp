#include "ascprof/common/csv_writer.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace ascprof {
namespace {

TEST(CsvWriter, QuotesOnlyWhatNeedsQuoting) {
  CsvRow r;
  r.text("plain").text("a,b").text("say \"hi\"").text("two\nlines").number(int64_t{-3}).number(uint64_t{7});
  EXPECT_EQ(r.take_line(), "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",-3,7\n");
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
  EXPECT_EQ(r.take_line(), "1,0.123457,2.5,,,true\n");
  EXPECT_EQ(csv_header({"a", "b,c"}), "a,\"b,c\"\n");
  r.json("{\"k\":[1,2]}");
  EXPECT_EQ(r.take_line(), "\"{\"\"k\"\":[1,2]}\"\n");
}

}  // namespace
}  // namespace ascprof

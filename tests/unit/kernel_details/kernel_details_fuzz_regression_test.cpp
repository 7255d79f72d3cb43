// Inputs found by fuzz/csv_fuzzer (scripts/fuzz.sh), rebuilt here as text. They guard against the
// crash coming back; the undefined behaviour itself is only reported by a clang UBSan build
// (-DASCPROF_SANITIZE=ON with clang, or the fuzz build), GCC's UBSan does not check it.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "ascprof/importers/kernel_details.hpp"
#include "support/test_support.hpp"

namespace ascprof::importers {
namespace {

struct Loaded {
  StringPool pool;
  model::KernelTable t;
  Stats stats;
  Status st;
  std::string s(const std::vector<StrId>& col, size_t i) const { return std::string(pool.view(col[i])); }
};

// csv_fuzzer crash-b08a4460: a file with no metric columns at all made RowReader::read compute
// `metric_chunk_.data() + k` on an empty vector (null pointer + offset, UB). The same shape as the
// fuzz input: BOM, CRLF, a quoted start time with a trailing TAB, tripled-quote shapes, a doubled
// quote in an unquoted field, a blank line and an unterminated quote at the end of the file.
TEST(KernelDetailsFuzzRegression, NoMetricColumnsFuzzInput) {
  const std::string text =
      "\xEF\xBB\xBFName,Type,\"Start Time(us)\",Duration(us),Input Shapes\r\n"
      "\"a,b\",MatMul,\"1700000000000001.5\t\",3.25,\"\"\"1,2;3\"\"\"\r\n"
      "x\"\"y,\"q\"\"q\",2,,\r\n"
      "\r\n"
      "\"open";
  Loaded l;
  l.st = import_kernel_details(text, "fuzz.csv", l.pool, l.t, l.stats);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  EXPECT_TRUE(l.t.metrics.empty());
  ASSERT_GE(l.t.size(), 1u);
  EXPECT_EQ(l.s(l.t.name, 0), "a,b");
  EXPECT_EQ(l.s(l.t.type, 0), "MatMul");
  EXPECT_EQ(l.t.start_ns[0], 1700000000000001500);
  EXPECT_EQ(l.t.dur_ns[0], 3250);
  EXPECT_EQ(l.s(l.t.input_shapes, 0), "1,2;3");
  EXPECT_EQ(l.stats.count(Stat::csv_unterminated_quote), 1u);
}

// The smallest form: a header with the time columns only, several rows (more than one buffered row
// index k > 0 is what made the offset non-zero).
TEST(KernelDetailsFuzzRegression, NoMetricColumnsManyRows) {
  std::string text = "Name,Type,Start Time(us),Duration(us)\n";
  for (int i = 0; i < 300; ++i) text += "K" + std::to_string(i) + ",T," + std::to_string(10 + i) + ",1\n";
  Loaded l;
  l.st = import_kernel_details(text, "fuzz.csv", l.pool, l.t, l.stats);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  EXPECT_TRUE(l.t.metrics.empty());
  ASSERT_EQ(l.t.size(), 300u);
  EXPECT_EQ(l.s(l.t.name, 299), "K299");
  EXPECT_EQ(l.t.start_ns[299], 309000);
  EXPECT_EQ(l.t.dur_ns[299], 1000);
}

}  // namespace
}  // namespace ascprof::importers

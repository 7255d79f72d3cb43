#include "ascprof/common/numbers.hpp"

#include <gtest/gtest.h>

namespace ascprof {
namespace {

TEST(ParseUsToNs, ExactForSixteenDigitEpochTimes) {
  // 1.7e15 µs as double cannot hold the .212 exactly; the integer path must.
  EXPECT_EQ(parse_us_to_ns("1736408883704643.212\t"), 1736408883704643212LL);
  EXPECT_EQ(parse_us_to_ns("1699529622790614.8"), 1699529622790614800LL);
  EXPECT_EQ(parse_us_to_ns("1695115378713661"), 1695115378713661000LL);
  EXPECT_EQ(parse_us_to_ns(" 53.741 "), 53741);
}

TEST(ParseUsToNs, RoundsBeyondNanoseconds) {
  EXPECT_EQ(parse_us_to_ns("79089.52021875"), 79089520);
  EXPECT_EQ(parse_us_to_ns("0.0005"), 1);
  EXPECT_EQ(parse_us_to_ns("-3.5"), -3500);
}

TEST(ParseUsToNs, ExponentFormsFromHandEditedFiles) {
  EXPECT_EQ(parse_us_to_ns("1.69512E+15"), 1695120000000000000LL);
}

TEST(ParseUsToNs, RejectsNullAndGarbage) {
  EXPECT_FALSE(parse_us_to_ns("N/A"));
  EXPECT_FALSE(parse_us_to_ns(""));
  EXPECT_FALSE(parse_us_to_ns("12abc"));
  EXPECT_FALSE(parse_us_to_ns("."));
  EXPECT_FALSE(parse_us_to_ns("99999999999999999999"));
}

TEST(ParseNumbers, IntegersAndDoubles) {
  EXPECT_EQ(parse_int64("4294967295"), 4294967295LL);
  EXPECT_FALSE(parse_int64("N/A"));
  EXPECT_FALSE(parse_int64("1.5"));
  EXPECT_DOUBLE_EQ(*parse_double("0.186"), 0.186);
  EXPECT_FALSE(parse_double("abc"));
  EXPECT_TRUE(is_null_cell(" null "));
  EXPECT_FALSE(is_null_cell("0"));
}

}  // namespace
}  // namespace ascprof

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

// Integer ns back to µs text: exactly 3 decimals, no double in between (epoch µs need 19 digits).
TEST(UsText, ExactForEpochTimesAndTheInverseOfParsing) {
  EXPECT_EQ(ascprof::us_text(1736408883704643212), "1736408883704643.212");
  EXPECT_EQ(ascprof::us_text(0), "0.000");
  EXPECT_EQ(ascprof::us_text(-1500), "-1.500");
  EXPECT_EQ(ascprof::us_text(7), "0.007");
  for (int64_t ns : {int64_t{1736408883704643212}, int64_t{-42}, int64_t{999}, int64_t{1000}})
    EXPECT_EQ(ascprof::parse_us_to_ns(ascprof::us_text(ns)), ns);
  std::string s = "x=";
  ascprof::append_us(s, 12345);
  EXPECT_EQ(s, "x=12.345");
}

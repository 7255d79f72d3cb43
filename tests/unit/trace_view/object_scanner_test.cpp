// The SIMD object-end scanner against a byte-at-a-time reference on random JSON-ish text.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "../../../src/importers/trace_view/object_scanner.hpp"

namespace ascprof::importers::tv {
namespace {

TEST(ObjectScanner, SimpleObjects) {
  EXPECT_EQ(find_object_end("{}", 0), 1u);
  EXPECT_EQ(find_object_end(R"({"a": "}"})", 0), 9u);
  EXPECT_EQ(find_object_end(R"({"a": "\"}"})", 0), 11u);
  EXPECT_EQ(find_object_end(R"({"a": "\\"}, 1)", 0), 10u);
  EXPECT_EQ(find_object_end(R"({"a": {"b": {}}} , {)", 0), 15u);
  EXPECT_EQ(find_object_end(R"({"a": "unterminated)", 0), kNpos);
  EXPECT_EQ(find_object_end(R"({"a": {})", 0), kNpos);
}

TEST(ObjectScanner, LongObjectsCrossingBlocks) {
  std::string s = "{\"k\": \"" + std::string(1000, '\\') + "\", \"x\": \"" + std::string(63, '}') + "\"}";
  EXPECT_EQ(find_object_end(s, 0), s.size() - 1);
  std::string odd = "{\"k\": \"" + std::string(999, '\\') + "\"}\", \"x\": 1}";  // odd run escapes the quote
  EXPECT_EQ(find_object_end(odd, 0), odd.size() - 1);
}

TEST(ObjectScanner, MatchesScalarReferenceOnRandomText) {
  std::mt19937_64 rng(12345);
  const char alphabet[] = {'{', '}', '"', '\\', 'a', ' ', ',', ':', '[', ']'};
  for (int iter = 0; iter < 20000; ++iter) {
    const size_t len = 1 + rng() % 400;
    std::string s = "{";
    for (size_t i = 1; i < len; ++i) s += alphabet[rng() % sizeof alphabet];
    const size_t start = 0;
    ASSERT_EQ(find_object_end(s, start), find_object_end_scalar(s, start)) << s;
    ASSERT_EQ(find_object_end_portable(s, start), find_object_end_scalar(s, start)) << s;
    // Also from an offset inside a longer buffer.
    const std::string padded = std::string(rng() % 70, ' ') + s + std::string(rng() % 70, 'x');
    const size_t off = padded.find('{');
    ASSERT_EQ(find_object_end(padded, off), find_object_end_scalar(padded, off)) << padded;
    ASSERT_EQ(find_object_end_portable(padded, off), find_object_end_scalar(padded, off)) << padded;
  }
}

TEST(ObjectScanner, ResyncPoint) {
  const std::string s = R"({"ph": "X", "na]
[{"ph": "X"})";
  EXPECT_EQ(find_resync_point(s, 0, s.size()), s.find("[{") + 1);
  EXPECT_EQ(find_resync_point(R"({"a": {"b": 1}})", 0, 15), kNpos);  // '{' after ':' is not a fresh event
  EXPECT_EQ(find_resync_point(R"({"a"}{"b": 1})", 0, 13), 5u);
}

TEST(ObjectScanner, SkipValue) {
  const std::string s = R"([1, {"a": "]"}], "x")";
  EXPECT_EQ(skip_value(s, 0), s.find(", \"x\""));
  EXPECT_EQ(skip_value(R"("ab\"c" ,)", 0), 7u);
  EXPECT_EQ(skip_value("123 ,", 0), 3u);
  EXPECT_EQ(skip_value("[1, 2", 0), kNpos);
}

}  // namespace
}  // namespace ascprof::importers::tv

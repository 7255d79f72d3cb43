#include "ascprof/common/json_writer.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace ascprof {
namespace {

TEST(JsonWriter, EscapesHostileStrings) {
  JsonWriter w;
  w.begin_object();
  w.kv("name", std::string_view("a\"b\\c\n</script>\x01\xff", 17));
  w.kv("nan", std::numeric_limits<double>::quiet_NaN());
  w.key("list");
  w.begin_array();
  w.value(int64_t{1});
  w.value(true);
  w.end_array();
  w.end_object();
  EXPECT_EQ(w.str(), R"({"name":"a\"b\\c\n\u003c/script>\u0001\ufffd","nan":null,"list":[1,true]})");
}

}  // namespace
}  // namespace ascprof

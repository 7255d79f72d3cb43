#include "ascprof/common/json_writer.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace ascprof {
namespace {

// Overlong forms and UTF-16 surrogates are not UTF-8 either: strict JSON readers refuse them. The
// writer once took them as they were; now it shares the one validator (common/utf8.hpp).
TEST(JsonWriter, OverlongFormsAndSurrogatesBecomeReplacementCharacters) {
  JsonWriter w;
  w.begin_object();
  w.kv("overlong", "\xE0\x80\xAF");
  w.kv("surrogate", "\xED\xA0\x80");
  w.kv("ok", "caf\xC3\xA9 \xF0\x9F\x98\x80");
  w.end_object();
  EXPECT_EQ(w.str(), "{\"overlong\":\"\\ufffd\\ufffd\\ufffd\",\"surrogate\":\"\\ufffd\\ufffd\\ufffd\","
                     "\"ok\":\"caf\xC3\xA9 \xF0\x9F\x98\x80\"}");
}

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

// members() splices an object's fields into the open object: first, in the middle, empty, pretty.
TEST(JsonWriter, MembersSpliceAnObjectsFields) {
  JsonWriter m;
  m.begin_object();
  m.kv("a", int64_t{1});
  m.kv("b", "x");
  m.end_object();
  JsonWriter w;
  w.begin_object();
  w.members(m.str());
  w.kv("c", true);
  w.members("{}");
  w.members(m.str());
  w.key("metrics");
  w.raw(m.str());
  w.end_object();
  EXPECT_EQ(w.str(), R"({"a":1,"b":"x","c":true,"a":1,"b":"x","metrics":{"a":1,"b":"x"}})");
  JsonWriter pm(true);
  pm.begin_object();
  pm.kv("a", int64_t{1});
  pm.end_object();
  JsonWriter pw(true);
  pw.begin_object();
  pw.kv("z", int64_t{0});
  pw.members(pm.str());
  pw.end_object();
  EXPECT_NE(pw.str().find("\"z\": 0,"), std::string::npos) << pw.str();
  EXPECT_NE(pw.str().find("\"a\": 1"), std::string::npos) << pw.str();
}

}  // namespace
}  // namespace ascprof

// Error messages carry bytes of damaged inputs and folder names; every output that holds one (the
// result JSON, sweep_class_rollup.csv's error column, report.md, stderr) must stay valid UTF-8, so
// a Status escapes the invalid bytes visibly (issue 21).
#include <gtest/gtest.h>

#include <string>

#include "ascprof/common/status.hpp"

namespace ascprof {
namespace {

TEST(StatusUtf8, ValidTextIsUnchanged) {
  const std::string text = "kernel_details.csv:2: name caf\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80 ok";
  EXPECT_EQ(escape_invalid_utf8(text), text);
  EXPECT_EQ(Status(ErrorCode::kParse, text).message(), text);
}

TEST(StatusUtf8, InvalidBytesBecomeVisibleEscapes) {
  EXPECT_EQ(escape_invalid_utf8("a\xFF" "b"), "a\\xFFb");
  EXPECT_EQ(escape_invalid_utf8("cut \xE4\xB8"), "cut \\xE4\\xB8");          // a sequence cut short
  EXPECT_EQ(escape_invalid_utf8("\xC0\xAF"), "\\xC0\\xAF");                   // overlong '/'
  EXPECT_EQ(escape_invalid_utf8("\xED\xA0\x80"), "\\xED\\xA0\\x80");          // a UTF-16 surrogate
  EXPECT_EQ(escape_invalid_utf8(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(escape_invalid_utf8("\xF4\x90\x80\x80"), "\\xF4\\x90\\x80\\x80");  // above U+10FFFF
}

TEST(StatusUtf8, FileErrorsEscapeTheFileAndTheReason) {
  const Status st = file_error(ErrorCode::kSchema, "/caps/rank\xFE_ascend_pt/kernel_details.csv", "line 1",
                               "no 'Name' column in header 'Na\x80me,Type'");
  EXPECT_EQ(st.message(), "/caps/rank\\xFE_ascend_pt/kernel_details.csv:line 1: no 'Name' column in header 'Na\\x80me,Type'");
}

}  // namespace
}  // namespace ascprof

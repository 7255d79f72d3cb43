// summarize.rules: the AI-core token list of the AICPU exposure check (§2.5.7) is read from the file,
// upper-cased, and a missing or malformed list fails the load naming file and line.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::knowledge {
namespace {

// The shipped summarize.rules with its token line replaced by `line` ("" drops it).
std::string rules_with(const std::string& line) {
  auto text = read_file(ascprof::testing::knowledge_dir() / "summarize.rules");
  EXPECT_TRUE(text.ok()) << text.status().to_string();
  std::string s = text.ok() ? *text : std::string();
  const size_t at = s.find("masking_core_tokens =");
  EXPECT_NE(at, std::string::npos);
  if (at == std::string::npos) return s;
  s.replace(at, s.find('\n', at) - at, line);
  return s;
}

int line_of(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

Status load_text(const std::string& text, SummarizeRules* out) {
  auto file = parse_rule_text(text, "custom/summarize.rules");
  if (!file.ok()) return file.status();
  return out->load(*file);
}

TEST(SummarizeRules, ShippedTokenListIsTheReferences) {
  auto kb = Knowledge::load(ascprof::testing::knowledge_dir());
  ASCPROF_ASSERT_OK(kb);
  EXPECT_EQ(kb->summarize.aicpu_masking_core_tokens,
            (std::vector<std::string>{"AI_CORE", "AICORE", "AI_VECTOR", "AIVECTOR", "MIX_AIC", "MIXAIC"}));
}

TEST(SummarizeRules, CustomTokenListLoadsUpperCased) {
  SummarizeRules r;
  ASCPROF_ASSERT_OK(load_text(rules_with("masking_core_tokens = ai_core Custom_Accel2"), &r));
  EXPECT_EQ(r.aicpu_masking_core_tokens, (std::vector<std::string>{"AI_CORE", "CUSTOM_ACCEL2"}));
  EXPECT_DOUBLE_EQ(r.aicpu_masked_undesirable_ratio, 0.90);  // the numbers around it still load
}

TEST(SummarizeRules, MissingTokenListNamesFileAndKey) {
  SummarizeRules r;
  const Status st = load_text(rules_with(""), &r);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kKnowledge);
  EXPECT_NE(st.message().find("custom/summarize.rules:line 1: missing key 'masking_core_tokens' in [aicpu]"),
            std::string::npos)
      << st.message();
}

TEST(SummarizeRules, EmptyOrInvalidTokenListNamesFileAndLine) {
  {
    SummarizeRules r;
    const std::string text = rules_with("masking_core_tokens =");
    const Status st = load_text(text, &r);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), ErrorCode::kKnowledge);
    const std::string where = "custom/summarize.rules:line " + std::to_string(line_of(text, "masking_core_tokens")) + ": ";
    EXPECT_NE(st.message().find(where + "'masking_core_tokens' needs one or more tokens"), std::string::npos)
        << st.message();
  }
  {
    SummarizeRules r;
    const std::string text = rules_with("masking_core_tokens = AI_CORE AI-VECTOR");
    const Status st = load_text(text, &r);
    ASSERT_FALSE(st.ok());
    const std::string where = "custom/summarize.rules:line " + std::to_string(line_of(text, "masking_core_tokens")) + ": ";
    EXPECT_NE(st.message().find(where + "'masking_core_tokens' needs tokens of letters, digits and '_', got 'AI-VECTOR'"),
              std::string::npos)
        << st.message();
  }
}

}  // namespace
}  // namespace ascprof::knowledge

// Inputs found by fuzz/knowledge_fuzzer (scripts/fuzz.sh) and their siblings, rebuilt here as text:
// rule files with out-of-range whole numbers must fail the load naming file and line, never invoke
// undefined behaviour (a double beyond size_t cast to size_t) or throw (std::stoul) out of a loader.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::knowledge {
namespace {

// The shipped FILE with the line starting `key =` replaced by `key = value`; *line gets its number.
std::string shipped_with(const std::string& file, const std::string& key, const std::string& value, int* line) {
  auto text = read_file(ascprof::testing::knowledge_dir() / file);
  EXPECT_TRUE(text.ok()) << text.status().to_string();
  std::string s = text.ok() ? *text : std::string();
  const size_t at = s.find("\n" + key + " =");
  EXPECT_NE(at, std::string::npos) << key;
  if (at == std::string::npos) return s;
  s.replace(at + 1, s.find('\n', at + 1) - at - 1, key + " = " + value);
  *line = 2 + static_cast<int>(std::count(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
  return s;
}

template <typename Rules, typename... Extra>
Status load_text(const std::string& text, const std::string& name, Rules* out, const Extra&... extra) {
  auto file = parse_rule_text(text, name);
  if (!file.ok()) return file.status();
  return out->load(*file, extra...);
}

// knowledge_fuzzer crash-1063cf06: `false_hotspot_top_rank = 1000…000` (55 digits) in summarize.rules
// cast 1e54 to size_t (UBSan: "outside the range of representable values").
TEST(KnowledgeFuzzRegression, SummarizeHugeCountIsAnError) {
  int line = 0;
  const std::string text =
      shipped_with("summarize.rules", "false_hotspot_top_rank", "1" + std::string(54, '0'), &line);
  SummarizeRules r;
  const Status st = load_text(text, "custom/summarize.rules", &r);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kKnowledge);
  EXPECT_NE(st.message().find("custom/summarize.rules:line " + std::to_string(line) + ":"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("'false_hotspot_top_rank' needs a whole number up to 1000000000"), std::string::npos)
      << st.message();
}

TEST(KnowledgeFuzzRegression, SummarizeLargestCountStillLoads) {
  int line = 0;
  SummarizeRules r;
  ASCPROF_ASSERT_OK(load_text(shipped_with("summarize.rules", "top_bubbles", "1000000000", &line),
                              "custom/summarize.rules", &r));
  EXPECT_EQ(r.top_bubbles, 1000000000u);
}

// Same cast in operator_alignment.rules' counts.
TEST(KnowledgeFuzzRegression, OperatorAlignmentHugeCountIsAnError) {
  auto kb = Knowledge::load(ascprof::testing::knowledge_dir());
  ASCPROF_ASSERT_OK(kb);
  int line = 0;
  const std::string text = shipped_with("operator_alignment.rules", "max_rows_per_rank", "1e300", &line);
  OperatorAlignmentRules r;
  const Status st = load_text(text, "custom/operator_alignment.rules", &r, kb->vocab);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("custom/operator_alignment.rules:line " + std::to_string(line) + ":"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("'max_rows_per_rank' needs a whole number up to 1000000000"), std::string::npos)
      << st.message();
}

// name_key.rules: std::stoul threw std::invalid_argument on "" and std::out_of_range on 20+ digits.
TEST(KnowledgeFuzzRegression, NameKeyEmptyOrHugeNumberIsAnError) {
  auto kb = Knowledge::load(ascprof::testing::knowledge_dir());
  ASCPROF_ASSERT_OK(kb);
  for (const std::string value : {"\"\"", "99999999999999999999999", "1000000000"}) {
    int line = 0;
    const std::string text = shipped_with("name_key.rules", "max_length", value, &line);
    NameKeyRules r;
    Status st;
    ASSERT_NO_THROW(st = load_text(text, "custom/name_key.rules", &r, kb->vocab)) << value;
    ASSERT_FALSE(st.ok()) << value;
    EXPECT_NE(st.message().find("custom/name_key.rules:line " + std::to_string(line) +
                                ": 'max_length' needs one whole number"),
              std::string::npos)
        << st.message();
  }
  int line = 0;
  NameKeyRules r;
  ASCPROF_ASSERT_OK(load_text(shipped_with("name_key.rules", "max_length", "999999999", &line),
                              "custom/name_key.rules", &r, kb->vocab));
}

}  // namespace
}  // namespace ascprof::knowledge

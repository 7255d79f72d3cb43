// modules.rules: the shipped values (the module prefix keeps its trailing space), and a malformed file
// fails the load naming file and line.
#include <gtest/gtest.h>

#include <string>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::knowledge {
namespace {

std::string shipped() {
  auto text = read_file(ascprof::testing::knowledge_dir() / "modules.rules");
  EXPECT_TRUE(text.ok()) << text.status().to_string();
  return text.ok() ? *text : std::string();
}

Status load_text(const std::string& text, ModuleRules* out) {
  auto file = parse_rule_text(text, "custom/modules.rules");
  if (!file.ok()) return file.status();
  return out->load(*file);
}

TEST(ModuleRules, ShippedValues) {
  auto kb = Knowledge::load(ascprof::testing::knowledge_dir());
  ASSERT_TRUE(kb.ok()) << kb.status().to_string();
  const ModuleRules& m = kb->modules;
  EXPECT_EQ(m.prefix, "nn.Module: ");
  EXPECT_EQ(m.category, "python_function");
  EXPECT_EQ(m.queue_flow_category, "async_task_queue");
  EXPECT_EQ(m.dequeue_category, "dequeue");
  EXPECT_EQ(m.wait_task_types, (std::vector<std::string>{"Notify_Wait", "Notify Wait", "EVENT_WAIT", "EVENT_WAIT_SQE"}));
  EXPECT_DOUBLE_EQ(m.spread_ratio, 1.2);
  EXPECT_DOUBLE_EQ(m.min_device_us, 50);
}

TEST(ModuleRules, MalformedFilesFailNamingTheLine) {
  const std::string text = shipped();
  ModuleRules m;
  std::string bad = text;
  bad.replace(bad.find("spread_ratio = 1.2"), 18, "spread_ratio = 0.5");
  Status st = load_text(bad, &m);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("custom/modules.rules"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("'spread_ratio' needs a number >= 1"), std::string::npos) << st.message();

  bad = text;
  bad.replace(bad.find("dequeue_category = dequeue"), 26, "dequeue_cat = dequeue");
  st = load_text(bad, &m);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("unknown key 'dequeue_cat'"), std::string::npos) << st.message();

  bad = text;
  bad.replace(bad.find("prefix = \"nn.Module: \""), 22, "");
  st = load_text(bad, &m);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'ranges.prefix' is missing"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace ascprof::knowledge

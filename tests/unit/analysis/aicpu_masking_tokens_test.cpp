// The AI-core tokens that decide which kernels mask AICPU time (§2.5.7) come from
// knowledge/summarize.rules: editing the list in a copy of the knowledge folder changes the masking.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "ascprof/analysis/summarize.hpp"
#include "ascprof/common/files.hpp"
#include "support/test_support.hpp"

namespace ascprof::analysis {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kBase = 1'736'408'883'000'000'000;  // epoch ns

struct Ev {
  const char* name;
  const char* core;
  int64_t start_us, dur_us;
};

// AICPU rows of a rank with these kernels, summarized with `kb`.
std::vector<model::AicpuRow> aicpu_rows(const knowledge::Knowledge& kb, const std::vector<Ev>& events) {
  StringPool pool;
  model::KernelTable t;
  t.header.columns = {"Name", "Type", "Accelerator Core", "Start Time(us)", "Duration(us)", "Wait Time(us)"};
  for (const auto& e : events) {
    t.name.push_back(pool.intern(e.name));
    t.type.push_back(pool.intern(e.name));
    t.accelerator_core.push_back(pool.intern(e.core));
    t.input_shapes.push_back(0);
    t.output_shapes.push_back(0);
    t.start_ns.push_back(kBase + e.start_us * 1000);
    t.dur_ns.push_back(e.dur_us * 1000);
    t.wait_ns.push_back(0);
    t.stream_id.push_back(1);
  }
  Stats stats;
  const NormalizedKernels norm = normalize_kernels(t, pool, kb, stats);
  model::RankSummary out;
  summarize_operators(SummarizeInput{&t, &norm, &pool, &kb}, out);
  return out.aicpu;
}

// The shipped knowledge folder copied to `dir`, with summarize.rules' token line replaced.
Result<knowledge::Knowledge> knowledge_with_tokens(const fs::path& dir, const std::string& tokens) {
  for (const auto& e : fs::directory_iterator(ascprof::testing::knowledge_dir()))
    if (e.is_regular_file()) fs::copy_file(e.path(), dir / e.path().filename());
  auto text = read_file(dir / "summarize.rules");
  if (!text.ok()) return text.status();
  std::string s = *text;
  const size_t at = s.find("masking_core_tokens =");
  if (at == std::string::npos) return Status(ErrorCode::kInternal, "no masking_core_tokens line");
  s.replace(at, s.find('\n', at) - at, "masking_core_tokens = " + tokens);
  ascprof::testing::write_text(dir / "summarize.rules", s);
  return knowledge::Knowledge::load(dir);
}

TEST(AicpuMaskingTokens, CustomTokenListChangesWhatMasksAicpuTime) {
  const std::vector<Ev> events = {
      {"MatMul", "AI_CORE", 0, 100},         // [0, 100): AI-core work under the shipped tokens
      {"CpuA", "AI_CPU", 0, 100},            // fully under MatMul
      {"Accel", "CUSTOM_ACCEL", 200, 100},   // [200, 300): an accelerator the shipped list does not know
      {"CpuB", "AI_CPU", 250, 100},          // half under Accel
  };
  auto shipped = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  ASCPROF_ASSERT_OK(shipped);
  auto rows = aicpu_rows(*shipped, events);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "CpuA");
  EXPECT_EQ(rows[0].overlap_with_ai_core_ns, 100'000);
  EXPECT_EQ(rows[0].classification, "AICPU_MASKED_BUT_UNDESIRABLE");
  EXPECT_EQ(rows[1].name, "CpuB");
  EXPECT_EQ(rows[1].overlap_with_ai_core_ns, 0);
  EXPECT_EQ(rows[1].classification, "AICPU_EXPOSED_NOT_ALLOWED");

  ascprof::testing::ScratchDir dir("aicpu-tokens");
  auto custom = knowledge_with_tokens(dir.path(), "custom_accel");  // lower case: matched case-insensitively
  ASCPROF_ASSERT_OK(custom);
  rows = aicpu_rows(*custom, events);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "CpuA");
  EXPECT_EQ(rows[0].overlap_with_ai_core_ns, 0);  // AI_CORE is no longer in the list
  EXPECT_EQ(rows[0].classification, "AICPU_EXPOSED_NOT_ALLOWED");
  EXPECT_EQ(rows[1].name, "CpuB");
  EXPECT_EQ(rows[1].overlap_with_ai_core_ns, 50'000);
  EXPECT_DOUBLE_EQ(rows[1].masked_ratio, 0.5);
  EXPECT_EQ(rows[1].classification, "AICPU_PARTIALLY_EXPOSED");
}

}  // namespace
}  // namespace ascprof::analysis

// Size bounds on single input records (--max-field-mb, --max-event-mb): a CSV field above the bound
// fails the rank with a limit error naming the file and line; a trace_view.json event above it is
// skipped and counted with its byte offset, the rest of the rank analysed.
#include <gtest/gtest.h>

#include <filesystem>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;

TEST(InputLimits, OversizeFieldFailsTheRankAndOversizeEventIsSkipped) {
  ascprof::testing::ScratchDir dir("input-limits");
  synth::SynthOptions so;
  so.scenario = "moe_mla_decode";
  so.out_dir = dir / "c";
  so.ranks = 2;
  so.steps = 1;
  auto gen = synth::generate_capture(so);
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  const std::string big(2u << 20, 'x');  // 2 MiB
  // rank 0: the kernel name of data row 2 (line 3) becomes 2 MiB long
  const fs::path csv = gen->ranks[0].folder / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv";
  std::string text = *read_file(csv);
  const size_t line3 = text.find('\n', text.find('\n') + 1) + 1;
  const size_t name = text.find(",aclnn", line3);
  ASSERT_NE(name, std::string::npos);
  text.insert(name + 1, big);
  ascprof::testing::write_text(csv, text);
  // rank 1: one trace event gets a 2 MiB args string
  const fs::path tv = gen->ranks[1].folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json";
  std::string trace = *read_file(tv);
  const size_t args = trace.find("\"args\": {", trace.size() / 2);
  ASSERT_NE(args, std::string::npos);
  trace.insert(args + 9, "\"pad\": \"" + big + "\", ");
  ascprof::testing::write_text(tv, trace);

  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  ASSERT_TRUE(kb.ok());
  RootPlan plan = plan_root(so.out_dir.string(), (dir / "out").string(), 0);
  ASSERT_EQ(plan.tasks.size(), 2u);
  for (auto& t : plan.tasks) t.limits.max_field_bytes = t.limits.max_event_bytes = 1u << 20;
  const RankOutcome r0 = run_rank_stages(plan.tasks[0], *kb);
  EXPECT_FALSE(r0.ok);
  EXPECT_EQ(r0.error_class, "limit");
  EXPECT_NE(r0.error.find("kernel_details.csv:line 3"), std::string::npos) << r0.error;
  EXPECT_NE(r0.error.find("exceeds the limit of 1048576 bytes"), std::string::npos) << r0.error;
  const RankOutcome r1 = run_rank_stages(plan.tasks[1], *kb);
  EXPECT_TRUE(r1.ok) << r1.error;
  EXPECT_EQ(r1.trace_events, gen->ranks[1].trace_events);  // counted, not silently lost
  EXPECT_NE(r1.stats_json.find("tv_event_too_large"), std::string::npos);
  EXPECT_NE(r1.stats_json.find("exceeds the bound of 1048576 bytes"), std::string::npos) << r1.stats_json.substr(0, 400);
  // the default bounds (16 / 64 MiB) accept both
  plan = plan_root(so.out_dir.string(), (dir / "out2").string(), 0);
  EXPECT_TRUE(run_rank_stages(plan.tasks[0], *kb).ok);
}

}  // namespace
}  // namespace ascprof::pipeline

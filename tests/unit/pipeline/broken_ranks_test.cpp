// Broken files inside a capture root: each rank gets the outcome its damage deserves, with a
// message naming the file, and the healthy ranks are analysed as usual.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;

fs::path output_file(const fs::path& rank_folder, const char* name) {
  return rank_folder / "ASCEND_PROFILER_OUTPUT" / name;
}

void truncate_to_half(const fs::path& p) { fs::resize_file(p, fs::file_size(p) / 2); }

TEST(BrokenRanks, EachDamageGivesItsOutcomeAndOthersComplete) {
  ascprof::testing::ScratchDir dir("broken-ranks");
  synth::SynthOptions so;
  so.scenario = "moe_mla_decode";
  so.out_dir = dir / "capture";
  so.ranks = 6;
  so.steps = 1;
  auto gen = synth::generate_capture(so);
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  const auto& r = gen->ranks;
  // rank 1: trace_view.json cut in half (killed job) -> kept events, damage counted, rank ok
  truncate_to_half(output_file(r[1].folder, "trace_view.json"));
  // rank 2: empty kernel_details.csv -> rank failed, message names the file
  std::ofstream(output_file(r[2].folder, "kernel_details.csv"), std::ios::trunc).close();
  // rank 3: a non-numeric start time on line 3 -> that row dropped and counted
  {
    const fs::path csv = output_file(r[3].folder, "kernel_details.csv");
    auto text = read_file(csv);
    ASSERT_TRUE(text.ok());
    std::string s = *text;
    size_t line3 = s.find('\n', s.find('\n') + 1) + 1;
    size_t tab = s.find('\t', line3);  // the start time ends with CANN's TAB
    size_t comma = s.rfind(',', tab);
    s.replace(comma + 1, tab - comma - 1, "12:34");
    ascprof::testing::write_text(csv, s);
  }
  // rank 4: communication.json truncated -> a present file that cannot be read fails the rank
  truncate_to_half(output_file(r[4].folder, "communication.json"));
  // rank 5: concatenation defect in trace_view.json: "][" glued between two events
  {
    const fs::path tv = output_file(r[5].folder, "trace_view.json");
    auto text = read_file(tv);
    ASSERT_TRUE(text.ok());
    std::string s = *text;
    const size_t mid = s.find("}, {", s.size() / 2);
    ASSERT_NE(mid, std::string::npos);
    s.replace(mid, 4, "}]\n[{");
    ascprof::testing::write_text(tv, s);
  }

  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  ASSERT_TRUE(kb.ok());
  const RootPlan plan = plan_root(so.out_dir.string(), (dir / "out").string(), 0);
  ASSERT_TRUE(plan.ok) << plan.error;
  ASSERT_EQ(plan.tasks.size(), 6u);
  std::vector<RankOutcome> o;
  for (const auto& t : plan.tasks) o.push_back(run_rank_stages(t, *kb));

  EXPECT_TRUE(o[0].ok) << o[0].error;
  EXPECT_EQ(o[0].data_loss_records, 0u);

  EXPECT_TRUE(o[1].ok) << o[1].error;
  EXPECT_GT(o[1].trace_events, 0u);
  EXPECT_LT(o[1].trace_events, r[1].trace_events);
  EXPECT_NE(o[1].stats_json.find("tv_truncated"), std::string::npos) << o[1].stats_json;

  EXPECT_FALSE(o[2].ok);
  EXPECT_EQ(o[2].error_class, "schema");
  EXPECT_NE(o[2].error.find("kernel_details.csv"), std::string::npos) << o[2].error;
  EXPECT_NE(o[2].error.find("empty"), std::string::npos) << o[2].error;

  EXPECT_TRUE(o[3].ok) << o[3].error;
  EXPECT_EQ(o[3].kernel_rows, r[3].kernel_rows - 1);
  EXPECT_NE(o[3].stats_json.find("kd_bad_start_time"), std::string::npos);
  EXPECT_NE(o[3].stats_json.find("kernel_details.csv:line 3"), std::string::npos) << o[3].stats_json;

  EXPECT_FALSE(o[4].ok);
  EXPECT_EQ(o[4].error_class, "parse");
  EXPECT_NE(o[4].error.find("communication.json:byte"), std::string::npos) << o[4].error;

  EXPECT_TRUE(o[5].ok) << o[5].error;
  EXPECT_EQ(o[5].damaged_spans, 1u);
  EXPECT_EQ(o[5].trace_events, r[5].trace_events);  // every event survives the defect
  EXPECT_NE(o[5].stats_json.find("tv_damaged_span"), std::string::npos);

  const RootSummary s = write_root_outputs(plan, o, ascprof::testing::shipped_knowledge());
  EXPECT_EQ(s.status, "partial");
  EXPECT_EQ(s.ranks_ok, 4u);
  EXPECT_EQ(s.ranks_failed, 2u);
}

}  // namespace
}  // namespace ascprof::pipeline

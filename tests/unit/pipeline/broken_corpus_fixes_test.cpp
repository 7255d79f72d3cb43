// Rank outcomes for damage first found end to end by tests/corpus/broken_corpus_test.py: a
// kernel_details.csv with a header and no rows, and rank files that exist but cannot be read as files.
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

TEST(BrokenCorpusFixes, HeaderOnlyAndUnreadableFilesFailTheirRank) {
  ascprof::testing::ScratchDir dir("broken-corpus-fixes");
  synth::SynthOptions so;
  so.scenario = "moe_mla_decode";
  so.out_dir = dir / "capture";
  so.ranks = 5;
  so.steps = 1;
  auto gen = synth::generate_capture(so);
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  const auto& r = gen->ranks;
  // rank 1: the header line only -> nothing to analyse: failed, not "ok with 0 events"
  {
    const fs::path kd = output_file(r[1].folder, "kernel_details.csv");
    auto text = read_file(kd);
    ASSERT_TRUE(text.ok());
    ascprof::testing::write_text(kd, text->substr(0, text->find('\n') + 1));
  }
  // rank 2: trace_view.json is a folder; rank 3: communication.json a dangling symlink; rank 4:
  // kernel_details.csv a folder. Each was silently treated as absent (or as "no kernel_details.csv").
  const fs::path tv = output_file(r[2].folder, "trace_view.json");
  fs::remove(tv);
  fs::create_directory(tv);
  const fs::path comm = output_file(r[3].folder, "communication.json");
  fs::remove(comm);
  fs::create_symlink(r[3].folder / "gone.json", comm);
  const fs::path kd4 = output_file(r[4].folder, "kernel_details.csv");
  fs::remove(kd4);
  fs::create_directory(kd4);

  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  ASSERT_TRUE(kb.ok());
  const RootPlan plan = plan_root(so.out_dir.string(), (dir / "out").string(), 0);
  ASSERT_TRUE(plan.ok) << plan.error;
  ASSERT_EQ(plan.tasks.size(), 5u);
  std::vector<RankOutcome> o;
  for (const auto& t : plan.tasks) o.push_back(run_rank_stages(t, *kb));

  EXPECT_TRUE(o[0].ok) << o[0].error;
  EXPECT_EQ(o[0].kernel_rows, r[0].kernel_rows);

  EXPECT_FALSE(o[1].ok);
  EXPECT_EQ(o[1].error_class, "schema");
  EXPECT_EQ(o[1].error, output_file(r[1].folder, "kernel_details.csv").string() + ": no kernel rows below the header");

  EXPECT_FALSE(o[2].ok);
  EXPECT_EQ(o[2].error_class, "io");
  EXPECT_NE(o[2].error.find(tv.string()), std::string::npos) << o[2].error;
  EXPECT_NE(o[2].error.find("not a regular file"), std::string::npos) << o[2].error;

  EXPECT_FALSE(o[3].ok);
  EXPECT_EQ(o[3].error_class, "io");
  EXPECT_NE(o[3].error.find(comm.string()), std::string::npos) << o[3].error;
  EXPECT_NE(o[3].error.find("No such file or directory"), std::string::npos) << o[3].error;

  EXPECT_FALSE(o[4].ok);
  EXPECT_EQ(o[4].error_class, "io");
  EXPECT_NE(o[4].error.find(kd4.string()), std::string::npos) << o[4].error;

  const RootSummary s = write_root_outputs(plan, o, ascprof::testing::shipped_knowledge());
  EXPECT_EQ(s.status, "partial");
  EXPECT_EQ(s.ranks_ok, 1u);
  EXPECT_EQ(s.ranks_failed, 4u);
}

// Every row dropped (no usable start time anywhere): also nothing to analyse, and the message says why.
TEST(BrokenCorpusFixes, AllRowsDroppedFailsTheRank) {
  ascprof::testing::ScratchDir dir("broken-corpus-fixes2");
  synth::SynthOptions so;
  so.scenario = "moe_mla_decode";
  so.out_dir = dir / "capture";
  so.ranks = 2;
  so.steps = 1;
  auto gen = synth::generate_capture(so);
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  const fs::path kd = output_file(gen->ranks[1].folder, "kernel_details.csv");
  ascprof::testing::write_text(kd, "Name,Start Time(us),Duration(us)\nk0,x,1\nk1,,2\n");
  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  ASSERT_TRUE(kb.ok());
  const RootPlan plan = plan_root(so.out_dir.string(), (dir / "out").string(), 0);
  ASSERT_TRUE(plan.ok) << plan.error;
  ASSERT_EQ(plan.tasks.size(), 2u);
  const RankOutcome o = run_rank_stages(plan.tasks[1], *kb);
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.error_class, "schema");
  EXPECT_EQ(o.error, kd.string() + ": no usable kernel rows (every row was dropped, see data_quality)");
}

}  // namespace
}  // namespace ascprof::pipeline

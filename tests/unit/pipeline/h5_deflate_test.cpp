// --h5-deflate: the level the ranks' HDF5 files are deflated at changes their size and cost, never
// their content (h5diff compares every dataset and attribute).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;

TEST(H5Deflate, LevelZeroStoresTheSameContentUncompressed) {
  if (std::system("command -v h5diff >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "h5diff not found (apt install hdf5-tools): the two files are compared with it";
  ascprof::testing::ScratchDir dir("h5-deflate");
  synth::SynthOptions so;
  so.scenario = "moe_mla_decode";
  so.out_dir = dir / "c";
  so.ranks = 1;
  so.steps = 2;
  auto gen = synth::generate_capture(so);
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  ASSERT_TRUE(kb.ok());

  fs::path files[2];
  uint64_t rows[2] = {0, 0};
  for (int level : {0, 1}) {
    RootPlan plan = plan_root(so.out_dir.string(), (dir / ("out" + std::to_string(level))).string(), 0);
    ASSERT_EQ(plan.tasks.size(), 1u);
    plan.tasks[0].h5_deflate = level;
    const RankOutcome o = run_rank_stages(plan.tasks[0], *kb);
    ASSERT_TRUE(o.ok) << o.error;
    files[level] = fs::path(plan.out_dir) / o.h5_file;
    rows[level] = o.kernel_rows;
  }
  EXPECT_EQ(rows[0], rows[1]);
  const auto plain = fs::file_size(files[0]), deflated = fs::file_size(files[1]);
  // (a small rank's file is mostly metadata, so the difference is modest here; equal sizes would
  // mean the level was not applied)
  EXPECT_GT(plain, deflated + deflated / 10) << "level 0 should store the columns uncompressed: " << plain << " vs " << deflated;
  const std::string cmd = "h5diff -q '" + files[0].string() + "' '" + files[1].string() + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << "content differs: " << cmd;
}

}  // namespace
}  // namespace ascprof::pipeline

// A database whose RANK_DEVICE_MAP names another rank than its folder was given (issue 19's "rank id
// read but unused"): the rank keeps the folder's id and the disagreement is counted, naming both.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "ascprof/common/stats.hpp"
#include "ascprof/pipeline/rank_job.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;

TEST(DbRankMap, ADisagreeingRankDeviceMapIsCountedAndTheFolderRankKept) {
  if (std::system("command -v sqlite3 >/dev/null 2>&1") != 0) GTEST_SKIP() << "sqlite3 not found (apt install sqlite3)";
  ascprof::testing::ScratchDir dir("db-rank-map");
  synth::SynthOptions o;
  o.scenario = "moe_mla_decode";
  o.out_dir = dir / "c";
  o.ranks = 2;
  o.steps = 2;
  o.export_format = "db";
  auto gen = synth::generate_capture(o);
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  fs::path db0;
  for (const auto& e : fs::recursive_directory_iterator(dir / "c"))
    if (e.path().filename() == "ascend_pytorch_profiler_0.db") db0 = e.path();
  ASSERT_FALSE(db0.empty());
  const std::string edit = "sqlite3 '" + db0.string() + "' 'UPDATE RANK_DEVICE_MAP SET rankId = 7'";
  ASSERT_EQ(std::system(edit.c_str()), 0) << edit;

  RootPlan plan = plan_root((dir / "c").string(), (dir / "out").string(), 0);
  ASSERT_EQ(plan.tasks.size(), 2u);
  size_t checked = 0;
  for (const auto& t : plan.tasks) {
    const RankOutcome out = run_rank_stages(t, ascprof::testing::shipped_knowledge());
    ASSERT_TRUE(out.ok) << out.error;
    const uint64_t mismatches = out.stat_counts.at(static_cast<size_t>(Stat::db_rank_mismatch));
    if (out.rank_id == "rank0") {
      EXPECT_EQ(mismatches, 1u);
      EXPECT_NE(out.stats_json.find("rankId 7, the rank is rank0"), std::string::npos) << out.stats_json;
      ++checked;
    } else {
      EXPECT_EQ(mismatches, 0u) << out.rank_id;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2u);
}

}  // namespace
}  // namespace ascprof::pipeline

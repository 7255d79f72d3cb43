// The whole normalize pipeline on every real capture root in ../shared/fixtures/real: rank ids
// from profiler_info file names, exact kernel row counts, and per-era facts.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <ostream>
#include <string>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;

struct Expect {
  const char* root;
  std::vector<std::string> rank_dirs;
  uint64_t rows_per_rank;  // 0 = not checked
  bool has_trace;
  bool has_comm;
  const char* era;
  /// Device tasks linked to their host launch per rank, at least (flows bound at the task, or the
  /// database's node launches); the captures' device idles in gaps ended by late launches, so each
  /// rank gets a host_dispatch_bound finding. 0 = a capture without a trace.
  uint32_t min_launch_links = 0;
};

void PrintTo(const Expect& e, std::ostream* os) { *os << e.root; }

class RealFixturePipeline : public ::testing::TestWithParam<Expect> {};

TEST_P(RealFixturePipeline, NormalizesEveryRank) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  const Expect& e = GetParam();
  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  ASSERT_TRUE(kb.ok()) << kb.status().to_string();
  ascprof::testing::ScratchDir out("real-pipeline");
  const RootPlan plan = plan_root((ascprof::testing::real_fixtures_dir() / e.root).string(), out.path().string(), 0);
  ASSERT_TRUE(plan.ok) << plan.error;
  ASSERT_EQ(plan.tasks.size(), e.rank_dirs.size());
  std::vector<RankOutcome> outcomes;
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const auto& t = plan.tasks[i];
    EXPECT_EQ(t.rank_id, "rank" + std::to_string(i));
    EXPECT_EQ(t.rank_dir, e.rank_dirs[i]);
    EXPECT_EQ(t.rank_id_source, "profiler_info_name");
    const RankOutcome o = run_rank_stages(t, *kb);
    ASSERT_TRUE(o.ok) << o.error;
    if (e.rows_per_rank != 0) {
      EXPECT_EQ(o.kernel_rows, e.rows_per_rank);
    }
    EXPECT_EQ(o.header_era, e.era);
    EXPECT_EQ(o.trace_events > 0, e.has_trace);
    EXPECT_EQ(o.comm_stat_rows > 0, e.has_comm);
    EXPECT_EQ(o.data_loss_records, 0u) << o.stats_json;
    EXPECT_GE(o.host_bound.tasks_with_launch, e.min_launch_links);
    outcomes.push_back(o);
  }
  const auto summary = write_root_outputs(plan, outcomes, *kb);
  EXPECT_EQ(summary.status, "ok") << summary.error;
  // every stage's root files exist, and every finding passed the evidence gate
  for (const char* f : {"segment_manifest.json", "classify_manifest.json", "summary_manifest.json", "step_summary.csv",
                        "operator_summary.csv", "cross_rank_manifest.json", "diagnosis_findings.json"})
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(plan.out_dir) / f)) << f;
  auto findings = read_file(std::filesystem::path(plan.out_dir) / "diagnosis_findings.json");
  ASSERT_TRUE(findings.ok());
  EXPECT_NE(findings->find("\"refused_without_evidence\": 0"), std::string::npos) << *findings;
  // Before flows were bound at their task (issue 21), e2-cnn-level0 matched launches only where a
  // HostToDevice id happened to equal a connection_id, and got no host_dispatch_bound finding.
  if (e.min_launch_links > 0) {
    size_t host_bound = 0;
    for (size_t at = findings->find("\"finding_type\": \"host_dispatch_bound\""); at != std::string::npos;
         at = findings->find("\"finding_type\": \"host_dispatch_bound\"", at + 1))
      ++host_bound;
    EXPECT_EQ(host_bound, plan.tasks.size()) << *findings;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, RealFixturePipeline,
    ::testing::Values(Expect{"e2-cnn-level0", {"rank0_ascend_pt", "rank1_ascend_pt"}, 191, true, false, "level0-E2", 200},
                      Expect{"e2-cnn-level1", {"rank0_ascend_pt", "rank1_ascend_pt"}, 191, true, true, "E2", 200},
                      Expect{"e2-cnn-level2", {"rank0_ascend_pt", "rank1_ascend_pt"}, 191, true, true, "E2", 200},
                      Expect{"e1-2023-two-rank", {"test_rank_0", "test_rank_1"}, 0, false, true, "E1", 0},
                      // the same job captured as databases only (no CSV or JSON exports)
                      Expect{"db-cnn-level0", {"rank0_ascend_pt", "rank1_ascend_pt"}, 191, true, false, "DB-1.0.0", 400},
                      Expect{"db-cnn-level1", {"rank0_ascend_pt", "rank1_ascend_pt"}, 191, true, true, "DB-1.0.0", 400},
                      Expect{"db-cnn-level2", {"rank0_ascend_pt", "rank1_ascend_pt"}, 191, true, true, "DB-1.0.0", 400}),
    [](const ::testing::TestParamInfo<Expect>& param_info) {
      std::string name = param_info.param.root;
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

}  // namespace
}  // namespace ascprof::pipeline

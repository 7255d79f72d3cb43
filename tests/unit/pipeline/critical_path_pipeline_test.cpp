// The critical path (issue 21) through the pipeline, against the generator's ground truth: at every
// collective the chain passes, the rank it names as having released it is the one the simulation made
// arrive last (clean, with a slow rank, with a skewed clock); the planted slow rank holds the path and
// is the finding's suspect, a clean capture gets no finding; a one-rank root writes no table; the real
// e2-cnn-level2 capture gets a chain through its allreduces.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <map>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/critical_path_outputs.hpp"
#include "support/analyse_root.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;

const knowledge::Knowledge& kb() { return ascprof::testing::shipped_knowledge(); }

using Rows = std::vector<std::map<std::string, std::string>>;


struct Result {
  Rows chain, steps, ranks;
  std::map<std::string, std::string> last_rank;  // ground truth: "group|seq" -> rank that arrived last
  std::vector<std::pair<std::string, std::string>> findings;  // (type, first suspected rank)
  std::vector<std::string> limitations;                       // every finding's, joined
};

Result analyse(const fs::path& dir, std::vector<std::string> faults, int ranks = 4, int steps = 4) {
  synth::SynthOptions o;
  o.scenario = "training";
  o.out_dir = dir / "c";
  o.ranks = ranks;
  o.steps = steps;
  o.faults = std::move(faults);
  auto gen = synth::generate_capture(o);
  EXPECT_TRUE(gen.ok()) << gen.status().to_string();
  const auto a = ascprof::testing::analyse_root(dir / "c", dir / "out", kb());
  EXPECT_EQ(a.summary.status, "ok") << a.summary.error;
  Result r;
  const fs::path out = a.plan.out_dir;
  if (fs::exists(out / "critical_path.csv")) {
    r.chain = ascprof::testing::plain_csv_rows(out / "critical_path.csv");
    r.steps = ascprof::testing::plain_csv_rows(out / "critical_path_steps.csv");
    r.ranks = ascprof::testing::plain_csv_rows(out / "critical_path_ranks.csv");
  }
  simdjson::dom::parser parser;
  auto gt = read_file(dir / "c" / "ground_truth.json");
  EXPECT_TRUE(gt.ok());
  for (simdjson::dom::element c : parser.parse(*gt)["collectives"].get_array())
    r.last_rank[std::string(std::string_view(c["group"])) + "|" + std::to_string(uint64_t(c["seq"]))] =
        "rank" + std::string(std::string_view(c["last_rank"]));
  simdjson::dom::parser p2;
  auto found = read_file(out / "diagnosis_findings.json");
  EXPECT_TRUE(found.ok());
  for (simdjson::dom::element f : p2.parse(*found)["diagnosis_findings"].get_array()) {
    std::string first;
    for (simdjson::dom::element s : f["suspected_ranks"].get_array()) {
      first = std::string(std::string_view(s));
      break;
    }
    r.findings.emplace_back(std::string(std::string_view(f["finding_type"])), first);
    std::string lim;
    for (simdjson::dom::element l : f["limitations"].get_array()) lim += std::string(std::string_view(l)) + "\n";
    r.limitations.push_back(lim);
  }
  return r;
}

// Every transfer on the chains is released by the rank the simulation made arrive last.
size_t check_last_arrivals(const Result& r) {
  size_t checked = 0;
  for (const auto& e : r.chain) {
    if (e.at("kind") != "transfer") continue;
    const auto it = r.last_rank.find(e.at("group") + "|" + e.at("seq"));
    if (it == r.last_rank.end()) continue;
    EXPECT_EQ(e.at("rank_id"), it->second) << e.at("op_name") << " " << e.at("group") << " " << e.at("seq");
    ++checked;
  }
  return checked;
}

double number(const std::string& s) { return s.empty() ? 0.0 : std::stod(s); }

TEST(CriticalPathPipeline, ChainsFollowTheLastArrivalsOfTheGroundTruth) {
  for (const std::vector<std::string>& faults :
       {std::vector<std::string>{}, {"slow_rank:2"}, {"clock_offset:1"}, {"slow_collective:1"}}) {
    ascprof::testing::ScratchDir dir("critical-path");
    const Result r = analyse(dir.path(), faults);
    ASSERT_FALSE(r.steps.empty()) << (faults.empty() ? "clean" : faults[0]);
    EXPECT_GT(check_last_arrivals(r), 4 * r.steps.size()) << "too few collectives on the chains";
    for (const auto& s : r.steps) {
      const double wall = number(s.at("wall_us")), walked = number(s.at("walked_us"));
      EXPECT_LE(walked, wall + 0.01);
      // the walk reaches the path's rank's first kernel; ranks that started the step earlier (the slow
      // link's peers) make the wall longer than that
      EXPECT_GE(walked, 0.85 * wall) << s.at("alignment_id");
      EXPECT_NEAR(number(s.at("compute_us")) + number(s.at("transfer_us")) + number(s.at("host_gap_us")) +
                      number(s.at("waiting_us")),
                  walked, 0.01);
    }
    // every evidence id names a kernel row of its rank
    for (const auto& e : r.chain) {
      if (!e.at("evidence_id").empty()) {
        EXPECT_EQ(e.at("evidence_id").rfind("evt_", 0), 0u);
      }
    }
  }
}

TEST(CriticalPathPipeline, TheSlowRankHoldsThePathAndIsTheSuspect) {
  ascprof::testing::ScratchDir dir("critical-path-slow");
  const Result r = analyse(dir.path(), {"slow_rank:2"});
  ASSERT_EQ(r.ranks.size(), 4u);
  std::string top;
  double best = -1;
  for (const auto& x : r.ranks)
    if (number(x.at("share")) > best) {
      best = number(x.at("share"));
      top = x.at("rank_id");
    }
  EXPECT_EQ(top, "rank2");
  EXPECT_GE(best, 0.6);
  size_t found = 0;
  for (const auto& [type, rank] : r.findings)
    if (type == "critical_path_rank_bound") {
      EXPECT_EQ(rank, "rank2");
      ++found;
    }
  EXPECT_EQ(found, 1u);
}

// With enough collectives the slow-rank vote names the rank first: the critical path is then what that
// cause costs, added to the slow-rank finding instead of a second finding.
TEST(CriticalPathPipeline, PathIsFoldedIntoTheSlowRankFinding) {
  ascprof::testing::ScratchDir dir("critical-path-fold");
  const Result r = analyse(dir.path(), {"slow_rank:6"}, 8, 6);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].first, "slow_rank_suspected");
  EXPECT_EQ(r.findings[0].second, "rank6");
  EXPECT_NE(r.limitations[0].find("critical paths run through it: rank6 holds"), std::string::npos) << r.limitations[0];
}

TEST(CriticalPathPipeline, CleanCaptureHasNoCriticalPathFinding) {
  ascprof::testing::ScratchDir dir("critical-path-clean");
  const Result r = analyse(dir.path(), {});
  for (const auto& [type, rank] : r.findings) EXPECT_NE(type, "critical_path_rank_bound") << rank;
  double sum = 0;
  for (const auto& x : r.ranks) sum += number(x.at("share"));
  EXPECT_NEAR(sum, 1.0, 1e-4);
}

TEST(CriticalPathPipeline, OneRankWritesNoTable) {
  ascprof::testing::ScratchDir dir("critical-path-one");
  const Result r = analyse(dir.path(), {}, 1);
  EXPECT_TRUE(r.chain.empty());
  EXPECT_FALSE(fs::exists(dir.path() / "out" / "critical_path.csv"));
}

// A rerun into the same folder whose root no longer has the data of an optional table (one rank left;
// no nn.Module ranges) leaves none of the earlier run's tables behind for the report to show.
TEST(CriticalPathPipeline, RerunWithoutTheDataRemovesTheEarlierTables) {
  ascprof::testing::ScratchDir dir("critical-path-rerun");
  synth::SynthOptions o;
  o.scenario = "training";
  o.out_dir = dir / "c";
  o.ranks = 2;
  o.steps = 2;
  o.with_modules = true;
  ASSERT_TRUE(synth::generate_capture(o).ok());
  const auto first = ascprof::testing::analyse_root(dir / "c", dir / "out", kb());
  const fs::path out = first.plan.out_dir;
  ASSERT_TRUE(fs::exists(out / "critical_path.csv"));
  ASSERT_TRUE(fs::exists(out / "module_summary.csv"));
  o.ranks = 1;
  o.with_modules = false;
  o.force = true;
  ASSERT_TRUE(synth::generate_capture(o).ok());
  const auto second = ascprof::testing::analyse_root(dir / "c", dir / "out", kb());
  ASSERT_EQ(second.summary.status, "ok") << second.summary.error;
  ASSERT_EQ(second.plan.out_dir, first.plan.out_dir);
  for (const auto& name : critical_path_tables()) EXPECT_FALSE(fs::exists(out / name)) << name;
  for (const char* name : {"module_summary.csv", "module_ranks.csv", "module_compare.csv"})
    EXPECT_FALSE(fs::exists(out / name)) << name;
}

TEST(CriticalPathPipeline, RealCaptureChainRunsThroughItsAllreduces) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  const fs::path capture = ascprof::testing::real_fixtures_dir() / "e2-cnn-level2";
  ascprof::testing::ScratchDir dir("critical-path-real");
  const auto a = ascprof::testing::analyse_root(capture, dir.path(), kb());
  ASSERT_EQ(a.summary.status, "ok") << a.summary.error;
  const fs::path out = a.plan.out_dir;
  ASSERT_TRUE(fs::exists(out / "critical_path.csv"));
  const Rows chain = ascprof::testing::plain_csv_rows(out / "critical_path.csv");
  const Rows steps = ascprof::testing::plain_csv_rows(out / "critical_path_steps.csv");
  ASSERT_FALSE(steps.empty());
  size_t transfers = 0;
  for (const auto& e : chain)
    if (e.at("kind") == "transfer") {
      ++transfers;
      EXPECT_EQ(e.at("op_name").rfind("hcom_allReduce_", 0), 0u);
      EXPECT_EQ(e.at("members"), "2");
    }
  EXPECT_GT(transfers, 0u);
}

}  // namespace
}  // namespace ascprof::pipeline

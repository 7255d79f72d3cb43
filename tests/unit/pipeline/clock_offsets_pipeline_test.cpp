// Clock offsets end to end on generated captures: ranks written with shifted clocks (the synth
// clock_offset fault) come out with those offsets in cross_rank_manifest.json; a clean capture
// gives zeros; ranks that share no collective with the others are reported as not estimated.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;

// rank id -> offset in µs (NaN when not estimated)
std::map<std::string, double> offsets_of(const fs::path& capture, const fs::path& out,
                                         std::vector<std::map<std::string, std::string>>* alignments = nullptr) {
  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  EXPECT_TRUE(kb.ok());
  RootPlan plan = plan_root(capture.string(), out.string(), 0);
  EXPECT_TRUE(plan.ok) << plan.error;
  std::vector<RankOutcome> outcomes;
  for (const auto& t : plan.tasks) outcomes.push_back(run_rank_stages(t, *kb));
  const auto summary = write_root_outputs(plan, outcomes, *kb);
  EXPECT_EQ(summary.status, "ok") << summary.error;
  if (alignments != nullptr) *alignments = ascprof::testing::csv_rows(fs::path(plan.out_dir) / "cross_rank_alignment.csv");
  auto text = read_file(fs::path(plan.out_dir) / "cross_rank_manifest.json");
  EXPECT_TRUE(text.ok());
  std::map<std::string, double> out_map;
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(*text);
  for (auto [key, value] : doc["clock_offsets_us"].get_object())
    out_map[std::string(key)] = value.is_null() ? std::nan("") : double(value);
  return out_map;
}

TEST(ClockOffsetsPipeline, ShiftedRankClocksAreRecovered) {
  ascprof::testing::ScratchDir dir("clock");
  synth::SynthOptions o;
  o.scenario = "moe_mla_decode";
  o.out_dir = dir / "c";
  o.ranks = 4;
  o.steps = 3;
  o.faults = {"clock_offset:2:20000", "clock_offset:3:45000"};
  ASSERT_TRUE(synth::generate_capture(o).ok());
  std::vector<std::map<std::string, std::string>> rows;
  const auto off = offsets_of(dir / "c", dir / "out", &rows);
  ASSERT_EQ(off.size(), 4u);
  EXPECT_DOUBLE_EQ(off.at("rank0"), 0.0);
  EXPECT_NEAR(off.at("rank1"), 0.0, 1.0);
  EXPECT_NEAR(off.at("rank2"), 20000.0, 1.0);
  EXPECT_NEAR(off.at("rank3"), 45000.0, 1.0);
  // The alignments are found on the corrected clocks; the reference's columns hold the raw times
  // (rank 3's shift shows in start_skew_us), the corrected_* columns the corrected ones.
  size_t operators = 0, steps = 0;
  for (const auto& r : rows) {
    const std::string& ids = r.at("rank_ids");
    const bool all_ranks = ids.find("rank0") != std::string::npos && ids.find("rank3") != std::string::npos;
    if (!all_ranks) continue;
    EXPECT_EQ(r.at("alignment_method").find("+clock_offsets") != std::string::npos, true);
    if (r.at("alignment_type") == "operator") {
      ++operators;
      EXPECT_GT(std::stod(r.at("start_skew_us")), 44000.0) << r.at("alignment_id");
      EXPECT_LT(std::stod(r.at("corrected_start_skew_us")), 1000.0) << r.at("alignment_id");
      // rank 3's raw clock runs 45 ms ahead: its end is the latest on the raw clocks
      EXPECT_NEAR(std::stod(r.at("end_us")) - std::stod(r.at("corrected_end_us")), 45000.0, 1000.0);
    } else {
      ++steps;
      EXPECT_TRUE(r.at("corrected_start_skew_us").empty());
      // rank 3's raw clock runs 45 ms ahead: its step ends 45 ms later on the raw clocks
      EXPECT_NEAR(std::stod(r.at("end_us")) - std::stod(r.at("corrected_end_us")), 45000.0, 1000.0);
    }
  }
  EXPECT_GT(operators, 0u);
  EXPECT_EQ(steps, 3u);
}

TEST(ClockOffsetsPipeline, RanksWithoutSharedCollectivesAreNotEstimated) {
  // dense_gqa with TP 2: only TP groups {0,1} and {2,3} communicate, so ranks 2 and 3 cannot be
  // placed against rank 0
  ascprof::testing::ScratchDir dir("clock-tp");
  synth::SynthOptions o;
  o.scenario = "dense_gqa";
  o.out_dir = dir / "c";
  o.ranks = 4;
  o.steps = 2;
  ASSERT_TRUE(synth::generate_capture(o).ok());
  const auto off = offsets_of(dir / "c", dir / "out");
  EXPECT_NEAR(off.at("rank1"), 0.0, 1.0);
  EXPECT_TRUE(std::isnan(off.at("rank2")));
  EXPECT_TRUE(std::isnan(off.at("rank3")));
}

}  // namespace
}  // namespace ascprof::pipeline

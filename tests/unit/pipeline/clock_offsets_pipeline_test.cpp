// Clock offsets end to end on generated captures: ranks written with shifted clocks (the synth
// clock_offset fault) come out with those offsets in cross_rank_manifest.json; a clean capture
// gives zeros; ranks that share no collective with the others are reported as not estimated.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;

// rank id -> offset in µs (NaN when not estimated)
std::map<std::string, double> offsets_of(const fs::path& capture, const fs::path& out) {
  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  EXPECT_TRUE(kb.ok());
  RootPlan plan = plan_root(capture.string(), out.string(), 0);
  EXPECT_TRUE(plan.ok) << plan.error;
  std::vector<RankOutcome> outcomes;
  for (const auto& t : plan.tasks) outcomes.push_back(run_rank_stages(t, *kb));
  const auto summary = write_root_outputs(plan, outcomes, *kb);
  EXPECT_EQ(summary.status, "ok") << summary.error;
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
  const auto off = offsets_of(dir / "c", dir / "out");
  ASSERT_EQ(off.size(), 4u);
  EXPECT_DOUBLE_EQ(off.at("rank0"), 0.0);
  EXPECT_NEAR(off.at("rank1"), 0.0, 1.0);
  EXPECT_NEAR(off.at("rank2"), 20000.0, 1.0);
  EXPECT_NEAR(off.at("rank3"), 45000.0, 1.0);
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

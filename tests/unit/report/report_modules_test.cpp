// The report stage with nn.Module ranges (issue 21): report.md gets its module section (where each
// rank's device time went, the modules by device time, the modules whose busiest rank stands out naming
// the planted slow rank), report.xlsx its three module sheets and timeline.json a "modules" lane per rank
// holding every module call nested by time; a root without module ranges gets none of them.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/report/report.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/test_support.hpp"

namespace ascprof::report {
namespace {

namespace fs = std::filesystem;

fs::path analysed(const fs::path& dir, bool with_modules) {
  synth::SynthOptions o;
  o.scenario = "training";
  o.out_dir = dir / "c";
  o.ranks = 4;
  o.steps = 2;
  o.with_modules = with_modules;
  o.faults = {"slow_rank:1"};
  EXPECT_TRUE(synth::generate_capture(o).ok());
  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  EXPECT_TRUE(kb.ok());
  const auto plan = pipeline::plan_root((dir / "c").string(), (dir / "out").string(), 0);
  std::vector<pipeline::RankOutcome> outcomes;
  for (const auto& t : plan.tasks) outcomes.push_back(pipeline::run_rank_stages(t, *kb));
  EXPECT_EQ(pipeline::write_root_outputs(plan, outcomes, *kb).status, "ok");
  EXPECT_TRUE(write_report(plan.out_dir).ok());
  return plan.out_dir;
}

TEST(ReportModules, SectionSheetsAndLaneOnlyWithModules) {
  ascprof::testing::ScratchDir with("report-modules"), without("report-no-modules");
  const fs::path root = analysed(with.path(), true);
  const std::string md = *read_file(root / "report" / "report.md");
  const size_t at = md.find("## 17. Module Breakdown");
  ASSERT_NE(at, std::string::npos);
  const std::string section = md.substr(at);
  for (const char* h : {"### Where Each Rank's Device Time Went", "### Modules By Device Time",
                        "### Modules Whose Busiest Rank Stands Out"})
    EXPECT_NE(section.find(h), std::string::npos) << h;
  EXPECT_NE(section.find("| Model_0 | 4 | 4 |"), std::string::npos) << section;
  EXPECT_NE(section.find("| Model_0/Layer_0/Attention_0 | rank1 |"), std::string::npos) << section;  // busiest: rank 1
  const std::string manifest = *read_file(root / "report" / "manifest.json");
  for (const char* sheet : {"\"module_summary\"", "\"module_ranks\"", "\"module_compare\""})
    EXPECT_NE(manifest.find(sheet), std::string::npos) << sheet;

  // one "modules" lane per rank; every call of every rank; nested slices lie inside their parent
  const std::string timeline = *read_file(root / "report" / "timeline.json");
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(timeline);
  std::map<std::pair<int64_t, int64_t>, bool> lanes;  // (pid, tid) of "modules" threads
  for (simdjson::dom::element e : doc["traceEvents"].get_array()) {
    std::string_view ph, name;
    if (e["ph"].get(ph) || ph != "M" || e["name"].get(name) || name != "thread_name") continue;
    if (std::string_view(e["args"]["name"]) == "modules") lanes[{int64_t(e["pid"]), int64_t(e["tid"])}] = true;
  }
  EXPECT_EQ(lanes.size(), 4u);
  size_t calls = 0;
  double min_ts = 1e300;
  for (simdjson::dom::element e : doc["traceEvents"].get_array()) {
    std::string_view ph;
    if (e["ph"].get(ph) || ph != "X" || !lanes.count({int64_t(e["pid"]), int64_t(e["tid"])})) continue;
    ++calls;
    min_ts = std::min(min_ts, double(e["ts"]));
    EXPECT_FALSE(std::string_view(e["args"]["module_path"]).empty());
  }
  EXPECT_EQ(calls, 4u * 52u);  // 13 modules x 4 forward passes per rank
  EXPECT_GE(min_ts, 0.0);      // the origin moved back to the first module call

  const fs::path plain = analysed(without.path(), false);
  EXPECT_EQ(read_file(plain / "report" / "report.md")->find("Module Breakdown"), std::string::npos);
  EXPECT_EQ(read_file(plain / "report" / "manifest.json")->find("module_"), std::string::npos);
  EXPECT_EQ(read_file(plain / "report" / "timeline.json")->find("\"modules\""), std::string::npos);
  EXPECT_FALSE(fs::exists(plain / "module_summary.csv"));
}

}  // namespace
}  // namespace ascprof::report

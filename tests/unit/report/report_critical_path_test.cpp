// The report stage with a critical path (issue 21): report.md gets its section (each rank's share with
// the planted slow rank on top, the steps), report.html a static section with the same tables and the
// chain of the longest step, report.xlsx its three sheets; a one-rank root gets none of them.
#include <gtest/gtest.h>

#include <filesystem>

#include "ascprof/common/files.hpp"
#include "ascprof/report/report.hpp"
#include "support/analyse_root.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::report {
namespace {

namespace fs = std::filesystem;

fs::path analysed(const fs::path& dir, int ranks) {
  synth::SynthOptions o;
  o.scenario = "training";
  o.out_dir = dir / "c";
  o.ranks = ranks;
  o.steps = 3;
  o.faults = {"host_bound:" + std::to_string(ranks - 1)};
  EXPECT_TRUE(synth::generate_capture(o).ok());
  const auto a = ascprof::testing::analyse_root(dir / "c", dir / "out", ascprof::testing::shipped_knowledge());
  EXPECT_EQ(a.summary.status, "ok") << a.summary.error;
  EXPECT_TRUE(write_report(a.plan.out_dir).ok());
  return a.plan.out_dir;
}

TEST(ReportCriticalPath, SectionsAndSheetsOnlyWithAWalkedStep) {
  ascprof::testing::ScratchDir four("report-cp"), one("report-cp-one");
  const fs::path root = analysed(four.path(), 4);
  const std::string md = *read_file(root / "report" / "report.md");
  const size_t at = md.find(". Critical Path");
  ASSERT_NE(at, std::string::npos);
  const std::string section = md.substr(at);
  for (const char* h : {"### Each Rank's Share Of The Critical Path", "### Steps", "### Critical-Path Findings"})
    EXPECT_NE(section.find(h), std::string::npos) << h;
  // the host-bound rank launches late: the paths run through it, so it heads the share table
  const size_t table = section.find("| rank | share |");
  ASSERT_NE(table, std::string::npos);
  const size_t first_row = section.find('\n', section.find('\n', table) + 1) + 1;
  EXPECT_EQ(section.substr(first_row, 8), "| rank3 ") << section.substr(table, 400);
  const std::string manifest = *read_file(root / "report" / "manifest.json");
  for (const char* sheet : {"\"critical_path\"", "\"critical_path_steps\"", "\"critical_path_ranks\""})
    EXPECT_NE(manifest.find(sheet), std::string::npos) << sheet;
  const std::string html = *read_file(root / "report" / "report.html");
  for (const char* part : {"<a href=\"#cp\">Critical path</a>", "<section id=\"cp\">", "<table id=\"cp-ranks\">",
                           "<table id=\"cp-steps\">", "<table id=\"cp-chain\">", "<td>transfer</td>"})
    EXPECT_NE(html.find(part), std::string::npos) << part;

  const fs::path alone = analysed(one.path(), 1);
  EXPECT_FALSE(fs::exists(alone / "critical_path.csv"));
  EXPECT_EQ(read_file(alone / "report" / "report.md")->find("Critical Path"), std::string::npos);
  EXPECT_EQ(read_file(alone / "report" / "report.html")->find("id=\"cp\""), std::string::npos);
  EXPECT_EQ(read_file(alone / "report" / "manifest.json")->find("\"critical_path\""), std::string::npos);
}

}  // namespace
}  // namespace ascprof::report

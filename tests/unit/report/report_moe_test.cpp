// The report stage with in-kernel MoE traces (issue 20): report.md gets its section (the calls and
// their kernel rows, the phases across ranks, the worst cores, the in-kernel findings naming the
// planted rank) and report.xlsx its three sheets; a root without traces gets neither.
#include <gtest/gtest.h>

#include <filesystem>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/report/report.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/analyse_root.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::report {
namespace {

namespace fs = std::filesystem;

fs::path analysed(const fs::path& dir, const std::string& moe_trace) {
  const std::vector<std::string> faults = moe_trace.empty() ? std::vector<std::string>{} : std::vector<std::string>{"moe_slow_expert:1"};
  EXPECT_TRUE(synth::generate_capture(ascprof::testing::moe_capture(dir / "c", moe_trace, faults)).ok());
  const auto r = ascprof::testing::analyse_root(dir / "c", dir / "out", ascprof::testing::shipped_knowledge());
  EXPECT_EQ(r.summary.status, "ok");
  EXPECT_TRUE(write_report(r.plan.out_dir).ok());
  return r.plan.out_dir;
}

TEST(ReportMoe, SectionAndSheetsOnlyWithTraces) {
  ascprof::testing::ScratchDir with("report-moe"), without("report-no-moe");
  const fs::path root = analysed(with.path(), "skill");
  const std::string md = *read_file(root / "report" / "report.md");
  const size_t at = md.find("## 17. In-Kernel MoE Traces");
  ASSERT_NE(at, std::string::npos);
  const std::string section = md.substr(at);
  size_t attached = 0;
  for (size_t p = section.find("| attached |"); p != std::string::npos; p = section.find("| attached |", p + 1)) ++attached;
  EXPECT_EQ(attached, 4u);
  for (const char* h : {"### Calls And Their Kernel Rows", "### Phases Across Ranks", "### Worst Cores", "### In-Kernel Findings"})
    EXPECT_NE(section.find(h), std::string::npos) << h;
  EXPECT_NE(section.find("| moe_in_kernel_ep_imbalance | rank1 |"), std::string::npos) << section;
  EXPECT_NE(section.find("| dispatch-gmm1 moe-process | cube | compute | 4 |"), std::string::npos) << section;
  const std::string manifest = *read_file(root / "report" / "manifest.json");
  for (const char* sheet : {"\"moe_trace_calls\"", "\"moe_phases\"", "\"moe_phase_compare\""})
    EXPECT_NE(manifest.find(sheet), std::string::npos) << sheet;

  const fs::path plain = analysed(without.path(), "");
  EXPECT_EQ(read_file(plain / "report" / "report.md")->find("In-Kernel MoE"), std::string::npos);
  EXPECT_EQ(read_file(plain / "report" / "manifest.json")->find("moe_"), std::string::npos);
  EXPECT_FALSE(fs::exists(plain / "moe_trace_calls.csv"));
}

}  // namespace
}  // namespace ascprof::report

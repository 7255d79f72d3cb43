// report.html: a generated capture with a hostile kernel name renders into one self-contained page
// whose data is escaped for the <script> context; the kernel budget bounds the page; broken inputs
// give file errors and leave no page behind.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/report/html_report.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/test_support.hpp"

namespace ascprof::report {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHostile = "<img src=x onerror=alert(1)>";
constexpr std::string_view kHostileEscaped = "\\u003cimg src=x onerror=alert(1)\\u003e";

size_t count(std::string_view hay, std::string_view needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string_view::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

// Renames the kernel of data row `row` in the first rank folder's kernel_details.csv to kHostile.
void poison_kernel_name(const fs::path& capture, int row) {
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(capture))
    if (e.is_directory()) folders.push_back(e.path());
  ASSERT_FALSE(folders.empty());
  std::sort(folders.begin(), folders.end());
  const fs::path csv = folders[0] / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv";
  auto text = read_file(csv);
  ASSERT_TRUE(text.ok());
  std::string& t = *text;
  size_t line = t.find('\n') + 1;  // past the header
  for (int i = 0; i < row; ++i) line = t.find('\n', line) + 1;
  // Name is the 6th column (Step Id,Device_id,Model ID,Task ID,Stream ID,Name,...)
  size_t b = line;
  for (int c = 0; c < 5; ++c) b = t.find(',', b) + 1;
  const size_t e = t.find(',', b);
  t.replace(b, e - b, kHostile);
  ascprof::testing::write_text(csv, t);
}

// A generated 4-rank capture analysed into `dir`/out; returns the root's output folder.
fs::path analysed_root(const fs::path& dir, bool poison) {
  synth::SynthOptions o;
  o.scenario = "moe_mla_decode";
  o.out_dir = dir / "c";
  o.ranks = 4;
  o.steps = 3;
  o.faults = {"idle_bubble:2"};
  auto gen = synth::generate_capture(o);
  EXPECT_TRUE(gen.ok()) << gen.status().to_string();
  if (poison) poison_kernel_name(dir / "c", 1);  // row 1: the embedding gather at the first step's head
  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  EXPECT_TRUE(kb.ok());
  pipeline::RootPlan plan = pipeline::plan_root((dir / "c").string(), (dir / "out").string(), 0);
  std::vector<pipeline::RankOutcome> outcomes;
  for (const auto& t : plan.tasks) outcomes.push_back(pipeline::run_rank_stages(t, *kb));
  const auto summary = pipeline::write_root_outputs(plan, outcomes, *kb);
  EXPECT_EQ(summary.status, "ok") << summary.error;
  return plan.out_dir;
}

std::string data_json(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"data\">";
  const size_t b = html.find(open);
  if (b == std::string::npos) return {};
  const size_t e = html.find("</script>", b);
  return html.substr(b + open.size(), e - b - open.size());
}

TEST(HtmlReport, ScriptJsonStringEscapesEverythingThatCouldEndTheElement) {
  std::string out;
  append_script_json_string(out, "</script><!--&\"\\\n\xE2\x80\xA8\xE2\x80\xA9\xff");
  EXPECT_EQ(out, "\\u003c/script\\u003e\\u003c!--\\u0026\\\"\\\\\\n\\u2028\\u2029\\ufffd");
}

TEST(HtmlReport, HostileKernelNameIsDataNotMarkup) {
  ascprof::testing::ScratchDir dir("html-xss");
  const fs::path root = analysed_root(dir.path(), true);
  auto path = write_report_html(root);
  ASSERT_TRUE(path.ok()) << path.status().to_string();
  EXPECT_EQ(*path, root / "report" / "report.html");
  // written under a temporary name and renamed: nothing else is left in report/
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(root / "report")) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);

  auto html = read_file(*path);
  ASSERT_TRUE(html.ok());
  const std::string& h = *html;
  EXPECT_GT(h.size(), 20'000u);
  EXPECT_LT(h.size(), 5'000'000u);
  EXPECT_EQ(count(h, "<img"), 0u);
  EXPECT_EQ(count(h, "onerror="), count(h, kHostileEscaped));  // only inside the escaped name
  EXPECT_GE(count(h, kHostileEscaped), 1u);
  EXPECT_EQ(count(h, "http://"), 0u);
  EXPECT_EQ(count(h, "https://"), 0u);
  EXPECT_EQ(count(h, "<script src"), 0u);
  EXPECT_EQ(count(h, "innerHTML"), 0u);
  EXPECT_EQ(count(h, "<script"), 2u);  // the data and the page's own script
  EXPECT_EQ(count(h, "<canvas id=\"timeline\""), 1u);

  const std::string data = data_json(h);
  ASSERT_FALSE(data.empty());
  EXPECT_EQ(data.find('<'), std::string::npos);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(data).get(doc), simdjson::SUCCESS);
  bool found = false;
  for (simdjson::dom::element s : doc["strings"].get_array()) found |= std::string_view(s) == kHostile;
  EXPECT_TRUE(found);
  EXPECT_EQ(simdjson::dom::array(doc["ranks"]).size(), 4u);
  // 4 ranks x 555 kernels, all within the default budget
  EXPECT_EQ(uint64_t(doc["meta"]["total_events"]), 2220u);
  EXPECT_EQ(uint64_t(doc["meta"]["embedded_events"]), 2220u);
  EXPECT_EQ(simdjson::dom::array(doc["steps"]["rows"]).size(), 16u);  // 3 steps and the head of each rank
  EXPECT_EQ(simdjson::dom::array(doc["layers"]["rows"]).size(), 144u);
  EXPECT_EQ(simdjson::dom::array(doc["blocks"]["rows"]).size(), 288u);
  EXPECT_GE(simdjson::dom::array(doc["findings"]).size(), 1u);
  EXPECT_GE(simdjson::dom::array(doc["bubbles"]).size(), 1u);
  // each rank's lanes hold a busy histogram; the HCCL lane is not empty (allgather per step)
  simdjson::dom::array hist = doc["ranks"].at(0)["hist"];
  EXPECT_EQ(hist.size(), 5u);
  EXPECT_EQ(simdjson::dom::array(hist.at(2)).size(), uint64_t(doc["meta"]["bins"]));
}

// Budget 400 with 185-kernel steps and 2-kernel heads: the heaviest steps of ranks 0 and 1 fit whole,
// then every rank's head; rank 2 gets the first 22 rows of its heaviest step (what is left), rank 3
// its head and its histogram.
TEST(HtmlReport, KernelBudgetBoundsTheEmbeddedKernels) {
  ascprof::testing::ScratchDir dir("html-budget");
  const fs::path root = analysed_root(dir.path(), false);
  HtmlOptions o;
  o.max_kernel_events = 400;
  auto path = write_report_html(root, o);
  ASSERT_TRUE(path.ok()) << path.status().to_string();
  auto html = read_file(*path);
  ASSERT_TRUE(html.ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(data_json(*html)).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(uint64_t(doc["meta"]["total_events"]), 2220u);
  EXPECT_EQ(uint64_t(doc["meta"]["embedded_events"]), 400u);
  EXPECT_EQ(simdjson::dom::array(doc["embedded_segments"]).size(), 6u);  // two steps, four heads
  std::vector<size_t> per_rank;
  for (simdjson::dom::element r : doc["ranks"].get_array()) per_rank.push_back(simdjson::dom::array(r["ev"]["row"]).size());
  EXPECT_EQ(per_rank, (std::vector<size_t>{187, 187, 24, 2}));
  // the histogram still covers every rank
  for (simdjson::dom::element r : doc["ranks"].get_array()) {
    uint64_t busy = 0;
    for (simdjson::dom::element lane : r["hist"].get_array())
      for (simdjson::dom::element v : lane.get_array()) busy += uint64_t(v);
    EXPECT_GT(busy, 0u);
  }
}

TEST(HtmlReport, EmptyRootGivesAPageAndMissingRootAnError) {
  ascprof::testing::ScratchDir dir("html-empty");
  auto path = write_report_html(dir.path());
  ASSERT_TRUE(path.ok()) << path.status().to_string();
  EXPECT_TRUE(fs::exists(dir.path() / "report" / "report.html"));
  auto missing = write_report_html(dir.path() / "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().to_string().find("nope"), std::string::npos);
}

TEST(HtmlReport, BrokenFindingsAreAParseErrorAndNoPage) {
  ascprof::testing::ScratchDir dir("html-broken");
  ascprof::testing::write_text(dir.path() / "diagnosis_findings.json", "{\"diagnosis_findings\": [");
  auto path = write_report_html(dir.path());
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.status().code(), ErrorCode::kParse);
  EXPECT_NE(path.status().to_string().find("diagnosis_findings.json"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.path() / "report" / "report.html"));
}

}  // namespace
}  // namespace ascprof::report

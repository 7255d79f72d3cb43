// report.html with in-kernel MoE traces (issue 20): the "In-kernel MoE" section, its nav link, its
// tables and each attached call's lanes embedded (placed on the page's clock exactly where the
// kernel row is drawn, intervals inside the row), the lane cap, the hostile kernel name as escaped
// data; a root without traces gets none of it.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/report/html_report.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/analyse_root.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::report {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMoeKernel = "aclnnFusedDeepMoe_<img src=x onerror=alert(1)>";
constexpr std::string_view kMoeKernelEscaped = "aclnnFusedDeepMoe_\\u003cimg src=x onerror=alert(1)\\u003e";

size_t count(std::string_view hay, std::string_view needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string_view::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

// Renames the FusedDeepMoe row the first rank folder's trace belongs to (trace_call<K>.json: the
// Kth such row) to kMoeKernel: still an instrumented kernel, so the trace attaches to it.
void poison_traced_kernel(const fs::path& capture) {
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(capture))
    if (e.is_directory()) folders.push_back(e.path());
  ASSERT_FALSE(folders.empty());
  std::sort(folders.begin(), folders.end());
  int call = -1;
  for (const auto& e : fs::directory_iterator(folders[0] / "moe_trace")) {
    const std::string name = e.path().stem().string();
    if (name.rfind("trace_call", 0) == 0) call = std::stoi(name.substr(10));
  }
  ASSERT_GE(call, 0);
  const fs::path csv = folders[0] / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv";
  auto text = read_file(csv);
  ASSERT_TRUE(text.ok());
  std::string& t = *text;
  int seen = -1;
  for (size_t line = t.find('\n') + 1; line < t.size(); line = t.find('\n', line) + 1) {
    // Name is the 6th column (Step Id,Device_id,Model ID,Task ID,Stream ID,Name,...)
    size_t b = line;
    for (int c = 0; c < 5; ++c) b = t.find(',', b) + 1;
    const size_t e = t.find(',', b);
    if (t.compare(b, e - b, "aclnnFusedDeepMoe_FusedDeepMoe_FusedDeepMoe") != 0 || ++seen != call) continue;
    t.replace(b, e - b, kMoeKernel);
    ascprof::testing::write_text(csv, t);
    return;
  }
  FAIL() << "no FusedDeepMoe row " << call;
}

// A generated 4-rank capture analysed into `dir`/out (rank 1's expert slow when traced); returns
// the root's output folder.
fs::path analysed(const fs::path& dir, const std::string& moe_trace) {
  const std::vector<std::string> faults = moe_trace.empty() ? std::vector<std::string>{} : std::vector<std::string>{"moe_slow_expert:1"};
  EXPECT_TRUE(synth::generate_capture(ascprof::testing::moe_capture(dir / "c", moe_trace, faults)).ok());
  if (!moe_trace.empty()) poison_traced_kernel(dir / "c");
  const auto r = ascprof::testing::analyse_root(dir / "c", dir / "out", ascprof::testing::shipped_knowledge());
  EXPECT_EQ(r.summary.status, "ok");
  return r.plan.out_dir;
}

std::string page(const fs::path& root, const HtmlOptions& o = {}) {
  auto path = write_report_html(root, o);
  EXPECT_TRUE(path.ok()) << path.status().to_string();
  if (!path.ok()) return {};
  auto html = read_file(*path);
  EXPECT_TRUE(html.ok());
  return html.ok() ? *html : std::string();
}

std::string data_json(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"data\">";
  const size_t b = html.find(open);
  if (b == std::string::npos) return {};
  const size_t e = html.find("</script>", b);
  return html.substr(b + open.size(), e - b - open.size());
}

// The page's start (µs) of the kernel row `event_id` ("evt_<ordinal>_<row>") of rank `rank`.
double kernel_start_on_page(simdjson::dom::element doc, std::string_view rank, std::string_view event_id) {
  const int64_t row = std::stoll(std::string(event_id.substr(event_id.rfind('_') + 1)));
  for (simdjson::dom::element r : doc["ranks"].get_array()) {
    if (std::string_view(r["id"]) != rank) continue;
    simdjson::dom::array rows = r["ev"]["row"], starts = r["ev"]["s"];
    for (size_t i = 0; i < rows.size(); ++i)
      if (int64_t(rows.at(i)) == row) return double(starts.at(i));
  }
  return -1;
}

TEST(HtmlMoe, SectionTablesAndLanesOnlyWithTraces) {
  ascprof::testing::ScratchDir with("html-moe"), without("html-no-moe");
  const fs::path root = analysed(with.path(), "skill");
  const std::string h = page(root);
  EXPECT_EQ(count(h, "<a href=\"#moe\">In-kernel MoE</a>"), 1u);
  EXPECT_EQ(count(h, "<section id=\"moe\">"), 1u);
  for (const char* id : {"moe-calls", "moe-phases", "moe-worst", "moe-findings", "moe-close"})
    EXPECT_EQ(count(h, std::string("id=\"") + id + "\""), 1u) << id;
  EXPECT_EQ(count(h, "<script"), 2u);  // the MoE part runs inside the page's own script
  EXPECT_EQ(count(h, "<img"), 0u);
  EXPECT_GE(count(h, kMoeKernelEscaped), 2u);  // the calls table and the lanes

  const std::string data = data_json(h);
  EXPECT_EQ(data.find('<'), std::string::npos);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(data).get(doc), simdjson::SUCCESS);
  simdjson::dom::element moe = doc["moe"];
  EXPECT_EQ(uint64_t(moe["calls_total"]), 4u);
  EXPECT_EQ(uint64_t(moe["attached"]), 4u);
  EXPECT_EQ(uint64_t(moe["lane_cap"]), 64u);
  simdjson::dom::array calls = moe["calls"]["rows"];
  ASSERT_EQ(calls.size(), 4u);
  size_t poisoned = 0;
  for (simdjson::dom::element row : calls) {
    EXPECT_EQ(std::string_view(row.at(3)), "attached");
    poisoned += std::string_view(row.at(5)) == kMoeKernel;
  }
  EXPECT_EQ(poisoned, 1u);

  // the phases across ranks: label rows only, the longest union first
  simdjson::dom::array phases = moe["phases"]["rows"];
  EXPECT_EQ(phases.size(), uint64_t(moe["phases_total"]));
  EXPECT_GE(phases.size(), 10u);
  double prev = 1e300;
  bool slow_phase = false;
  for (simdjson::dom::element row : phases) {
    const double u = double(row.at(5));
    EXPECT_LE(u, prev);
    prev = u;
    // the planted slow expert: rank 1's moe-process on the cube cores is the slowest of the ranks
    if (std::string_view(row.at(1)) == "dispatch-gmm1 moe-process" && std::string_view(row.at(2)) == "cube") {
      slow_phase = true;
      EXPECT_EQ(std::string_view(row.at(8)), "rank1");
    }
  }
  EXPECT_TRUE(slow_phase);
  simdjson::dom::array worst = moe["worst"]["rows"];
  ASSERT_EQ(worst.size(), 10u);
  EXPECT_EQ(std::string_view(worst.at(0).at(0)), "rank1");

  // one lane set per attached call: 72 cores in 3 groups; intervals inside the kernel row, which
  // sits where the page draws that kernel
  simdjson::dom::array lanes = moe["lanes"];
  ASSERT_EQ(lanes.size(), 4u);
  for (size_t k = 0; k < lanes.size(); ++k) {
    simdjson::dom::element c = lanes.at(k);
    EXPECT_EQ(int64_t(calls.at(k).at(11)), int64_t(k));
    EXPECT_EQ(std::string_view(c["event_id"]), std::string_view(calls.at(k).at(4)));
    EXPECT_EQ(simdjson::dom::array(c["cores"]).size(), 144u);
    simdjson::dom::array groups = c["groups"];
    ASSERT_EQ(groups.size(), 3u);
    EXPECT_EQ(std::string_view(groups.at(0)), "cube");
    EXPECT_EQ(std::string_view(groups.at(2)), "vector_send");
    const size_t labels = simdjson::dom::array(c["labels"]).size();
    EXPECT_EQ(simdjson::dom::array(c["roles"]).size(), labels);
    const double d = double(c["d"]);
    simdjson::dom::array iv = c["iv"];
    ASSERT_GT(iv.size(), 0u);
    ASSERT_EQ(iv.size() % 5, 0u);
    for (size_t i = 0; i < iv.size(); i += 5) {
      EXPECT_LT(uint64_t(iv.at(i)), 72u);
      EXPECT_LT(uint64_t(iv.at(i + 1)), labels);
      EXPECT_GE(double(iv.at(i + 3)), 0.0);
      EXPECT_LE(double(iv.at(i + 3)), double(iv.at(i + 4)));
      EXPECT_LE(double(iv.at(i + 4)), d);
    }
    EXPECT_EQ(double(c["s"]), kernel_start_on_page(doc, std::string_view(c["rank"]), std::string_view(c["event_id"])));
  }
  bool lanes_poisoned = false;
  for (simdjson::dom::element c : lanes) lanes_poisoned |= std::string_view(c["kernel"]) == kMoeKernel;
  EXPECT_TRUE(lanes_poisoned);
  // the in-kernel findings are in the page's findings and name the slow rank
  size_t moe_findings = 0;
  for (simdjson::dom::element f : doc["findings"].get_array()) {
    if (std::string_view(f["finding_type"]).rfind("moe_", 0) != 0) continue;
    ++moe_findings;
    simdjson::dom::array suspected = f["suspected_ranks"];
    ASSERT_EQ(suspected.size(), 1u);
    EXPECT_EQ(std::string_view(suspected.at(0)), "rank1");
  }
  EXPECT_GE(moe_findings, 1u);

  // lanes for the first 2 attached calls only; every call is still listed
  HtmlOptions capped;
  capped.max_moe_calls = 2;
  const std::string hc = page(root, capped);
  simdjson::dom::parser parser2;
  simdjson::dom::element doc2;
  ASSERT_EQ(parser2.parse(data_json(hc)).get(doc2), simdjson::SUCCESS);
  EXPECT_EQ(simdjson::dom::array(doc2["moe"]["lanes"]).size(), 2u);
  EXPECT_EQ(uint64_t(doc2["moe"]["lane_cap"]), 2u);
  simdjson::dom::array capped_calls = doc2["moe"]["calls"]["rows"];
  ASSERT_EQ(capped_calls.size(), 4u);
  EXPECT_EQ(int64_t(capped_calls.at(1).at(11)), 1);
  EXPECT_EQ(int64_t(capped_calls.at(2).at(11)), -1);
  EXPECT_LT(hc.size(), h.size());

  // no traces: no section, link, data or script part
  const std::string plain = page(analysed(without.path(), ""));
  ASSERT_FALSE(plain.empty());
  EXPECT_EQ(plain.find("In-kernel MoE"), std::string::npos);
  EXPECT_EQ(plain.find("id=\"moe"), std::string::npos);
  EXPECT_EQ(plain.find("\"moe\":"), std::string::npos);
  EXPECT_EQ(plain.find("moeToggle"), std::string::npos);
  EXPECT_EQ(plain.find("#moe-calls"), std::string::npos);
}

}  // namespace
}  // namespace ascprof::report

// The report stage on a generated capture: report.md has the reference's sections in order and its
// numbers are the tables' cells; timeline.json is a Chrome trace with one process per rank; the
// evidence-chain gate refuses a finding whose evidence does not exist.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <map>
#include <set>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/report/report.hpp"
#include "ascprof/report/tables.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/test_support.hpp"

namespace ascprof::report {
namespace {

namespace fs = std::filesystem;

// A 4-rank capture with a hot-expert rank, analysed through diagnostics; returns the root's output folder.
fs::path analysed_root(const fs::path& dir) {
  synth::SynthOptions o;
  o.scenario = "moe_mla_decode";
  o.out_dir = dir / "c";
  o.ranks = 4;
  o.steps = 3;
  o.faults = {"ep_imbalance:2"};
  EXPECT_TRUE(synth::generate_capture(o).ok());
  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  EXPECT_TRUE(kb.ok());
  const auto plan = pipeline::plan_root((dir / "c").string(), (dir / "out").string(), 0);
  std::vector<pipeline::RankOutcome> outcomes;
  for (const auto& t : plan.tasks) outcomes.push_back(pipeline::run_rank_stages(t, *kb));
  const auto s = pipeline::write_root_outputs(plan, outcomes, *kb);
  EXPECT_EQ(s.status, "ok") << s.error;
  return plan.out_dir;
}

// A table without a column the report reads (written by another version, or a misspelt name in
// the report): the part fails naming the file and the column, instead of writing empty cells.
TEST(ReportMd, ATableLackingAColumnTheReportReadsFailsThePart) {
  ascprof::testing::ScratchDir dir("report-md-column");
  const fs::path root = analysed_root(dir.path());
  auto text = read_file(root / "rank_summary.csv");
  ASSERT_TRUE(text.ok());
  const size_t at = text->find("wall_ms");
  ASSERT_NE(at, std::string::npos);
  text->replace(at, 7, "wall_mz");
  ascprof::testing::write_text(root / "rank_summary.csv", *text);
  auto part = write_report_part(root, ReportPart::kMarkdown, {});
  ASSERT_FALSE(part.ok());
  EXPECT_EQ(part.status().code(), ErrorCode::kInternal) << part.status().to_string();
  EXPECT_NE(part.status().message().find((root / "rank_summary.csv").string() + ": no column 'wall_ms'"), std::string::npos)
      << part.status().to_string();
}

TEST(ReportMd, SectionsInOrderAndNumbersFromTheTables) {
  ascprof::testing::ScratchDir dir("report-md");
  const fs::path root = analysed_root(dir.path());
  auto md = write_report_md(root);
  ASSERT_TRUE(md.ok()) << md.status().to_string();
  auto text = read_file(*md);
  ASSERT_TRUE(text.ok());
  size_t at = 0;
  for (const char* h : {"## 1. Executive Summary", "## 2. Capture And Segmentation", "## 3. Macro Step Timeline",
                        "## 4. Pipeline Coverage And Bound Families", "## 5. Step Class View", "## 6. Layer And Block View",
                        "## 7. Operator View", "## 8. Operator Deep Dive", "## 9. Step Inventory",
                        "## 10. Cross-Rank And Anomaly Findings", "## 11. Finding Inventory", "## 12. Evidence Chain",
                        "## 13. Limitations", "## 14. Clock Offsets", "## 15. Slow Ranks, Slow Links And Host-Bound Time",
                        "## 16. Training Phases"}) {
    const size_t pos = text->find(h, at);
    ASSERT_NE(pos, std::string::npos) << h;
    at = pos;
  }
  // every rank row of section 2 carries rank_summary.csv's wall_ms and busy_union_ms cells verbatim
  auto ranks = read_table(root / "rank_summary.csv");
  ASSERT_TRUE(ranks.ok());
  ASSERT_EQ(ranks->rows.size(), 4u);
  for (size_t i = 0; i < ranks->rows.size(); ++i) {
    const std::string row = "| " + ranks->cell(i, "rank_id") + " | " + ranks->cell(i, "step_count") + " | " +
                            ranks->cell(i, "segment_count") + " | ";
    const size_t pos = text->find(row);
    ASSERT_NE(pos, std::string::npos) << row;
    const std::string line = text->substr(pos, text->find('\n', pos) - pos);
    EXPECT_NE(line.find("| " + ranks->cell(i, "wall_ms") + " | " + ranks->cell(i, "busy_union_ms") + " |"), std::string::npos)
        << line;
  }
  // the finding count is the diagnosis file's, and the hot-expert finding is listed
  auto diag = read_file(root / "diagnosis_findings.json");
  ASSERT_TRUE(diag.ok());
  simdjson::dom::parser parser;
  const uint64_t n = uint64_t(parser.parse(*diag)["counts"]["finding_count"]);
  EXPECT_GT(n, 0u);
  EXPECT_NE(text->find("| findings | " + std::to_string(n) + " |"), std::string::npos);
  EXPECT_NE(text->find("ep_load_imbalance_suspected"), std::string::npos);
}

// summary_manifest.json counts the rows of the cross-rank class tables under the reference's names
// (<table>_rows, the structure classes also as <kind>_classes; reference §2.5.9)
TEST(ReportTables, SummaryManifestCountsTheClassTables) {
  ascprof::testing::ScratchDir dir("report-class-counts");
  const fs::path root = analysed_root(dir.path());
  auto text = read_file(root / "summary_manifest.json");
  ASSERT_TRUE(text.ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(*text);
  const std::pair<const char*, const char*> tables[] = {
      {"operator_class_summary.csv", "operator_class_summary_rows"},
      {"hccl_class_summary.csv", "hccl_class_summary_rows"},
      {"block_class_summary.csv", "block_class_rows"},
      {"layer_class_summary.csv", "layer_class_rows"},
      {"step_class_summary.csv", "step_class_rows"}};
  for (const auto& [f, key] : tables) {
    auto t = read_table(root / f);
    ASSERT_TRUE(t.ok()) << f;
    EXPECT_GT(t->total_rows, 0u) << f;
    EXPECT_EQ(uint64_t(doc["counts"][key]), t->total_rows) << f;
  }
  for (const char* kind : {"block", "layer", "step"}) {
    auto t = read_table(root / (std::string(kind) + "_class_summary.csv"));
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(uint64_t(doc["class_summary_counts"][std::string(kind) + "_classes"]), t->total_rows) << kind;
  }
}

// write_timeline's file, read back ("" and a test failure when either fails).
std::string timeline_text(const fs::path& root, const TimelineOptions& o) {
  auto path = write_timeline(root, o);
  EXPECT_TRUE(path.ok()) << path.status().to_string();
  auto text = path.ok() ? read_file(*path) : Result<std::string>(path.status());
  EXPECT_TRUE(text.ok());
  return text.ok() ? *text : std::string();
}

TEST(ReportTimeline, ChromeTraceWithOneProcessPerRank) {
  ascprof::testing::ScratchDir dir("report-timeline");
  const fs::path root = analysed_root(dir.path());
  auto kernels = read_table(root / "raw_kernel_index.csv", 0);
  ASSERT_TRUE(kernels.ok());
  for (const uint32_t steps : {0u, 1u}) {
    TimelineOptions o;
    o.max_steps = steps;
    const std::string text = timeline_text(root, o);
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    ASSERT_EQ(parser.parse(text).get(doc), simdjson::SUCCESS);
    uint64_t processes = 0, complete = 0, instants = 0;
    double min_ts = 1e300;
    for (simdjson::dom::element e : doc["traceEvents"].get_array()) {
      const std::string_view ph(e["ph"]);
      if (ph == "M" && std::string_view(e["name"]) == "process_name") ++processes;
      if (ph == "X") {
        ++complete;
        min_ts = std::min(min_ts, double(e["ts"]));
      }
      if (ph == "i") ++instants;
    }
    EXPECT_EQ(processes, 4u);
    if (steps == 0) EXPECT_EQ(complete, kernels->total_rows);
    else EXPECT_LT(complete, kernels->total_rows / 2);  // one of 3 steps per rank
    EXPECT_GT(complete, 0u);
    EXPECT_GE(min_ts, -1.0);  // relative to the earliest corrected start
    EXPECT_GT(instants, 0u);  // findings
  }
}

// With more ranks than --timeline-ranks the timeline shows the ranks the findings suspect first,
// then the others in rank order, only their kernels, and says how many it left out.
TEST(ReportTimeline, BoundedToTheSuspectsFirstThenRankOrder) {
  ascprof::testing::ScratchDir dir("report-timeline-ranks");
  const fs::path root = analysed_root(dir.path());
  auto kernels = read_table(root / "raw_kernel_index.csv");
  ASSERT_TRUE(kernels.ok());
  std::map<std::string, uint64_t> rows_of;
  std::vector<std::string> rank_order;
  for (size_t i = 0; i < kernels->rows.size(); ++i) {
    const std::string& r = kernels->cell(i, "rank_id");
    if (rows_of[r]++ == 0) rank_order.push_back(r);
  }
  ASSERT_EQ(rows_of.size(), 4u);
  // the suspect: the rank the hot-expert finding names (the fault is on the third rank)
  auto findings = read_file(root / "diagnosis_findings.json");
  ASSERT_TRUE(findings.ok());
  simdjson::dom::parser findings_parser;
  std::string suspect;
  for (simdjson::dom::element f : findings_parser.parse(*findings)["diagnosis_findings"].get_array())
    for (simdjson::dom::element r : f["suspected_ranks"].get_array())
      if (std::string_view(r) != rank_order[0] && std::string_view(r) != rank_order[1]) suspect = std::string(std::string_view(r));
  ASSERT_FALSE(suspect.empty()) << "no finding names a rank after the first two: the test would prove little";
  TimelineOptions o;
  o.max_ranks = 2;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(timeline_text(root, o)).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(uint64_t(doc["otherData"]["ranks_total"]), 4u);
  EXPECT_EQ(uint64_t(doc["otherData"]["ranks_shown"]), 2u);
  EXPECT_NE(std::string_view(doc["otherData"]["ranks_left_out"]).find("raw_kernel_index.csv"), std::string_view::npos);
  std::set<std::string> names;
  uint64_t complete = 0;
  for (simdjson::dom::element e : doc["traceEvents"].get_array()) {
    const std::string_view ph(e["ph"]);
    if (ph == "M" && std::string_view(e["name"]) == "process_name") names.emplace(std::string_view(e["args"]["name"]));
    if (ph == "X") ++complete;
  }
  EXPECT_EQ(names.size(), 2u);
  EXPECT_TRUE(names.count(suspect)) << "the suspected rank " << suspect << " is not shown";
  uint64_t expected = 0;
  for (const auto& n : names) expected += rows_of[n];
  EXPECT_EQ(complete, expected);
  o.max_ranks = 0;  // every rank
  ASSERT_EQ(parser.parse(timeline_text(root, o)).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(uint64_t(doc["otherData"]["ranks_shown"]), 4u);
  EXPECT_EQ(doc["otherData"]["ranks_left_out"].error(), simdjson::NO_SUCH_FIELD);
}

TEST(ReportEvidenceChain, UnknownEvidenceRefusesTheReport) {
  ascprof::testing::ScratchDir dir("report-chain");
  const fs::path root = analysed_root(dir.path());
  auto chain = check_evidence_chain(root);
  ASSERT_TRUE(chain.ok()) << chain.status().to_string();
  EXPECT_GT(chain->findings_checked, 0u);
  EXPECT_TRUE(chain->failures.empty());
  // a finding pointing at a kernel row beyond its rank's table, with no limitation: refused
  auto text = read_file(root / "diagnosis_findings.json");
  ASSERT_TRUE(text.ok());
  std::string doc = *text;
  const size_t pos = doc.find("\"evidence_ids\": [");
  ASSERT_NE(pos, std::string::npos);
  doc.insert(pos + 17, "\"evt_0_99999999\",");
  const size_t lim = doc.find("\"limitations\": [", pos);
  const size_t end = doc.find(']', lim);
  doc.erase(lim + 16, end - (lim + 16));
  ASSERT_TRUE(write_file_atomic(root / "diagnosis_findings.json", doc).ok());
  chain = check_evidence_chain(root);
  ASSERT_TRUE(chain.ok());
  ASSERT_EQ(chain->failures.size(), 1u);
  EXPECT_NE(chain->failures[0].find("evt_0_99999999"), std::string::npos);
  auto report = write_report(root);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("cannot be traced"), std::string::npos);
  EXPECT_FALSE(fs::exists(root / "report" / "report.md"));
}

}  // namespace
}  // namespace ascprof::report

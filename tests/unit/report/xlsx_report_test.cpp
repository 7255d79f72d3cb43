// report.xlsx read back with an independent reader (openpyxl via tests/report/read_xlsx.py): sheet
// names and order, header rows equal to the CSV headers, row counts, typed cells, formula-looking
// text kept as text, the raw_kernel_index cap and the per-sheet row limit, and the atomic write.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/report/tables.hpp"
#include "ascprof/report/xlsx_report.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/test_support.hpp"

namespace ascprof::report {
namespace {

namespace fs = std::filesystem;
using Strings = std::vector<std::string>;

const Strings kSheetOrder = {"README",
                             "case_summary",
                             "rank_summary",
                             "step_summary",
                             "step_anatomy",
                             "step_class_summary",
                             "layer_summary",
                             "layer_class_summary",
                             "block_summary",
                             "block_class_summary",
                             "operator_summary",
                             "operator_class_summary",
                             "operator_deep_dive",
                             "hccl_op_summary",
                             "hccl_class_summary",
                             "bubble_windows",
                             "wait_anchor_ops",
                             "aicpu_summary",
                             "cross_rank_alignment",
                             "diagnosis_findings",
                             "evidence_index",
                             "raw_kernel_index",
                             // a root with aligned steps across ranks: the critical path (issue 21)
                             "critical_path",
                             "critical_path_steps",
                             "critical_path_ranks"};

constexpr const char* kFormulaName = "=SUM(1+1)_GatherV2";

fs::path reader_script() {
  const fs::path beside = fs::path(__FILE__).parent_path().parent_path().parent_path() / "report" / "read_xlsx.py";
  if (fs::exists(beside)) return beside;
  return ascprof::testing::knowledge_dir().parent_path() / "tests" / "report" / "read_xlsx.py";
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// The first interpreter that has openpyxl ($ASCPROF_PYTHON, the system one, then PATH's).
std::optional<std::string> python_with_openpyxl() {
  static const std::optional<std::string> found = []() -> std::optional<std::string> {
    Strings candidates;
    if (const char* env = std::getenv("ASCPROF_PYTHON")) candidates.emplace_back(env);
    candidates.insert(candidates.end(), {"/usr/bin/python3", "python3"});
    for (const auto& py : candidates)
      if (std::system((quoted(py) + " -c 'import openpyxl' >/dev/null 2>&1").c_str()) == 0) return py;
    return std::nullopt;
  }();
  return found;
}

#define REQUIRE_OPENPYXL()                                                                              \
  do {                                                                                                  \
    if (!python_with_openpyxl())                                                                        \
      GTEST_SKIP() << "python3 with openpyxl not found (apt install python3-openpyxl, or set "          \
                      "ASCPROF_PYTHON): the xlsx is checked with an independent reader";                 \
  } while (0)

// Runs the reader on `xlsx`; the JSON it prints.
std::string read_back(const fs::path& xlsx, const Strings& prefixes = {}) {
  std::string cmd = quoted(*python_with_openpyxl()) + " " + quoted(reader_script().string()) + " " +
                    quoted(xlsx.string());
  for (const auto& p : prefixes) cmd += " --prefix " + quoted(p);
  std::string out;
  if (FILE* pipe = ::popen(cmd.c_str(), "r")) {
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
    const int rc = ::pclose(pipe);
    EXPECT_EQ(rc, 0) << cmd;
  }
  return out;
}

/// The reader's JSON, kept parsed.
struct ReadBack {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;

  bool load(const std::string& json) { return parser.parse(json).get(doc) == simdjson::SUCCESS; }
  simdjson::dom::element sheet(std::string_view name) { return doc["sheet"][name]; }
  uint64_t max_row(std::string_view name) { return uint64_t(sheet(name)["max_row"]); }
  static Strings strings(simdjson::dom::element arr) {
    Strings out;
    for (auto v : arr.get_array()) {
      std::string_view s;
      out.emplace_back(v.get_string().get(s) == simdjson::SUCCESS ? std::string(s) : std::string("<non-string>"));
    }
    return out;
  }
  Strings sheet_names() { return strings(doc["sheets"]); }
  Strings header(std::string_view name) { return strings(sheet(name)["header"]); }
  /// Cell types seen in the data rows of column `col` ("n", "s", "f", "empty").
  std::set<std::string> types(std::string_view name, std::string_view col) {
    simdjson::dom::element c;
    if (sheet(name)["columns"][col].get(c)) return {"<no column>"};
    const Strings t = strings(c["types"]);
    return {t.begin(), t.end()};
  }
  std::string first_text(std::string_view name, std::string_view col) {
    std::string_view s;
    return sheet(name)["columns"][col]["first"].get_string().get(s) == simdjson::SUCCESS ? std::string(s) : "<not text>";
  }
  std::string cell_text(std::string_view name, size_t row, size_t col) {
    std::string_view s;
    simdjson::dom::element e;
    if (sheet(name)["rows"].at(row).at(col).at(0).get(e)) return "<absent>";
    return e.get_string().get(s) == simdjson::SUCCESS ? std::string(s) : "<not text>";
  }
  std::string last_row_first(std::string_view name) {
    std::string_view s;
    return sheet(name)["last_row"].at(0).get_string().get(s) == simdjson::SUCCESS ? std::string(s) : "<not text>";
  }
};

// One generated 4-rank capture with faults (so there are findings and bubbles) and a kernel whose
// name starts with '=', run through all stages; report.xlsx written with a raw_kernel_index cap of 50.
class XlsxReportOnCapture : public ::testing::Test {
 protected:
  static constexpr uint64_t kRawCap = 50;

  static void SetUpTestSuite() {
    dir_ = new ascprof::testing::ScratchDir("xlsx-report");
    synth::SynthOptions o;
    o.scenario = "moe_mla_decode";
    o.out_dir = dir_->path() / "c";
    o.ranks = 4;
    o.steps = 3;
    o.faults = {"idle_bubble:2"};
    auto gen = synth::generate_capture(o);
    ASSERT_TRUE(gen.ok()) << gen.status().to_string();
    // rank 0's embedding kernel gets a formula-looking name (kernel_details.csv only)
    bool renamed = false;
    for (const auto& entry : fs::directory_iterator(dir_->path() / "c")) {
      const fs::path kd = entry.path() / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv";
      if (!fs::exists(kd) || entry.path().filename().string().find("synth-node00_") != 0 || renamed) continue;
      auto text = read_file(kd);
      ASSERT_TRUE(text.ok());
      std::string s = *text;
      const std::string from = "aclnnEmbedding_GatherV2_GatherV2";
      for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p)) {
        s.replace(p, from.size(), kFormulaName);
        renamed = true;
      }
      ascprof::testing::write_text(kd, s);
    }
    ASSERT_TRUE(renamed) << "no embedding kernel to rename in rank 0's kernel_details.csv";
    auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
    ASSERT_TRUE(kb.ok()) << kb.status().to_string();
    pipeline::RootPlan plan = pipeline::plan_root((dir_->path() / "c").string(), (dir_->path() / "out").string(), 0);
    std::vector<pipeline::RankOutcome> outcomes;
    for (const auto& t : plan.tasks) outcomes.push_back(pipeline::run_rank_stages(t, *kb));
    const auto summary = pipeline::write_root_outputs(plan, outcomes, *kb);
    ASSERT_EQ(summary.status, "ok") << summary.error;
    root_out_ = new fs::path(plan.out_dir);
    XlsxOptions opt;
    opt.raw_kernel_index_rows = kRawCap;
    auto sheets = write_report_xlsx(*root_out_, *root_out_ / "report" / "report.xlsx", opt);
    ASSERT_TRUE(sheets.ok()) << sheets.status().to_string();
    sheets_ = new std::vector<XlsxSheet>(std::move(*sheets));
    if (python_with_openpyxl()) {
      read_ = new ReadBack;
      json_ = new std::string(read_back(*root_out_ / "report" / "report.xlsx", {"="}));
      ASSERT_TRUE(read_->load(*json_)) << *json_;
    }
  }

  static void TearDownTestSuite() {
    delete read_;
    delete json_;
    delete sheets_;
    delete root_out_;
    delete dir_;
    read_ = nullptr;
    json_ = nullptr;
    sheets_ = nullptr;
    root_out_ = nullptr;
    dir_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(sheets_, nullptr) << "the capture or the workbook could not be made (see the first failure)";
  }

  static const XlsxSheet& result(const std::string& name) {
    for (const auto& s : *sheets_)
      if (s.name == name) return s;
    static const XlsxSheet kNone;
    return kNone;
  }

  static inline ascprof::testing::ScratchDir* dir_ = nullptr;
  static inline fs::path* root_out_ = nullptr;
  static inline std::vector<XlsxSheet>* sheets_ = nullptr;
  static inline ReadBack* read_ = nullptr;
  static inline std::string* json_ = nullptr;
};

TEST_F(XlsxReportOnCapture, SheetsComeInTheReferenceOrder) {
  Strings names;
  for (const auto& s : *sheets_) names.push_back(s.name);
  EXPECT_EQ(names, kSheetOrder);
  EXPECT_TRUE(fs::exists(*root_out_ / "report" / "report.xlsx"));
  // nothing but the workbook is left in the folder (no temporary files)
  Strings files;
  for (const auto& e : fs::directory_iterator(*root_out_ / "report")) files.push_back(e.path().filename().string());
  EXPECT_EQ(files, Strings{"report.xlsx"});
  REQUIRE_OPENPYXL();
  EXPECT_EQ(read_->sheet_names(), kSheetOrder);
  EXPECT_EQ(read_->header("README"),
            (Strings{"sheet", "source", "rows_in_sheet", "rows_in_source", "truncated", "description"}));
  // README: 4 workbook rows, one per sheet, a notes row
  EXPECT_EQ(read_->max_row("README"), 1u + 4u + kSheetOrder.size() + 1u);
}

TEST_F(XlsxReportOnCapture, CsvSheetsHaveTheTablesHeaderAndRows) {
  REQUIRE_OPENPYXL();
  size_t with_rows = 0;
  for (const auto& name : kSheetOrder) {
    if (name == "README" || name == "case_summary" || name == "bubble_windows" || name == "diagnosis_findings")
      continue;
    SCOPED_TRACE(name);
    auto table = read_table(*root_out_ / (name + ".csv"), 0);
    ASSERT_TRUE(table.ok()) << table.status().to_string();
    EXPECT_EQ(result(name).rows_total, table->total_rows);
    if (table->header.empty()) {
      EXPECT_EQ(read_->max_row(name), 1u);
      EXPECT_NE(read_->last_row_first(name).find("no rows"), std::string::npos) << read_->last_row_first(name);
      continue;
    }
    ++with_rows;
    EXPECT_EQ(read_->header(name), table->header);
    EXPECT_EQ(std::string(read_->sheet(name)["freeze_panes"].get_string().value()), "A2");
    EXPECT_EQ(std::string(read_->sheet(name)["auto_filter"].get_string().value()).substr(0, 3), "A1:");
    if (name == "raw_kernel_index") {
      ASSERT_GT(table->total_rows, kRawCap);
      EXPECT_EQ(read_->max_row(name), 1 + kRawCap + 1);
      EXPECT_EQ(read_->last_row_first(name), "truncated: 50 of " + std::to_string(table->total_rows) +
                                                 " rows; all rows in raw_kernel_index.csv");
      EXPECT_TRUE(result(name).truncated);
      EXPECT_EQ(result(name).rows_written, kRawCap);
    } else {
      EXPECT_EQ(read_->max_row(name), table->total_rows + 1);
      EXPECT_FALSE(result(name).truncated);
      EXPECT_EQ(result(name).rows_written, table->total_rows);
    }
  }
  // the tables this capture must have (otherwise the checks above prove little)
  EXPECT_GE(with_rows, 12u);
  for (const char* name : {"step_summary", "layer_summary", "block_summary", "operator_summary", "evidence_index",
                           "raw_kernel_index", "cross_rank_alignment", "step_class_summary"})
    EXPECT_GT(result(name).rows_total, 0u) << name;
}

// A capped sheet (report mode bounded) keeps the table's costliest rows: block_summary its 10 rows
// with the largest wall_ms (ties: the earlier row), in source order, and its note row says which
// and where all rows are. A table without its cost column (evidence_index) keeps its first rows.
TEST_F(XlsxReportOnCapture, CappedSheetsKeepTheCostliestRows) {
  REQUIRE_OPENPYXL();
  constexpr size_t kCap = 10;
  const fs::path capped = dir_->path() / "capped.xlsx";
  XlsxOptions opt;
  opt.max_sheet_rows = kCap + 2;
  opt.threads = 2;
  auto sheets = write_report_xlsx(*root_out_, capped, opt);
  ASSERT_TRUE(sheets.ok()) << sheets.status().to_string();
  auto table = read_table(*root_out_ / "block_summary.csv");
  ASSERT_TRUE(table.ok()) << table.status().to_string();
  ASSERT_GT(table->rows.size(), kCap);
  std::vector<size_t> order(table->rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto wall = [&](size_t i) { return std::stod(table->cell(i, "wall_ms")); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return wall(a) > wall(b); });
  order.resize(kCap);
  std::sort(order.begin(), order.end());
  ASSERT_GE(order.back(), kCap) << "the costliest blocks are the first ones: keeping the first rows would pass too";
  Strings want;
  for (const size_t i : order) want.push_back(table->cell(i, "block_id"));

  ReadBack rb;
  ASSERT_TRUE(rb.load(read_back(capped)));
  const int id_col = table->column("block_id");
  ASSERT_GE(id_col, 0);
  Strings got;
  for (size_t r = 1; r <= kCap; ++r) got.push_back(rb.cell_text("block_summary", r, static_cast<size_t>(id_col)));
  EXPECT_EQ(got, want);
  EXPECT_EQ(rb.last_row_first("block_summary"),
            "truncated: 10 of " + std::to_string(table->rows.size()) +
                " rows, those with the largest wall_ms, in source order; all rows in block_summary.csv");
  auto evidence = read_table(*root_out_ / "evidence_index.csv", 1);
  ASSERT_TRUE(evidence.ok());
  ASSERT_GT(evidence->total_rows, kCap);
  EXPECT_EQ(rb.cell_text("evidence_index", 1, 0), evidence->rows[0][0]);  // the first row, as before
  EXPECT_EQ(rb.last_row_first("evidence_index"), "truncated: 10 of " + std::to_string(evidence->total_rows) +
                                                     " rows; all rows in evidence_index.csv");
}

// The table sheets are written by several threads; the workbook is the same part for part as one
// thread writes it (docProps/core.xml, which holds the creation time, left out).
TEST_F(XlsxReportOnCapture, SheetsWrittenByThreadsEqualOneThread) {
  const fs::path one = dir_->path() / "one-thread.xlsx", four = dir_->path() / "four-threads.xlsx";
  XlsxOptions opt;
  opt.raw_kernel_index_rows = kRawCap;
  opt.threads = 1;
  auto a = write_report_xlsx(*root_out_, one, opt);
  opt.threads = 4;
  auto b = write_report_xlsx(*root_out_, four, opt);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i) {
    EXPECT_EQ((*a)[i].name, (*b)[i].name);
    EXPECT_EQ((*a)[i].rows_written, (*b)[i].rows_written) << (*a)[i].name;
    EXPECT_EQ((*a)[i].rows_total, (*b)[i].rows_total) << (*a)[i].name;
  }
  const std::string compare =
      "/usr/bin/env python3 -c \"import sys, zipfile\n"
      "a, b = (zipfile.ZipFile(p) for p in sys.argv[1:])\n"
      "names = sorted(n for n in a.namelist() if n != 'docProps/core.xml')\n"
      "assert names == sorted(n for n in b.namelist() if n != 'docProps/core.xml'), 'parts differ'\n"
      "assert any(n.startswith('xl/worksheets/sheet') for n in names), 'no sheets'\n"
      "bad = [n for n in names if a.read(n) != b.read(n)]\n"
      "sys.exit('differ: ' + ' '.join(bad) if bad else 0)\" " +
      quoted(one.string()) + " " + quoted(four.string());
  EXPECT_EQ(std::system(compare.c_str()), 0) << compare;
}

TEST_F(XlsxReportOnCapture, NumbersAreNumberCellsAndIdsAreText) {
  REQUIRE_OPENPYXL();
  using T = std::set<std::string>;
  EXPECT_EQ(read_->types("step_summary", "wall_ms"), T{"n"});
  EXPECT_EQ(read_->types("step_summary", "row_start"), T{"n"});
  EXPECT_EQ(read_->types("step_summary", "main_layer_count"), (T{"empty", "n"}));  // empty on head rows
  EXPECT_EQ(read_->types("step_summary", "rank_id"), T{"s"});
  EXPECT_EQ(read_->first_text("step_summary", "rank_id"), "rank0");
  EXPECT_EQ(read_->types("step_summary", "segment_id"), T{"s"});
  EXPECT_EQ(read_->types("step_summary", "complete"), T{"s"});
  // epoch µs with decimals: more digits than Excel keeps, so the exact text is kept
  EXPECT_EQ(read_->types("step_summary", "start_us"), T{"s"});
  EXPECT_EQ(read_->types("operator_summary", "duration_sum_us"), T{"n"});
  EXPECT_EQ(read_->types("operator_summary", "rank_id"), T{"s"});
  EXPECT_EQ(read_->types("raw_kernel_index", "row_idx"), T{"n"});
  EXPECT_EQ(read_->types("raw_kernel_index", "event_id"), T{"s"});
  EXPECT_EQ(read_->types("raw_kernel_index", "duration_us"), T{"n"});
  EXPECT_EQ(read_->types("evidence_index", "evidence_id"), T{"s"});
}

TEST_F(XlsxReportOnCapture, FormulaLookingKernelNamesStayText) {
  REQUIRE_OPENPYXL();
  std::set<std::string> sheets;
  for (auto hit : (*read_).doc["prefixed"].get_array()) {
    const std::string sheet{std::string_view(hit["sheet"])};
    const std::string type{std::string_view(hit["type"])};
    const std::string value{std::string_view(hit["value"])};
    EXPECT_EQ(type, "s") << sheet << " " << std::string_view(hit["cell"]) << " " << value;
    if (value.find("SUM(1+1)") != std::string::npos) {
      // as the CSV holds it: our CSV writer guards the cell with a leading apostrophe
      EXPECT_EQ(value, std::string("'") + kFormulaName) << sheet;
      sheets.insert(sheet);
    }
  }
  EXPECT_TRUE(sheets.count("raw_kernel_index")) << *json_;
  EXPECT_TRUE(sheets.count("operator_summary")) << *json_;
}

TEST_F(XlsxReportOnCapture, JsonSheetsFollowTheirFiles) {
  REQUIRE_OPENPYXL();
  // bubble_windows: the first object's keys, one row per line
  auto text = read_file(*root_out_ / "evidence" / "bubble_windows.jsonl");
  ASSERT_TRUE(text.ok());
  size_t lines = 0;
  for (char c : *text) lines += c == '\n';
  ASSERT_GT(lines, 0u);
  simdjson::dom::parser p;
  const std::string first_line = text->substr(0, text->find('\n'));
  Strings keys;
  simdjson::dom::object first_object;
  ASSERT_EQ(p.parse(first_line).get(first_object), simdjson::SUCCESS);
  for (auto field : first_object) keys.emplace_back(field.key);
  EXPECT_EQ(read_->header("bubble_windows"), keys);
  EXPECT_EQ(read_->max_row("bubble_windows"), lines + 1);
  EXPECT_EQ(read_->types("bubble_windows", "evidence_id"), std::set<std::string>{"s"});
  EXPECT_EQ(read_->types("bubble_windows", "duration_us"), std::set<std::string>{"n"});
  EXPECT_EQ(read_->types("bubble_windows", "bubble_index"), std::set<std::string>{"n"});

  // diagnosis_findings: one row per finding, lists as compact JSON text
  auto findings_text = read_file(*root_out_ / "diagnosis_findings.json");
  ASSERT_TRUE(findings_text.ok());
  simdjson::dom::parser fp;
  const auto findings = fp.parse(*findings_text)["diagnosis_findings"].get_array().value();
  ASSERT_GT(findings.size(), 0u);
  EXPECT_EQ(read_->max_row("diagnosis_findings"), findings.size() + 1);
  EXPECT_EQ(result("diagnosis_findings").rows_total, findings.size());
  EXPECT_EQ(read_->types("diagnosis_findings", "finding_type"), std::set<std::string>{"s"});
  EXPECT_EQ(read_->types("diagnosis_findings", "evidence_ids"), std::set<std::string>{"s"});
  EXPECT_EQ(read_->first_text("diagnosis_findings", "evidence_ids").substr(0, 2), "[\"");
  EXPECT_EQ(read_->first_text("diagnosis_findings", "evidence_ids"),
            simdjson::minify(findings.at(0)["evidence_ids"].value()));
}

TEST_F(XlsxReportOnCapture, CaseSummaryCarriesTheManifestCounts) {
  REQUIRE_OPENPYXL();
  EXPECT_EQ(read_->header("case_summary"), (Strings{"key", "value", "source"}));
  // key -> [value, type]
  std::map<std::string, std::pair<std::string, std::string>> kv;
  for (auto row : read_->sheet("case_summary")["rows"].get_array()) {
    std::string_view key;
    if (row.at(0).at(0).get_string().get(key)) continue;
    simdjson::dom::element v = row.at(1).at(0).value();
    std::string value = v.is_string() ? std::string(std::string_view(v)) : simdjson::minify(v);
    kv[std::string(key)] = {value, std::string(std::string_view(row.at(1).at(1)))};
  }
  EXPECT_EQ(kv["rank_count"], (std::pair<std::string, std::string>{"4", "n"}));
  EXPECT_EQ(kv["step_count"].second, "n");
  EXPECT_EQ(kv["layer_count"].second, "n");
  EXPECT_EQ(kv["kernel_rows"].second, "n");
  EXPECT_EQ(kv["step_summary_rows"].first, std::to_string(result("step_summary").rows_total));
  EXPECT_EQ(kv["findings.device_idle_bubble"].second, "n");
  EXPECT_EQ(kv["finding_count"].first, std::to_string(result("diagnosis_findings").rows_total));
  EXPECT_EQ(kv["root"].second, "s");
}

// A hand-made root: formula-looking text, ids with leading zeros, a column that turns non-numeric
// after the sample, bad UTF-8, an over-long cell, absent and empty tables, and the per-sheet row limit.
class XlsxReportHandMade : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string csv = "name,rank_id,count,mixed,late\n";
    csv += "=1+1,3,5,1,1\n+cmd,007,6,x,2\n@sum,4,7,2,3\n-minus,5,8,3,4\n";
    csv += "bad\xff" "byte,6,9,4,5\n";
    csv += std::string(40000, 'w') + ",7,10,5,6\n";
    for (int i = 6; i < 1100; ++i) csv += "k" + std::to_string(i) + ",1," + std::to_string(i) + ",0," + (i == 1050 ? "n/a" : std::to_string(i)) + "\n";
    ascprof::testing::write_text(dir_.path() / "aicpu_summary.csv", csv);
    ascprof::testing::write_text(dir_.path() / "wait_anchor_ops.csv", "");
    ascprof::testing::write_text(dir_.path() / "hccl_op_summary.csv",
                                 "ts,ratio,big_int,rank_ids,small_us\n"
                                 "1766406184511064.495,0.9945945945945946,1766406184511064495,\"0,1\",123456789012.345678\n"
                                 "1766406184511065,0.5,12,2,-0.25\n");
    ascprof::testing::write_text(dir_.path() / "evidence" / "bubble_windows.jsonl",
                                 "{\"evidence_id\":\"evd_1\",\"note\":\"=HYPERLINK(\\\"http://x\\\")\",\"n\":2.5}\n"
                                 "{\"evidence_id\":\"evd_2\",\"n\":3}\n");
  }
  ascprof::testing::ScratchDir dir_{"xlsx-hand"};
};

TEST_F(XlsxReportHandMade, TextStaysTextAndLimitsAreVisible) {
  auto sheets = write_report_xlsx(dir_.path(), dir_.path() / "r.xlsx");
  ASSERT_TRUE(sheets.ok()) << sheets.status().to_string();
  REQUIRE_OPENPYXL();
  ReadBack rb;
  ASSERT_TRUE(rb.load(read_back(dir_.path() / "r.xlsx", {"=", "+", "@", "-"})));
  using T = std::set<std::string>;
  EXPECT_EQ(rb.max_row("aicpu_summary"), 1100u + 1u);
  EXPECT_EQ(rb.types("aicpu_summary", "name"), T{"s"});
  EXPECT_EQ(rb.types("aicpu_summary", "rank_id"), T{"s"});
  EXPECT_EQ(rb.first_text("aicpu_summary", "rank_id"), "3");
  EXPECT_EQ(rb.types("aicpu_summary", "count"), T{"n"});
  EXPECT_EQ(rb.types("aicpu_summary", "mixed"), T{"s"});
  // numeric in the first 1000 rows: numbers, and the one later cell that is not a number is text
  EXPECT_EQ(rb.types("aicpu_summary", "late"), (T{"n", "s"}));
  // every formula-looking cell is a string with the text as written
  std::set<std::string> values;
  for (auto hit : rb.doc["prefixed"].get_array()) {
    EXPECT_EQ(std::string_view(hit["type"]), "s") << std::string_view(hit["value"]);
    values.insert(std::string(std::string_view(hit["value"])));
  }
  EXPECT_EQ(values, (std::set<std::string>{"=1+1", "+cmd", "@sum", "-minus", "=HYPERLINK(\"http://x\")"}));
  // bubble_windows: the first object's keys; a later object without a key leaves the cell empty
  EXPECT_EQ(rb.header("bubble_windows"), (Strings{"evidence_id", "note", "n"}));
  EXPECT_EQ(rb.types("bubble_windows", "n"), T{"n"});
  EXPECT_EQ(rb.types("bubble_windows", "note"), (T{"empty", "s"}));
  // Excel keeps 15 significant digits: numbers it would round in the integer part or first three
  // decimals stay text, longer ratios are numbers
  EXPECT_EQ(rb.types("hccl_op_summary", "ts"), T{"s"});
  EXPECT_EQ(rb.first_text("hccl_op_summary", "ts"), "1766406184511064.495");
  EXPECT_EQ(rb.types("hccl_op_summary", "big_int"), T{"s"});
  EXPECT_EQ(rb.types("hccl_op_summary", "ratio"), T{"n"});
  EXPECT_EQ(rb.types("hccl_op_summary", "small_us"), T{"n"});
  EXPECT_EQ(rb.types("hccl_op_summary", "rank_ids"), T{"s"});
  // absent and empty tables: one note row
  EXPECT_EQ(rb.max_row("step_summary"), 1u);
  EXPECT_EQ(rb.cell_text("step_summary", 0, 0), "step_summary.csv is absent: no rows");
  EXPECT_EQ(rb.cell_text("wait_anchor_ops", 0, 0), "wait_anchor_ops.csv is empty: no rows");
  EXPECT_EQ(rb.cell_text("diagnosis_findings", 0, 0), "diagnosis_findings.json is absent: no rows");
  EXPECT_EQ(rb.max_row("raw_kernel_index"), 1u);

  // a per-sheet row limit of 10: 8 data rows, then the note
  XlsxOptions small;
  small.max_sheet_rows = 10;
  auto capped = write_report_xlsx(dir_.path(), dir_.path() / "small.xlsx", small);
  ASSERT_TRUE(capped.ok()) << capped.status().to_string();
  ReadBack rs;
  ASSERT_TRUE(rs.load(read_back(dir_.path() / "small.xlsx")));
  EXPECT_EQ(rs.max_row("aicpu_summary"), 10u);
  EXPECT_EQ(rs.last_row_first("aicpu_summary"), "truncated: 8 of 1100 rows; all rows in aicpu_summary.csv");
  bool found = false;
  for (const auto& s : *capped)
    if (s.name == "aicpu_summary") {
      found = true;
      EXPECT_TRUE(s.truncated);
      EXPECT_EQ(s.rows_written, 8u);
      EXPECT_EQ(s.rows_total, 1100u);
    }
  EXPECT_TRUE(found);
}

TEST_F(XlsxReportHandMade, BadUtf8AndOverlongCellsAreMadeReadable) {
  auto sheets = write_report_xlsx(dir_.path(), dir_.path() / "r.xlsx");
  ASSERT_TRUE(sheets.ok()) << sheets.status().to_string();
  REQUIRE_OPENPYXL();
  // the reader parses the XML: a raw 0xFF byte would make the sheet unreadable
  const std::string json = read_back(dir_.path() / "r.xlsx", {"bad", "www"});
  ReadBack rb;
  ASSERT_TRUE(rb.load(json)) << json;
  std::set<std::string> values;
  for (auto hit : rb.doc["prefixed"].get_array()) values.insert(std::string(std::string_view(hit["value"])));
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(*values.begin(), "bad\xEF\xBF\xBD" "byte");
  const std::string& longest = *values.rbegin();
  // 32,766 'w' and an ellipsis: Excel's 32,767 characters
  EXPECT_EQ(longest.size(), 32766u + 3u);
  EXPECT_EQ(longest.substr(longest.size() - 3), "\xE2\x80\xA6");
}

TEST(XlsxReportErrors, ABrokenTableFailsAndLeavesNoFile) {
  ascprof::testing::ScratchDir dir("xlsx-broken");
  ascprof::testing::write_text(dir.path() / "step_summary.csv", "a,b\n1,2\n");
  ascprof::testing::write_text(dir.path() / "diagnosis_findings.json", "{\"diagnosis_findings\": [");
  ascprof::testing::write_text(dir.path() / "report" / "report.xlsx", "old");
  auto r = write_report_xlsx(dir.path(), dir.path() / "report" / "report.xlsx");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kParse);
  EXPECT_NE(r.status().message().find("diagnosis_findings.json"), std::string::npos) << r.status().to_string();
  // the earlier workbook is untouched and no temporary is left
  Strings files;
  for (const auto& e : fs::directory_iterator(dir.path() / "report")) files.push_back(e.path().filename().string());
  EXPECT_EQ(files, Strings{"report.xlsx"});
  EXPECT_EQ(*read_file(dir.path() / "report" / "report.xlsx"), "old");

  auto missing = write_report_xlsx(dir.path() / "nope", dir.path() / "x.xlsx");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kIo);
  EXPECT_FALSE(fs::exists(dir.path() / "x.xlsx"));
}

}  // namespace
}  // namespace ascprof::report

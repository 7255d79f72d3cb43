// The operator deep dive (issue 9) in the three reports, from a hand-made root output folder that
// follows /work/notes/deep_dive_schema.md: report.md copies the CSV/JSON numbers and texts and
// escapes input, report.xlsx has the operator_deep_dive sheet with id-like columns as text,
// report.html embeds the data escaped for <script>; an older folder without the files says so.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "ascprof/common/files.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/report/report.hpp"
#include "report/deep_dive_view.hpp"
#include "support/test_support.hpp"

namespace ascprof::report {
namespace {

namespace fs = std::filesystem;
using Row = std::map<std::string, std::string>;

const std::vector<std::string> kColumns = {
    "deep_dive_id", "scope", "rank_id", "hot_rank", "name", "task_type", "op_type", "shape_class", "input_shapes",
    "input_dtypes", "rank_count", "call_count", "total_us", "avg_us", "min_us", "max_us", "kernel_time_share",
    "cumulative_share", "wait_avg_us", "wait_share", "block_dim_min", "block_dim_max", "mix_block_dim_max",
    "cores_of_type", "aic_mac_ratio", "aic_scalar_ratio", "aic_mte1_ratio", "aic_mte2_ratio", "aic_fixpipe_ratio",
    "aic_icache_miss_rate", "aiv_vec_ratio", "aiv_scalar_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio",
    "aiv_icache_miss_rate", "cube_utilization_pct", "hf32_eligible_share", "bound_family", "work_kind",
    "work_per_call", "achieved", "achieved_unit", "peak", "efficiency", "op_stat_total_us", "op_stat_ratio_pct",
    "host_api", "host_api_avg_us", "host_api_count", "slowest_rank_id", "slowest_rank_avg_us", "classifications",
    "severity", "verdict", "evidence_ids", "gaps"};
// columns that are text in the JSON (the others are numbers or null)
const std::vector<std::string> kTextColumns = {"deep_dive_id", "scope",       "rank_id",        "name",
                                               "task_type",    "op_type",     "shape_class",    "input_shapes",
                                               "input_dtypes", "bound_family", "work_kind",     "achieved_unit",
                                               "host_api",     "slowest_rank_id", "severity",   "verdict"};
const std::vector<std::string> kListColumns = {"classifications", "evidence_ids", "gaps"};

constexpr const char* kHostile = "Cast<script>alert(1)</script>|x";
constexpr const char* kHostileMd = "Cast&lt;script&gt;alert(1)&lt;/script&gt;\\|x";
constexpr const char* kHostileScript = "Cast\\u003cscript\\u003ealert(1)\\u003c/script\\u003e|x";

// The classified hot operator (root scope) and a healthy one, then one row per rank.
std::vector<Row> rows() {
  Row hot = {{"deep_dive_id", "odd_00000000000000a1"}, {"scope", "root"}, {"hot_rank", "1"}, {"name", kHostile},
             {"task_type", "AI_VECTOR_CORE"}, {"op_type", "Cast"}, {"shape_class", "shape_00ab12cd34ef5678"},
             {"input_shapes", "4096,7168;7168,2048"}, {"input_dtypes", "DT_BF16;DT_BF16"}, {"rank_count", "2"},
             {"call_count", "1200"}, {"total_us", "614760.5"}, {"avg_us", "512.300417"}, {"min_us", "480.1"},
             {"max_us", "700.25"}, {"kernel_time_share", "0.4231"}, {"cumulative_share", "0.4231"},
             {"wait_avg_us", "1.5"}, {"wait_share", "0.0029"}, {"block_dim_min", "40"}, {"block_dim_max", "40"},
             {"cores_of_type", "40"}, {"aiv_vec_ratio", "0.12"}, {"aiv_scalar_ratio", "0.7"},
             {"aiv_mte2_ratio", "0.1"}, {"aiv_mte3_ratio", "0.05"}, {"bound_family", "scalar"},
             {"work_kind", "bytes"}, {"work_per_call", "58720256"}, {"achieved", "114.62"},
             {"achieved_unit", "GB/s"}, {"peak", "1600"}, {"efficiency", "0.0716"},
             {"op_stat_total_us", "614760.5"}, {"host_api", "aclnnCast"}, {"host_api_avg_us", "35.2"},
             {"host_api_count", "1200"}, {"slowest_rank_id", "rank1"}, {"slowest_rank_avg_us", "530.75"},
             {"classifications", "vector_scalar_heavy;low_bandwidth_efficiency"}, {"severity", "high"},
             {"verdict", "Vector kernel dominated by scalar work: scalar address arithmetic -> vectorise the tail"},
             {"evidence_ids", "evt_0_12;evt_1_40"}, {"gaps", "aiv_icache_miss_rate not collected"}};
  Row healthy = {{"deep_dive_id", "odd_00000000000000b2"}, {"scope", "root"}, {"hot_rank", "2"},
                 {"name", "aclnnAdd_AddAiCore_Add"}, {"task_type", "AI_CORE"}, {"op_type", "Add"},
                 {"shape_class", "no_shape"}, {"rank_count", "2"}, {"call_count", "2000"}, {"total_us", "200000"},
                 {"avg_us", "100"}, {"min_us", "90"}, {"max_us", "120"}, {"kernel_time_share", "0.1377"},
                 {"cumulative_share", "0.5608"}, {"bound_family", "cube"}, {"slowest_rank_id", "rank0"},
                 {"slowest_rank_avg_us", "101.5"}, {"verdict", "no pathology found"}};
  Row rank0 = hot;
  rank0["deep_dive_id"] = "odd_00000000000000c3";
  rank0["scope"] = "rank";
  rank0["rank_id"] = "rank0";
  rank0["rank_count"] = "1";
  rank0["kernel_time_share"] = "0.45";
  rank0["classifications"] = "vector_scalar_heavy";
  rank0["slowest_rank_id"] = "";
  rank0["slowest_rank_avg_us"] = "";
  rank0["op_stat_ratio_pct"] = "44.9";
  Row rank1 = healthy;
  rank1["deep_dive_id"] = "odd_00000000000000d4";
  rank1["scope"] = "rank";
  rank1["rank_id"] = "rank1";
  rank1["hot_rank"] = "1";
  rank1["rank_count"] = "1";
  rank1["slowest_rank_id"] = "";
  rank1["slowest_rank_avg_us"] = "";
  return {hot, healthy, rank0, rank1};
}

std::string csv_cell(const std::string& v) {
  if (v.find_first_of(",\"\n") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_text() {
  std::string out;
  for (size_t i = 0; i < kColumns.size(); ++i) out += (i ? "," : "") + kColumns[i];
  out += "\n";
  for (const Row& r : rows()) {
    for (size_t i = 0; i < kColumns.size(); ++i) {
      auto it = r.find(kColumns[i]);
      out += (i ? "," : "") + csv_cell(it == r.end() ? "" : it->second);
    }
    out += "\n";
  }
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

void write_details(JsonWriter& w, const Row& r) {
  w.key("details");
  w.begin_array();
  if (r.at("scope") == "root" && r.count("classifications") && !r.at("classifications").empty()) {
    w.begin_object();
    w.kv("id", "vector_scalar_heavy");
    w.kv("title", "Vector kernel dominated by scalar work");
    w.kv("severity", "high");
    w.key("facts");
    w.begin_array();
    w.value("aiv_scalar_ratio = 0.700 (>= 0.5)");
    w.value("aiv_vec_ratio = 0.120 (< 0.3)");
    w.end_array();
    w.kv("inference", "The vector unit idles while the scalar unit computes addresses.");
    w.kv("cause", "Scalar address arithmetic in the inner loop");
    w.kv("suggestion", "Vectorise the tail handling; keep shapes 32-byte aligned");
    w.end_object();
    w.begin_object();
    w.kv("id", "low_bandwidth_efficiency");
    w.kv("title", "Low HBM efficiency");
    w.kv("severity", "medium");
    w.key("facts");
    w.begin_array();
    w.value("efficiency = 0.0716 (< 0.3)");
    w.end_array();
    w.kv("inference", "The kernel moves its bytes far below the HBM peak.");
    w.kv("cause", "Small tiles");
    w.kv("suggestion", "Fuse the cast into the producer");
    w.end_object();
  }
  w.end_array();
}

std::string json_text() {
  JsonWriter w(true);
  w.begin_object();
  w.kv("schema", "operator_deep_dive/v1");
  w.kv("root", "/captures/run1");
  w.key("chip");
  w.begin_object();
  w.kv("name", "Ascend910B");
  w.kv("assumed", true);
  w.kv("source", "knowledge default (no chip in the capture)");
  w.kv("cube_cores", 20);
  w.kv("vector_cores", 40);
  w.kv("cube_tflops", 313.0);
  w.kv("hbm_gbps", 1600.0);
  w.end_object();
  w.key("selection");
  w.begin_object();
  w.kv("coverage", 0.8);
  w.kv("min_operators", 20);
  w.kv("max_operators", 50);
  w.end_object();
  w.key("rows");
  w.begin_array();
  for (const Row& r : rows()) {
    w.begin_object();
    for (const auto& c : kColumns) {
      auto it = r.find(c);
      const std::string v = it == r.end() ? "" : it->second;
      w.key(c);
      if (contains(kListColumns, c)) {
        w.begin_array();
        for (size_t b = 0; !v.empty() && b <= v.size();) {
          const size_t e = std::min(v.find(';', b), v.size());
          w.value(v.substr(b, e - b));
          b = e + 1;
        }
        w.end_array();
      } else if (contains(kTextColumns, c)) {
        w.value(v);
      } else if (v.empty()) {
        w.null();
      } else {
        w.raw(v);  // the CSV's number text
      }
    }
    write_details(w, r);
    w.end_object();
  }
  w.end_array();
  w.key("host_api");
  w.begin_array();
  w.begin_object();
  w.kv("rank_id", "rank0");
  w.kv("level", "runtime");
  w.kv("api", "StreamSynchronize");
  w.kv("time_us", 90660.49);
  w.kv("count", 7);
  w.kv("avg_us", 12951.5);
  w.kv("share_of_span", 0.12);
  w.kv("classification", "sync_heavy");
  w.end_object();
  w.end_array();
  w.end_object();
  return w.take();
}

void write_deep_dive(const fs::path& root, bool json = true) {
  ascprof::testing::write_text(root / "operator_deep_dive.csv", csv_text());
  if (json) ascprof::testing::write_text(root / "operator_deep_dive.json", json_text());
}

size_t count(std::string_view hay, std::string_view needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string_view::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

// The deep dive section of report.md: from its heading to the next "## ".
std::string section(const std::string& md) {
  const size_t b = md.find("## 8. Operator Deep Dive");
  if (b == std::string::npos) return {};
  const size_t e = md.find("\n## ", b + 3);
  return md.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

std::string data_json(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"data\">";
  const size_t b = html.find(open);
  if (b == std::string::npos) return {};
  const size_t e = html.find("</script>", b);
  return html.substr(b + open.size(), e - b - open.size());
}

// Sheet names of an .xlsx and, for one sheet, its header and the cell kinds per column, read with
// Python's standard library (zipfile + ElementTree), so the check runs without openpyxl.
constexpr const char* kZipReader = R"PY(
import json, re, sys, zipfile
import xml.etree.ElementTree as ET
ns = {'m': 'http://schemas.openxmlformats.org/spreadsheetml/2006/main',
      'r': 'http://schemas.openxmlformats.org/officeDocument/2006/relationships'}
z = zipfile.ZipFile(sys.argv[1])
wb = ET.fromstring(z.read('xl/workbook.xml'))
rels = ET.fromstring(z.read('xl/_rels/workbook.xml.rels'))
target = {r.get('Id'): r.get('Target') for r in rels}
sheets = [(s.get('name'), target[s.get('{%s}id' % ns['r'])]) for s in wb.find('m:sheets', ns)]
out = {'sheets': [n for n, _ in sheets], 'header': [], 'kinds': {}}
shared = []
if 'xl/sharedStrings.xml' in z.namelist():
    for si in ET.fromstring(z.read('xl/sharedStrings.xml')).findall('m:si', ns):
        shared.append(''.join(t.text or '' for t in si.iter('{%s}t' % ns['m'])))
def text(c):
    if c.get('t') == 's':
        return shared[int(c.find('m:v', ns).text)]
    return ''.join(t.text or '' for t in c.iter('{%s}t' % ns['m']))
for name, path in sheets:
    if name != sys.argv[2]:
        continue
    ws = ET.fromstring(z.read('xl/' + path.lstrip('/').replace('xl/', '', 1)))
    rows = ws.find('m:sheetData', ns).findall('m:row', ns)
    col = lambda c: re.match(r'[A-Z]+', c.get('r')).group(0)
    head = {col(c): text(c) for c in rows[0].findall('m:c', ns)} if rows else {}
    out['header'] = list(head.values())
    for r in rows[1:]:
        for c in r.findall('m:c', ns):
            kind = 'n' if c.get('t') in (None, 'n') else 's'
            out['kinds'].setdefault(head.get(col(c), col(c)), [])
            if kind not in out['kinds'][head.get(col(c), col(c))]:
                out['kinds'][head.get(col(c), col(c))].append(kind)
json.dump(out, sys.stdout)
)PY";

std::string read_sheet(const fs::path& dir, const fs::path& xlsx, const std::string& sheet) {
  const fs::path script = dir / "zip_reader.py";
  ascprof::testing::write_text(script, kZipReader);
  const std::string cmd = "python3 '" + script.string() + "' '" + xlsx.string() + "' '" + sheet + "'";
  std::string out;
  if (FILE* pipe = ::popen(cmd.c_str(), "r")) {
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
    EXPECT_EQ(::pclose(pipe), 0) << cmd;
  }
  return out;
}

TEST(DeepDiveView, ShiftDecimalMovesThePointWithoutRounding) {
  EXPECT_EQ(shift_decimal("614760.5", -3), "614.7605");
  EXPECT_EQ(shift_decimal("200000", -3), "200");
  EXPECT_EQ(shift_decimal("0.4231", 2), "42.31");
  EXPECT_EQ(shift_decimal("0.45", 2), "45");
  EXPECT_EQ(shift_decimal("0.0005", 2), "0.05");
  EXPECT_EQ(shift_decimal("12", -3), "0.012");
  EXPECT_EQ(shift_decimal("-1.5", 2), "-150");
  EXPECT_EQ(shift_decimal("1e-3", 2), "1e-3");  // not a plain decimal: unchanged
  EXPECT_EQ(shift_decimal("n/a", 2), "n/a");
}

class DeepDiveReport : public ::testing::Test {
 protected:
  ascprof::testing::ScratchDir dir_{"deep-dive-report"};
  fs::path root() const { return dir_.path() / "out" / "root1"; }
};

TEST_F(DeepDiveReport, AllThreeReportsShowTheDeepDive) {
  write_deep_dive(root());
  auto r = write_report(root());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->html_status, "ok") << r->html_error;

  // ---- report.md
  auto md = read_file(root() / "report" / "report.md");
  ASSERT_TRUE(md.ok());
  const size_t s7 = md->find("## 7. Operator View"), s8 = md->find("## 8. Operator Deep Dive"),
               s9 = md->find("## 9. Step Inventory");
  ASSERT_NE(s8, std::string::npos);
  EXPECT_LT(s7, s8);
  EXPECT_LT(s8, s9);
  const std::string sec = section(*md);
  EXPECT_NE(sec.find("Chip: **Ascend910B** (assumed, not detected; source: knowledge default (no chip in the capture))"
                     " · 20 cube cores, 40 vector cores · peaks 313 TFLOPS (cube), 1600 GB/s (HBM)."),
            std::string::npos)
      << sec;
  EXPECT_NE(sec.find("smallest prefix reaching 0.8 of the scope's kernel time, at least 20 and at most 50"), std::string::npos);
  EXPECT_NE(sec.find("2 operators, 1 classified"), std::string::npos);
  // the root rows, numbers as the CSV has them (total_us and the share with the point moved)
  EXPECT_NE(sec.find(std::string("| 1 | ") + kHostileMd +
                     " | AI_VECTOR_CORE | 4096,7168;7168,2048 | 1200 | 614.7605 | 42.31 % | 512.300417 | 0.0716 | high "
                     "| vector_scalar_heavy, low_bandwidth_efficiency |"),
            std::string::npos)
      << sec;
  EXPECT_NE(sec.find("| 2 | aclnnAdd_AddAiCore_Add | AI_CORE | no_shape | 2000 | 200 | 13.77 % | 100 |  |  |  |"),
            std::string::npos)
      << sec;
  // one card (the healthy row has none), with the JSON's texts
  EXPECT_EQ(count(sec, "#### "), 1u);
  EXPECT_NE(sec.find(std::string("#### #1 ") + kHostileMd + " (AI_VECTOR_CORE, 4096,7168;7168,2048) — high"),
            std::string::npos)
      << sec;
  EXPECT_NE(sec.find("- **Facts**: calls 1200; avg 512.300417 us; share 42.31 % of the root's kernel time; "
                     "aiv_scalar_ratio = 0.700 (&gt;= 0.5); aiv_vec_ratio = 0.120 (&lt; 0.3); efficiency = 0.0716 (&lt; 0.3)\n"),
            std::string::npos)
      << sec;
  // two rules: one nested bullet each, named by the rule's title
  EXPECT_NE(sec.find("- **Inference**:\n  - *Vector kernel dominated by scalar work*: The vector unit idles while the "
                     "scalar unit computes addresses.\n  - *Low HBM efficiency*: The kernel moves its bytes far below the "
                     "HBM peak.\n"),
            std::string::npos)
      << sec;
  EXPECT_NE(sec.find("- **Likely cause**:\n  - *Vector kernel dominated by scalar work*: Scalar address arithmetic in "
                     "the inner loop\n  - *Low HBM efficiency*: Small tiles\n"),
            std::string::npos);
  EXPECT_NE(sec.find("- **Suggested change**:\n  - *Vector kernel dominated by scalar work*: Vectorise the tail "
                     "handling; keep shapes 32-byte aligned\n  - *Low HBM efficiency*: Fuse the cast into the producer\n"),
            std::string::npos);
  EXPECT_NE(sec.find("- **Evidence**: evt_0_12, evt_1_40\n"), std::string::npos);
  EXPECT_NE(sec.find("- **Gaps**: aiv_icache_miss_rate not collected\n"), std::string::npos);
  // per rank: the classified operator of rank 0, none on rank 1
  EXPECT_NE(sec.find(std::string("- rank0: #1 ") + kHostileMd + " (vector_scalar_heavy, high, share 45 %)\n"),
            std::string::npos)
      << sec;
  EXPECT_NE(sec.find("- rank1: no classified operator among 1 hot operators\n"), std::string::npos);
  // host API from the JSON, numbers as written there
  EXPECT_NE(sec.find("| rank0 | runtime | StreamSynchronize | 90660.49 | 7 | 12951.5 | 12 % | sync_heavy |"), std::string::npos)
      << sec;
  // input text never becomes markup or breaks a table row
  EXPECT_EQ(md->find("<script"), std::string::npos);
  EXPECT_EQ(md->find("</script>|x"), std::string::npos);

  // ---- report.xlsx: the sheet after operator_class_summary, ids and codes as text
  const std::string xl = read_sheet(dir_.path(), root() / "report" / "report.xlsx", "operator_deep_dive");
  simdjson::dom::parser p;
  simdjson::dom::element x;
  ASSERT_EQ(p.parse(xl).get(x), simdjson::SUCCESS) << xl;
  std::vector<std::string> sheets;
  for (auto v : x["sheets"].get_array()) sheets.emplace_back(std::string_view(v));
  auto at = std::find(sheets.begin(), sheets.end(), "operator_deep_dive");
  ASSERT_NE(at, sheets.end());
  ASSERT_NE(at, sheets.begin());
  EXPECT_EQ(*(at - 1), "operator_class_summary");
  std::vector<std::string> header;
  for (auto v : x["header"].get_array()) header.emplace_back(std::string_view(v));
  EXPECT_EQ(header, kColumns);
  auto kinds = [&x](const char* col) {
    std::string out;
    simdjson::dom::array a;
    if (x["kinds"][col].get(a) != simdjson::SUCCESS) return std::string("<none>");
    for (auto v : a) out += std::string(std::string_view(v));
    return out;
  };
  for (const char* col : {"deep_dive_id", "rank_id", "evidence_ids", "classifications", "shape_class", "input_shapes"})
    EXPECT_EQ(kinds(col), "s") << col;
  for (const char* col : {"hot_rank", "call_count", "total_us", "kernel_time_share"}) EXPECT_EQ(kinds(col), "n") << col;
  auto manifest = read_file(root() / "report" / "manifest.json");
  ASSERT_TRUE(manifest.ok());
  simdjson::dom::parser mp;
  simdjson::dom::element m;
  ASSERT_EQ(mp.parse(*manifest).get(m), simdjson::SUCCESS);
  EXPECT_EQ(uint64_t(m["sheet_rows"]["operator_deep_dive"]["rows_total"]), 4u);
  EXPECT_EQ(std::string_view(m["sheet_rows"]["operator_deep_dive"]["source"]), "operator_deep_dive.csv");

  // ---- report.html: the data is in the page, escaped for <script>
  auto html = read_file(root() / "report" / "report.html");
  ASSERT_TRUE(html.ok());
  EXPECT_EQ(count(*html, "<script"), 2u);  // the data and the page's own script
  EXPECT_EQ(count(*html, "alert(1)</script>"), 0u);
  EXPECT_GE(count(*html, kHostileScript), 1u);
  EXPECT_NE(html->find("id=\"dd-table\""), std::string::npos);
  const std::string data = data_json(*html);
  simdjson::dom::parser hp;
  simdjson::dom::element doc;
  ASSERT_EQ(hp.parse(data).get(doc), simdjson::SUCCESS);
  simdjson::dom::element dd = doc["deep_dive"];
  EXPECT_EQ(std::string_view(dd["chip"]["name"]), "Ascend910B");
  simdjson::dom::array dd_rows = dd["rows"];
  ASSERT_EQ(dd_rows.size(), 4u);
  EXPECT_EQ(std::string_view(dd_rows.at(0)["name"]), kHostile);
  EXPECT_EQ(double(dd_rows.at(0)["total_us"]), 614760.5);
  EXPECT_EQ(simdjson::dom::array(dd_rows.at(0)["details"]).size(), 2u);
  EXPECT_EQ(std::string_view(dd_rows.at(0)["details"].at(0)["suggestion"]),
            "Vectorise the tail handling; keep shapes 32-byte aligned");
  EXPECT_EQ(std::string_view(dd_rows.at(0)["evidence_ids"].at(1)), "evt_1_40");
  EXPECT_EQ(simdjson::dom::array(dd["host_api"]).size(), 1u);
  EXPECT_EQ(uint64_t(dd["counts"]["rank_rows"]), 2u);
}

TEST_F(DeepDiveReport, AbsentFilesSayNotAvailable) {
  fs::create_directories(root());
  auto r = write_report(root());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  auto md = read_file(root() / "report" / "report.md");
  ASSERT_TRUE(md.ok());
  EXPECT_NE(md->find("## 8. Operator Deep Dive\n\nNot available: this output folder has no operator_deep_dive.csv"),
            std::string::npos)
      << section(*md);
  EXPECT_EQ(count(section(*md), "\n"), 3u);  // heading, blank line, the one line
  auto html = read_file(root() / "report" / "report.html");
  ASSERT_TRUE(html.ok());
  simdjson::dom::parser hp;
  simdjson::dom::element doc;
  ASSERT_EQ(hp.parse(data_json(*html)).get(doc), simdjson::SUCCESS);
  EXPECT_TRUE(doc["deep_dive"].is_null());
  const std::string xl = read_sheet(dir_.path(), root() / "report" / "report.xlsx", "operator_deep_dive");
  EXPECT_NE(xl.find("\"operator_deep_dive\""), std::string::npos) << xl;
}

// The CSV without a readable JSON: the table and verdicts stand, the reason is named; the page
// refuses the broken file (html_status error) while the other reports are written.
TEST_F(DeepDiveReport, BrokenJsonKeepsTheTable) {
  write_deep_dive(root(), false);
  ascprof::testing::write_text(root() / "operator_deep_dive.json", "{\"rows\": [");
  auto r = write_report(root());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->html_status, "error");
  EXPECT_NE(r->html_error.find("operator_deep_dive.json"), std::string::npos) << r->html_error;
  auto md = read_file(root() / "report" / "report.md");
  ASSERT_TRUE(md.ok());
  const std::string sec = section(*md);
  EXPECT_NE(sec.find("Chip and rule details unavailable: operator_deep_dive.json: "), std::string::npos) << sec;
  EXPECT_NE(sec.find("- **Verdict**: Vector kernel dominated by scalar work: scalar address arithmetic -&gt; vectorise "
                     "the tail (rule details not available)\n"),
            std::string::npos)
      << sec;
  EXPECT_NE(sec.find("| 614.7605 | 42.31 % |"), std::string::npos);
  EXPECT_NE(sec.find("### Host API overhead\n\nNot available (operator_deep_dive.json is unusable)."), std::string::npos);
}

}  // namespace
}  // namespace ascprof::report

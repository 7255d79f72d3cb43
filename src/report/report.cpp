// The report stage of one root: the evidence-chain gate first, then report.md, report.xlsx,
// report.html (unless skipped), timeline.json and manifest.json, all under OUT/<root>/report/.
#include "ascprof/report/report.hpp"

#include "ascprof/common/files.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/common/stable_id.hpp"
#include "ascprof/report/html_report.hpp"
#include "ascprof/report/xlsx_report.hpp"

namespace ascprof::report {

namespace fs = std::filesystem;

// Data rows per sheet in report_mode summary.
constexpr uint64_t kSummarySheetRows = 50'000;

Result<ReportResult> write_report(const fs::path& root_out, const ReportOptions& options) {
  ReportResult r;
  ASCPROF_ASSIGN_OR_RETURN(EvidenceChain chain, check_evidence_chain(root_out));
  if (!chain.failures.empty()) {
    std::string why;
    for (size_t i = 0; i < chain.failures.size() && i < 8; ++i) why += (i ? "; " : "") + chain.failures[i];
    return file_error(ErrorCode::kSchema, (root_out / "diagnosis_findings.json").string(), "evidence chain",
                      std::to_string(chain.failures.size()) + " finding(s) cannot be traced to the tables: " + why);
  }
  const fs::path dir = root_out / "report";
  ASCPROF_ASSIGN_OR_RETURN(fs::path md, write_report_md(root_out));
  r.files.push_back(md);
  XlsxOptions xlsx;
  if (options.mode == "summary") {  // the light version: every sheet capped (all rows stay in the CSVs)
    xlsx.max_sheet_rows = kSummarySheetRows + 2;  // + header and the truncation note
    xlsx.raw_kernel_index_rows = kSummarySheetRows;
  }
  ASCPROF_ASSIGN_OR_RETURN(std::vector<XlsxSheet> sheets, write_report_xlsx(root_out, dir / "report.xlsx", xlsx));
  r.files.push_back(dir / "report.xlsx");
  ASCPROF_ASSIGN_OR_RETURN(fs::path timeline, write_timeline(root_out, options.timeline));
  r.files.push_back(timeline);
  r.html_status = "skipped";
  if (options.skip_html || options.mode == "summary") {  // a page from an earlier run would contradict the manifest
    std::error_code ec;
    fs::remove(dir / "report.html", ec);
  } else {
    auto html = write_report_html(root_out);
    if (html.ok()) {
      r.files.push_back(*html);
      r.html_status = "ok";
    } else {  // the other reports stand; the manifest says why the page is missing
      r.html_status = "error";
      r.html_error = html.status().to_string();
    }
  }
  JsonWriter w(true);
  w.begin_object();
  w.kv("report_id", stable_id("report", {root_out.string(), ASCPROF_VERSION}));
  w.kv("tool_version", ASCPROF_VERSION);
  w.kv("report_mode", options.mode);
  w.kv("html_status", r.html_status);
  if (!r.html_error.empty()) w.kv("html_error", r.html_error);
  w.key("files");
  w.begin_array();
  for (const auto& f : r.files) w.value(fs::relative(f, root_out).string());
  w.value("report/manifest.json");
  w.end_array();
  w.key("sheet_map");  // sheet -> source table, with the rows it holds
  w.begin_object();
  for (const auto& s : sheets) {
    w.key(s.name);
    w.begin_object();
    w.kv("source", s.source);
    w.kv("rows_written", s.rows_written);
    w.kv("rows_total", s.rows_total);
    w.kv("truncated", s.truncated);
    w.end_object();
  }
  w.end_object();
  w.key("claim_ids");
  w.begin_array();
  for (const auto& c : chain.claim_ids) w.value(c);
  w.end_array();
  w.key("evidence_chain");
  w.begin_object();
  w.kv("findings_checked", chain.findings_checked);
  w.kv("evidence_rows", chain.evidence_rows);
  w.kv("alignment_rows", chain.alignment_rows);
  w.kv("soft_warning_count", chain.soft_warning_count);
  w.kv("status", "ok");
  w.end_object();
  w.end_object();
  const fs::path manifest = dir / "manifest.json";
  ASCPROF_RETURN_IF_ERROR(write_file_atomic(manifest, w.take()));
  r.files.push_back(manifest);
  return r;
}

}  // namespace ascprof::report

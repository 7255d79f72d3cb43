// The report stage of one root: the evidence-chain gate first, then its parts (report.md,
// report.xlsx, timeline.json, report.html unless skipped), then manifest.json, all under
// OUT/<root>/report/. The parts are separate calls so the parallel layer can spread them.
#include "ascprof/report/report.hpp"

#include <algorithm>

#include "ascprof/common/files.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/common/stable_id.hpp"
#include "ascprof/common/stopwatch.hpp"
#include "ascprof/pipeline/stage.hpp"
#include "ascprof/report/html_report.hpp"
#include "ascprof/report/xlsx_report.hpp"
#include "ascprof/layout/out_layout.hpp"
#include "ascprof/report/tables.hpp"

namespace ascprof::report {

namespace fs = std::filesystem;

// Data rows per sheet in report_mode summary, and in bounded (the default): a sheet of a big root
// holds its costliest rows (a person reads the top of a table; the CSVs and HDF5 hold every row),
// so the workbook's size and write time follow what is read, not the kernel count (issue 17).
constexpr uint64_t kSummarySheetRows = 50'000;
constexpr uint64_t kBoundedSheetRows = 2'000;

namespace {

using Clock = SteadyClock;

bool writes_page(const ReportOptions& options) { return !options.skip_html && options.mode != "summary"; }

}  // namespace

const char* report_part_name(ReportPart part) {
  switch (part) {
    case ReportPart::kMarkdown: return "md";
    case ReportPart::kWorkbook: return "xlsx";
    case ReportPart::kTimeline: return "timeline";
    case ReportPart::kPage: return "html";
  }
  return "?";
}

std::vector<ReportPart> report_parts(const ReportOptions& options) {
  std::vector<ReportPart> parts{ReportPart::kWorkbook};
  if (writes_page(options)) parts.push_back(ReportPart::kPage);
  parts.push_back(ReportPart::kTimeline);
  parts.push_back(ReportPart::kMarkdown);
  return parts;
}

namespace {

Result<ReportPartResult> write_part(const fs::path& root_out, ReportPart part, const ReportOptions& options) {
  const auto t0 = Clock::now();
  ReportPartResult r;
  r.part = part;
  switch (part) {
    case ReportPart::kMarkdown: {
      ASCPROF_ASSIGN_OR_RETURN(fs::path md, write_report_md(root_out));
      r.files.push_back(md);
      break;
    }
    case ReportPart::kWorkbook: {
      XlsxOptions xlsx;
      if (options.mode == "summary") {  // the light version: every sheet capped (all rows stay in the CSVs)
        xlsx.max_sheet_rows = kSummarySheetRows + 2;  // + header and the truncation note
        xlsx.raw_kernel_index_rows = kSummarySheetRows;
      } else if (options.mode == "bounded") {
        xlsx.max_sheet_rows = kBoundedSheetRows + 2;
        xlsx.raw_kernel_index_rows = std::min<uint64_t>(xlsx.raw_kernel_index_rows, kBoundedSheetRows);
      }
      const fs::path path = root_out / layout::kReportDir / layout::kReportXlsx;
      ASCPROF_ASSIGN_OR_RETURN(r.sheets, write_report_xlsx(root_out, path, xlsx));
      r.files.push_back(path);
      break;
    }
    case ReportPart::kTimeline: {
      ASCPROF_ASSIGN_OR_RETURN(fs::path timeline, write_timeline(root_out, options.timeline));
      r.files.push_back(timeline);
      break;
    }
    case ReportPart::kPage: {
      auto html = write_report_html(root_out);
      if (html.ok()) {
        r.files.push_back(*html);
        r.html_status = "ok";
      } else {  // the other reports stand; the manifest says why the page is missing
        r.html_status = "error";
        r.html_error = html.status().to_string();
      }
      break;
    }
  }
  r.seconds = seconds_since(t0);
  return r;
}

}  // namespace

Result<ReportPartResult> write_report_part(const fs::path& root_out, ReportPart part, const ReportOptions& options) {
  try {
    return write_part(root_out, part, options);
  } catch (const UnknownColumn& e) {  // a bug in the report (or a table of another version): say which
    return file_error(ErrorCode::kInternal, (root_out / layout::kReportDir).string(), report_part_name(part),
                      std::string("the report reads a column its table lacks: ") + e.what());
  }
}

Status evidence_chain_error(const fs::path& root_out, const EvidenceChain& chain) {
  std::string why;
  for (size_t i = 0; i < chain.failures.size() && i < 8; ++i) why += (i ? "; " : "") + chain.failures[i];
  return file_error(ErrorCode::kSchema, (root_out / layout::kDiagnosisFindingsJson).string(), "evidence chain",
                    std::to_string(chain.failures.size()) + " finding(s) cannot be traced to the tables: " + why);
}

Result<ReportResult> write_report(const fs::path& root_out, const ReportOptions& options) {
  auto t = Clock::now();
  ASCPROF_ASSIGN_OR_RETURN(EvidenceChain chain, check_evidence_chain(root_out));
  const double gate_seconds = seconds_since(t);
  if (!chain.failures.empty()) return evidence_chain_error(root_out, chain);
  std::vector<ReportPartResult> parts;
  for (ReportPart part : report_parts(options)) {
    ASCPROF_ASSIGN_OR_RETURN(ReportPartResult p, write_report_part(root_out, part, options));
    parts.push_back(std::move(p));
  }
  ASCPROF_ASSIGN_OR_RETURN(ReportResult r, finish_report(root_out, options, chain, std::move(parts)));
  r.part_seconds.insert(r.part_seconds.begin(), {"gate", gate_seconds});
  return r;
}

Result<ReportResult> finish_report(const fs::path& root_out, const ReportOptions& options, const EvidenceChain& chain,
                                   std::vector<ReportPartResult> parts) {
  const std::vector<ReportPart> wanted = report_parts(options);
  std::sort(parts.begin(), parts.end(),
            [](const ReportPartResult& a, const ReportPartResult& b) { return a.part < b.part; });
  bool complete = parts.size() == wanted.size();
  for (ReportPart p : wanted)
    complete = complete && std::any_of(parts.begin(), parts.end(), [&](const ReportPartResult& r) { return r.part == p; });
  if (!complete)
    return Status(ErrorCode::kInternal, "report of " + root_out.string() + ": not every part was written");
  const fs::path dir = root_out / layout::kReportDir;
  ReportResult r;
  r.html_status = "skipped";
  std::vector<XlsxSheet> sheets;
  for (auto& p : parts) {
    for (auto& f : p.files) r.files.push_back(std::move(f));
    if (p.part == ReportPart::kWorkbook) sheets = std::move(p.sheets);
    if (p.part == ReportPart::kPage) {
      r.html_status = p.html_status;
      r.html_error = p.html_error;
    }
    r.part_seconds.emplace_back(report_part_name(p.part), p.seconds);
  }
  if (!writes_page(options)) {  // a page from an earlier run would contradict the manifest
    std::error_code ec;
    fs::remove(dir / layout::kReportHtml, ec);
  }
  JsonWriter w(true);
  w.begin_object();
  pipeline::write_manifest_fields(w, pipeline::stage_name(pipeline::Stage::kReport), dir.string());
  w.kv("report_id", stable_id("report", {root_out.string(), ASCPROF_VERSION}));
  w.kv("report_mode", options.mode);
  w.kv("html_status", r.html_status);
  if (!r.html_error.empty()) w.kv("html_error", r.html_error);
  // the reference's files: kind -> name in report/ (html, manifest, markdown, xlsx); ours besides
  w.key("files");
  w.begin_object();
  for (const auto& f : r.files) {  // every report file is in report/
    const std::string name = f.filename().string();
    const std::string kind = name == layout::kReportMd     ? "markdown"
                             : name == layout::kReportHtml ? "html"
                             : name == layout::kReportXlsx ? "xlsx"
                                                     : f.stem().string();  // timeline
    w.kv(kind, name);
  }
  w.kv("manifest", layout::kManifestJson);
  w.end_object();
  w.key("sheet_map");  // sheet -> sheet name, as the reference writes it
  w.begin_object();
  for (const auto& s : sheets) w.kv(s.name, s.name);
  w.end_object();
  w.key("sheet_rows");  // sheet -> source table, with the rows it holds
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
  const fs::path manifest = dir / layout::kManifestJson;
  ASCPROF_RETURN_IF_ERROR(write_file_atomic(manifest, w.take()));
  r.files.push_back(manifest);
  return r;
}

}  // namespace ascprof::report

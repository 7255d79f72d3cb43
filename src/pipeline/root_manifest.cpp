#include "ascprof/pipeline/root_manifest.hpp"

#include <simdjson.h>

#include "ascprof/common/files.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/layout/out_layout.hpp"

namespace ascprof::pipeline {

namespace fs = std::filesystem;

namespace {

// The file each stage leaves as its record, under the reference's key for it in `files`.
struct StageRecord {
  Stage stage;
  const char* key;
  const char* file;
};
constexpr StageRecord kStageRecords[] = {
    {Stage::kNormalize, "normalize_manifest", layout::kNormalizeManifestJson},
    {Stage::kSegment, "segment_manifest", layout::kSegmentManifestJson},
    {Stage::kClassify, "classify_manifest", layout::kClassifyManifestJson},
    {Stage::kSummarize, "summary_manifest", layout::kSummaryManifestJson},
    {Stage::kCrossRank, "cross_rank_manifest", layout::kCrossRankManifestJson},
    {Stage::kDiagnostics, "diagnosis_findings", layout::kDiagnosisFindingsJson},
    {Stage::kReport, "report_manifest", "report/manifest.json"},
};

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

}  // namespace

Status write_root_manifest(const fs::path& root_out, const std::string& profile_root,
                           const std::vector<Stage>& stages_executed) {
  std::vector<const StageRecord*> present;  // the executed stages whose record is in root_out
  for (const StageRecord& r : kStageRecords)
    for (Stage s : stages_executed)
      if (s == r.stage && is_file(root_out / r.file)) present.push_back(&r);

  JsonWriter w(true);
  w.begin_object();
  write_manifest_fields(w, "full_pipeline", root_out.string());
  w.key("files");
  w.begin_object();
  for (const StageRecord* r : present) w.kv(r->key, r->file);
  for (const auto& [key, file] : {std::pair{"report_md", "report/report.md"}, std::pair{"report_xlsx", "report/report.xlsx"},
                                  std::pair{"report_html", "report/report.html"}, std::pair{"timeline", "report/timeline.json"}})
    if (is_file(root_out / file)) w.kv(key, file);
  w.end_object();
  w.kv("profile_root", profile_root);
  w.key("stage_results");  // each stage's manifest as it is in root_out
  w.begin_object();
  for (const StageRecord* r : present) {
    ASCPROF_ASSIGN_OR_RETURN(std::string text, read_file(root_out / r->file));
    w.key(stage_name(r->stage));
    if (r->stage != Stage::kDiagnostics) {
      while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
      w.raw(text);
      continue;
    }
    // diagnostics: the counts of diagnosis_findings.json, not its findings
    simdjson::dom::parser parser;
    simdjson::dom::element counts;
    if (parser.parse(text)["counts"].get(counts) != simdjson::SUCCESS)
      return file_error(ErrorCode::kSchema, (root_out / r->file).string(), "counts", "no counts object");
    w.begin_object();
    w.key("counts");
    w.raw(simdjson::minify(counts));
    w.end_object();
  }
  w.end_object();
  w.key("stages_executed");
  w.begin_array();
  for (const StageRecord* r : present) w.value(stage_name(r->stage));
  w.end_array();
  w.end_object();
  return write_file_atomic(root_out / layout::kManifestJson, w.take() + "\n");
}

}  // namespace ascprof::pipeline

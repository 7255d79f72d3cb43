#include "findings_reader.hpp"

#include <simdjson.h>

#include <string_view>
#include <system_error>

#include "ascprof/common/files.hpp"
#include "ascprof/layout/out_layout.hpp"

namespace ascprof::report {
namespace fs = std::filesystem;

namespace {

std::string text_of(simdjson::dom::element f, const char* key) {
  std::string_view v;
  return f[key].get(v) == simdjson::SUCCESS ? std::string(v) : std::string();
}

std::vector<std::string> list_of(simdjson::dom::element f, const char* key) {
  std::vector<std::string> out;
  simdjson::dom::array arr;
  if (f[key].get(arr) != simdjson::SUCCESS) return out;
  for (simdjson::dom::element e : arr) {
    std::string_view v;
    if (e.get(v) == simdjson::SUCCESS) out.emplace_back(v);
  }
  return out;
}

}  // namespace

Result<FindingsFile> read_findings_file(const fs::path& root_out) {
  const fs::path path = root_out / layout::kDiagnosisFindingsJson;
  FindingsFile out;
  std::error_code ec;
  if (!fs::exists(path, ec)) return out;
  auto text = read_file(path);
  if (!text.ok()) return text.status();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(*text).get(doc) != simdjson::SUCCESS)
    return file_error(ErrorCode::kParse, path.string(), "", "not valid JSON");
  simdjson::dom::array findings;
  if (doc["diagnosis_findings"].get(findings) != simdjson::SUCCESS)
    return file_error(ErrorCode::kSchema, path.string(), "key diagnosis_findings", "missing or not an array");
  out.present = true;
  uint64_t refused = 0;
  if (doc["counts"]["refused_without_evidence"].get(refused) == simdjson::SUCCESS) out.refused_without_evidence = refused;
  out.findings.reserve(findings.size());
  for (simdjson::dom::element f : findings) {
    model::Finding x;
    x.claim_id = text_of(f, "claim_id");
    x.finding_type = text_of(f, "finding_type");
    x.scope = text_of(f, "scope");
    x.summary = text_of(f, "summary");
    x.severity = text_of(f, "severity");
    x.confidence = text_of(f, "confidence");
    x.rank_ids = list_of(f, "rank_ids");
    x.suspected_ranks = list_of(f, "suspected_ranks");
    x.alignment_ids = list_of(f, "alignment_ids");
    x.evidence_ids = list_of(f, "evidence_ids");
    x.counter_evidence_ids = list_of(f, "counter_evidence_ids");
    x.limitations = list_of(f, "limitations");
    simdjson::dom::element metrics;
    if (f["metrics"].get(metrics) == simdjson::SUCCESS) x.metrics_json = simdjson::minify(metrics);
    double m = 0;
    if (f["magnitude_ms"].get(m) == simdjson::SUCCESS) x.magnitude_ms = m;
    out.findings.push_back(std::move(x));
  }
  return out;
}

}  // namespace ascprof::report

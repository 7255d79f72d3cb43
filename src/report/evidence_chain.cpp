// The evidence-chain gate of the report stage (reference-analysis.md §2.9): before anything is
// rendered, every finding must point at evidence that exists in the root's tables.
#include <simdjson.h>

#include <map>
#include <set>

#include "ascprof/common/files.hpp"
#include "ascprof/report/report.hpp"
#include "ascprof/report/tables.hpp"
#include "ascprof/layout/out_layout.hpp"
#include "findings_reader.hpp"

namespace ascprof::report {

namespace fs = std::filesystem;

Result<EvidenceChain> check_evidence_chain(const fs::path& root_out) {
  EvidenceChain chain;
  std::set<std::string> windows, alignments;
  ASCPROF_RETURN_IF_ERROR(for_each_row(root_out / layout::kEvidenceIndexCsv, [&](const std::vector<std::string_view>& f, bool header) {
    if (!header && !f.empty()) windows.emplace(f[0]);  // evidence_id is the first column
    return true;
  }));
  ASCPROF_RETURN_IF_ERROR(
      for_each_row(root_out / layout::kCrossRankAlignmentCsv, [&](const std::vector<std::string_view>& f, bool header) {
        if (!header && !f.empty()) alignments.emplace(f[0]);  // alignment_id
        return true;
      }));
  // in-kernel MoE phase records moe_<ordinal>_<call>_<phase> (only a root with traces has the table)
  if (std::error_code ec; fs::exists(root_out / layout::kMoePhaseSummaryCsv, ec))
    ASCPROF_RETURN_IF_ERROR(
        for_each_row(root_out / layout::kMoePhaseSummaryCsv, [&](const std::vector<std::string_view>& f, bool header) {
          if (!header && !f.empty()) windows.emplace(f[0]);  // evidence_id is the first column
          return true;
        }));
  chain.evidence_rows = windows.size();
  chain.alignment_rows = alignments.size();
  // kernel event ids evt_<ordinal>_<row> exist when the row is inside that rank's kernel table
  std::map<uint64_t, uint64_t> rows_of_ordinal;
  {
    auto text = read_file(root_out / layout::kNormalizeManifestJson);
    simdjson::dom::parser parser;
    simdjson::dom::array ranks;
    if (text.ok() && parser.parse(*text)["rank_summaries"].get(ranks) == simdjson::SUCCESS)
      for (simdjson::dom::element r : ranks) {
        uint64_t ordinal = 0, events = 0;
        if (r["rank_index"].get(ordinal) == simdjson::SUCCESS && r["event_count"].get(events) == simdjson::SUCCESS)
          rows_of_ordinal[ordinal] = events;
      }
  }
  auto known = [&](std::string_view id) {
    if (id.rfind("evt_", 0) == 0) {
      const size_t sep = id.find('_', 4);
      if (sep == std::string_view::npos) return false;
      const std::string ord(id.substr(4, sep - 4)), row(id.substr(sep + 1));
      char* e1 = nullptr;
      char* e2 = nullptr;
      const uint64_t o = std::strtoull(ord.c_str(), &e1, 10), r = std::strtoull(row.c_str(), &e2, 10);
      if (ord.empty() || row.empty() || *e1 != '\0' || *e2 != '\0') return false;
      const auto it = rows_of_ordinal.find(o);
      return it != rows_of_ordinal.end() && r < it->second;
    }
    return windows.count(std::string(id)) > 0;
  };
  ASCPROF_ASSIGN_OR_RETURN(const FindingsFile diagnosis, read_findings_file(root_out));
  if (!diagnosis.present) return chain;  // no diagnostics stage: nothing to check
  for (const model::Finding& f : diagnosis.findings) {
    ++chain.findings_checked;
    const std::string claim = f.claim_id.empty() ? "?" : f.claim_id;
    chain.claim_ids.push_back(claim);
    std::vector<std::string> missing;
    for (const auto& id : f.evidence_ids)
      if (!known(id)) missing.push_back(id);
    for (const auto& id : f.alignment_ids)
      if (alignments.count(id) == 0) missing.push_back(id);
    const size_t ids = f.evidence_ids.size() + f.alignment_ids.size();
    const bool has_limitations = !f.limitations.empty();
    // the reference's rule: info confidence, or limitations, or every id resolves; we report unresolved
    // ids even for findings that pass on their limitations (a soft warning)
    if (missing.empty() && ids > 0) continue;
    if (f.confidence == "info" || has_limitations) {
      ++chain.soft_warning_count;
      continue;
    }
    std::string why = ids == 0 ? "no evidence or alignment ids" : "unknown ids";
    for (size_t i = 0; i < missing.size() && i < 4; ++i) why += (i ? ", " : ": ") + missing[i];
    chain.failures.push_back(claim + " (" + why + ")");
  }
  return chain;
}

}  // namespace ascprof::report

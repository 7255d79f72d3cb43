#pragma once
/// The one reader of diagnosis_findings.json for the report parts that use findings as values
/// (report.md, the timeline, the evidence-chain check): the findings come back as the
/// model::Finding the diagnostics stage wrote, so a key is spelt once, here and in its writer
/// (pipeline/root_outputs.cpp). report.html and report.xlsx embed the document itself.
#include <cstdint>
#include <filesystem>
#include <vector>

#include "ascprof/common/status.hpp"
#include "ascprof/model/finding.hpp"

namespace ascprof::report {

struct FindingsFile {
  bool present = false;  ///< false: no diagnostics stage wrote into this OUT (no file, no findings)
  std::vector<model::Finding> findings;
  uint64_t refused_without_evidence = 0;  ///< counts.refused_without_evidence
};

/// root_out/diagnosis_findings.json. Absent: present = false. Unreadable, not JSON, or without a
/// diagnosis_findings array: an error naming the file and the place. A finding lacking a key reads
/// as its default (empty string or list, magnitude 0), as the writer never omits one.
Result<FindingsFile> read_findings_file(const std::filesystem::path& root_out);

}  // namespace ascprof::report

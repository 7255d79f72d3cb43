// OUT/<root>/manifest.json: the reference's run manifest, the one file a script opens first.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "ascprof/common/status.hpp"
#include "ascprof/pipeline/stage.hpp"

namespace ascprof::pipeline {

/// Writes root_out/manifest.json (atomically) as the reference does: analysis_stage "full_pipeline",
/// the run's files by name, output_dir, profile_root, the stages executed, and under stage_results
/// each stage's own manifest as written in root_out (diagnostics: the counts of
/// diagnosis_findings.json). A stage whose manifest is absent (not run) is left out of both.
/// There are no timings: they differ on every run and live in the run's result JSON, so the
/// manifest stays the same bytes on a rerun or a resume.
Status write_root_manifest(const std::filesystem::path& root_out, const std::string& profile_root,
                           const std::vector<Stage>& stages_executed);

}  // namespace ascprof::pipeline

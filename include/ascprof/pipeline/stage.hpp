#pragma once
/// The analysis stages, declared once: their order, their names (on the command line, in the
/// result JSON, in each output's `stage` field and HDF5 attribute) and which of them a rank job runs.
/// Everything that names a stage reads it from here.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ascprof {
class JsonWriter;
}

namespace ascprof::pipeline {

enum class Stage : int32_t {
  kNormalize = 0,  ///< rank-local: importers, normalisation, the rank's HDF5 tables
  kSegment,        ///< rank-local: steps, layers
  kClassify,       ///< rank-local: blocks, shape-strict classes
  kSummarize,      ///< rank-local: summaries, then the root tables
  kCrossRank,      ///< clock offsets and alignment across ranks (after the gather)
  kDiagnostics,    ///< findings
  kReport,         ///< report.md / .xlsx / .html, timeline
};

inline constexpr std::array<std::string_view, 7> kStageNames = {"normalize",  "segment",     "classify", "summarize",
                                                                 "cross_rank", "diagnostics", "report"};

/// The stage's name ("cross_rank").
constexpr std::string_view stage_name(Stage s) { return kStageNames[static_cast<size_t>(s)]; }

/// The stage named `name`, if any.
std::optional<Stage> stage_from_name(std::string_view name);

/// "normalize, segment, …, report": the names in order, for messages.
std::string stage_name_list();

/// The schema_version every JSON output of OUT/<root> carries (the reference's: 1).
inline constexpr int64_t kOutputSchemaVersion = 1;

/// The fields every manifest of OUT/<root> opens with, as the reference writes them: analysis_stage
/// (a stage name, or "full_pipeline" for the root manifest.json), output_dir, schema_version,
/// tool_version. There is no created_at: our outputs are the same bytes on every run, so reruns,
/// resumes and process counts can be compared file by file (docs/reference-differences.md).
void write_manifest_fields(JsonWriter& w, std::string_view analysis_stage, const std::string& output_dir);

/// The rank-local stages, in order, as the int32 a rank task carries (RankTask::last_stage).
inline constexpr int32_t kStageNormalize = static_cast<int32_t>(Stage::kNormalize);
inline constexpr int32_t kStageSegment = static_cast<int32_t>(Stage::kSegment);
inline constexpr int32_t kStageClassify = static_cast<int32_t>(Stage::kClassify);
inline constexpr int32_t kStageSummarize = static_cast<int32_t>(Stage::kSummarize);

}  // namespace ascprof::pipeline

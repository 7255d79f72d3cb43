#include "ascprof/pipeline/stage.hpp"

#include "ascprof/common/json_writer.hpp"

namespace ascprof::pipeline {

std::optional<Stage> stage_from_name(std::string_view name) {
  for (size_t i = 0; i < kStageNames.size(); ++i)
    if (kStageNames[i] == name) return static_cast<Stage>(i);
  return std::nullopt;
}

std::string stage_name_list() {
  std::string s;
  for (const std::string_view n : kStageNames) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
}

void write_manifest_fields(JsonWriter& w, std::string_view analysis_stage, const std::string& output_dir) {
  w.kv("analysis_stage", analysis_stage);
  w.kv("output_dir", output_dir);
  w.kv("schema_version", kOutputSchemaVersion);
  w.kv("tool_version", ASCPROF_VERSION);
}

}  // namespace ascprof::pipeline

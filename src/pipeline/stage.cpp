#include "ascprof/pipeline/stage.hpp"

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

}  // namespace ascprof::pipeline

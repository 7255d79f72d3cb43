#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "ascprof/knowledge/knowledge.hpp"

namespace ascprof::knowledge {

Status SummarizeRules::load(const RuleFile& file) {
  struct Slot {
    double* real = nullptr;
    size_t* count = nullptr;
  };
  const std::map<std::string, Slot> slots = {
      {"anomaly.idle_gap_heavy_ratio", {&idle_gap_heavy_ratio, nullptr}},
      {"anomaly.bubble_heavy_min_ms", {&bubble_heavy_min_ms, nullptr}},
      {"anomaly.bubble_heavy_wall_share", {&bubble_heavy_wall_share, nullptr}},
      {"windows.top_bubbles", {nullptr, &top_bubbles}},
      {"bound.mixed_margin", {&mixed_margin, nullptr}},
      {"wait_anchor.min_wait_ratio", {&wait_anchor_min_ratio, nullptr}},
      {"wait_anchor.false_hotspot_wait_ratio", {&false_hotspot_wait_ratio, nullptr}},
      {"wait_anchor.false_hotspot_max_duration_us", {&false_hotspot_max_duration_us, nullptr}},
      {"wait_anchor.false_hotspot_top_rank", {nullptr, &false_hotspot_top_rank}},
      {"aicpu.masked_undesirable_ratio", {&aicpu_masked_undesirable_ratio, nullptr}},
      {"aicpu.partially_exposed_ratio", {&aicpu_partially_exposed_ratio, nullptr}},
      {"operators.sample_event_ids", {nullptr, &operator_sample_event_ids}},
  };
  std::set<std::string> seen;
  for (const auto& block : file.blocks) {
    for (const auto& e : block.entries) {
      const std::string key = block.kind + "." + e.key;
      auto it = slots.find(key);
      if (it == slots.end()) return file.error(e.line, "unknown key '" + e.key + "' in [" + block.kind + "]");
      if (e.values.size() != 1) return file.error(e.line, "'" + e.key + "' needs one number");
      char* end = nullptr;
      const double v = std::strtod(e.values[0].c_str(), &end);
      if (end == e.values[0].c_str() || *end != '\0' || !std::isfinite(v) || v < 0)
        return file.error(e.line, "'" + e.key + "' needs a non-negative number, got '" + e.values[0] + "'");
      if (it->second.count != nullptr) {
        if (v != std::floor(v)) return file.error(e.line, "'" + e.key + "' needs a whole number");
        *it->second.count = static_cast<size_t>(v);
      } else {
        *it->second.real = v;
      }
      seen.insert(key);
    }
  }
  for (const auto& [key, slot] : slots)
    if (!seen.count(key)) return file.error(1, "missing key '" + key.substr(key.find('.') + 1) + "' in [" +
                                                   key.substr(0, key.find('.')) + "]");
  return {};
}

}  // namespace ascprof::knowledge

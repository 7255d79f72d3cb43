#include "ascprof/knowledge/module_rules.hpp"

#include <cmath>
#include <cstdlib>
#include <set>

namespace ascprof::knowledge {

namespace {

Status one_text(const RuleFile& file, const RuleEntry& e, bool may_be_empty, std::string* out) {
  const bool empty = e.values.empty() || (e.values.size() == 1 && e.values[0].empty());
  if (e.values.size() > 1 || (empty && !may_be_empty))
    return file.error(e.line, "'" + e.key + "' needs one value (quote it to keep spaces)");
  *out = empty ? std::string() : e.values[0];
  return {};
}

}  // namespace

Status ModuleRules::load(const RuleFile& file) {
  std::set<std::string> seen;
  for (const auto& b : file.blocks)
    for (const auto& e : b.entries) {
      const std::string key = b.kind + "." + e.key;
      if (key == "ranges.prefix") {
        ASCPROF_RETURN_IF_ERROR(one_text(file, e, false, &prefix));
      } else if (key == "ranges.category") {
        ASCPROF_RETURN_IF_ERROR(one_text(file, e, true, &category));
      } else if (key == "task_queue.flow_category") {
        ASCPROF_RETURN_IF_ERROR(one_text(file, e, false, &queue_flow_category));
      } else if (key == "task_queue.dequeue_category") {
        ASCPROF_RETURN_IF_ERROR(one_text(file, e, false, &dequeue_category));
      } else if (key == "device.wait_task_types") {
        wait_task_types = e.values;  // may be empty: then nothing counts as waiting
      } else if (key == "compare.spread_ratio") {
        ASCPROF_RETURN_IF_ERROR(rule_number(file, e, &spread_ratio));
        if (spread_ratio < 1) return file.error(e.line, "'spread_ratio' needs a number >= 1");
      } else if (key == "compare.min_device_us") {
        ASCPROF_RETURN_IF_ERROR(rule_number(file, e, &min_device_us));
      } else {
        return file.error(e.line, "unknown key '" + e.key + "' in [" + b.kind + "]");
      }
      seen.insert(key);
    }
  for (const char* k : {"ranges.prefix", "ranges.category", "task_queue.flow_category", "task_queue.dequeue_category",
                        "device.wait_task_types", "compare.spread_ratio", "compare.min_device_us"})
    if (!seen.count(k)) return file.error(1, std::string("'") + k + "' is missing");
  return {};
}

}  // namespace ascprof::knowledge

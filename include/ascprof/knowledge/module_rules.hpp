#pragma once
/// modules.rules: which host events are nn.Module ranges, how a launch on torch_npu's dequeue thread is
/// followed back to the Python thread, and when a module stands out across ranks (see the file's
/// header).
#include <cstdint>
#include <string>
#include <vector>

#include "ascprof/common/status.hpp"
#include "ascprof/knowledge/rule_file.hpp"

namespace ascprof::knowledge {

struct ModuleRules {
  std::string prefix = "nn.Module: ";            ///< [ranges] the name prefix of a module range
  std::string category = "python_function";      ///< [ranges] its cat ("" = any)
  std::string queue_flow_category = "async_task_queue";  ///< [task_queue] flow_category
  std::string dequeue_category = "dequeue";      ///< [task_queue] dequeue_category
  /// [device] Task Types of device tasks that wait (Notify_Wait, EVENT_WAIT ...): counted apart
  std::vector<std::string> wait_task_types = {"Notify_Wait", "Notify Wait", "EVENT_WAIT", "EVENT_WAIT_SQE"};
  double spread_ratio = 1.2;                     ///< [compare] busiest / median busy time that stands out
  double min_device_us = 50;                     ///< [compare] ...on a busiest rank with this much busy time

  /// Every key must be present (the file is the one source of truth).
  Status load(const RuleFile& file);
};

}  // namespace ascprof::knowledge

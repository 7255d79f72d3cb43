#pragma once
/// moe_trace.rules: the roles of in-kernel MoE trace labels, which kernel rows a trace belongs to, and
/// the thresholds of the in-kernel findings (see the file's header).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/common/status.hpp"
#include "ascprof/knowledge/rule_file.hpp"

namespace ascprof::knowledge {

/// What a trace label stands for.
enum class MoeRole : uint8_t { kWork, kContainer, kTokenWait, kCombineWait, kSyncWait, kCompute };

/// "work", "container", "token_wait", "combine_wait", "sync_wait", "compute".
std::string_view moe_role_name(MoeRole role);
/// True for the three waiting roles.
inline bool moe_role_waits(MoeRole r) { return r == MoeRole::kTokenWait || r == MoeRole::kCombineWait || r == MoeRole::kSyncWait; }

struct MoeTraceRules {
  std::string folder = "moe_trace";           ///< the traces' folder inside a rank folder
  std::vector<std::string> core_groups;       ///< core_type -> group name
  uint32_t records_per_core = 1023;           ///< a core with this many records filled its buffer
  double cycles_per_us = 50;                  ///< rank*.pt cycle counter rate
  std::vector<std::string> kernel_words;      ///< lower-cased words of the instrumented kernels
  double min_span_share = 0.5, max_span_share = 1.02;
  double imbalance_ratio = 1.5, high_ratio = 3.0, min_excess_us = 5;
  double combine_wait_share = 0.2, dominant_share = 0.5, high_share = 0.7;

  Status load(const RuleFile& file);
  /// The role of a normalized label (first matching [role] block; kWork when none matches).
  MoeRole role_of(std::string_view label) const;
  /// The group name of a core_type ("unknown" beyond the list).
  std::string_view core_group(uint32_t core_type) const;
  /// True when a kernel row (name, Type) is an instrumented MoE kernel.
  bool is_instrumented_kernel(std::string_view name, std::string_view type) const;

 private:
  struct Pattern {
    std::string text;
    bool suffix = false;  ///< "*tail": the label ends with text
    MoeRole role = MoeRole::kWork;
  };
  std::vector<Pattern> patterns_;
};

}  // namespace ascprof::knowledge

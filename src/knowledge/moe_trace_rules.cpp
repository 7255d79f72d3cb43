#include "ascprof/knowledge/moe_trace_rules.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace ascprof::knowledge {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

constexpr std::string_view kRoleNames[] = {"work", "container", "token_wait", "combine_wait", "sync_wait", "compute"};

}  // namespace

std::string_view moe_role_name(MoeRole role) { return kRoleNames[static_cast<size_t>(role)]; }

Status MoeTraceRules::load(const RuleFile& file) {
  for (const auto& b : file.blocks) {
    if (b.kind == "role") {
      auto it = std::find(std::begin(kRoleNames), std::end(kRoleNames), b.name);
      if (it == std::end(kRoleNames) || it == std::begin(kRoleNames))
        return file.error(b.line, "unknown role '" + b.name + "' (container, token_wait, combine_wait, sync_wait, compute)");
      for (const auto& e : b.entries) {
        if (e.key != "labels") return file.error(e.line, "unknown key '" + e.key + "' in [role] (labels)");
        for (const auto& v : e.values) {
          if (v.empty() || v == "*") return file.error(e.line, "empty label pattern");
          const bool suffix = v[0] == '*';
          patterns_.push_back({suffix ? v.substr(1) : v, suffix, static_cast<MoeRole>(it - std::begin(kRoleNames))});
        }
      }
      continue;
    }
    for (const auto& e : b.entries) {
      const std::string key = b.kind + "." + e.key;
      if (key == "trace.folder") {
        if (e.values.size() != 1 || e.values[0].find('/') != std::string::npos)
          return file.error(e.line, "'folder' needs one folder name");
        folder = e.values[0];
      } else if (key == "trace.core_groups") {
        if (e.values.empty()) return file.error(e.line, "'core_groups' needs at least one name");
        core_groups = e.values;
      } else if (key == "trace.records_per_core") {
        double x = 0;
        ASCPROF_RETURN_IF_ERROR(rule_number(file, e, &x));
        if (x < 1 || x != std::floor(x)) return file.error(e.line, "'records_per_core' needs a whole number >= 1");
        records_per_core = static_cast<uint32_t>(x);
      } else if (key == "kernel.names") {
        if (e.values.empty()) return file.error(e.line, "'names' needs at least one word");
        kernel_words.clear();
        for (const auto& v : e.values) kernel_words.push_back(lower(v));
      } else {
        static const std::pair<const char*, double MoeTraceRules::*> kNumbers[] = {
            {"trace.cycles_per_us", &MoeTraceRules::cycles_per_us},
            {"kernel.min_span_share", &MoeTraceRules::min_span_share},
            {"kernel.max_span_share", &MoeTraceRules::max_span_share},
            {"findings.imbalance_ratio", &MoeTraceRules::imbalance_ratio},
            {"findings.high_ratio", &MoeTraceRules::high_ratio},
            {"findings.min_excess_us", &MoeTraceRules::min_excess_us},
            {"findings.combine_wait_share", &MoeTraceRules::combine_wait_share},
            {"findings.dominant_share", &MoeTraceRules::dominant_share},
            {"findings.high_share", &MoeTraceRules::high_share}};
        auto n = std::find_if(std::begin(kNumbers), std::end(kNumbers), [&key](const auto& p) { return key == p.first; });
        if (n == std::end(kNumbers)) return file.error(e.line, "unknown key '" + e.key + "' in [" + b.kind + "]");
        ASCPROF_RETURN_IF_ERROR(rule_number(file, e, &(this->*(n->second))));
      }
    }
  }
  if (core_groups.empty()) return file.error(1, "[trace] core_groups is missing");
  if (kernel_words.empty()) return file.error(1, "[kernel] names is missing");
  if (min_span_share > max_span_share) return file.error(1, "[kernel] min_span_share is above max_span_share");
  if (cycles_per_us <= 0) return file.error(1, "[trace] cycles_per_us must be above 0");
  return {};
}

MoeRole MoeTraceRules::role_of(std::string_view label) const {
  for (const auto& p : patterns_) {
    const bool hit = p.suffix ? label.size() >= p.text.size() && label.substr(label.size() - p.text.size()) == p.text
                              : label == p.text;
    if (hit) return p.role;
  }
  return MoeRole::kWork;
}

std::string_view MoeTraceRules::core_group(uint32_t core_type) const {
  return core_type < core_groups.size() ? std::string_view(core_groups[core_type]) : std::string_view("unknown");
}

bool MoeTraceRules::is_instrumented_kernel(std::string_view name, std::string_view type) const {
  const std::string n = lower(name), t = lower(type);
  for (const auto& w : kernel_words)
    if (n.find(w) != std::string::npos || t.find(w) != std::string::npos) return true;
  return false;
}

}  // namespace ascprof::knowledge

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "ascprof/knowledge/knowledge.hpp"

namespace ascprof::knowledge {

namespace {

struct NumberSlot {
  double* real = nullptr;
  size_t* count = nullptr;
  std::vector<double>* list = nullptr;  ///< one or more numbers
  std::vector<std::string>* words = nullptr;  ///< one or more tokens of [A-Za-z0-9_], stored upper-cased
  std::vector<std::string>* names = nullptr;  ///< one or more category names, as written
  const Vocabulary* vocab = nullptr;           ///< where `names` must be declared (vocabulary.rules)
};

// One or more tokens of letters, digits and '_' (upper-cased): the few non-numeric settings.
Status load_words(const RuleFile& file, const RuleEntry& e, std::vector<std::string>* out) {
  if (e.values.empty()) return file.error(e.line, "'" + e.key + "' needs one or more tokens");
  std::vector<std::string> words;
  for (const auto& text : e.values) {
    std::string w;
    for (const char c : text) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
        return file.error(e.line, "'" + e.key + "' needs tokens of letters, digits and '_', got '" + text + "'");
      w += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    words.push_back(std::move(w));
  }
  *out = std::move(words);
  return {};
}

// Files made of numbers (and a few token lists) under [block] keys: every key known, every key present.
Status load_numbers(const RuleFile& file, const std::map<std::string, NumberSlot>& slots) {
  std::set<std::string> seen;
  for (const auto& block : file.blocks) {
    for (const auto& e : block.entries) {
      const std::string key = block.kind + "." + e.key;
      auto it = slots.find(key);
      if (it == slots.end()) return file.error(e.line, "unknown key '" + e.key + "' in [" + block.kind + "]");
      if (it->second.words != nullptr) {
        ASCPROF_RETURN_IF_ERROR(load_words(file, e, it->second.words));
        seen.insert(key);
        continue;
      }
      if (it->second.names != nullptr) {
        if (e.values.empty()) return file.error(e.line, "'" + e.key + "' needs one or more category names");
        for (const auto& c : e.values)
          if (it->second.vocab->category_index(c) < 0)
            return file.error(e.line, "'" + e.key + "': category '" + c + "' is not declared in vocabulary.rules");
        *it->second.names = e.values;
        seen.insert(key);
        continue;
      }
      if (e.values.empty() || (it->second.list == nullptr && e.values.size() != 1))
        return file.error(e.line, "'" + e.key + "' needs one number");
      std::vector<double> parsed;
      for (const auto& text : e.values) {
        char* end = nullptr;
        const double x = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !std::isfinite(x) || x < 0)
          return file.error(e.line, "'" + e.key + "' needs non-negative numbers, got '" + text + "'");
        parsed.push_back(x);
      }
      const double v = parsed[0];
      if (it->second.list != nullptr) {
        *it->second.list = std::move(parsed);
      } else if (it->second.count != nullptr) {
        // The bound keeps the cast defined (a double beyond size_t is UB) and counts sane.
        if (v != std::floor(v) || v > 1e9)
          return file.error(e.line, "'" + e.key + "' needs a whole number up to 1000000000");
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

}  // namespace

Status SummarizeRules::load(const RuleFile& file) {
  return load_numbers(file, {
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
      {"aicpu.masking_core_tokens", {nullptr, nullptr, nullptr, &aicpu_masking_core_tokens}},
      {"operators.sample_event_ids", {nullptr, &operator_sample_event_ids}},
      {"root_tables.max_concatenated_mib", {nullptr, &root_table_max_mib}},
  });
}

Status DiagnosticsRules::load(const RuleFile& file, const Vocabulary& vocab) {
  return load_numbers(file, {
      {"skew.cross_rank_skew_ratio", {&cross_rank_skew_ratio, nullptr}},
      {"skew.high_skew_ratio", {&high_skew_ratio, nullptr}},
      {"skew.cross_rank_skew_us", {&cross_rank_skew_us, nullptr}},
      {"skew.dp_wall_skew_ratio", {&dp_wall_skew_ratio, nullptr}},
      {"slow_rank.dixon_q_critical", {nullptr, nullptr, &dixon_q_critical}},
      {"slow_rank.sigma", {&slow_rank_sigma, nullptr}},
      {"slow_rank.min_votes", {nullptr, &slow_rank_min_votes}},
      {"slow_rank.min_vote_share", {&slow_rank_min_vote_share, nullptr}},
      {"ep.imbalance_ratio", {&ep_imbalance_ratio, nullptr}},
      {"ep.expert_compute_categories", {nullptr, nullptr, nullptr, nullptr, &ep_expert_categories, &vocab}},
      {"host.min_share", {&host_bound_min_share, nullptr}},
      {"host.min_ms", {&host_bound_min_ms, nullptr}},
      {"alignment.min_overlap_ratio", {&align_min_overlap_ratio, nullptr}},
      {"alignment.high_min_members", {nullptr, &align_high_min_members}},
      {"alignment.high_max_skew_us", {&align_high_max_skew_us, nullptr}},
      {"alignment.medium_max_skew_us", {&align_medium_max_skew_us, nullptr}},
      {"severity.slow_vote_high_share", {&slow_vote_high_share, nullptr}},
      {"severity.host_bound_high_share", {&host_bound_high_share, nullptr}},
      {"evidence.max_evidence_ids", {nullptr, &max_evidence_ids}},
      {"alignment_findings.min_share", {&align_finding_min_share, nullptr}},
      {"alignment_findings.min_excess_ms", {&align_finding_min_excess_ms, nullptr}},
      {"alignment_findings.co_suspect_min_ratio", {&align_co_suspect_min_ratio, nullptr}},
      {"alignment_findings.max_co_suspects", {nullptr, &align_max_co_suspects}},
      {"alignment_findings.co_suspect_over_chance", {&align_co_suspect_over_chance, nullptr}},
      {"comm_aiv.max_spread", {&comm_aiv_max_spread, nullptr}},
      {"alltoall.size_ratio", {&alltoall_size_ratio, nullptr}},
      {"aicore_freq.nominal_mhz", {&aicore_nominal_mhz, nullptr}},
      {"aicore_freq.reduced_ratio", {&aicore_reduced_ratio, nullptr}},
      {"aicore_freq.min_kernel_share", {&aicore_min_kernel_share, nullptr}},
      {"aicore_freq.min_ms", {&aicore_min_ms, nullptr}},
      {"aicore_freq.high_kernel_share", {&aicore_high_kernel_share, nullptr}},
      {"aicore_freq.unclocked_cores", {nullptr, nullptr, nullptr, &aicore_unclocked_cores}},
      {"critical_path.max_steps", {nullptr, &critical_path_max_steps}},
      {"critical_path.min_steps", {nullptr, &critical_path_min_steps}},
      {"critical_path.min_rank_share", {&critical_path_min_rank_share, nullptr}},
      {"critical_path.share_over_fair", {&critical_path_share_over_fair, nullptr}},
      {"critical_path.min_wait_share", {&critical_path_min_wait_share, nullptr}},
      {"critical_path.high_rank_share", {&critical_path_high_rank_share, nullptr}},
  });
}

}  // namespace ascprof::knowledge

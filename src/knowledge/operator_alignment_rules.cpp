#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "ascprof/knowledge/knowledge.hpp"

namespace ascprof::knowledge {

namespace {

Status number(const RuleFile& file, const RuleEntry& e, double* out) {
  char* end = nullptr;
  const double x = e.values.size() == 1 ? std::strtod(e.values[0].c_str(), &end) : NAN;
  if (e.values.size() != 1 || end == e.values[0].c_str() || *end != '\0' || !std::isfinite(x) || x < 0)
    return file.error(e.line, "'" + e.key + "' needs one non-negative number");
  *out = x;
  return {};
}

const std::set<std::string>& known_findings() {
  static const std::set<std::string> k = {"communication_collective_slow", "ep_load_imbalance_suspected",
                                          "slow_rank_suspected"};
  return k;
}

}  // namespace

int OperatorAlignmentRules::role_of(const CategorySet& categories) const {
  for (size_t i = 0; i < roles.size(); ++i)
    if ((categories & roles[i].categories).any()) return static_cast<int>(i);
  return -1;
}

Status OperatorAlignmentRules::load(const RuleFile& file, const Vocabulary& vocab) {
  roles.clear();
  late_arrival_causes.clear();
  std::map<std::string, double*> reals = {
      {"bucket.width_us", &bucket_us},
      {"confidence.low_min_duration_ratio", &low_min_duration_ratio},
      {"confidence.low_min_start_skew_us", &low_min_start_skew_us},
      {"confidence.high_max_duration_ratio", &high_max_duration_ratio},
      {"confidence.high_max_start_skew_us", &high_max_start_skew_us},
      {"confidence.medium_max_duration_ratio", &medium_max_duration_ratio},
      {"confidence.medium_max_start_skew_us", &medium_max_start_skew_us},
  };
  std::map<std::string, size_t*> counts = {{"confidence.high_min_members", &high_min_members},
                                           {"evidence.max_rows_per_rank", &max_rows_per_rank},
                                           {"evidence.max_event_ids_per_row", &max_event_ids_per_row},
                                           {"evidence.max_rank_ids_per_row", &max_rank_ids_per_row}};
  std::set<std::string> seen;
  for (const auto& block : file.blocks) {
    if (block.kind == "role") {
      OperatorAlignmentRole r;
      r.name = block.name;
      if (r.name.empty()) return file.error(block.line, "[role] needs a name, e.g. [role communication.collective]");
      for (const auto& other : roles)
        if (other.name == r.name) return file.error(block.line, "role '" + r.name + "' is defined twice");
      bool has_categories = false, has_key = false;
      for (const auto& e : block.entries) {
        if (e.key == "categories") {
          for (const auto& c : e.values) {
            const CategorySet under = vocab.categories_under(c);
            if (under.none()) return file.error(e.line, "category '" + c + "' is not declared in vocabulary.rules");
            r.categories |= under;
          }
          has_categories = !e.values.empty();
        } else if (e.key == "name_key") {
          if (e.values.size() != 1 || (e.values[0] != "raw" && e.values[0] != "role"))
            return file.error(e.line, "name_key must be 'raw' or 'role'");
          r.raw_name_key = e.values[0] == "raw";
          has_key = true;
        } else if (e.key == "finding") {
          if (e.values.size() != 1 || !known_findings().count(e.values[0]))
            return file.error(e.line, "finding must be one of communication_collective_slow, ep_load_imbalance_suspected, "
                                      "slow_rank_suspected");
          r.finding = e.values[0];
        } else if (e.key == "trigger") {
          if (e.values.size() != 1 || (e.values[0] != "duration_skew" && e.values[0] != "start_skew"))
            return file.error(e.line, "trigger must be 'duration_skew' or 'start_skew'");
          r.start_skew_trigger = e.values[0] == "start_skew";
        } else {
          return file.error(e.line, "unknown key '" + e.key + "' in [role " + r.name + "]");
        }
      }
      if (!has_categories) return file.error(block.line, "role '" + r.name + "' needs categories");
      if (!has_key) return file.error(block.line, "role '" + r.name + "' needs name_key");
      roles.push_back(std::move(r));
      continue;
    }
    for (const auto& e : block.entries) {
      const std::string key = block.kind + "." + e.key;
      if (key == "causes.late_arrival") {
        if (e.values.empty()) return file.error(e.line, "'late_arrival' needs one or more finding types");
        late_arrival_causes = e.values;
        seen.insert(key);
        continue;
      }
      if (auto it = reals.find(key); it != reals.end()) {
        ASCPROF_RETURN_IF_ERROR(number(file, e, it->second));
      } else if (auto c = counts.find(key); c != counts.end()) {
        double x = 0;
        ASCPROF_RETURN_IF_ERROR(number(file, e, &x));
        // The bound keeps the cast defined (a double beyond size_t is UB) and counts sane.
        if (x != std::floor(x) || x > 1e9)
          return file.error(e.line, "'" + e.key + "' needs a whole number up to 1000000000");
        *c->second = static_cast<size_t>(x);
      } else {
        return file.error(e.line, "unknown key '" + e.key + "' in [" + block.kind + "]");
      }
      seen.insert(key);
    }
  }
  for (const auto& [key, slot] : reals)
    if (!seen.count(key)) return file.error(1, "missing key '" + key + "'");
  for (const auto& [key, slot] : counts)
    if (!seen.count(key)) return file.error(1, "missing key '" + key + "'");
  if (!seen.count("causes.late_arrival")) return file.error(1, "missing key 'late_arrival' in [causes]");
  if (roles.empty()) return file.error(1, "no [role ...] block");
  if (bucket_us <= 0) return file.error(1, "bucket.width_us must be positive");
  return {};
}

}  // namespace ascprof::knowledge

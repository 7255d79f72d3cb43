#pragma once
/// operator_deep_dive.rules: which hot operators get a deep-dive row, the chip peaks of the
/// lower-bound check, how work follows from shapes, host-API rules, and the classification rules
/// (conditions on named features of a row). See the file's header for the rule language.
#include <array>
#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/common/status.hpp"
#include "ascprof/knowledge/rule_file.hpp"

namespace ascprof::knowledge {

class Vocabulary;

/// The numeric features of a deep-dive row, by name; a row holds one value per entry (NaN = not
/// available). The analysis fills them in this order (analysis/deep_dive.cpp).
inline constexpr std::array<std::string_view, 35> kDeepDiveNumbers = {
    "calls", "total_us", "avg_us", "min_us", "max_us", "kernel_time_share", "wait_avg_us", "wait_share",
    "block_dim_min", "block_dim_max", "mix_block_dim_max", "cores_of_type", "block_dim_per_core",
    "aic_mac_ratio", "aic_scalar_ratio", "aic_mte1_ratio", "aic_mte2_ratio", "aic_fixpipe_ratio",
    "aic_icache_miss_rate", "aiv_vec_ratio", "aiv_scalar_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio",
    "aiv_icache_miss_rate", "cube_utilization_pct", "hf32_eligible_share", "work_per_call", "achieved",
    "efficiency", "host_us_per_call", "host_to_device_ratio", "rank_avg_spread", "op_stat_total_us",
    "op_stat_ratio_pct", "peak"};
/// Word features (one value) and list features (several values) of a row.
inline constexpr std::array<std::string_view, 5> kDeepDiveWords = {"task_type", "kernel_type", "name", "bound_family",
                                                                  "work_kind"};
inline constexpr std::array<std::string_view, 2> kDeepDiveLists = {"input_dtypes", "categories"};

/// Index of a numeric feature, or -1.
int deep_dive_number_index(std::string_view name);

/// One `FEATURE OP VALUE...` condition.
struct DeepDiveCondition {
  enum class Op : uint8_t { kGe, kGt, kLe, kLt, kEq, kNe, kIn, kNotIn, kHas, kLacks };
  enum class Kind : uint8_t { kNumber, kWord, kList };
  Kind kind = Kind::kNumber;
  int feature = 0;                  ///< index into kDeepDiveNumbers / kDeepDiveWords / kDeepDiveLists
  Op op = Op::kGe;
  double number = 0;                ///< numeric operand
  std::vector<std::string> words;   ///< word operands (upper-cased for task_type and input_dtypes, DT_ removed)
  std::bitset<128> categories;      ///< `categories has/lacks`: every category under the operands (= CategorySet)
  std::string text;                 ///< as written, for facts and gaps
  int line = 0;
};

struct DeepDiveRule {
  std::string id, title, severity;  ///< severity: high | medium | low | info
  std::vector<DeepDiveCondition> when, test, high_when;
  std::vector<int> cite;            ///< numeric features quoted as facts
  std::string inference, cause, suggestion;
};

struct ChipSpec {
  std::string name;
  double cube_cores = 0, vector_cores = 0, cube_tflops = 0, hbm_gbps = 0;
  std::string source;
};

/// How the work of one call follows from its shapes.
struct WorkRule {
  enum class Formula : uint8_t { kMatmul, kGroupedMatmul, kBytes };
  std::string name;
  Formula formula = Formula::kBytes;
  std::vector<std::string> kernel_types, task_types;  ///< a row matches either list
};

/// A rank-level host API rule (api_statistic.csv).
struct HostRule {
  std::string id, title, cause, suggestion;
  std::vector<std::string> apis;  ///< substrings of the API name
  double min_share = 0;           ///< of the rank's kernel span
};

struct DeepDiveRules {
  double coverage = 0.8;
  size_t min_operators = 20, max_operators = 50, evidence_rows = 4;
  std::string default_chip;
  std::vector<ChipSpec> chips;
  std::vector<std::string> cube_task_types, vector_task_types;  ///< [cores]: upper-cased task types
  std::vector<std::pair<std::string, int>> dtype_bytes;  ///< upper-case name without DT_ -> bytes
  std::vector<WorkRule> work;      ///< first match wins
  std::vector<HostRule> host_rules;
  std::vector<DeepDiveRule> rules; ///< in file order

  /// The chip named `name`, or nullptr.
  const ChipSpec* chip(std::string_view name) const;
  /// Bytes of one element of `dtype` (DT_ prefix and case ignored), or 0 when unknown.
  int bytes_of(std::string_view dtype) const;
  /// Every block and key is validated; errors name file and line.
  Status load(const RuleFile& file, const Vocabulary& vocab);
};

}  // namespace ascprof::knowledge

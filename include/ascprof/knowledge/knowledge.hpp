#pragma once
/// Domain rules loaded at run time from the knowledge/ folder (one source of truth; a new model
/// family needs no recompile). Every file is validated on load; errors name file, line and reason.
///
/// Files read: vocabulary.rules, operator_taxonomy.rules, op_type.rules, hccl_op_kind.rules,
/// pipeline.rules, name_key.rules, segmentation.rules, summarize.rules, diagnostics.rules,
/// operator_alignment.rules, operator_deep_dive.rules, moe_trace.rules, modules.rules.
#include <bitset>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/common/status.hpp"
#include "ascprof/knowledge/deep_dive_rules.hpp"
#include "ascprof/knowledge/module_rules.hpp"
#include "ascprof/knowledge/moe_trace_rules.hpp"
#include "ascprof/knowledge/rule_file.hpp"

namespace ascprof::knowledge {

inline constexpr size_t kMaxCategories = 128;
inline constexpr size_t kMaxRoles = 32;
using CategorySet = std::bitset<kMaxCategories>;
using RoleSet = std::bitset<kMaxRoles>;

/// Declared categories, roles, op types and HCCL kinds, each with a dense index.
class Vocabulary {
 public:
  Status load(const RuleFile& file);
  int category_index(std::string_view name) const;  ///< -1 if undeclared
  int role_index(std::string_view name) const;
  int op_type_index(std::string_view name) const;
  int hccl_kind_index(std::string_view name) const;
  const std::vector<std::string>& categories() const { return categories_; }
  const std::vector<std::string>& roles() const { return roles_; }
  const std::vector<std::string>& op_types() const { return op_types_; }
  const std::vector<std::string>& hccl_kinds() const { return hccl_kinds_; }
  /// Categories equal to `prefix` or starting with `prefix + "."`.
  CategorySet categories_under(std::string_view prefix) const;

 private:
  std::vector<std::string> categories_, roles_, op_types_, hccl_kinds_;
};

/// Result of the taxonomy for one (name, type, core).
struct Taxon {
  CategorySet categories;
  RoleSet roles;
};

/// operator_taxonomy.rules: ordered token rules (see the file's header for the grammar).
class Taxonomy {
 public:
  Status load(const RuleFile& file, const Vocabulary& vocab);
  /// Classifies a kernel. Pure; callers memoise per distinct (name, type, core).
  Taxon classify(std::string_view name, std::string_view type, std::string_view core) const;
  /// Lower-cases and keeps only [a-z0-9] of "name type core" (the matching text).
  static std::string fold(std::string_view name, std::string_view type, std::string_view core);

 private:
  struct Rule {
    std::string id;
    std::vector<std::string> any, all, none, prefix;
    CategorySet has_category, lacks_category;
    bool has_has_category = false;
    CategorySet add_categories;
    RoleSet add_roles;
  };
  std::vector<Rule> rules_;
};

/// op_type.rules and hccl_op_kind.rules.
class OpTypeRules {
 public:
  Status load_op_type(const RuleFile& file, const Vocabulary& vocab);
  Status load_hccl_kind(const RuleFile& file, const Vocabulary& vocab);
  /// op_type index (into Vocabulary::op_types) for an Accelerator Core value (any case), before
  /// the comm+AIV fusion check. `exact` tells whether the exact table matched.
  int op_type(std::string_view core, bool* exact = nullptr) const;
  /// The fusion promotion: returns `to` if `op_type == from` (exact match) and `any_aiv_positive`.
  int fuse(int op_type, bool exact, bool any_aiv_positive) const;
  /// Pipeline field names whose positivity triggers the fusion promotion.
  const std::vector<std::string>& fusion_fields() const { return fusion_fields_; }
  int hccl_kind(std::string_view type) const;

 private:
  std::vector<std::pair<std::string, int>> exact_;  // upper-case key -> op type
  struct Fallback {
    enum Kind { kEmpty, kContains, kSuffix, kDefault } kind;
    std::string text;
    int op_type;
  };
  std::vector<Fallback> fallback_;
  int default_op_type_ = -1;
  int fusion_from_ = -1, fusion_to_ = -1;
  std::vector<std::string> fusion_fields_;
  std::vector<std::pair<std::string, int>> hccl_exact_;
  int hccl_default_ = -1;
};

/// pipeline.rules: the 11 canonical pipeline fields, their aliases and stage groups/families.
struct PipelineField {
  std::string name;                  ///< canonical, e.g. "aic_mac_time(us)"
  std::vector<std::string> aliases;  ///< accepted header names (lower-case)
  bool is_stage = false;
  std::string group;                 ///< "aic" / "aiv" for stages
  std::string family;                ///< cube, aic_mte, scalar, vector, aiv_mte
};

class PipelineRules {
 public:
  Status load(const RuleFile& file);
  const std::vector<PipelineField>& fields() const { return fields_; }
  /// Index of the field a header name refers to (case-insensitive, alias-aware), or -1.
  int field_for_header(std::string_view header) const;
  int field_index(std::string_view canonical) const;

 private:
  std::vector<PipelineField> fields_;
};

/// name_key.rules: name-key folding and shape-signature settings.
class NameKeyRules {
 public:
  Status load(const RuleFile& file, const Vocabulary& vocab);
  /// normalized_name_key of a kernel name (reference §2.2.1).
  std::string name_key(std::string_view name) const;
  /// "shape_<16 hex>" for the joined shape text, or "" when the text is empty.
  std::string shape_signature(std::string_view joined_shapes) const;
  const RoleSet& shape_roles() const { return shape_roles_; }

 private:
  size_t hex_run_min_ = 16;
  size_t max_length_ = 96;
  std::string empty_key_ = "unknown";
  std::string shape_prefix_ = "shape_";
  RoleSet shape_roles_;
};

/// segmentation.rules: the knobs of the segment stage (reference §2.2).
struct AnchorFallback {
  int role = -1;      ///< events with this role...
  int category = -1;  ///< ...and, when >= 0, this category
};

class SegmentationRules {
 public:
  Status load(const RuleFile& file, const Vocabulary& vocab);
  RoleSet boundary_roles;         ///< a layer starts at the latest such row before its anchor
  RoleSet anchor_boundary_roles;  ///< such a row between two anchors splits the anchor group
  RoleSet selection_roles;        ///< step delimiters (argmax)
  RoleSet structural_roles;       ///< events that must lie inside a layer
  std::vector<int> mla_first_categories;  ///< tried in order
  CategorySet companion_only;     ///< explicit categories plus every category under a prefix
  std::vector<AnchorFallback> fallbacks;
  std::vector<std::string> backward_name_tokens;  ///< folded-name tokens of backward attention
  std::vector<int> microbatch_boundary_hccl_kinds;  ///< HCCL kinds (indices) that end a training microbatch
};

/// summarize.rules: thresholds of the summarize stage (reference §2.5, §2.6).
struct SummarizeRules {
  double idle_gap_heavy_ratio = 0.30;
  double bubble_heavy_min_ms = 1.0;
  double bubble_heavy_wall_share = 0.10;
  size_t top_bubbles = 8;
  double mixed_margin = 0.10;
  double wait_anchor_min_ratio = 0.80;
  double false_hotspot_wait_ratio = 0.95;
  double false_hotspot_max_duration_us = 10;
  size_t false_hotspot_top_rank = 10;
  double aicpu_masked_undesirable_ratio = 0.90;
  double aicpu_partially_exposed_ratio = 0.20;
  /// [aicpu] masking_core_tokens: a kernel whose upper-cased Type or Accelerator Core contains one of
  /// these tokens (and that is neither AICPU nor communication) is AI-core work whose intervals mask
  /// AICPU kernels (§2.5.7). Upper-cased on load; each is letters, digits and '_'; at least one.
  std::vector<std::string> aicpu_masking_core_tokens;
  size_t operator_sample_event_ids = 16;
  /// [root_tables] max_concatenated_mib: a root table of the ranks' rows larger than this is kept as
  /// an index of the ranks' part-pack ranges (store/table_index.hpp) instead of a copy.
  size_t root_table_max_mib = 1024;
  /// Every key must be present (the file is the one source of truth; no silent defaults).
  Status load(const RuleFile& file);
};

/// diagnostics.rules: thresholds of the diagnostics stage (reference §2.8).
struct DiagnosticsRules {
  double cross_rank_skew_ratio = 2.0;
  double high_skew_ratio = 4.0;
  double cross_rank_skew_us = 1000;
  double dp_wall_skew_ratio = 2.0;
  std::vector<double> dixon_q_critical;  ///< 99 % Q for n = 3, 4, ... members
  double slow_rank_sigma = 3;
  size_t slow_rank_min_votes = 3;
  double slow_rank_min_vote_share = 0.3;
  double ep_imbalance_ratio = 1.5;
  /// [ep] expert_compute_categories: an operator in any of them counts as expert compute
  std::vector<std::string> ep_expert_categories;
  double host_bound_min_share = 0.10;
  double host_bound_min_ms = 1.0;
  double align_min_overlap_ratio = 0.20;
  size_t align_high_min_members = 4;
  double align_high_max_skew_us = 5000;
  double align_medium_max_skew_us = 20000;
  double slow_vote_high_share = 0.8;
  double host_bound_high_share = 0.3;
  size_t max_evidence_ids = 64;
  double align_finding_min_share = 0.3;
  double align_finding_min_excess_ms = 1.0;
  /// [alignment_findings] co-suspects: ranks last together (e.g. one slow node's NPUs)
  double align_co_suspect_min_ratio = 0.5;
  size_t align_max_co_suspects = 8;
  double align_co_suspect_over_chance = 4;
  double comm_aiv_max_spread = 0.30;
  double alltoall_size_ratio = 1.5;
  double aicore_nominal_mhz = 1800;        ///< [aicore_freq]
  double aicore_reduced_ratio = 0.95;
  double aicore_min_kernel_share = 0.05;
  double aicore_min_ms = 1.0;
  double aicore_high_kernel_share = 0.3;
  std::vector<std::string> aicore_unclocked_cores;  ///< Accelerator Core values left out (upper-cased)
  size_t critical_path_max_steps = 16;     ///< [critical_path]
  size_t critical_path_min_steps = 2;
  double critical_path_min_rank_share = 0.5;
  double critical_path_share_over_fair = 1.5;
  double critical_path_min_wait_share = 0.05;
  double critical_path_high_rank_share = 0.8;
  /// Every key must be present.
  Status load(const RuleFile& file, const Vocabulary& vocab);
};

/// operator_alignment.rules: the cross-rank operator alignment (reference §2.7 time_bucket_v1): which
/// kernels take part under which role, the time bucket, the confidence thresholds, and which finding
/// a role's skewed alignment raises.
struct OperatorAlignmentRole {
  std::string name;              ///< e.g. "communication.collective" (written in the alignment rows)
  CategorySet categories;        ///< a kernel with any of these categories has this role
  bool raw_name_key = false;     ///< key on the kernel name (else on the role name)
  std::string finding;           ///< finding type raised by a skewed alignment ("" = none)
  bool start_skew_trigger = false;  ///< trigger on start skew (else on duration ratio / skew)
};

struct OperatorAlignmentRules {
  std::vector<OperatorAlignmentRole> roles;  ///< first match wins
  double bucket_us = 1000;
  double low_min_duration_ratio = 5, low_min_start_skew_us = 20000;
  size_t high_min_members = 4;
  double high_max_duration_ratio = 1.5, high_max_start_skew_us = 2000;
  double medium_max_duration_ratio = 2.5, medium_max_start_skew_us = 10000;
  size_t max_rows_per_rank = 8;  ///< member rows a rank keeps per bucket (merged up the processes)
  size_t max_event_ids_per_row = 64;  ///< event ids one alignment row lists (round-robin over ranks)
  size_t max_rank_ids_per_row = 256;  ///< member ranks an operator row lists; beyond, its outlier ranks and runs
  /// Finding types that explain a late arrival, in the order one is chosen (a skewed alignment whose
  /// late rank such a finding already names is folded into it).
  std::vector<std::string> late_arrival_causes;
  /// Role index of a kernel's categories, or -1 (not aligned).
  int role_of(const CategorySet& categories) const;
  Status load(const RuleFile& file, const Vocabulary& vocab);
};

/// Everything in knowledge/, loaded and cross-validated.
struct Knowledge {
  std::filesystem::path dir;
  Vocabulary vocab;
  Taxonomy taxonomy;
  OpTypeRules op_types;
  PipelineRules pipeline;
  NameKeyRules names;
  SegmentationRules segmentation;
  SummarizeRules summarize;
  DiagnosticsRules diagnostics;
  OperatorAlignmentRules operator_alignment;
  DeepDiveRules deep_dive;
  MoeTraceRules moe_trace;
  ModuleRules modules;

  /// Loads every rule file from `dir`. Errors name the file and line.
  static Result<Knowledge> load(const std::filesystem::path& dir);
};

/// The default knowledge folder: $ASCPROF_KNOWLEDGE_DIR, else <exe>/../share/ascprof-mpi/knowledge,
/// else <exe dir>/../knowledge and <exe dir>/../../knowledge (build tree), else ./knowledge.
std::filesystem::path default_knowledge_dir();

}  // namespace ascprof::knowledge

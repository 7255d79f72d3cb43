#pragma once
/// The normalize stage for one rank's kernel table: taxonomy (categories, roles), op_type,
/// hccl_op_kind, name keys, shape signatures and pipeline-field lookup, all driven by knowledge/.
///
/// Output is columnar and parallel to KernelTable rows. Per-kernel work is memoised on the
/// distinct (name, type, core) triple and the distinct shape cells, so the cost per row is a few
/// hash lookups.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/model/kernel_table.hpp"

namespace ascprof::analysis {

/// One distinct (name, type, accelerator core) with its classification.
struct TaxonEntry {
  StrId name = 0;
  StrId type = 0;
  StrId core = 0;
  knowledge::CategorySet categories;
  knowledge::RoleSet roles;
  uint8_t op_type = 0;   ///< before the per-row comm+AIV fusion check
  bool op_type_exact = false;
  uint8_t hccl_kind = 0;
  StrId name_key = 0;
};

struct NormalizedKernels {
  std::vector<uint32_t> taxon;        ///< row -> index into `taxa`
  std::vector<uint8_t> op_type;       ///< row -> index into Vocabulary::op_types (after fusion)
  std::vector<StrId> shape_signature; ///< row -> "shape_<hex>" or 0 (none)
  std::vector<uint8_t> pipeline_signal; ///< row -> 1 if any stage field > 0
  std::vector<TaxonEntry> taxa;
  /// For each canonical pipeline field (PipelineRules::fields order): index into
  /// KernelTable::metrics, or -1 when the capture has no such column.
  std::vector<int> pipeline_metric;
  size_t pipeline_event_count = 0;
  int64_t start_ns = 0;  ///< earliest kernel start (0 when no rows)
  int64_t end_ns = 0;    ///< latest kernel end

  /// Pipeline value of `row` for canonical field `field`: clamped >= 0; NaN when absent.
  double pipeline_value(const model::KernelTable& k, size_t row, size_t field) const;
};

/// Runs the normalize stage over a rank's kernels. Never fails: odd values are counted in `stats`.
NormalizedKernels normalize_kernels(const model::KernelTable& kernels, StringPool& pool,
                                    const knowledge::Knowledge& kb, Stats& stats);

/// Sorted names of the set bits, e.g. {"attention.mla", "attention.mla.preprocess"}.
std::vector<std::string> category_names(const knowledge::CategorySet& set, const knowledge::Vocabulary& vocab);
std::vector<std::string> role_names(const knowledge::RoleSet& set, const knowledge::Vocabulary& vocab);

}  // namespace ascprof::analysis

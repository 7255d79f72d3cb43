#include "ascprof/analysis/normalize.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "ascprof/common/numbers.hpp"

namespace ascprof::analysis {

namespace {

struct TripleHash {
  size_t operator()(const std::array<StrId, 3>& t) const {
    uint64_t h = t[0];
    h = h * 0x9E3779B97F4A7C15ULL ^ t[1];
    h = h * 0x9E3779B97F4A7C15ULL ^ t[2];
    return static_cast<size_t>(h ^ (h >> 29));
  }
};
struct PairHash {
  size_t operator()(const std::pair<StrId, StrId>& p) const {
    return static_cast<size_t>((static_cast<uint64_t>(p.first) << 32 | p.second) * 0x9E3779B97F4A7C15ULL >> 7);
  }
};

bool header_has(const model::KernelHeaderInfo& h, std::string_view name) {
  return std::any_of(h.columns.begin(), h.columns.end(), [name](const std::string& c) {
    if (c.size() != name.size()) return false;
    for (size_t i = 0; i < c.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(c[i])) != std::tolower(static_cast<unsigned char>(name[i])))
        return false;
    return true;
  });
}

}  // namespace

double NormalizedKernels::pipeline_value(const model::KernelTable& k, size_t row, size_t field) const {
  const int m = pipeline_metric[field];
  if (m < 0) return std::numeric_limits<double>::quiet_NaN();
  const double v = k.metrics[static_cast<size_t>(m)].values[row];
  if (std::isnan(v)) return 0.0;  // column present, cell N/A: the reference reads 0
  return v < 0 ? 0.0 : v;
}

NormalizedKernels normalize_kernels(const model::KernelTable& k, StringPool& pool, const knowledge::Knowledge& kb,
                                    Stats& stats) {
  NormalizedKernels out;
  const size_t n = k.size();
  out.taxon.resize(n);
  out.op_type.resize(n);
  out.shape_signature.assign(n, 0);
  out.pipeline_signal.assign(n, 0);

  // Resolve pipeline fields to metric columns once, by canonical name or alias.
  const auto& fields = kb.pipeline.fields();
  out.pipeline_metric.assign(fields.size(), -1);
  for (size_t m = 0; m < k.metrics.size(); ++m) {
    const int f = kb.pipeline.field_for_header(k.metrics[m].name);
    if (f >= 0 && out.pipeline_metric[static_cast<size_t>(f)] < 0) out.pipeline_metric[static_cast<size_t>(f)] = static_cast<int>(m);
  }
  std::vector<size_t> stage_fields, fusion_fields;
  for (size_t f = 0; f < fields.size(); ++f)
    if (fields[f].is_stage) stage_fields.push_back(f);
  for (const auto& name : kb.op_types.fusion_fields())
    fusion_fields.push_back(static_cast<size_t>(kb.pipeline.field_index(name)));

  const bool has_in_shapes = header_has(k.header, "Input Shapes");
  const bool has_out_shapes = header_has(k.header, "Output Shapes");
  const bool has_shapes = has_in_shapes || has_out_shapes;

  std::unordered_map<std::array<StrId, 3>, uint32_t, TripleHash> taxon_index;
  std::unordered_map<std::pair<StrId, StrId>, StrId, PairHash> shape_index;
  std::string joined;

  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (size_t r = 0; r < n; ++r) {
    const std::array<StrId, 3> key{k.name[r], k.type[r], k.accelerator_core[r]};
    auto [it, inserted] = taxon_index.try_emplace(key, static_cast<uint32_t>(out.taxa.size()));
    if (inserted) {
      TaxonEntry e;
      e.name = key[0];
      e.type = key[1];
      e.core = key[2];
      const auto taxon = kb.taxonomy.classify(pool.view(e.name), pool.view(e.type), pool.view(e.core));
      e.categories = taxon.categories;
      e.roles = taxon.roles;
      bool exact = false;
      e.op_type = static_cast<uint8_t>(kb.op_types.op_type(pool.view(e.core), &exact));
      e.op_type_exact = exact;
      if (!exact && !pool.view(e.core).empty()) stats.inc(Stat::norm_unknown_core);
      e.hccl_kind = static_cast<uint8_t>(kb.op_types.hccl_kind(pool.view(e.type)));
      e.name_key = pool.intern(kb.names.name_key(pool.view(e.name)));
      out.taxa.push_back(e);
    }
    const uint32_t t = it->second;
    const TaxonEntry& e = out.taxa[t];
    out.taxon[r] = t;

    bool signal = false;
    for (size_t f : stage_fields)
      if (out.pipeline_value(k, r, f) > 0) signal = true;
    out.pipeline_signal[r] = signal ? 1 : 0;
    out.pipeline_event_count += signal ? 1 : 0;

    bool aiv_positive = false;
    for (size_t f : fusion_fields)
      if (out.pipeline_value(k, r, f) > 0) aiv_positive = true;
    out.op_type[r] = static_cast<uint8_t>(kb.op_types.fuse(e.op_type, e.op_type_exact, aiv_positive));

    if (has_shapes && (e.roles & kb.names.shape_roles()).any()) {
      const std::pair<StrId, StrId> sk{k.input_shapes[r], k.output_shapes[r]};
      auto [sit, sinserted] = shape_index.try_emplace(sk, 0);
      if (sinserted) {
        joined.clear();
        if (has_in_shapes) joined += pool.view(sk.first);
        if (has_out_shapes) {
          if (has_in_shapes) joined += ' ';
          joined += pool.view(sk.second);
        }
        const std::string sig = kb.names.shape_signature(trim(joined));
        sit->second = sig.empty() ? 0 : pool.intern(sig);
      }
      out.shape_signature[r] = sit->second;
    }

    lo = std::min(lo, k.start_ns[r]);
    hi = std::max(hi, k.start_ns[r] + std::max<int64_t>(0, k.dur_ns[r]));
  }
  if (n > 0) {
    out.start_ns = lo;
    out.end_ns = hi;
  }
  return out;
}

std::vector<std::string> category_names(const knowledge::CategorySet& set, const knowledge::Vocabulary& vocab) {
  std::vector<std::string> out;
  for (size_t i = 0; i < vocab.categories().size(); ++i)
    if (set.test(i)) out.push_back(vocab.categories()[i]);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> role_names(const knowledge::RoleSet& set, const knowledge::Vocabulary& vocab) {
  std::vector<std::string> out;
  for (size_t i = 0; i < vocab.roles().size(); ++i)
    if (set.test(i)) out.push_back(vocab.roles()[i]);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ascprof::analysis

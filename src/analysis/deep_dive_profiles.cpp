// Per-rank operator profiles for the deep dive, and the shape arithmetic of the lower-bound check.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string_view>
#include <unordered_map>

#include "ascprof/analysis/deep_dive.hpp"

namespace ascprof::analysis {

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// A cell the profiler writes when it did not collect the value.
bool absent_text(std::string_view s) { return s.empty() || s == "N/A" || s == "NULL"; }

// Key of one operator: the interned ids of its name, core, shapes and dtypes (and the Type, which a
// name can in principle carry with two values); the ids are exact because they come from one pool.
struct Key {
  StrId name, core, type, shapes, dtypes;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t h = 1469598103934665603ull;
    for (StrId v : {k.name, k.core, k.type, k.shapes, k.dtypes}) h = (h ^ v) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

// "4096,7168;7168,2048" -> {{4096,7168},{7168,2048}}; an empty or N/A tensor is empty; any other
// non-number makes the whole parse fail (false).
bool parse_tensors(std::string_view s, std::vector<std::vector<double>>& out) {
  out.clear();
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  if (absent_text(s)) return false;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = s.find(';', pos);
    if (end == std::string_view::npos) end = s.size();
    std::string_view t = s.substr(pos, end - pos);
    auto& dims = out.emplace_back();
    size_t p = 0;
    while (!t.empty() && p <= t.size()) {
      size_t q = t.find(',', p);
      if (q == std::string_view::npos) q = t.size();
      std::string_view d = t.substr(p, q - p);
      while (!d.empty() && std::isspace(static_cast<unsigned char>(d.front()))) d.remove_prefix(1);
      while (!d.empty() && std::isspace(static_cast<unsigned char>(d.back()))) d.remove_suffix(1);
      int64_t v = 0;
      const auto r = std::from_chars(d.data(), d.data() + d.size(), v);
      if (d.empty() || r.ec != std::errc() || r.ptr != d.data() + d.size() || v < 0) return false;
      dims.push_back(static_cast<double>(v));
      p = q + 1;
    }
    pos = end + 1;
  }
  return true;
}

double product(const std::vector<double>& dims, size_t from, size_t to) {
  double p = 1;
  for (size_t i = from; i < to; ++i) p *= dims[i];
  return p;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = s.find(sep, pos);
    if (end == std::string_view::npos) end = s.size();
    out.push_back(s.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

}  // namespace

double matmul_flops(const std::string& input_shapes) {
  std::vector<std::vector<double>> t;
  if (!parse_tensors(input_shapes, t) || t.size() < 2 || t[0].size() < 2 || t[1].size() < 2) return NAN;
  const auto& a = t[0];
  const auto& b = t[1];
  const double a1 = a[a.size() - 2], a2 = a.back(), b1 = b[b.size() - 2], b2 = b.back();
  double m = 0, k = 0, n = 0;
  // the shared dimension decides which operand is transposed: a [M,K] x b [K,N] first, then b^T, a^T, both
  if (a2 == b1) {
    m = a1, k = a2, n = b2;
  } else if (a2 == b2) {
    m = a1, k = a2, n = b1;
  } else if (a1 == b1) {
    m = a2, k = a1, n = b2;
  } else if (a1 == b2) {
    m = a2, k = a1, n = b1;
  } else {
    return NAN;
  }
  const double batch = std::max(product(a, 0, a.size() - 2), product(b, 0, b.size() - 2));
  return 2.0 * batch * m * n * k;
}

double grouped_matmul_flops(const std::string& input_shapes) {
  std::vector<std::vector<double>> t;
  if (!parse_tensors(input_shapes, t) || t.size() < 2 || t[0].size() != 2 || t[1].size() != 3) return NAN;
  const double tokens = t[0][0], k = t[0][1];
  const auto& w = t[1];
  double n = 0;
  if (w[1] == k) {
    n = w[2];
  } else if (w[2] == k) {
    n = w[1];
  } else {
    return NAN;
  }
  return 2.0 * tokens * k * n;
}

double tensor_bytes(const std::string& shapes, const std::string& dtypes, const knowledge::DeepDiveRules& rules) {
  std::vector<std::vector<double>> t;
  if (!parse_tensors(shapes, t)) return NAN;
  std::string_view dt = dtypes;
  if (dt.size() >= 2 && dt.front() == '"' && dt.back() == '"') dt = dt.substr(1, dt.size() - 2);
  const auto types = split(dt, ';');
  double bytes = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].empty()) continue;  // a scalar or absent tensor
    const int b = i < types.size() ? rules.bytes_of(types[i]) : 0;
    if (b == 0) return NAN;     // an unknown dtype: no estimate rather than a wrong one
    bytes += product(t[i], 0, t[i].size()) * b;
  }
  return bytes;
}

RankOperatorProfiles operator_profiles(const model::KernelTable& k, const NormalizedKernels& norm, const StringPool& pool,
                                       const knowledge::Knowledge& kb) {
  RankOperatorProfiles out;
  const size_t n = k.size();
  const size_t evidence = kb.deep_dive.evidence_rows;
  std::array<const double*, kDeepDiveMetricColumns.size()> metric{};
  for (size_t m = 0; m < metric.size(); ++m) {
    const int idx = k.metric_index(kDeepDiveMetricColumns[m]);
    if (idx >= 0 && k.metrics[idx].values.size() == n) {
      metric[m] = k.metrics[idx].values.data();
      out.has_metrics = true;
    }
  }
  const size_t n_fields = kb.pipeline.fields().size();
  const bool has_block = !k.block_dim.empty(), has_mix = !k.mix_block_dim.empty(), has_hf32 = !k.hf32_eligible.empty();
  std::unordered_map<Key, uint32_t, KeyHash> index;
  std::vector<OperatorProfile>& profiles = out.profiles;
  StrId yes = 0, no = 0;
  const bool has_yes = pool.find("YES", &yes), has_no = pool.find("NO", &no);
  int64_t first = 0, last = 0;
  auto id_or0 = [](const std::vector<StrId>& col, size_t r) { return col.empty() ? StrId{0} : col[r]; };
  for (size_t r = 0; r < n; ++r) {
    const int64_t dur = std::max<int64_t>(0, k.dur_ns[r]);
    const int64_t wait = k.wait_ns.empty() || k.wait_ns[r] < 0 ? 0 : k.wait_ns[r];
    if (r == 0 || k.start_ns[r] < first) first = k.start_ns[r];
    last = std::max(last, k.start_ns[r] + dur);
    out.kernel_time_ns += dur;
    const Key key{k.name[r], k.accelerator_core[r], id_or0(k.type, r), id_or0(k.input_shapes, r), id_or0(k.input_dtypes, r)};
    auto [it, inserted] = index.try_emplace(key, static_cast<uint32_t>(profiles.size()));
    if (inserted) {
      OperatorProfile& p = profiles.emplace_back();
      p.name = std::string(pool.view(key.name));
      const std::string core = upper(pool.view(key.core));
      p.task_type = core.empty() ? "UNKNOWN" : core;
      p.kernel_type = std::string(pool.view(key.type));
      p.input_shapes = std::string(pool.view(key.shapes));
      p.input_dtypes = std::string(pool.view(key.dtypes));
      if (!k.output_shapes.empty()) p.output_shapes = std::string(pool.view(k.output_shapes[r]));
      if (!k.output_dtypes.empty()) p.output_dtypes = std::string(pool.view(k.output_dtypes[r]));
      const auto& taxon = norm.taxa[norm.taxon[r]];
      std::string cats;
      for (const auto& c : category_names(taxon.categories, kb.vocab)) cats += (cats.empty() ? "" : ",") + c;
      p.categories = std::move(cats);
      const uint8_t op = norm.op_type[r];
      p.op_class = op < kb.vocab.op_types().size() ? kb.vocab.op_types()[op] : "unknown";
      p.dur_min_ns = dur;
      p.dur_max_ns = dur;
      if (!norm.pipeline_metric.empty()) p.pipeline_us.assign(n_fields, 0.0);
    }
    OperatorProfile& p = profiles[it->second];
    ++p.calls;
    p.dur_sum_ns += dur;
    p.wait_sum_ns += wait;
    p.dur_min_ns = std::min(p.dur_min_ns, dur);
    p.dur_max_ns = std::max(p.dur_max_ns, dur);
    if (has_block && k.block_dim[r] != model::kAbsentI32) {
      p.block_dim_min = p.block_dim_min < 0 ? k.block_dim[r] : std::min(p.block_dim_min, k.block_dim[r]);
      p.block_dim_max = std::max(p.block_dim_max, k.block_dim[r]);
    }
    if (has_mix && k.mix_block_dim[r] != model::kAbsentI32) p.mix_block_dim_max = std::max(p.mix_block_dim_max, k.mix_block_dim[r]);
    if (has_hf32) {
      const StrId h = k.hf32_eligible[r];
      const bool is_yes = has_yes && h == yes, is_no = has_no && h == no;
      p.hf32_known += (is_yes || is_no) ? 1 : 0;
      p.hf32_yes += is_yes ? 1 : 0;
    }
    const double dur_us = static_cast<double>(dur) / 1000.0;
    for (size_t m = 0; m < metric.size(); ++m) {
      if (metric[m] == nullptr) continue;
      const double v = metric[m][r];
      if (!std::isfinite(v)) continue;  // N/A cell: this call does not count towards the mean
      p.metric_weighted[m] += v * dur_us;
      p.metric_weight[m] += dur_us;
    }
    for (size_t f = 0; f < p.pipeline_us.size(); ++f) {
      const double v = norm.pipeline_value(k, r, f);
      if (v > 0) p.pipeline_us[f] += v;
    }
    if (p.sample_rows.size() < evidence) p.sample_rows.push_back(static_cast<uint32_t>(r));
  }
  out.span_ns = n == 0 ? 0 : last - first;
  for (auto& p : profiles) {
    bool any = false;
    for (double v : p.pipeline_us) any = any || v > 0;
    if (!any) p.pipeline_us.clear();
  }
  std::sort(profiles.begin(), profiles.end(), [](const OperatorProfile& a, const OperatorProfile& b) {
    if (a.dur_sum_ns != b.dur_sum_ns) return a.dur_sum_ns > b.dur_sum_ns;
    if (a.name != b.name) return a.name < b.name;
    if (a.task_type != b.task_type) return a.task_type < b.task_type;
    if (a.input_shapes != b.input_shapes) return a.input_shapes < b.input_shapes;
    return a.input_dtypes < b.input_dtypes;
  });
  return out;
}

}  // namespace ascprof::analysis

// Operator part of the summarize stage (reference-analysis.md §2.5.4-§2.5.7, §2.6).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "ascprof/common/join.hpp"
#include "ascprof/analysis/summarize.hpp"

namespace ascprof::analysis {

namespace {

constexpr std::string_view kUnknown = "UNKNOWN";  // the reference's default name / task_type

// Stage layout of pipeline.rules, resolved once: stage fields in tie-break order (group "aic"
// first, then "aiv", then any other group), with their family index (first-seen order).
struct StageLayout {
  struct Stage {
    size_t field;
    size_t family;
    bool aic, aiv;
  };
  std::vector<Stage> stages;
  std::vector<std::string> families;

  explicit StageLayout(const knowledge::PipelineRules& rules) {
    const auto& fields = rules.fields();
    for (int pass = 0; pass < 3; ++pass) {
      for (size_t f = 0; f < fields.size(); ++f) {
        const auto& pf = fields[f];
        if (!pf.is_stage) continue;
        const bool aic = pf.group == "aic", aiv = pf.group == "aiv";
        if ((pass == 0) != aic || (pass == 1) != aiv) continue;
        size_t fam = families.size();
        for (size_t i = 0; i < families.size(); ++i)
          if (families[i] == pf.family) fam = i;
        if (fam == families.size()) families.push_back(pf.family);
        stages.push_back({f, fam, aic, aiv});
      }
    }
  }
};

model::BoundClass fixed(const char* stage, const char* family, const char* core) { return {stage, family, core}; }

model::BoundClass classify(const StageLayout& layout, const std::vector<double>& pipeline_us, std::string_view op_type,
                           bool is_aicpu, bool is_communication, double mixed_margin,
                           const knowledge::PipelineRules& rules) {
  if (is_aicpu || op_type == "aicpu") return fixed("aicpu", "aicpu", "none");
  if (op_type == "dsa") return fixed("dsa", "dsa", "none");
  if (op_type == "communication" || (is_communication && op_type != "mix_comm_aiv"))
    return fixed("communication", "communication", "none");

  auto value = [&](size_t field) {
    if (field >= pipeline_us.size()) return 0.0;
    const double v = pipeline_us[field];
    return std::isnan(v) || v < 0 ? 0.0 : v;
  };
  const auto& fields = rules.fields();

  if (op_type == "mix_comm_aiv") {
    double sum = 0, best = -1;
    size_t best_field = 0;
    for (const auto& s : layout.stages) {
      if (!s.aiv) continue;
      const double v = value(s.field);
      sum += v;
      if (v > best) best = v, best_field = s.field;  // strict: the first maximum wins
    }
    if (sum <= 0) return fixed("communication", "comm_aiv_mix", "none");
    return {fields[best_field].name, "comm_aiv_mix", "aiv"};
  }

  double total = 0, best = -1, aic_total = 0, aiv_total = 0;
  size_t best_field = 0;
  bool signal = false;
  std::vector<double> family_total(layout.families.size(), 0.0);
  for (const auto& s : layout.stages) {
    const double v = value(s.field);
    if (v > 0) signal = true;
    total += v;
    if (v > best) best = v, best_field = s.field;
    family_total[s.family] += v;
    if (s.aic) aic_total += v;
    if (s.aiv) aiv_total += v;
  }
  if (!signal || total <= 0) return fixed("unknown", "unknown", "none");

  // Top two families; on equal totals the first-seen family ranks higher (Python's stable sort).
  size_t top = 0;
  for (size_t i = 1; i < family_total.size(); ++i)
    if (family_total[i] > family_total[top]) top = i;
  double runner = 0;
  bool have_runner = false;
  for (size_t i = 0; i < family_total.size(); ++i)
    if (i != top && (!have_runner || family_total[i] > runner)) runner = family_total[i], have_runner = true;
  const std::string family = (family_total[top] - runner) / total < mixed_margin ? "mixed" : layout.families[top];

  std::string core;
  if (aic_total <= 0 && aiv_total <= 0) core = "none";
  else if (aic_total <= 0) core = "aiv";
  else if (aiv_total <= 0) core = "aic";
  else if (std::abs(aic_total - aiv_total) / std::max(aic_total, aiv_total) < mixed_margin) core = "mix";
  else core = aic_total > aiv_total ? "aic" : "aiv";
  return {fields[best_field].name, family, core};
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool contains(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

void add_row(std::vector<std::pair<uint32_t, uint32_t>>& ranges, uint32_t row) {
  if (!ranges.empty() && ranges.back().second + 1 == row) ranges.back().second = row;
  else ranges.emplace_back(row, row);
}

struct GroupKey {
  StrId name;
  uint32_t type;  // index into the upper-cased type table
  uint32_t roles;
  bool operator==(const GroupKey& o) const { return name == o.name && type == o.type && roles == o.roles; }
};
struct GroupKeyHash {
  size_t operator()(const GroupKey& k) const {
    uint64_t h = k.name;
    h = h * 0x9E3779B97F4A7C15ULL ^ k.type;
    h = h * 0x9E3779B97F4A7C15ULL ^ k.roles;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

// Per-taxon facts, computed once per distinct (name, type, core).
struct TaxonFacts {
  uint32_t group = 0;
  uint32_t aicpu_group = UINT32_MAX;  // AICPU exposure group, or none
  bool aicpu = false, comm = false, ai_core = false;
};

struct Group {
  StrId name = 0;
  uint32_t type = 0;
  knowledge::RoleSet roles;
  knowledge::CategorySet categories;
  uint8_t hccl_kind = 0;
  uint64_t calls = 0;
  int64_t dur = 0, wait = 0;
  uint32_t streams = 0;
  int32_t last_stream = 0;
  bool any_stream = false;
  bool aicpu = false, comm = false, signal = false;
  uint32_t first_row = 0;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  std::vector<uint32_t> samples;
};

int64_t nonneg(const std::vector<int64_t>& col, size_t r) {
  if (r >= col.size()) return 0;
  const int64_t v = col[r];
  return v == model::kAbsentI64 || v < 0 ? 0 : v;
}

// Exact comparison of (a_total / a_calls) > (b_total / b_calls) without rounding.
__extension__ typedef __int128 Int128;
bool avg_greater(int64_t a_total, uint64_t a_calls, int64_t b_total, uint64_t b_calls) {
  return static_cast<Int128>(a_total) * static_cast<Int128>(b_calls) >
         static_cast<Int128>(b_total) * static_cast<Int128>(a_calls);
}

double ratio(double num, double den) { return den > 0 ? num / den : 0.0; }

}  // namespace

double sorted_quantile(const std::vector<double>& v, double q) {
  if (v.empty()) return 0.0;
  if (v.size() == 1) return v[0];
  const double pos = static_cast<double>(v.size() - 1) * q;
  const double left = std::floor(pos), right = std::ceil(pos);
  if (left == right) return v[static_cast<size_t>(left)];
  const double w = pos - left;
  return v[static_cast<size_t>(left)] * (1 - w) + v[static_cast<size_t>(right)] * w;
}

model::BoundClass bound_class(const std::vector<double>& pipeline_us, const std::string& op_type, bool is_aicpu,
                              bool is_communication, const knowledge::Knowledge& kb) {
  const StageLayout layout(kb.pipeline);
  return classify(layout, pipeline_us, op_type, is_aicpu, is_communication, kb.summarize.mixed_margin, kb.pipeline);
}

void summarize_operators(const SummarizeInput& in, model::RankSummary& out) {
  out.operators.clear();
  out.hccl.clear();
  out.wait_anchors.clear();
  out.aicpu.clear();
  if (!in.kernels || !in.normalized || !in.pool || !in.kb) return;
  const model::KernelTable& k = *in.kernels;
  const NormalizedKernels& nk = *in.normalized;
  const StringPool& pool = *in.pool;
  const knowledge::Knowledge& kb = *in.kb;
  const knowledge::Vocabulary& vocab = kb.vocab;
  const knowledge::SummarizeRules& rules = kb.summarize;
  const size_t n = std::min({k.size(), nk.taxon.size(), nk.op_type.size()});
  const size_t n_samples = rules.operator_sample_event_ids;

  // ---- per taxon: group ids and event predicates (§2.5.4, §2.5.7) ----
  const int role_comm = vocab.role_index("communication");
  const int role_aicpu = vocab.role_index("aicpu");
  const int op_aicpu = vocab.op_type_index("aicpu");
  const int op_comm = vocab.op_type_index("communication");
  const int op_mix_comm = vocab.op_type_index("mix_comm_aiv");
  const knowledge::CategorySet comm_categories = vocab.categories_under("communication");
  knowledge::CategorySet aicpu_categories;  // the reference matches "aicpu" anywhere in the category text
  for (size_t i = 0; i < vocab.categories().size(); ++i)
    if (contains(vocab.categories()[i], "aicpu") || contains(vocab.categories()[i], "ai_cpu")) aicpu_categories.set(i);
  StrId unknown_name = 0;
  const bool has_unknown_name = pool.find(kUnknown, &unknown_name);

  std::vector<std::string> type_names;  // upper-cased, "" -> UNKNOWN
  std::unordered_map<std::string, uint32_t> type_index;
  std::unordered_map<StrId, uint32_t> type_of_id;
  std::unordered_map<GroupKey, uint32_t, GroupKeyHash> group_index;
  std::unordered_map<StrId, uint32_t> aicpu_index;
  std::vector<Group> groups;
  std::vector<TaxonFacts> facts(nk.taxa.size());
  struct AicpuGroup {
    StrId name = 0;
    uint64_t calls = 0;
    int64_t dur = 0, overlap = 0;
    std::vector<std::pair<uint32_t, uint32_t>> ranges;
    std::vector<uint32_t> samples;
  };
  std::vector<AicpuGroup> aicpu_groups;

  for (size_t t = 0; t < nk.taxa.size(); ++t) {
    const TaxonEntry& e = nk.taxa[t];
    auto [tit, tnew] = type_of_id.try_emplace(e.type, 0);
    if (tnew) {
      std::string u = upper(pool.view(e.type));
      if (u.empty()) u = kUnknown;
      auto [uit, unew] = type_index.try_emplace(u, static_cast<uint32_t>(type_names.size()));
      if (unew) type_names.push_back(u);
      tit->second = uit->second;
    }
    const StrId name = (e.name == 0 && has_unknown_name) ? unknown_name : e.name;
    const GroupKey key{name, tit->second, static_cast<uint32_t>(e.roles.to_ulong())};
    auto [git, gnew] = group_index.try_emplace(key, static_cast<uint32_t>(groups.size()));
    if (gnew) {
      Group g;
      g.name = name;
      g.type = key.type;
      g.roles = e.roles;
      g.hccl_kind = e.hccl_kind;
      groups.push_back(std::move(g));
    }
    TaxonFacts& f = facts[t];
    f.group = git->second;
    const std::string type_u = upper(pool.view(e.type)), core_u = upper(pool.view(e.core));
    f.aicpu = contains(type_u, "AICPU") || contains(type_u, "AI_CPU") || contains(core_u, "AICPU") ||
              contains(core_u, "AI_CPU") || (e.categories & aicpu_categories).any() ||
              (role_aicpu >= 0 && e.roles.test(static_cast<size_t>(role_aicpu))) ||
              (op_aicpu >= 0 && e.op_type == op_aicpu);  // the comm+AIV fusion never yields aicpu
    if (f.aicpu) {
      auto [ait, anew] = aicpu_index.try_emplace(name, static_cast<uint32_t>(aicpu_groups.size()));
      if (anew) {
        aicpu_groups.emplace_back();
        aicpu_groups.back().name = name;
      }
      f.aicpu_group = ait->second;
    }
    f.comm = (role_comm >= 0 && e.roles.test(static_cast<size_t>(role_comm))) || (e.categories & comm_categories).any();
    bool core_token = false;
    for (const std::string& tok : rules.aicpu_masking_core_tokens)  // upper-cased by the loader
      core_token = core_token || contains(type_u, tok) || contains(core_u, tok);
    f.ai_core = core_token && !f.aicpu && !f.comm;
  }

  // ---- one pass over the events ----
  const size_t n_ops = vocab.op_types().size();
  const auto& fields = kb.pipeline.fields();
  const size_t n_fields = fields.size();
  std::vector<const double*> metric_col(n_fields, nullptr);
  bool any_metric = false;
  for (size_t f = 0; f < n_fields && f < nk.pipeline_metric.size(); ++f) {
    const int m = nk.pipeline_metric[f];
    if (m >= 0 && static_cast<size_t>(m) < k.metrics.size() && k.metrics[static_cast<size_t>(m)].values.size() >= n) {
      metric_col[f] = k.metrics[static_cast<size_t>(m)].values.data();
      any_metric = true;
    }
  }
  std::vector<uint64_t> op_counts(groups.size() * n_ops, 0);
  std::vector<uint64_t> op_first(groups.size() * n_ops, 0);  // first-seen sequence + 1
  std::vector<double> pipe(any_metric ? groups.size() * n_fields : 0, 0.0);
  std::unordered_set<uint64_t> group_streams;
  std::vector<std::pair<int64_t, int64_t>> core_intervals;
  std::vector<uint32_t> aicpu_rows;
  const bool has_streams = k.stream_id.size() >= n;
  const bool has_signal = nk.pipeline_signal.size() >= n;

  for (size_t r = 0; r < n; ++r) {
    const uint32_t t = nk.taxon[r];
    if (t >= facts.size()) continue;
    const TaxonFacts& f = facts[t];
    Group& g = groups[f.group];
    const uint32_t row = static_cast<uint32_t>(r);
    const int64_t dur = nonneg(k.dur_ns, r);
    if (g.calls == 0) g.first_row = row;
    ++g.calls;
    g.dur += dur;
    g.wait += nonneg(k.wait_ns, r);
    const int32_t stream = has_streams ? k.stream_id[r] : model::kAbsentI32;
    if (!g.any_stream || stream != g.last_stream) {
      const uint64_t sk = static_cast<uint64_t>(f.group) << 32 | static_cast<uint32_t>(stream);
      if (group_streams.insert(sk).second) ++g.streams;
      g.last_stream = stream;
      g.any_stream = true;
    }
    add_row(g.ranges, row);
    if (g.samples.size() < n_samples) g.samples.push_back(row);
    g.categories |= nk.taxa[t].categories;
    const uint8_t op = nk.op_type[r];
    if (op < n_ops) {
      const size_t slot = f.group * n_ops + op;
      if (op_counts[slot]++ == 0) op_first[slot] = r + 1;
    }
    g.aicpu = g.aicpu || f.aicpu;
    g.comm = g.comm || f.comm;
    if (has_signal && nk.pipeline_signal[r]) g.signal = true;
    if (any_metric) {
      double* acc = &pipe[f.group * n_fields];
      for (size_t fi = 0; fi < n_fields; ++fi) {
        if (!metric_col[fi]) continue;
        const double v = metric_col[fi][r];
        if (v > 0) acc[fi] += v;  // NaN (N/A cell) and negatives read as 0, as pipeline_value
      }
    }
    if (f.ai_core && dur > 0) core_intervals.emplace_back(k.start_ns[r], k.start_ns[r] + dur);
    if (f.aicpu) {
      AicpuGroup& a = aicpu_groups[f.aicpu_group];
      ++a.calls;
      a.dur += dur;
      add_row(a.ranges, row);
      if (a.samples.size() < n_samples) a.samples.push_back(row);
      aicpu_rows.push_back(row);
    }
  }

  // ---- operator rows ----
  const StageLayout layout(kb.pipeline);
  std::vector<uint32_t> order;
  order.reserve(groups.size());
  for (uint32_t i = 0; i < groups.size(); ++i)
    if (groups[i].calls > 0) order.push_back(i);
  auto name_of = [&](const Group& g) { return g.name == 0 ? kUnknown : pool.view(g.name); };
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Group &ga = groups[a], &gb = groups[b];
    const int64_t ca = ga.dur + ga.wait, cb = gb.dur + gb.wait;
    if (ca != cb) return ca > cb;
    const int c = name_of(ga).compare(name_of(gb));
    if (c != 0) return c < 0;
    return ga.first_row < gb.first_row;
  });
  std::vector<uint8_t> op_hccl_kind;
  out.operators.reserve(order.size());
  for (uint32_t gi : order) {
    Group& g = groups[gi];
    model::OperatorRow row;
    row.name = std::string(name_of(g));
    row.task_type = type_names[g.type];
    row.roles = g.roles.none() ? std::string("unknown") : join(role_names(g.roles, vocab), ',');
    row.categories = join(category_names(g.categories, vocab), ',');
    row.call_count = g.calls;
    row.duration_sum_ns = g.dur;
    row.wait_sum_ns = g.wait;
    row.stream_count = g.streams;
    row.row_ranges = std::move(g.ranges);
    row.sample_rows = std::move(g.samples);
    size_t best = n_ops;
    for (size_t op = 0; op < n_ops; ++op) {
      const size_t slot = gi * n_ops + op;
      if (op_counts[slot] == 0) continue;
      if (best == n_ops || op_counts[slot] > op_counts[gi * n_ops + best] ||
          (op_counts[slot] == op_counts[gi * n_ops + best] && op_first[slot] < op_first[gi * n_ops + best]))
        best = op;
    }
    row.op_type = best < n_ops ? vocab.op_types()[best] : std::string("unknown");
    row.pipeline_signal = g.signal;
    if (g.signal) {
      row.pipeline_us.assign(n_fields, 0.0);
      if (any_metric)
        for (size_t fi = 0; fi < n_fields; ++fi) row.pipeline_us[fi] = pipe[gi * n_fields + fi];
    }
    row.bound = classify(layout, row.pipeline_us, row.op_type, g.aicpu, g.comm, rules.mixed_margin, kb.pipeline);
    op_hccl_kind.push_back(g.hccl_kind);
    out.operators.push_back(std::move(row));
  }

  // ---- HCCL rows (§2.5.5) ----
  {
    struct HcclAcc {
      uint8_t kind = 0;
      bool fused = false;
      uint64_t names = 0, calls = 0;
      int64_t dur = 0, wait = 0;
      std::vector<double> avgs;
    };
    std::vector<HcclAcc> accs;
    for (size_t i = 0; i < out.operators.size(); ++i) {
      const auto& op = out.operators[i];
      const int t = vocab.op_type_index(op.op_type);
      if (t < 0 || (t != op_comm && t != op_mix_comm)) continue;
      const bool fused = t == op_mix_comm;
      HcclAcc* acc = nullptr;
      for (auto& a : accs)
        if (a.kind == op_hccl_kind[i] && a.fused == fused) acc = &a;
      if (!acc) {
        accs.emplace_back();
        accs.back().kind = op_hccl_kind[i];
        accs.back().fused = fused;
        acc = &accs.back();
      }
      ++acc->names;
      acc->calls += op.call_count;
      acc->dur += op.duration_sum_ns;
      acc->wait += op.wait_sum_ns;
      acc->avgs.push_back(op.call_count ? static_cast<double>(op.duration_sum_ns) / 1000.0 / static_cast<double>(op.call_count) : 0.0);
    }
    for (auto& a : accs) {
      if (a.calls == 0) continue;
      std::sort(a.avgs.begin(), a.avgs.end());
      model::HcclOpRow h;
      h.hccl_op_kind = a.kind < vocab.hccl_kinds().size() ? vocab.hccl_kinds()[a.kind] : std::string("other");
      h.comm_aiv_fused = a.fused;
      h.name_count = a.names;
      h.call_count = a.calls;
      h.duration_sum_ns = a.dur;
      h.wait_sum_ns = a.wait;
      h.duration_avg_us = static_cast<double>(a.dur) / 1000.0 / static_cast<double>(a.calls);
      h.duration_min_us = a.avgs.front();
      h.duration_p50_us = sorted_quantile(a.avgs, 0.5);
      h.duration_p90_us = sorted_quantile(a.avgs, 0.9);
      h.duration_max_us = a.avgs.back();
      h.wait_ratio = ratio(static_cast<double>(a.wait), static_cast<double>(a.dur + a.wait));
      out.hccl.push_back(std::move(h));
    }
    std::stable_sort(out.hccl.begin(), out.hccl.end(), [](const model::HcclOpRow& a, const model::HcclOpRow& b) {
      if (a.hccl_op_kind != b.hccl_op_kind) return a.hccl_op_kind < b.hccl_op_kind;
      if (a.comm_aiv_fused != b.comm_aiv_fused) return a.comm_aiv_fused;
      return a.duration_sum_ns > b.duration_sum_ns;
    });
  }

  // ---- wait anchors (§2.5.6) ----
  {
    std::vector<uint32_t> ranked(out.operators.size());
    for (uint32_t i = 0; i < ranked.size(); ++i) ranked[i] = i;
    std::stable_sort(ranked.begin(), ranked.end(), [&](uint32_t a, uint32_t b) {
      const auto &oa = out.operators[a], &ob = out.operators[b];
      return avg_greater(oa.duration_sum_ns + oa.wait_sum_ns, oa.call_count, ob.duration_sum_ns + ob.wait_sum_ns,
                         ob.call_count);
    });
    for (size_t pos = 0; pos < ranked.size(); ++pos) {
      const auto& op = out.operators[ranked[pos]];
      const double total = static_cast<double>(op.duration_sum_ns + op.wait_sum_ns);
      const double wait_ratio = ratio(static_cast<double>(op.wait_sum_ns), total);
      if (!(wait_ratio > rules.wait_anchor_min_ratio)) continue;
      const double dur_avg_us = static_cast<double>(op.duration_sum_ns) / 1000.0 / static_cast<double>(op.call_count);
      model::WaitAnchorRow w;
      w.op = ranked[pos];
      w.total_cost_avg_rank = static_cast<uint32_t>(pos + 1);
      w.wait_ratio = wait_ratio;
      w.is_false_hotspot_risk = wait_ratio > rules.false_hotspot_wait_ratio &&
                                dur_avg_us < rules.false_hotspot_max_duration_us &&
                                pos + 1 <= rules.false_hotspot_top_rank;
      out.wait_anchors.push_back(w);
    }
  }

  // ---- AICPU exposure (§2.5.7), against the merged AI-core busy intervals ----
  if (!aicpu_groups.empty()) {
    std::sort(core_intervals.begin(), core_intervals.end());
    std::vector<std::pair<int64_t, int64_t>> merged;
    for (const auto& iv : core_intervals) {
      if (!merged.empty() && iv.first <= merged.back().second) merged.back().second = std::max(merged.back().second, iv.second);
      else merged.push_back(iv);
    }
    for (uint32_t r : aicpu_rows) {
      const int64_t dur = nonneg(k.dur_ns, r);
      if (dur <= 0) continue;
      const int64_t s = k.start_ns[r], e = s + dur;
      // merged intervals are disjoint and sorted, so their ends ascend too
      auto it = std::partition_point(merged.begin(), merged.end(), [s](const auto& m) { return m.second <= s; });
      int64_t overlap = 0;
      for (; it != merged.end() && it->first < e; ++it) overlap += std::min(e, it->second) - std::max(s, it->first);
      aicpu_groups[facts[nk.taxon[r]].aicpu_group].overlap += overlap;
    }
    for (auto& a : aicpu_groups) {
      if (a.calls == 0) continue;
      model::AicpuRow row;
      row.name = std::string(a.name == 0 ? kUnknown : pool.view(a.name));
      row.call_count = a.calls;
      row.duration_sum_ns = a.dur;
      row.overlap_with_ai_core_ns = a.overlap;
      row.masked_ratio = ratio(static_cast<double>(a.overlap), static_cast<double>(a.dur));
      row.classification = row.masked_ratio >= rules.aicpu_masked_undesirable_ratio ? "AICPU_MASKED_BUT_UNDESIRABLE"
                           : row.masked_ratio >= rules.aicpu_partially_exposed_ratio ? "AICPU_PARTIALLY_EXPOSED"
                                                                                     : "AICPU_EXPOSED_NOT_ALLOWED";
      row.row_ranges = std::move(a.ranges);
      row.sample_rows = std::move(a.samples);
      out.aicpu.push_back(std::move(row));
    }
    std::stable_sort(out.aicpu.begin(), out.aicpu.end(), [](const model::AicpuRow& a, const model::AicpuRow& b) {
      if (a.duration_sum_ns != b.duration_sum_ns) return a.duration_sum_ns > b.duration_sum_ns;
      return a.name < b.name;
    });
  }
}

}  // namespace ascprof::analysis

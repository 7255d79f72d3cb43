// Operator deep dive on the coordinator: hot selection per scope, features, rules, host API rules.
#include "ascprof/analysis/deep_dive.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "ascprof/analysis/summarize.hpp"
#include "ascprof/common/stable_id.hpp"
#include "ascprof/model/finding.hpp"

namespace ascprof::analysis {

namespace {

using knowledge::DeepDiveCondition;
using knowledge::DeepDiveRule;
using knowledge::kDeepDiveNumbers;

int feat(std::string_view name) { return knowledge::deep_dive_number_index(name); }

// Index constants resolved once (the names are the contract with the rules file).
struct Features {
  int calls = feat("calls"), total_us = feat("total_us"), avg_us = feat("avg_us"), min_us = feat("min_us"),
      max_us = feat("max_us"), share = feat("kernel_time_share"), wait_avg_us = feat("wait_avg_us"),
      wait_share = feat("wait_share"), bd_min = feat("block_dim_min"), bd_max = feat("block_dim_max"),
      mix_bd = feat("mix_block_dim_max"), cores = feat("cores_of_type"), bd_per_core = feat("block_dim_per_core"),
      metric0 = feat("aic_mac_ratio"), hf32 = feat("hf32_eligible_share"), work = feat("work_per_call"),
      achieved = feat("achieved"), efficiency = feat("efficiency"), host_us = feat("host_us_per_call"),
      host_ratio = feat("host_to_device_ratio"), spread = feat("rank_avg_spread"), op_stat_total = feat("op_stat_total_us"),
      op_stat_ratio = feat("op_stat_ratio_pct"), peak = feat("peak");
};
const Features& F() {
  static const Features f;
  return f;
}

// The metric columns map one to one onto the numeric features from aic_mac_ratio on.
static_assert(kDeepDiveMetricColumns.size() == 12);

// high first, then medium, low, info
int severity_order(const std::string& s) {
  if (s == "high") return 0;
  if (s == "medium") return 1;
  if (s == "low") return 2;
  return 3;
}

std::string fmt(double v) {
  char buf[64];
  if (std::fabs(v) >= 1000 || v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else if (std::fabs(v) >= 1) {
    std::snprintf(buf, sizeof buf, "%.2f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.3f", v);
  }
  return buf;
}

std::string dtype_token(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (u.rfind("DT_", 0) == 0) u.erase(0, 3);
  return u;
}

// Everything a row's rules read besides the numbers.
struct RowWords {
  std::array<std::string, knowledge::kDeepDiveWords.size()> words;
  std::vector<std::string> dtypes;
  knowledge::CategorySet categories;
};

// true / false, or -1 when a feature the condition reads is not available.
int evaluate(const DeepDiveCondition& c, const DeepDiveRow& row, const RowWords& w) {
  using Op = DeepDiveCondition::Op;
  switch (c.kind) {
    case DeepDiveCondition::Kind::kNumber: {
      const double v = row.numbers[c.feature];
      if (!std::isfinite(v)) return -1;
      switch (c.op) {
        case Op::kGe: return v >= c.number;
        case Op::kGt: return v > c.number;
        case Op::kLe: return v <= c.number;
        case Op::kLt: return v < c.number;
        case Op::kEq: return v == c.number;
        case Op::kNe: return v != c.number;
        default: return -1;
      }
    }
    case DeepDiveCondition::Kind::kWord: {
      const std::string& v = w.words[c.feature];
      if (v.empty()) return -1;
      const bool in = std::find(c.words.begin(), c.words.end(), v) != c.words.end();
      return c.op == Op::kIn ? in : !in;
    }
    case DeepDiveCondition::Kind::kList: {
      bool has = false;
      if (knowledge::kDeepDiveLists[c.feature] == "categories") {
        has = (w.categories & c.categories).any();
      } else {
        if (w.dtypes.empty()) return -1;
        for (const auto& d : w.dtypes) has = has || std::find(c.words.begin(), c.words.end(), d) != c.words.end();
      }
      return c.op == Op::kHas ? has : !has;
    }
  }
  return -1;
}

std::string feature_name(const DeepDiveCondition& c) {
  switch (c.kind) {
    case DeepDiveCondition::Kind::kNumber: return std::string(kDeepDiveNumbers[c.feature]);
    case DeepDiveCondition::Kind::kWord: return std::string(knowledge::kDeepDiveWords[c.feature]);
    case DeepDiveCondition::Kind::kList: return std::string(knowledge::kDeepDiveLists[c.feature]);
  }
  return {};
}

void add_gap(DeepDiveRow& row, const std::string& gap) {
  if (std::find(row.gaps.begin(), row.gaps.end(), gap) == row.gaps.end()) row.gaps.push_back(gap);
}

// Applies every rule to a row whose features are filled.
void classify(DeepDiveRow& row, const RowWords& w, const knowledge::DeepDiveRules& rules) {
  for (const DeepDiveRule& rule : rules.rules) {
    bool applies = true;
    for (const auto& c : rule.when) applies = applies && evaluate(c, row, w) == 1;
    if (!applies) continue;
    bool fired = true, missing = false;
    for (const auto& c : rule.test) {
      const int r = evaluate(c, row, w);
      if (r < 0) {
        missing = true;
        add_gap(row, feature_name(c) + " not available (needed by rule " + rule.id + ")");
      }
      fired = fired && r == 1;
    }
    if (missing || !fired) continue;
    DeepDiveDetail d;
    d.id = rule.id;
    d.title = rule.title;
    d.severity = rule.severity;
    if (!rule.high_when.empty()) {
      bool high = true;
      for (const auto& c : rule.high_when) high = high && evaluate(c, row, w) == 1;
      if (high) d.severity = "high";
    }
    for (const auto& c : rule.test) {
      if (c.kind == DeepDiveCondition::Kind::kNumber)
        d.facts.push_back(std::string(kDeepDiveNumbers[c.feature]) + " = " + fmt(row.numbers[c.feature]) + " (test: " +
                          c.text + ")");
    }
    for (const auto& c : rule.when)
      if (c.kind == DeepDiveCondition::Kind::kWord)
        d.facts.push_back(feature_name(c) + " = " + w.words[c.feature] + " (when: " + c.text + ")");
    for (int f : rule.cite) {
      const double v = row.numbers[f];
      d.facts.push_back(std::string(kDeepDiveNumbers[f]) + " = " + (std::isfinite(v) ? fmt(v) : "not available"));
    }
    d.inference = rule.inference;
    d.cause = rule.cause;
    d.suggestion = rule.suggestion;
    row.details.push_back(std::move(d));
  }
  std::stable_sort(row.details.begin(), row.details.end(), [](const DeepDiveDetail& a, const DeepDiveDetail& b) {
    return severity_order(a.severity) < severity_order(b.severity);
  });
  row.severity = row.details.empty() ? "" : row.details.front().severity;
}

// A scope's merged operator (root: summed over ranks; rank: the rank's profile).
struct Merged {
  OperatorProfile p;
  uint32_t rank_count = 0;
  std::vector<std::string> evidence;
  std::string slowest_rank;
  double slowest_avg_us = -1, avg_sum_us = 0;  // per-rank averages, for the spread
};

// A rank scope's entry: the rank's own profile (the root scope's come from DeepDiveRootMerge).
Merged rank_entry(const OperatorProfile& p, uint32_t ordinal, const std::string& rank_id, size_t evidence_cap) {
  Merged m;
  m.p = p;
  m.p.sample_rows.clear();
  m.rank_count = 1;
  for (uint32_t row : p.sample_rows)
    if (m.evidence.size() < evidence_cap) m.evidence.push_back(model::event_id(ordinal, row));
  const double avg = p.calls == 0 ? 0 : static_cast<double>(p.dur_sum_ns) / 1000.0 / static_cast<double>(p.calls);
  m.avg_sum_us = avg;
  m.slowest_avg_us = avg;
  m.slowest_rank = rank_id;
  return m;
}

// Host API time per call of an operator: its aclnn API (the longest API name that is a prefix of the
// kernel name followed by '_') plus that API's GetWorkspaceSize, over the API's call count.
struct HostMatch {
  std::string api;
  double time_us = 0, avg_us = 0;
  uint64_t count = 0;
};

class HostIndex {
 public:
  void add(const std::vector<model::ApiStatisticRow>& rows) {
    for (const auto& r : rows) {
      auto& e = by_name_[r.api_name];
      e.time_us += r.time_us;
      e.count += r.count;
    }
  }
  void set(const std::string& api, double time_us, uint64_t count) { by_name_[api] = {time_us, count}; }
  bool empty() const { return by_name_.empty(); }
  bool match(const std::string& kernel_name, HostMatch* out) const {
    size_t best = 0;
    for (size_t cut = kernel_name.find('_'); cut != std::string::npos; cut = kernel_name.find('_', cut + 1)) {
      const auto it = by_name_.find(kernel_name.substr(0, cut));
      if (it != by_name_.end() && it->second.count > 0) best = cut;
    }
    if (best == 0) return false;
    const std::string api = kernel_name.substr(0, best);
    const Entry& e = by_name_.at(api);
    double time = e.time_us;
    if (const auto ws = by_name_.find(api + "GetWorkspaceSize"); ws != by_name_.end()) time += ws->second.time_us;
    out->api = api;
    out->count = e.count;
    out->avg_us = e.time_us / static_cast<double>(e.count);
    out->time_us = time;
    return true;
  }

 private:
  struct Entry {
    double time_us = 0;
    uint64_t count = 0;
  };
  std::map<std::string, Entry> by_name_;
};

struct OpStatIndex {
  std::map<std::pair<std::string, std::string>, std::pair<double, double>> total_ratio;  // (type, core) -> sums
  void add(const std::vector<model::OpStatisticRow>& rows) {
    for (const auto& r : rows) {
      auto& e = total_ratio[{r.op_type, r.core_type}];
      e.first += r.total_us;
      e.second += r.ratio_pct;
    }
  }
};

struct ScopeContext {
  std::string scope, rank_id;
  int64_t kernel_time_ns = 0;
  const HostIndex* host = nullptr;
  const OpStatIndex* op_stats = nullptr;
  bool has_metrics = true, has_op_statistic = true, has_api_statistic = true;
};

DeepDiveRow make_row(const Merged& m, const ScopeContext& ctx, const knowledge::ChipSpec& chip,
                     const knowledge::Knowledge& kb, RowWords* words) {
  const auto& f = F();
  const auto& rules = kb.deep_dive;
  const OperatorProfile& p = m.p;
  DeepDiveRow row;
  row.numbers.fill(NAN);
  row.scope = ctx.scope;
  row.rank_id = ctx.rank_id;
  row.rank_count = m.rank_count;
  row.name = p.name;
  row.task_type = p.task_type;
  row.kernel_type = p.kernel_type;
  row.categories = p.categories;
  row.input_shapes = p.input_shapes;
  row.input_dtypes = p.input_dtypes;
  const bool no_shape = p.input_shapes.empty() || p.input_shapes == "N/A";
  row.shape_class = no_shape ? "no_shape" : stable_id_n("shape", {p.input_shapes, p.input_dtypes}, 12);
  row.deep_dive_id = stable_id("odd", {row.scope, row.rank_id, row.name, row.task_type, row.kernel_type, row.shape_class});
  auto& x = row.numbers;
  const double total_us = static_cast<double>(p.dur_sum_ns) / 1000.0;
  const double calls = static_cast<double>(p.calls);
  x[f.calls] = calls;
  x[f.total_us] = total_us;
  x[f.avg_us] = calls > 0 ? total_us / calls : NAN;
  x[f.min_us] = static_cast<double>(p.dur_min_ns) / 1000.0;
  x[f.max_us] = static_cast<double>(p.dur_max_ns) / 1000.0;
  x[f.share] = ctx.kernel_time_ns > 0 ? static_cast<double>(p.dur_sum_ns) / static_cast<double>(ctx.kernel_time_ns) : NAN;
  const double wait_us = static_cast<double>(p.wait_sum_ns) / 1000.0;
  x[f.wait_avg_us] = calls > 0 ? wait_us / calls : NAN;
  x[f.wait_share] = total_us + wait_us > 0 ? wait_us / (total_us + wait_us) : NAN;
  if (p.block_dim_min >= 0) x[f.bd_min] = p.block_dim_min;
  if (p.block_dim_max >= 0) x[f.bd_max] = p.block_dim_max;
  if (p.mix_block_dim_max >= 0) x[f.mix_bd] = p.mix_block_dim_max;
  auto listed = [&p](const std::vector<std::string>& types) {
    return std::find(types.begin(), types.end(), p.task_type) != types.end();
  };
  if (listed(rules.cube_task_types)) x[f.cores] = chip.cube_cores;
  if (listed(rules.vector_task_types)) x[f.cores] = chip.vector_cores;
  if (std::isfinite(x[f.cores]) && std::isfinite(x[f.bd_max])) x[f.bd_per_core] = x[f.bd_max] / x[f.cores];
  for (size_t m2 = 0; m2 < kDeepDiveMetricColumns.size(); ++m2)
    if (p.metric_weight[m2] > 0) x[f.metric0 + static_cast<int>(m2)] = p.metric_weighted[m2] / p.metric_weight[m2];
  if (p.hf32_known > 0) x[f.hf32] = static_cast<double>(p.hf32_yes) / static_cast<double>(p.hf32_known);
  // Lower-bound check (reference §4 step 3): the time the call needs at least is the larger of its
  // compute bound (FLOPs / cube peak, matmul work rules) and its transfer bound (bytes of every input
  // and output tensor / HBM bandwidth). Efficiency = that bound / measured time; the dominant term
  // names the work kind. Above 1 the shapes or the chip peaks do not fit the capture (a gap).
  for (const auto& w : rules.work) {
    const bool match = std::find(w.kernel_types.begin(), w.kernel_types.end(), p.kernel_type) != w.kernel_types.end() ||
                       std::find(w.task_types.begin(), w.task_types.end(), p.task_type) != w.task_types.end();
    if (!match) continue;
    double flops = NAN;
    if (w.formula == knowledge::WorkRule::Formula::kMatmul) flops = matmul_flops(p.input_shapes);
    if (w.formula == knowledge::WorkRule::Formula::kGroupedMatmul) flops = grouped_matmul_flops(p.input_shapes);
    const double bytes = tensor_bytes(p.input_shapes, p.input_dtypes, rules) + tensor_bytes(p.output_shapes, p.output_dtypes, rules);
    const bool wants_flops = w.formula != knowledge::WorkRule::Formula::kBytes;
    if ((wants_flops && !(flops > 0)) || !(bytes > 0)) {
      add_gap(row, "work per call not derivable from the shapes and dtypes (" + w.name + ")");
      break;
    }
    const double compute_us = wants_flops ? flops / (chip.cube_tflops * 1e12) * 1e6 : 0;
    const double transfer_us = bytes / (chip.hbm_gbps * 1e9) * 1e6;
    const double avg_us = x[f.avg_us];
    if (compute_us >= transfer_us) {
      row.work_kind = "flops";
      row.achieved_unit = "TFLOPS";
      x[f.work] = flops;
      x[f.peak] = chip.cube_tflops;
      if (avg_us > 0) x[f.achieved] = flops / (avg_us * 1e-6) / 1e12;
      if (p.input_dtypes.find("16") == std::string::npos)
        add_gap(row, "the compute bound uses the 16-bit cube peak; this operator's dtypes are " + p.input_dtypes);
    } else {
      row.work_kind = "bytes";
      row.achieved_unit = "GB/s";
      x[f.work] = bytes;
      x[f.peak] = chip.hbm_gbps;
      if (avg_us > 0) x[f.achieved] = bytes / (avg_us * 1e-6) / 1e9;
    }
    if (avg_us > 0) x[f.efficiency] = std::max(compute_us, transfer_us) / avg_us;
    if (x[f.efficiency] > 1.05)
      add_gap(row, "measured time is below the lower bound: the chip peaks (" + chip.name + ") or the shapes do not fit this capture");
    break;
  }
  // host API cost of the operator
  HostMatch hm;
  if (ctx.host != nullptr && ctx.host->match(p.name, &hm)) {
    row.host_api = hm.api;
    row.host_api_avg_us = hm.avg_us;
    row.host_api_count = hm.count;
    x[f.host_us] = hm.time_us / static_cast<double>(hm.count);
    if (x[f.avg_us] > 0) x[f.host_ratio] = x[f.host_us] / x[f.avg_us];
  }
  if (ctx.op_stats != nullptr) {
    const auto it = ctx.op_stats->total_ratio.find({p.kernel_type, p.task_type});
    if (it != ctx.op_stats->total_ratio.end()) {
      x[f.op_stat_total] = it->second.first;
      if (ctx.scope == "rank") x[f.op_stat_ratio] = it->second.second;
    }
  }
  if (ctx.scope == "root" && m.rank_count > 0) {
    row.slowest_rank_id = m.slowest_rank;
    row.slowest_rank_avg_us = m.slowest_avg_us;
    const double mean = m.avg_sum_us / m.rank_count;
    if (mean > 0) x[f.spread] = m.slowest_avg_us / mean;
  }
  const bool is_aicpu = p.op_class == "aicpu";
  const bool is_comm = (p.op_class == "communication" || p.op_class == "mix_comm_aiv") && p.pipeline_us.empty();
  row.bound_family = bound_class(p.pipeline_us, p.op_class, is_aicpu, is_comm, kb).bound_family;
  row.evidence_ids = m.evidence;
  if (!ctx.has_metrics) add_gap(row, "kernel_details.csv has no pipeline ratio columns (aic-metrics PipeUtilization off)");
  if (!ctx.has_op_statistic) add_gap(row, "op_statistic.csv not present");
  if (!ctx.has_api_statistic) add_gap(row, "api_statistic.csv not present: host API cost unknown");
  words->words = {row.task_type, row.kernel_type, row.name, row.bound_family, row.work_kind};
  std::string_view dt = p.input_dtypes;
  size_t pos = 0;
  while (!dt.empty() && pos <= dt.size()) {
    size_t end = dt.find(';', pos);
    if (end == std::string_view::npos) end = dt.size();
    if (end > pos) words->dtypes.push_back(dtype_token(dt.substr(pos, end - pos)));
    pos = end + 1;
  }
  for (std::string_view rest = p.categories; !rest.empty();) {
    const size_t c = rest.find(',');
    const std::string_view one = rest.substr(0, c);
    const int idx = kb.vocab.category_index(one);
    if (idx >= 0) words->categories.set(static_cast<size_t>(idx));
    rest = c == std::string_view::npos ? std::string_view() : rest.substr(c + 1);
  }
  return row;
}

// Hot selection of a scope's operators (sorted by total desc): the smallest prefix reaching the
// coverage, at least min_operators, at most max_operators.
size_t hot_count(const std::vector<int64_t>& totals_desc, int64_t kernel_time, const knowledge::DeepDiveRules& r) {
  size_t n = 0;
  int64_t acc = 0;
  while (n < totals_desc.size() && n < r.max_operators) {
    if (kernel_time > 0 && static_cast<double>(acc) >= r.coverage * static_cast<double>(kernel_time) && n >= r.min_operators)
      break;
    acc += totals_desc[n];
    ++n;
  }
  return n;
}

void emit_scope(std::vector<Merged>& merged, const ScopeContext& ctx, const knowledge::ChipSpec& chip,
                const knowledge::Knowledge& kb, std::vector<DeepDiveRow>& out) {
  std::stable_sort(merged.begin(), merged.end(), [](const Merged& a, const Merged& b) {
    if (a.p.dur_sum_ns != b.p.dur_sum_ns) return a.p.dur_sum_ns > b.p.dur_sum_ns;
    if (a.p.name != b.p.name) return a.p.name < b.p.name;
    if (a.p.task_type != b.p.task_type) return a.p.task_type < b.p.task_type;
    if (a.p.input_shapes != b.p.input_shapes) return a.p.input_shapes < b.p.input_shapes;
    return a.p.input_dtypes < b.p.input_dtypes;
  });
  std::vector<int64_t> totals;
  totals.reserve(merged.size());
  for (const auto& m : merged) totals.push_back(m.p.dur_sum_ns);
  const size_t n = hot_count(totals, ctx.kernel_time_ns, kb.deep_dive);
  double cumulative = 0;
  for (size_t i = 0; i < n; ++i) {
    RowWords words;
    DeepDiveRow row = make_row(merged[i], ctx, chip, kb, &words);
    row.hot_rank = static_cast<uint32_t>(i + 1);
    const double share = row.numbers[F().share];
    if (std::isfinite(share)) cumulative += share;
    row.cumulative_share = cumulative;
    classify(row, words, kb.deep_dive);
    out.push_back(std::move(row));
  }
}

}  // namespace

double DeepDiveRow::number(std::string_view feature) const {
  const int i = knowledge::deep_dive_number_index(feature);
  return i < 0 ? NAN : numbers[static_cast<size_t>(i)];
}

std::string DeepDiveRow::verdict() const {
  if (details.empty()) return "no pathology found by the rules";
  const auto& d = details.front();
  return d.title + ": " + d.cause + " -> " + d.suggestion;
}

namespace {

std::string operator_key(const OperatorProfile& p) {
  std::string key = p.name;
  for (const std::string* part : {&p.task_type, &p.kernel_type, &p.input_shapes, &p.input_dtypes}) {
    key += '\x1f';
    key += *part;
  }
  return key;
}

// Keeps the first `cap` evidence rows in (rank, sample position) order.
void keep_first(std::vector<std::array<uint32_t, 3>>& evidence, size_t cap) {
  std::sort(evidence.begin(), evidence.end());
  if (evidence.size() > cap) evidence.resize(cap);
}

// One rank's or one merge's operator into the merge's operator of the same key.
void merge_operator(DeepDiveRootMerge::Operator& into, DeepDiveRootMerge::Operator&& from, size_t cap) {
  OperatorProfile& a = into.p;
  const OperatorProfile& p = from.p;
  if (into.rank_count == 0) {
    into = std::move(from);
    return;
  }
  if (std::pair(from.first_rank, from.first_position) < std::pair(into.first_rank, into.first_position)) {
    into.first_rank = from.first_rank;  // the metadata is the first rank's
    into.first_position = from.first_position;
    a.kernel_type = p.kernel_type;
    a.op_class = p.op_class;
    a.categories = p.categories;
    a.output_shapes = p.output_shapes;
    a.output_dtypes = p.output_dtypes;
  }
  a.calls += p.calls;
  a.dur_sum_ns += p.dur_sum_ns;
  a.wait_sum_ns += p.wait_sum_ns;
  a.dur_min_ns = std::min(a.dur_min_ns, p.dur_min_ns);
  a.dur_max_ns = std::max(a.dur_max_ns, p.dur_max_ns);
  if (p.block_dim_min >= 0) a.block_dim_min = a.block_dim_min < 0 ? p.block_dim_min : std::min(a.block_dim_min, p.block_dim_min);
  a.block_dim_max = std::max(a.block_dim_max, p.block_dim_max);
  a.mix_block_dim_max = std::max(a.mix_block_dim_max, p.mix_block_dim_max);
  a.hf32_known += p.hf32_known;
  a.hf32_yes += p.hf32_yes;
  into.rank_count += from.rank_count;
  for (size_t i = 0; i < into.metric_weighted.size(); ++i) {
    into.metric_weighted[i].add(from.metric_weighted[i]);
    into.metric_weight[i].add(from.metric_weight[i]);
  }
  if (into.pipeline_us.size() < from.pipeline_us.size()) into.pipeline_us.resize(from.pipeline_us.size());
  for (size_t i = 0; i < from.pipeline_us.size(); ++i) into.pipeline_us[i].add(from.pipeline_us[i]);
  into.avg_sum_us.add(from.avg_sum_us);
  if (from.slowest_avg_us > into.slowest_avg_us ||
      (from.slowest_avg_us == into.slowest_avg_us && from.slowest_rank < into.slowest_rank)) {
    into.slowest_avg_us = from.slowest_avg_us;
    into.slowest_rank = from.slowest_rank;
    into.slowest_rank_id = std::move(from.slowest_rank_id);
  }
  into.evidence.insert(into.evidence.end(), from.evidence.begin(), from.evidence.end());
  keep_first(into.evidence, cap);
}

DeepDiveRootMerge::Operator& operator_of(DeepDiveRootMerge& m, const std::string& key, bool* fresh) {
  if (m.index.size() != m.operators.size()) {  // loaded from an archive: the index is not sent
    m.index.clear();
    for (uint32_t i = 0; i < m.operators.size(); ++i) m.index.emplace(operator_key(m.operators[i].p), i);
  }
  auto [it, inserted] = m.index.try_emplace(key, static_cast<uint32_t>(m.operators.size()));
  if (inserted) m.operators.emplace_back();
  *fresh = inserted;
  return m.operators[it->second];
}

// The root scope's Merged entry of a merged operator.
Merged merged_entry(DeepDiveRootMerge::Operator&& o) {
  Merged m;
  m.p = std::move(o.p);
  for (size_t i = 0; i < o.metric_weighted.size(); ++i) {
    m.p.metric_weighted[i] = o.metric_weighted[i].value();
    m.p.metric_weight[i] = o.metric_weight[i].value();
  }
  m.p.pipeline_us.clear();
  for (const ExactSum& v : o.pipeline_us) m.p.pipeline_us.push_back(v.value());
  m.rank_count = o.rank_count;
  for (const auto& e : o.evidence) m.evidence.push_back(model::event_id(e[0], e[2]));
  m.slowest_rank = std::move(o.slowest_rank_id);
  m.slowest_avg_us = o.slowest_avg_us;
  m.avg_sum_us = o.avg_sum_us.value();
  return m;
}

}  // namespace

void DeepDiveRootMerge::fold(uint32_t ordinal, const std::string& rank_id, const RankOperatorProfiles& rank,
                             size_t evidence_rows) {
  ++ranks;
  ranks_without_metrics += rank.has_metrics ? 0 : 1;
  ranks_without_op_statistic += rank.op_statistic_present ? 0 : 1;
  ranks_without_api_statistic += rank.api_statistic_present ? 0 : 1;
  kernel_time_ns += rank.kernel_time_ns;
  for (const auto& r : rank.api_stats) {
    auto& e = host_api[r.api_name];
    e.first.add(r.time_us);
    e.second += r.count;
  }
  for (const auto& r : rank.op_stats) {
    auto& e = op_stats[{r.op_type, r.core_type}];
    e.first.add(r.total_us);
    e.second.add(r.ratio_pct);
  }
  for (size_t at = 0; at < rank.profiles.size(); ++at) {
    const OperatorProfile& p = rank.profiles[at];
    Operator o;
    o.p = p;
    o.p.sample_rows.clear();
    o.first_rank = ordinal;
    o.first_position = static_cast<uint32_t>(at);
    o.rank_count = 1;
    for (size_t i = 0; i < o.metric_weighted.size(); ++i) {
      o.metric_weighted[i].add(p.metric_weighted[i]);
      o.metric_weight[i].add(p.metric_weight[i]);
    }
    o.pipeline_us.resize(p.pipeline_us.size());
    for (size_t i = 0; i < p.pipeline_us.size(); ++i) o.pipeline_us[i].add(p.pipeline_us[i]);
    const double avg = p.calls == 0 ? 0 : static_cast<double>(p.dur_sum_ns) / 1000.0 / static_cast<double>(p.calls);
    o.avg_sum_us.add(avg);
    o.slowest_avg_us = avg;
    o.slowest_rank = ordinal;
    o.slowest_rank_id = rank_id;
    for (size_t i = 0; i < p.sample_rows.size() && i < evidence_rows; ++i)
      o.evidence.push_back({ordinal, static_cast<uint32_t>(i), p.sample_rows[i]});
    bool fresh = false;
    Operator& into = operator_of(*this, operator_key(p), &fresh);
    merge_operator(into, std::move(o), evidence_rows);
  }
}

void DeepDiveRootMerge::merge(DeepDiveRootMerge&& other, size_t evidence_rows) {
  ranks += other.ranks;
  ranks_without_metrics += other.ranks_without_metrics;
  ranks_without_op_statistic += other.ranks_without_op_statistic;
  ranks_without_api_statistic += other.ranks_without_api_statistic;
  kernel_time_ns += other.kernel_time_ns;
  for (auto& [api, e] : other.host_api) {
    auto& into = host_api[api];
    into.first.add(e.first);
    into.second += e.second;
  }
  for (auto& [key, e] : other.op_stats) {
    auto& into = op_stats[key];
    into.first.add(e.first);
    into.second.add(e.second);
  }
  for (Operator& o : other.operators) {
    bool fresh = false;
    Operator& into = operator_of(*this, operator_key(o.p), &fresh);
    merge_operator(into, std::move(o), evidence_rows);
  }
  other = {};
}

DeepDive build_deep_dive(std::span<const RankProfilesRef> ranks, const knowledge::Knowledge& kb, const std::string& chip_name) {
  DeepDiveRootMerge root;
  for (const auto& r : ranks)
    if (r.profiles != nullptr) root.fold(r.rank_ordinal, r.rank_id, *r.profiles, kb.deep_dive.evidence_rows);
  return build_deep_dive(std::move(root), ranks, kb, chip_name);
}

DeepDive build_deep_dive(DeepDiveRootMerge root_merge, std::span<const RankProfilesRef> ranks,
                         const knowledge::Knowledge& kb, const std::string& chip_name) {
  DeepDive out;
  const auto& rules = kb.deep_dive;
  const knowledge::ChipSpec* chip = rules.chip(chip_name.empty() ? rules.default_chip : chip_name);
  if (chip == nullptr) chip = rules.chip(rules.default_chip);
  if (chip != nullptr) out.chip = *chip;
  out.chip_assumed = true;  // no file this tool reads names the chip

  // root scope: one merged entry per (name, task type, Type, shapes, dtypes) over the ranks
  out.ranks = root_merge.ranks;
  out.ranks_without_metrics = root_merge.ranks_without_metrics;
  out.ranks_without_op_statistic = root_merge.ranks_without_op_statistic;
  out.ranks_without_api_statistic = root_merge.ranks_without_api_statistic;
  // first seen order (rank order, then the rank's profile order): emit_scope's ties keep it
  std::sort(root_merge.operators.begin(), root_merge.operators.end(), [](const auto& a, const auto& b) {
    return std::pair(a.first_rank, a.first_position) < std::pair(b.first_rank, b.first_position);
  });
  std::vector<Merged> root;
  root.reserve(root_merge.operators.size());
  for (auto& o : root_merge.operators) root.push_back(merged_entry(std::move(o)));
  HostIndex root_host;
  for (const auto& [api, e] : root_merge.host_api) root_host.set(api, e.first.value(), e.second);
  OpStatIndex root_stats;
  for (const auto& [key, e] : root_merge.op_stats) root_stats.total_ratio[key] = {e.first.value(), e.second.value()};
  ScopeContext root_ctx;
  root_ctx.scope = "root";
  root_ctx.kernel_time_ns = root_merge.kernel_time_ns;
  root_ctx.host = root_host.empty() ? nullptr : &root_host;
  root_ctx.op_stats = &root_stats;
  root_ctx.has_metrics = out.ranks_without_metrics == 0;
  root_ctx.has_op_statistic = out.ranks_without_op_statistic == 0;
  root_ctx.has_api_statistic = out.ranks_without_api_statistic == 0;
  if (out.ranks > 0) emit_scope(root, root_ctx, out.chip, kb, out.rows);

  for (const auto& r : ranks) {
    if (r.profiles == nullptr) continue;
    const RankOperatorProfiles& rp = *r.profiles;
    HostIndex host;
    host.add(rp.api_stats);
    OpStatIndex stats;
    stats.add(rp.op_stats);
    ScopeContext ctx;
    ctx.scope = "rank";
    ctx.rank_id = r.rank_id;
    ctx.kernel_time_ns = rp.kernel_time_ns;
    ctx.host = host.empty() ? nullptr : &host;
    ctx.op_stats = &stats;
    ctx.has_metrics = rp.has_metrics;
    ctx.has_op_statistic = rp.op_statistic_present;
    ctx.has_api_statistic = rp.api_statistic_present;
    // only the rank's own hot candidates are merged (profiles are sorted by total already)
    std::vector<Merged> merged;
    const size_t take = std::min(rp.profiles.size(), rules.max_operators);
    merged.reserve(take);
    for (size_t i = 0; i < take; ++i) merged.push_back(rank_entry(rp.profiles[i], r.rank_ordinal, r.rank_id, rules.evidence_rows));
    emit_scope(merged, ctx, out.chip, kb, out.rows);

    // host API rules of the rank
    const double span_us = static_cast<double>(rp.span_ns) / 1000.0;
    if (span_us <= 0) continue;
    for (const auto& h : rules.host_rules) {
      double total = 0;
      std::vector<const model::ApiStatisticRow*> hits;
      for (const auto& a : rp.api_stats) {
        bool match = false;
        for (const auto& token : h.apis) match = match || a.api_name.find(token) != std::string::npos;
        if (match) {
          total += a.time_us;
          hits.push_back(&a);
        }
      }
      if (hits.empty() || total / span_us < h.min_share) continue;
      // the APIs that carry the time, largest first (a matching API that took no time is not evidence)
      std::stable_sort(hits.begin(), hits.end(), [](const auto* a, const auto* b) { return a->time_us > b->time_us; });
      for (const auto* a : hits) {
        if (!(a->time_us > 0)) continue;
        HostApiRow row;
        row.rank_id = r.rank_id;
        row.level = a->level;
        row.api = a->api_name;
        row.rule = h.id;
        row.title = h.title;
        row.cause = h.cause;
        row.suggestion = h.suggestion;
        row.time_us = a->time_us;
        row.count = a->count;
        row.avg_us = a->avg_us;
        row.share_of_span = a->time_us / span_us;
        out.host_api.push_back(std::move(row));
      }
    }
  }
  return out;
}

}  // namespace ascprof::analysis

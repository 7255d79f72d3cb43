// Block rows of the summarize stage (reference-analysis.md §2.5.8, first part: block_summary.csv).
#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ascprof/analysis/summarize.hpp"

namespace ascprof::analysis {
namespace {

constexpr std::string_view kUnknown = "UNKNOWN";  // the reference's default name / task_type
constexpr size_t kTopOps = 5;

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Facts resolved once per taxon so the row loop only does array lookups.
struct TaxonInfo {
  uint32_t op_key = 0;  // index into OpKeys (name, upper-cased task type)
  bool attention = false, moe = false, comm = false;
};

struct OpKey {
  model::CountName name;  // interned once per key: blocks' top ops share it
  uint32_t type = 0;  // index into the upper-cased type names
};

// Per-op-key accumulators for one block; valid when stamp == the block's epoch.
struct OpAcc {
  uint32_t stamp = 0;
  uint32_t seen = 0;  // first-seen position within the block
  uint64_t calls = 0;
  int64_t dur = 0;
};

int64_t nonneg(const std::vector<int64_t>& col, size_t r) {
  if (r >= col.size()) return 0;
  const int64_t v = col[r];
  return v == model::kAbsentI64 || v < 0 ? 0 : v;
}

}  // namespace

std::vector<model::BlockSummary> summarize_blocks(const SummarizeInput& in, const model::RankStructure& s,
                                                  const model::RankClasses& c) {
  (void)s;
  std::vector<model::BlockSummary> out;
  if (in.kernels == nullptr || in.normalized == nullptr || in.kb == nullptr) return out;
  const model::KernelTable& k = *in.kernels;
  const NormalizedKernels& nk = *in.normalized;
  const knowledge::Knowledge& kb = *in.kb;
  const knowledge::Vocabulary& vocab = kb.vocab;
  const size_t n = std::min({k.size(), k.dur_ns.size(), nk.taxon.size(), nk.op_type.size()});

  // ---- per taxon: op key and role flags ----
  auto role_set = [&vocab](std::initializer_list<const char*> names) {
    knowledge::RoleSet set;
    for (const char* name : names) {
      const int i = vocab.role_index(name);
      if (i >= 0) set.set(static_cast<size_t>(i));
    }
    return set;
  };
  const knowledge::RoleSet attention_roles = role_set({"attention", "attention_aux"});
  const knowledge::RoleSet moe_roles = role_set({"moe"});
  const knowledge::RoleSet comm_roles = role_set({"communication"});

  std::vector<model::CountName> type_names;  // upper-cased, "" -> UNKNOWN
  std::unordered_map<std::string, uint32_t> type_index;
  std::unordered_map<StrId, uint32_t> type_of_id;
  std::vector<OpKey> op_keys;
  std::unordered_map<uint64_t, uint32_t> op_key_index;  // name StrId << 32 | type index
  std::vector<TaxonInfo> taxa(nk.taxa.size());
  for (size_t t = 0; t < nk.taxa.size(); ++t) {
    const TaxonEntry& e = nk.taxa[t];
    auto [tit, tnew] = type_of_id.try_emplace(e.type, 0);
    if (tnew) {
      std::string u = in.pool != nullptr ? upper(in.pool->view(e.type)) : std::string();
      if (u.empty()) u = kUnknown;
      auto [uit, unew] = type_index.try_emplace(u, static_cast<uint32_t>(type_names.size()));
      if (unew) type_names.emplace_back(u);
      tit->second = uit->second;
    }
    const uint64_t key = static_cast<uint64_t>(e.name) << 32 | tit->second;
    auto [kit, knew] = op_key_index.try_emplace(key, static_cast<uint32_t>(op_keys.size()));
    if (knew) {
      std::string_view name = e.name != 0 && in.pool != nullptr ? in.pool->view(e.name) : std::string_view{};
      op_keys.push_back({name.empty() ? model::CountName(kUnknown) : model::CountName(name), tit->second});
    }
    TaxonInfo& info = taxa[t];
    info.op_key = kit->second;
    info.attention = (e.roles & attention_roles).any();
    info.moe = (e.roles & moe_roles).any();
    info.comm = (e.roles & comm_roles).any();
  }

  // ---- op types: name order for the counts, communication-like set ----
  const auto& op_names = vocab.op_types();
  const size_t n_ops = op_names.size();
  const int op_unknown = vocab.op_type_index("unknown");
  std::vector<uint8_t> op_is_comm(n_ops, 0);
  for (const char* name : {"communication", "mix_comm_aiv"}) {
    const int i = vocab.op_type_index(name);
    if (i >= 0) op_is_comm[static_cast<size_t>(i)] = 1;
  }
  std::vector<uint32_t> op_order(n_ops);
  for (uint32_t i = 0; i < n_ops; ++i) op_order[i] = i;
  std::sort(op_order.begin(), op_order.end(), [&](uint32_t a, uint32_t b) { return op_names[a] < op_names[b]; });
  const std::vector<model::CountName> op_ids(op_names.begin(), op_names.end());  // interned once

  // ---- pipeline columns (same reading as the operator rows: NaN and negatives count as 0) ----
  const auto& fields = kb.pipeline.fields();
  const size_t n_fields = fields.size();
  std::vector<const double*> metric_col(n_fields, nullptr);
  for (size_t f = 0; f < n_fields && f < nk.pipeline_metric.size(); ++f) {
    const int m = nk.pipeline_metric[f];
    if (m >= 0 && static_cast<size_t>(m) < k.metrics.size() && k.metrics[static_cast<size_t>(m)].values.size() >= n)
      metric_col[f] = k.metrics[static_cast<size_t>(m)].values.data();
  }
  const bool has_signal_col = nk.pipeline_signal.size() >= n;

  // ---- scratch reused by every block ----
  std::vector<OpAcc> op_acc(op_keys.size());
  std::vector<uint32_t> touched;  // op keys of the current block, first seen first
  std::vector<uint64_t> op_count(n_ops);
  std::vector<int64_t> op_dur(n_ops);
  std::vector<size_t> op_first(n_ops);
  std::vector<double> pipe(n_fields);
  uint32_t epoch = 0;

  out.resize(c.blocks.size());
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  ranges.reserve(c.blocks.size());
  for (const auto& block : c.blocks) ranges.emplace_back(block.row_start, block.row_end);
  // block rows show task types, roles, op types and (block_summary.csv's reference column) categories
  std::vector<model::WindowMetrics> metrics = window_metrics_many(in, ranges, 0, /*category_counts=*/true);
  for (size_t bi = 0; bi < c.blocks.size(); ++bi) {
    const model::BlockSegment& block = c.blocks[bi];
    model::BlockSummary& row = out[bi];
    row.block = static_cast<uint32_t>(bi);
    row.dominant_op_type = "unknown";
    const uint32_t a = block.row_start;
    const uint32_t b = n == 0 ? 0 : std::min<uint32_t>(block.row_end, static_cast<uint32_t>(n - 1));
    if (n == 0 || a > b) {
      row.bound = bound_class({}, row.dominant_op_type, false, false, kb);
      continue;
    }
    row.metrics = std::move(metrics[bi]);

    if (++epoch == 0) {  // stamps wrapped: clear them once every 4 billion blocks
      for (auto& acc : op_acc) acc.stamp = 0;
      epoch = 1;
    }
    touched.clear();
    std::fill(op_count.begin(), op_count.end(), 0);
    std::fill(op_dur.begin(), op_dur.end(), 0);
    std::fill(pipe.begin(), pipe.end(), 0.0);
    bool signal = false;
    int64_t kernel_sum = 0;
    for (uint32_t r = a; r <= b; ++r) {
      const int64_t dur = nonneg(k.dur_ns, r);
      kernel_sum += dur;
      size_t op = nk.op_type[r];
      if (op >= n_ops && op_unknown >= 0) op = static_cast<size_t>(op_unknown);
      if (op < n_ops) {
        if (op_count[op]++ == 0) op_first[op] = r;
        op_dur[op] += dur;
        if (op_is_comm[op]) row.comm_duration_ns += dur;
      }
      const uint32_t t = nk.taxon[r];
      if (t < taxa.size()) {
        const TaxonInfo& info = taxa[t];
        row.has_attention = row.has_attention || info.attention;
        row.has_moe = row.has_moe || info.moe;
        row.has_communication = row.has_communication || info.comm;
        OpAcc& acc = op_acc[info.op_key];
        if (acc.stamp != epoch) {
          acc = OpAcc{epoch, static_cast<uint32_t>(touched.size()), 0, 0};
          touched.push_back(info.op_key);
        }
        ++acc.calls;
        acc.dur += dur;
      }
      if (has_signal_col && nk.pipeline_signal[r]) signal = true;
      for (size_t f = 0; f < n_fields; ++f) {
        if (metric_col[f] == nullptr) continue;
        const double v = metric_col[f][r];
        if (v > 0) pipe[f] += v;
      }
    }

    row.comm_share = kernel_sum > 0 ? static_cast<double>(row.comm_duration_ns) / static_cast<double>(kernel_sum) : 0.0;
    size_t best = n_ops;
    for (size_t op = 0; op < n_ops; ++op) {
      if (op_count[op] == 0) continue;
      if (best == n_ops || op_dur[op] > op_dur[best] || (op_dur[op] == op_dur[best] && op_first[op] < op_first[best]))
        best = op;
    }
    if (best < n_ops) row.dominant_op_type = op_names[best];
    size_t distinct_ops = 0;
    for (size_t op = 0; op < n_ops; ++op) distinct_ops += op_count[op] > 0 ? 1 : 0;
    row.op_type_counts.reserve(distinct_ops);  // exact: ~76k blocks are kept at once
    for (const uint32_t op : op_order)
      if (op_count[op] > 0) row.op_type_counts.emplace_back(op_ids[op], op_count[op]);

    row.pipeline_signal = signal;
    if (signal) {
      row.pipeline_us = pipe;
      row.bound = bound_class(row.pipeline_us, "", false, false, kb);  // compute-first: no short-circuit
    } else {
      const std::string& d = row.dominant_op_type;
      row.bound = bound_class({}, d, d == "aicpu", d == "communication" || d == "mix_comm_aiv", kb);
    }

    // Top ops: duration desc, then first seen (`seen` makes the order total, so partial_sort
    // gives what a stable sort would).
    const size_t keep = std::min(kTopOps, touched.size());
    std::partial_sort(touched.begin(), touched.begin() + static_cast<std::ptrdiff_t>(keep), touched.end(),
                      [&](uint32_t x, uint32_t y) {
                        const OpAcc &ax = op_acc[x], &ay = op_acc[y];
                        return ax.dur != ay.dur ? ax.dur > ay.dur : ax.seen < ay.seen;
                      });
    row.top_ops.reserve(keep);
    for (size_t i = 0; i < keep; ++i) {
      const OpAcc& acc = op_acc[touched[i]];
      const OpKey& key = op_keys[touched[i]];
      row.top_ops.push_back({key.name, type_names[key.type], acc.calls, acc.dur});
    }
  }
  return out;
}

}  // namespace ascprof::analysis

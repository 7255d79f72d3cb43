// Cross-rank operator / HCCL class rows (reference-analysis.md §2.5.4, §2.5.5 second parts), as an
// exact merge over any split of the ranks (operator_class_merge.hpp).

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "ascprof/analysis/operator_class_merge.hpp"
#include "ascprof/analysis/summarize.hpp"

namespace ascprof::analysis {

namespace {

std::string operator_key(const std::string& name, const std::string& task_type, const std::string& op_type,
                         const std::string& roles) {
  std::string key;
  for (const std::string* part : {&name, &task_type, &op_type, &roles}) {
    key += *part;
    key += '\x1f';
  }
  return key;
}

OperatorClassMerge::OperatorClass& class_of(OperatorClassMerge& m, const std::string& key, bool* fresh) {
  if (m.index.size() != m.operators.size()) {  // loaded from an archive: the index is not sent
    m.index.clear();
    for (uint32_t i = 0; i < m.operators.size(); ++i) {
      const auto& c = m.operators[i];
      m.index.emplace(operator_key(c.name, c.task_type, c.op_type, c.roles), i);
    }
  }
  auto [it, inserted] = m.index.try_emplace(key, static_cast<uint32_t>(m.operators.size()));
  if (inserted) m.operators.emplace_back();
  *fresh = inserted;
  return m.operators[it->second];
}

OperatorClassMerge::HcclClass& hccl_of(OperatorClassMerge& m, const std::string& kind, bool fused) {
  for (auto& c : m.hccl)
    if (c.hccl_op_kind == kind && c.comm_aiv_fused == fused) return c;
  auto& c = m.hccl.emplace_back();
  c.hccl_op_kind = kind;
  c.comm_aiv_fused = fused;
  return c;
}

void add_class(OperatorClassMerge::OperatorClass& into, OperatorClassMerge::OperatorClass&& from) {
  if (std::pair(from.first_rank, from.first_row) < std::pair(into.first_rank, into.first_row)) {
    into.first_rank = from.first_rank;
    into.first_row = from.first_row;
  }
  into.call_count += from.call_count;
  into.duration_sum_ns += from.duration_sum_ns;
  into.wait_sum_ns += from.wait_sum_ns;
  into.pipeline_signal = into.pipeline_signal || from.pipeline_signal;
  into.member_duration_ns.insert(into.member_duration_ns.end(), from.member_duration_ns.begin(), from.member_duration_ns.end());
  into.ranks.insert(into.ranks.end(), from.ranks.begin(), from.ranks.end());
  if (into.pipeline_us.size() < from.pipeline_us.size()) into.pipeline_us.resize(from.pipeline_us.size());
  for (size_t f = 0; f < from.pipeline_us.size(); ++f) into.pipeline_us[f].add(from.pipeline_us[f]);
}

void add_hccl(OperatorClassMerge::HcclClass& into, const OperatorClassMerge::HcclClass& from) {
  into.call_count += from.call_count;
  into.duration_sum_ns += from.duration_sum_ns;
  into.wait_sum_ns += from.wait_sum_ns;
  into.duration_max_us = std::max(into.duration_max_us, from.duration_max_us);
  into.member_avg_us.insert(into.member_avg_us.end(), from.member_avg_us.begin(), from.member_avg_us.end());
  into.ranks.insert(into.ranks.end(), from.ranks.begin(), from.ranks.end());
}

uint32_t distinct(std::vector<uint32_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  return static_cast<uint32_t>(std::unique(ranks.begin(), ranks.end()) - ranks.begin());
}

}  // namespace

void OperatorClassMerge::fold(uint32_t rank, std::span<const model::OperatorRow> rows,
                              std::span<const model::HcclOpRow> hccl_rows, const knowledge::Knowledge& kb) {
  const size_t n_fields = kb.pipeline.fields().size();
  for (size_t i = 0; i < rows.size(); ++i) {
    const model::OperatorRow& op = rows[i];
    OperatorClass c;
    c.first_rank = rank;
    c.first_row = static_cast<uint32_t>(i);
    c.call_count = op.call_count;
    c.duration_sum_ns = op.duration_sum_ns;
    c.wait_sum_ns = op.wait_sum_ns;
    c.member_duration_ns = {op.duration_sum_ns};
    c.ranks = {rank};
    // the reference sums a member's pipeline columns only when they are filled (signal rows)
    if (op.pipeline_signal && !op.pipeline_us.empty()) {
      c.pipeline_signal = true;
      c.pipeline_us.resize(std::min(n_fields, op.pipeline_us.size()));
      for (size_t f = 0; f < c.pipeline_us.size(); ++f) c.pipeline_us[f].add(op.pipeline_us[f]);
    }
    bool fresh = false;
    OperatorClass& into = class_of(*this, operator_key(op.name, op.task_type, op.op_type, op.roles), &fresh);
    if (fresh) {
      c.name = op.name;
      c.task_type = op.task_type;
      c.op_type = op.op_type;
      c.roles = op.roles;
      into = std::move(c);
    } else {
      add_class(into, std::move(c));
    }
  }
  fold_hccl(rank, hccl_rows);
}

void OperatorClassMerge::fold_hccl(uint32_t rank, std::span<const model::HcclOpRow> hccl_rows) {
  for (const model::HcclOpRow& h : hccl_rows) {
    HcclClass& into = hccl_of(*this, h.hccl_op_kind, h.comm_aiv_fused);
    into.call_count += h.call_count;
    into.duration_sum_ns += h.duration_sum_ns;
    into.wait_sum_ns += h.wait_sum_ns;
    into.duration_max_us = std::max(into.duration_max_us, h.duration_max_us);
    into.member_avg_us.push_back(h.duration_avg_us);
    into.ranks.push_back(rank);
  }
}

void OperatorClassMerge::merge(OperatorClassMerge&& other) {
  for (OperatorClass& c : other.operators) {
    bool fresh = false;
    OperatorClass& into = class_of(*this, operator_key(c.name, c.task_type, c.op_type, c.roles), &fresh);
    if (fresh) into = std::move(c);
    else add_class(into, std::move(c));
  }
  for (const HcclClass& h : other.hccl) add_hccl(hccl_of(*this, h.hccl_op_kind, h.comm_aiv_fused), h);
  other = {};
}

std::vector<model::OperatorClassRow> OperatorClassMerge::finish_operators(const knowledge::Knowledge& kb) const {
  const size_t n_fields = kb.pipeline.fields().size();
  std::vector<const OperatorClass*> seen;
  seen.reserve(operators.size());
  for (const auto& c : operators) seen.push_back(&c);
  std::sort(seen.begin(), seen.end(), [](const OperatorClass* a, const OperatorClass* b) {
    return std::pair(a->first_rank, a->first_row) < std::pair(b->first_rank, b->first_row);
  });
  std::vector<model::OperatorClassRow> out;
  out.reserve(seen.size());
  for (const OperatorClass* c : seen) {
    model::OperatorClassRow r;
    r.name = c->name;
    r.task_type = c->task_type;
    r.op_type = c->op_type;
    r.roles = c->roles;
    r.call_count = c->call_count;
    r.duration_sum_ns = c->duration_sum_ns;
    r.wait_sum_ns = c->wait_sum_ns;
    r.pipeline_signal = c->pipeline_signal;
    r.rank_count = distinct(c->ranks);
    std::vector<double> durations;  // µs, one per member, sorted
    durations.reserve(c->member_duration_ns.size());
    for (const int64_t ns : c->member_duration_ns) durations.push_back(static_cast<double>(ns) / 1000.0);
    std::sort(durations.begin(), durations.end());
    if (!durations.empty()) {
      r.rank_duration_min_us = durations.front();
      r.rank_duration_max_us = durations.back();
      r.rank_duration_p50_us = sorted_quantile(durations, 0.5);
      const double mean = static_cast<double>(r.duration_sum_ns) / 1000.0 / static_cast<double>(durations.size());
      r.rank_duration_skew_ratio = mean > 0 ? (r.rank_duration_max_us - r.rank_duration_min_us) / mean : 0.0;
    }
    if (r.pipeline_signal) {
      r.pipeline_us.assign(n_fields, 0.0);
      for (size_t f = 0; f < n_fields && f < c->pipeline_us.size(); ++f) r.pipeline_us[f] = c->pipeline_us[f].value();
    }
    const bool comm = (r.op_type == "communication" || r.op_type == "mix_comm_aiv") && !r.pipeline_signal;
    r.bound = bound_class(r.pipeline_us, r.op_type, r.op_type == "aicpu", comm, kb);
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](const model::OperatorClassRow& a, const model::OperatorClassRow& b) {
    return a.duration_sum_ns + a.wait_sum_ns > b.duration_sum_ns + b.wait_sum_ns;
  });
  return out;
}

std::vector<model::HcclClassRow> OperatorClassMerge::finish_hccl() const {
  std::vector<model::HcclClassRow> out;
  out.reserve(hccl.size());
  for (const HcclClass& c : hccl) {
    model::HcclClassRow r;
    r.hccl_op_kind = c.hccl_op_kind;
    r.comm_aiv_fused = c.comm_aiv_fused;
    r.call_count = c.call_count;
    r.duration_sum_ns = c.duration_sum_ns;
    r.wait_sum_ns = c.wait_sum_ns;
    r.duration_max_us = c.duration_max_us;
    r.rank_count = distinct(c.ranks);
    r.duration_avg_us = r.call_count ? static_cast<double>(r.duration_sum_ns) / 1000.0 / static_cast<double>(r.call_count) : 0.0;
    std::vector<double> avgs = c.member_avg_us;  // summed in sorted order: the same whatever the merge order
    std::sort(avgs.begin(), avgs.end());
    if (!avgs.empty()) {
      r.rank_avg_min_us = avgs.front();
      r.rank_avg_max_us = avgs.back();
      double sum = 0;
      for (const double v : avgs) sum += v;
      r.rank_avg_mean_us = sum / static_cast<double>(avgs.size());
      r.rank_skew_ratio = r.rank_avg_mean_us > 0 ? (r.rank_avg_max_us - r.rank_avg_min_us) / r.rank_avg_mean_us : 0.0;
    }
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](const model::HcclClassRow& a, const model::HcclClassRow& b) {
    if (a.duration_sum_ns != b.duration_sum_ns) return a.duration_sum_ns > b.duration_sum_ns;
    if (a.hccl_op_kind != b.hccl_op_kind) return a.hccl_op_kind < b.hccl_op_kind;
    return a.comm_aiv_fused && !b.comm_aiv_fused;
  });
  return out;
}

std::vector<model::OperatorClassRow> merge_operator_classes(std::span<const std::vector<model::OperatorRow>> per_rank,
                                                            const knowledge::Knowledge& kb) {
  OperatorClassMerge m;
  for (size_t rank = 0; rank < per_rank.size(); ++rank) m.fold(static_cast<uint32_t>(rank), per_rank[rank], {}, kb);
  return m.finish_operators(kb);
}

std::vector<model::HcclClassRow> merge_hccl_classes(std::span<const std::vector<model::HcclOpRow>> per_rank) {
  OperatorClassMerge m;
  for (size_t rank = 0; rank < per_rank.size(); ++rank) m.fold_hccl(static_cast<uint32_t>(rank), per_rank[rank]);
  return m.finish_hccl();
}

}  // namespace ascprof::analysis

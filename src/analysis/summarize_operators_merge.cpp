// Cross-rank operator / HCCL class rows (reference-analysis.md §2.5.4, §2.5.5 second parts).

#include <algorithm>
#include <unordered_map>

#include "ascprof/analysis/summarize.hpp"

namespace ascprof::analysis {

std::vector<model::OperatorClassRow> merge_operator_classes(std::span<const std::vector<model::OperatorRow>> per_rank,
                                                            const knowledge::Knowledge& kb) {
  struct Acc {
    model::OperatorClassRow row;
    std::vector<double> rank_durations;  // µs, one per member
    std::vector<size_t> ranks;
    double pipeline_sum[64] = {};
  };
  const size_t n_fields = std::min<size_t>(kb.pipeline.fields().size(), 64);
  std::vector<Acc> accs;
  std::unordered_map<std::string, size_t> index;
  std::string key;
  for (size_t rank = 0; rank < per_rank.size(); ++rank) {
    for (const model::OperatorRow& op : per_rank[rank]) {
      key.clear();
      for (const std::string* part : {&op.name, &op.task_type, &op.op_type, &op.roles}) {
        key += *part;
        key += '\x1f';
      }
      auto [it, inserted] = index.try_emplace(key, accs.size());
      if (inserted) {
        accs.emplace_back();
        auto& r = accs.back().row;
        r.name = op.name;
        r.task_type = op.task_type;
        r.op_type = op.op_type;
        r.roles = op.roles;
      }
      Acc& a = accs[it->second];
      a.row.call_count += op.call_count;
      a.row.duration_sum_ns += op.duration_sum_ns;
      a.row.wait_sum_ns += op.wait_sum_ns;
      a.rank_durations.push_back(static_cast<double>(op.duration_sum_ns) / 1000.0);
      if (a.ranks.empty() || a.ranks.back() != rank) a.ranks.push_back(rank);
      // the reference sums a member's pipeline columns only when they are filled (signal rows)
      if (op.pipeline_signal && !op.pipeline_us.empty()) {
        a.row.pipeline_signal = true;
        for (size_t f = 0; f < n_fields && f < op.pipeline_us.size(); ++f) a.pipeline_sum[f] += op.pipeline_us[f];
      }
    }
  }
  std::vector<model::OperatorClassRow> out;
  out.reserve(accs.size());
  for (Acc& a : accs) {
    model::OperatorClassRow& r = a.row;
    r.rank_count = static_cast<uint32_t>(a.ranks.size());
    std::sort(a.rank_durations.begin(), a.rank_durations.end());
    if (!a.rank_durations.empty()) {
      r.rank_duration_min_us = a.rank_durations.front();
      r.rank_duration_max_us = a.rank_durations.back();
      r.rank_duration_p50_us = sorted_quantile(a.rank_durations, 0.5);
      const double mean = static_cast<double>(r.duration_sum_ns) / 1000.0 / static_cast<double>(a.rank_durations.size());
      r.rank_duration_skew_ratio = mean > 0 ? (r.rank_duration_max_us - r.rank_duration_min_us) / mean : 0.0;
    }
    if (r.pipeline_signal) r.pipeline_us.assign(a.pipeline_sum, a.pipeline_sum + n_fields);
    const bool comm = (r.op_type == "communication" || r.op_type == "mix_comm_aiv") && !r.pipeline_signal;
    r.bound = bound_class(r.pipeline_us, r.op_type, r.op_type == "aicpu", comm, kb);
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](const model::OperatorClassRow& a, const model::OperatorClassRow& b) {
    return a.duration_sum_ns + a.wait_sum_ns > b.duration_sum_ns + b.wait_sum_ns;
  });
  return out;
}

std::vector<model::HcclClassRow> merge_hccl_classes(std::span<const std::vector<model::HcclOpRow>> per_rank) {
  struct Acc {
    model::HcclClassRow row;
    std::vector<double> avgs;
    std::vector<size_t> ranks;
  };
  std::vector<Acc> accs;
  for (size_t rank = 0; rank < per_rank.size(); ++rank) {
    for (const model::HcclOpRow& h : per_rank[rank]) {
      Acc* a = nullptr;
      for (auto& c : accs)
        if (c.row.hccl_op_kind == h.hccl_op_kind && c.row.comm_aiv_fused == h.comm_aiv_fused) a = &c;
      if (!a) {
        accs.emplace_back();
        a = &accs.back();
        a->row.hccl_op_kind = h.hccl_op_kind;
        a->row.comm_aiv_fused = h.comm_aiv_fused;
      }
      a->row.call_count += h.call_count;
      a->row.duration_sum_ns += h.duration_sum_ns;
      a->row.wait_sum_ns += h.wait_sum_ns;
      a->row.duration_max_us = std::max(a->row.duration_max_us, h.duration_max_us);
      a->avgs.push_back(h.duration_avg_us);
      if (a->ranks.empty() || a->ranks.back() != rank) a->ranks.push_back(rank);
    }
  }
  std::vector<model::HcclClassRow> out;
  out.reserve(accs.size());
  for (Acc& a : accs) {
    model::HcclClassRow& r = a.row;
    r.rank_count = static_cast<uint32_t>(a.ranks.size());
    r.duration_avg_us = r.call_count ? static_cast<double>(r.duration_sum_ns) / 1000.0 / static_cast<double>(r.call_count) : 0.0;
    std::sort(a.avgs.begin(), a.avgs.end());
    if (!a.avgs.empty()) {
      r.rank_avg_min_us = a.avgs.front();
      r.rank_avg_max_us = a.avgs.back();
      double sum = 0;
      for (double v : a.avgs) sum += v;
      r.rank_avg_mean_us = sum / static_cast<double>(a.avgs.size());
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

}  // namespace ascprof::analysis

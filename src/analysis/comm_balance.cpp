// comm_aiv_compute_imbalance and alltoall_size_imbalance (documented in the reference's
// communication_taxonomy.md §5, not built there): per-rank totals compared across the root.
#include <cmath>
#include <cstdio>
#include <string_view>

#include "ascprof/analysis/diagnose.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/common/stable_id.hpp"
#include "ascprof/model/finding.hpp"

namespace ascprof::analysis {

namespace {

constexpr size_t kSampleRows = 8;

std::string fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[200];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

// Ranks with a positive value: mean, min and max, and the rank holding the max.
struct Spread {
  size_t n = 0, hi = 0;
  double mean = 0, min = 0, max = 0;
};
Spread spread(const std::vector<double>& v) {
  Spread s;
  double sum = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!(v[i] > 0)) continue;
    if (s.n == 0 || v[i] < s.min) s.min = v[i];
    if (s.n == 0 || v[i] > s.max) {
      s.max = v[i];
      s.hi = i;
    }
    sum += v[i];
    ++s.n;
  }
  s.mean = s.n ? sum / static_cast<double>(s.n) : 0;
  return s;
}

std::vector<std::string> evidence(const RankFacts& r, const std::vector<uint32_t>& rows) {
  std::vector<std::string> e;
  for (const uint32_t row : rows) e.push_back(model::event_id(r.rank_ordinal, row));
  if (e.empty()) e.push_back(stable_id("evd", {r.rank_id, "rank_window"}));
  return e;
}

}  // namespace

void collect_operator_comm_facts(const model::RankSummary& sum, const knowledge::Knowledge& kb, RankFacts& facts) {
  const auto& fields = kb.pipeline.fields();
  for (const auto& op : sum.operators) {
    const bool alltoall = op.categories.find("communication.alltoallv") != std::string::npos;
    if (alltoall)
      for (const uint32_t r : op.sample_rows)
        if (facts.alltoall_rows.size() < kSampleRows) facts.alltoall_rows.push_back(r);
    if (op.op_type != "mix_comm_aiv") continue;
    double aiv_us = 0;
    bool any = false;
    for (size_t f = 0; f < fields.size() && f < op.pipeline_us.size(); ++f)
      if (fields[f].is_stage && fields[f].group == "aiv" && std::isfinite(op.pipeline_us[f])) {
        aiv_us += op.pipeline_us[f];
        any = true;
      }
    facts.comm_aiv_ns += any && op.pipeline_signal ? std::llround(aiv_us * 1000.0) : op.duration_sum_ns;
    facts.comm_aiv_calls += op.call_count;
    for (const uint32_t r : op.sample_rows)
      if (facts.comm_aiv_rows.size() < kSampleRows) facts.comm_aiv_rows.push_back(r);
  }
}

void collect_alltoall_volume(const model::CommStatTable& comm, const StringPool& pool, RankFacts& facts) {
  for (size_t i = 0; i < comm.size(); ++i) {
    if (comm.is_total[i] || comm.is_p2p[i]) continue;
    const std::string_view kind = pool.view(comm.op_kind[i]);
    if (kind.find("alltoall") == std::string_view::npos) continue;
    double mb = 0;
    for (const auto& t : comm.transport)
      if (i < t.size_mb.size() && std::isfinite(t.size_mb[i]) && t.size_mb[i] > 0) mb += t.size_mb[i];
    facts.alltoall_mb += mb;
    ++facts.alltoall_ops;
  }
}

std::vector<model::Finding> diagnose_comm_balance(const std::vector<RankFacts>& ranks, const knowledge::Knowledge& kb) {
  std::vector<model::Finding> out;
  std::vector<std::string> all;
  std::vector<double> aiv, a2a;
  for (const auto& r : ranks) {
    all.push_back(r.rank_id);
    aiv.push_back(static_cast<double>(r.comm_aiv_ns) / 1e6);
    a2a.push_back(r.alltoall_mb);
  }
  if (const Spread s = spread(aiv); s.n >= 2 && s.mean > 0 && (s.max - s.min) / s.mean > kb.diagnostics.comm_aiv_max_spread) {
    const auto& r = ranks[s.hi];
    model::Finding f = new_finding("comm_aiv_compute_imbalance", "cross_rank", "medium", "medium", all, {r.rank_id});
    f.summary = r.rank_id +
                fmt(" spends %.3f ms of AIV time in fused communication kernels, %.0f %% above the mean of %.0f ranks", s.max,
                    100.0 * (s.max / s.mean - 1.0), static_cast<double>(s.n)) +
                fmt(" (spread (max - min) / mean = %.2f)", (s.max - s.min) / s.mean);
    f.evidence_ids = evidence(r, r.comm_aiv_rows);
    f.limitations.push_back("AIV time = the AIV stage fields of the pipeline columns, or the kernel duration where a "
                            "kernel has none");
    JsonWriter w;
    w.begin_object();
    w.kv("aiv_ms_max", s.max);
    w.kv("aiv_ms_min", s.min);
    w.kv("aiv_ms_mean", s.mean);
    w.kv("spread", (s.max - s.min) / s.mean);
    w.kv("calls", r.comm_aiv_calls);
    w.end_object();
    f.metrics_json = w.take();
    f.magnitude_ms = s.max - s.mean;
    set_claim_id(f);
    out.push_back(std::move(f));
  }
  if (const Spread s = spread(a2a); s.n >= 2 && s.mean > 0 && s.max / s.mean >= kb.diagnostics.alltoall_size_ratio) {
    const auto& r = ranks[s.hi];
    const double ratio = s.max / s.mean;
    model::Finding f = new_finding("alltoall_size_imbalance", "cross_rank",
                                   ratio >= kb.diagnostics.cross_rank_skew_ratio ? "high" : "medium", "medium", all, {r.rank_id});
    f.summary = r.rank_id +
                fmt(" moves %.3f MB in all-to-all collectives, %.2fx the mean of %.0f ranks (uneven token routing)", s.max,
                    ratio, static_cast<double>(s.n));
    f.evidence_ids = evidence(r, r.alltoall_rows);
    f.limitations.push_back("sizes are communication.json transit sizes of the rank's all-to-all ops (" +
                            std::to_string(r.alltoall_ops) + " ops); magnitude_ms is not estimated (0)");
    JsonWriter w;
    w.begin_object();
    w.kv("alltoall_mb_max", s.max);
    w.kv("alltoall_mb_min", s.min);
    w.kv("alltoall_mb_mean", s.mean);
    w.kv("ratio", ratio);
    w.end_object();
    f.metrics_json = w.take();
    set_claim_id(f);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace ascprof::analysis

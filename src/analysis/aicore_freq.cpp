#include "ascprof/analysis/aicore_freq.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <unordered_map>

#include "ascprof/analysis/diagnose.hpp"
#include "ascprof/common/json_writer.hpp"
#include "ascprof/common/stable_id.hpp"

namespace ascprof::analysis {

AicoreFreqStats aicore_freq_stats(const model::KernelTable& k, const StringPool& pool, const model::AicoreFreqTable& freq,
                                  const model::RankStructure& s, const knowledge::DiagnosticsRules& rules) {
  AicoreFreqStats st;
  st.samples = freq.size();
  if (freq.size() == 0) return st;
  st.min_mhz = *std::min_element(freq.mhz.begin(), freq.mhz.end());
  st.max_mhz = *std::max_element(freq.mhz.begin(), freq.mhz.end());
  const double reduced_below = rules.aicore_reduced_ratio * rules.aicore_nominal_mhz;
  std::unordered_map<StrId, bool> clocked;  // per distinct core name
  // step of each row (segments tile the rank in row order)
  std::vector<int32_t> step_of(k.size(), -1);
  std::vector<AicoreFreqStats::Step> steps;
  for (const auto& g : s.segments) {
    if (g.type != model::SegmentType::kStep) continue;
    const int32_t idx = static_cast<int32_t>(steps.size());
    steps.push_back({g.segment_id, 0, 0, 0});
    for (uint32_t r = g.row_start; r <= g.row_end && r < k.size(); ++r) step_of[r] = idx;
  }
  const auto& ts = freq.ts_ns;
  for (size_t r = 0; r < k.size(); ++r) {
    const StrId core = r < k.accelerator_core.size() ? k.accelerator_core[r] : 0;
    auto [it, fresh] = clocked.try_emplace(core, false);
    // an empty or unknown core counts (older exports write none); [aicore_freq] unclocked_cores do not
    if (fresh) {
      std::string upper(pool.view(core));
      for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      const auto& out = rules.aicore_unclocked_cores;
      it->second = std::find(out.begin(), out.end(), upper) == out.end();
    }
    if (!it->second) continue;
    const int64_t a = std::max(k.start_ns[r], ts.front()), b = k.start_ns[r] + std::max<int64_t>(k.dur_ns[r], 0);
    if (b <= a) continue;  // before the first sample: the frequency is unknown
    // the sample in force at a, then every later one the kernel spans
    size_t i = static_cast<size_t>(std::upper_bound(ts.begin(), ts.end(), a) - ts.begin()) - 1;
    int64_t reduced = 0;
    uint32_t lowest = freq.mhz[i];
    for (int64_t from = a; from < b; ++i) {
      const int64_t to = i + 1 < ts.size() ? std::min(b, ts[i + 1]) : b;
      lowest = std::min(lowest, freq.mhz[i]);
      if (static_cast<double>(freq.mhz[i]) < reduced_below) reduced += to - from;
      from = to;
    }
    st.kernel_ns += b - a;
    st.reduced_ns += reduced;
    if (reduced > 0) ++st.reduced_kernels;
    if (step_of[r] >= 0) {
      auto& sp = steps[static_cast<size_t>(step_of[r])];
      sp.kernel_ns += b - a;
      sp.reduced_ns += reduced;
      if (reduced > 0) sp.min_mhz = sp.min_mhz == 0 ? lowest : std::min(sp.min_mhz, lowest);
    }
  }
  for (auto& sp : steps)
    if (sp.reduced_ns > 0) st.reduced_steps.push_back(std::move(sp));
  return st;
}

std::vector<model::Finding> diagnose_aicore_freq(const std::string& rank_id, const AicoreFreqStats& st,
                                                 const knowledge::DiagnosticsRules& rules) {
  const double share = st.reduced_share();
  const double reduced_ms = static_cast<double>(st.reduced_ns) / 1e6;
  if (st.samples == 0 || share < rules.aicore_min_kernel_share || reduced_ms < rules.aicore_min_ms) return {};
  model::Finding f = new_finding("aicore_frequency_reduced", "rank", share >= rules.aicore_high_kernel_share ? "high" : "medium",
                                 "high", {rank_id}, {rank_id});
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%s's AI Cores ran below %.0f MHz (%.0f %% of nominal %.0f MHz) for %.3f ms of kernel time, %.1f %% of "
                "its %.3f ms, in %zu step(s); lowest %u MHz",
                rank_id.c_str(), rules.aicore_reduced_ratio * rules.aicore_nominal_mhz, rules.aicore_reduced_ratio * 100,
                rules.aicore_nominal_mhz, reduced_ms, share * 100, static_cast<double>(st.kernel_ns) / 1e6,
                st.reduced_steps.size(), st.min_mhz);
  f.summary = buf;
  for (const auto& sp : st.reduced_steps) {
    if (f.evidence_ids.size() >= rules.max_evidence_ids) break;
    f.evidence_ids.push_back(stable_id("evd", {sp.segment_id, "step_window"}));
  }
  if (f.evidence_ids.empty()) f.evidence_ids.push_back(stable_id("evd", {rank_id, "rank_window"}));
  f.limitations.push_back("from the AI Core Freq counter: the frequency holds from each sample to the next, so a "
                          "change between two samples shows at the next one; communication and AI CPU kernels are "
                          "left out");
  JsonWriter w;
  w.begin_object();
  w.kv("reduced_ms", reduced_ms);
  w.kv("kernel_ms", static_cast<double>(st.kernel_ns) / 1e6);
  w.kv("reduced_share", share);
  w.kv("reduced_kernels", st.reduced_kernels);
  w.kv("min_mhz", static_cast<uint64_t>(st.min_mhz));
  w.kv("max_mhz", static_cast<uint64_t>(st.max_mhz));
  w.kv("nominal_mhz", rules.aicore_nominal_mhz);
  w.key("steps");
  w.begin_array();
  for (const auto& sp : st.reduced_steps) {
    w.begin_object();
    w.kv("segment_id", sp.segment_id);
    w.kv("reduced_ms", static_cast<double>(sp.reduced_ns) / 1e6);
    w.kv("kernel_ms", static_cast<double>(sp.kernel_ns) / 1e6);
    w.kv("min_mhz", static_cast<uint64_t>(sp.min_mhz));
    w.end_object();
  }
  w.end_array();
  w.end_object();
  f.metrics_json = w.take();
  f.magnitude_ms = reduced_ms;
  set_claim_id(f);
  return {std::move(f)};
}

}  // namespace ascprof::analysis

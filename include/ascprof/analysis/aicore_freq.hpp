#pragma once
/// The AI Core frequency a rank's kernels ran at (issue 21; msprof-analyze's freq_analysis, per step
/// and with the time at stake). The AI Core Freq counter (trace_view.json, or AICORE_FREQ in the
/// database) gives the MHz from each sample on; kernel time below reduced_ratio x nominal_mhz
/// (knowledge/diagnostics.rules [aicore_freq]) is reduced-frequency time: power capping, thermal
/// throttling, or the idle governor's 800 MHz. Kernels on the rules' unclocked_cores (communication,
/// AI CPU) are left out: their time does not follow the AI Core clock.
#include <cstdint>
#include <string>
#include <vector>

#include "ascprof/common/string_pool.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/model/finding.hpp"
#include "ascprof/model/kernel_table.hpp"
#include "ascprof/model/structure.hpp"
#include "ascprof/model/trace_tables.hpp"

namespace ascprof::analysis {

struct AicoreFreqStats {
  size_t samples = 0;             ///< AI Core Freq samples of the rank (0: not sampled, nothing to say)
  uint32_t min_mhz = 0, max_mhz = 0;
  int64_t kernel_ns = 0;          ///< AI Core / AI Vector kernel time from the first sample on
  int64_t reduced_ns = 0;         ///< of it while the cores ran reduced
  uint64_t reduced_kernels = 0;   ///< kernels with any reduced time
  struct Step {
    std::string segment_id;
    int64_t kernel_ns = 0, reduced_ns = 0;
    uint32_t min_mhz = 0;         ///< lowest frequency any of its kernels ran at
  };
  std::vector<Step> reduced_steps;  ///< steps with reduced time, in order
  double reduced_share() const { return kernel_ns > 0 ? static_cast<double>(reduced_ns) / static_cast<double>(kernel_ns) : 0; }
};

/// The rank's frequency statistics. `freq` must be in start order (model::sort_aicore_freq).
AicoreFreqStats aicore_freq_stats(const model::KernelTable& k, const StringPool& pool, const model::AicoreFreqTable& freq,
                                  const model::RankStructure& s, const knowledge::DiagnosticsRules& rules);

/// aicore_frequency_reduced for one rank, when its reduced time reaches min_kernel_share of its
/// kernel time and min_ms (severity high from high_kernel_share); evidence: its reduced steps' windows
/// (or the rank window when it has no steps).
std::vector<model::Finding> diagnose_aicore_freq(const std::string& rank_id, const AicoreFreqStats& st,
                                                 const knowledge::DiagnosticsRules& rules);

}  // namespace ascprof::analysis

#pragma once
// The diagnostics stage's detectors, declared once (issue 18): each is a plain function from the
// facts the coordinator gathered to findings, and the stage runs the list in order. Adding a finding
// is its detector in analysis/ (with its rules in knowledge/ and its test), and one row in the list
// in detectors.cpp. Private to the pipeline module.
#include <string>
#include <vector>

#include "ascprof/analysis/align.hpp"
#include "ascprof/analysis/critical_path.hpp"
#include "ascprof/analysis/diagnose.hpp"
#include "ascprof/analysis/operator_align.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/model/finding.hpp"
#include "ascprof/pipeline/rank_job.hpp"

namespace ascprof::pipeline {

/// What the cross_rank stage leaves for the diagnostics: step windows and alignments, operator
/// alignments (with the names of their member positions), the steps' critical paths.
struct CrossRank {
  analysis::StepWindows windows;
  std::vector<analysis::StepAlignment> steps;
  analysis::OperatorAlignments operators;
  std::vector<std::string> rank_ids;     // by operator member position (the rank's rank_index)
  std::vector<uint32_t> rank_ordinals;   // by operator member position: its ordinal in event ids
  analysis::CriticalPaths paths;
};

/// Everything a detector may read.
struct DiagnosticsFacts {
  const std::vector<RankOutcome>& outcomes;  ///< rank order
  const knowledge::Knowledge& kb;
  const CrossRank& cross_rank;
  std::vector<analysis::RankFacts> facts;    ///< of the ranks that ran the summarize stage, rank order
};

/// One detector: appends its findings to `findings` (the ones found before it are there: a detector
/// may fold a cause found earlier into its own, or annotate it).
struct Detector {
  const char* name;
  void (*run)(const DiagnosticsFacts&, std::vector<model::Finding>& findings);
};

/// The detectors in the order the stage runs them.
const std::vector<Detector>& detectors();

/// Runs every detector over the gathered outcomes; the findings in detector order.
std::vector<model::Finding> run_detectors(const std::vector<RankOutcome>& outcomes, const knowledge::Knowledge& kb,
                                          const CrossRank& cross_rank);

/// The ranks with in-kernel MoE traces, as the MoE tables and findings see them.
std::vector<analysis::MoeRankView> moe_views(const std::vector<RankOutcome>& outcomes);

}  // namespace ascprof::pipeline

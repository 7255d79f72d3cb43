#pragma once
// A capture root through the rank stages and the root outputs in this process, as the coordinator
// runs them (no MPI): the plan (in-kernel MoE traces looked for where the rules say), every rank's
// outcome in rank order, and the root's summary.
#include <filesystem>
#include <string>
#include <vector>

#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/synth/synth.hpp"

namespace ascprof::testing {

struct AnalysedRoot {
  pipeline::RootPlan plan;
  std::vector<pipeline::RankOutcome> outcomes;
  pipeline::RootSummary summary;
};

inline AnalysedRoot analyse_root(const std::filesystem::path& capture, const std::filesystem::path& out,
                                 const knowledge::Knowledge& kb) {
  AnalysedRoot r;
  r.plan = pipeline::plan_root(capture.string(), out.string(), 0, pipeline::SourceChoice::kAuto, kb.moe_trace.folder);
  for (const auto& t : r.plan.tasks) r.outcomes.push_back(pipeline::run_rank_stages(t, kb));
  r.summary = pipeline::write_root_outputs(r.plan, r.outcomes, kb);
  return r;
}

/// The in-kernel MoE tests' capture: moe_mla_decode, 4 ranks, 2 steps, 8 layers, written to `out`,
/// traced as `variant` (skill | umdk | array; "" for none) with `faults`.
inline synth::SynthOptions moe_capture(const std::filesystem::path& out, const std::string& variant,
                                       std::vector<std::string> faults = {}) {
  synth::SynthOptions o;
  o.scenario = "moe_mla_decode";
  o.out_dir = out;
  o.ranks = 4;
  o.steps = 2;
  o.layers = 8;
  o.moe_trace = variant;
  o.faults = std::move(faults);
  return o;
}

}  // namespace ascprof::testing

// Diagnostics on generated captures with injected faults: each fault that the built finding types
// cover is reported with the right type and suspected rank; a clean capture gives no finding; every
// reported finding carries evidence (the gate).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <functional>
#include <set>

#include "ascprof/analysis/diagnose.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;

struct Reported {
  std::string type;
  std::set<std::string> suspected;
  size_t evidence = 0;
  std::string summary;
};

std::vector<Reported> findings_of(const fs::path& dir, const std::vector<std::string>& faults,
                                  const std::vector<int>& dummy = {}, const char* scenario = "moe_mla_decode",
                                  int ranks = 4, int steps = 3,
                                  const std::function<void(knowledge::Knowledge&)>& tweak = {}) {
  synth::SynthOptions o;
  o.scenario = scenario;
  o.out_dir = dir / "c";
  o.ranks = ranks;
  o.steps = steps;
  o.faults = faults;
  o.dummy_ranks = dummy;
  auto gen = synth::generate_capture(o);
  EXPECT_TRUE(gen.ok()) << gen.status().to_string();
  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  EXPECT_TRUE(kb.ok());
  if (tweak) tweak(*kb);
  RootPlan plan = plan_root((dir / "c").string(), (dir / "out").string(), 0);
  std::vector<RankOutcome> outcomes;
  for (const auto& t : plan.tasks) outcomes.push_back(run_rank_stages(t, *kb));
  const auto summary = write_root_outputs(plan, outcomes, *kb);
  EXPECT_EQ(summary.status, "ok") << summary.error;
  auto text = read_file(fs::path(plan.out_dir) / "diagnosis_findings.json");
  EXPECT_TRUE(text.ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(*text);
  std::vector<Reported> out;
  for (simdjson::dom::element f : doc["diagnosis_findings"].get_array()) {
    Reported r;
    r.type = std::string(std::string_view(f["finding_type"]));
    for (simdjson::dom::element s : f["suspected_ranks"].get_array()) r.suspected.insert(std::string(std::string_view(s)));
    r.evidence = simdjson::dom::array(f["evidence_ids"]).size();
    r.summary = std::string(std::string_view(f["summary"]));
    out.push_back(std::move(r));
  }
  EXPECT_EQ(uint64_t(doc["counts"]["refused_without_evidence"]), 0u);
  return out;
}

TEST(DiagnosticsPipeline, CleanCaptureHasNoFinding) {
  ascprof::testing::ScratchDir dir("diag-clean");
  EXPECT_TRUE(findings_of(dir.path(), {}).empty());
}

TEST(DiagnosticsPipeline, InjectedFaultsAreFoundOnTheRightRank) {
  struct Case {
    std::vector<std::string> faults;
    std::vector<int> dummy;
    std::set<std::string> types;
    std::string rank;
  };
  // the synth's idle bubble is a host stall before the middle segment: the device waits for launches
  for (const Case& c : {Case{{"idle_bubble:2"}, {}, {"device_idle_bubble", "host_dispatch_bound"}, "rank2"},
                        Case{{"exposed_aicpu:1"}, {}, {"aicpu_exposed"}, "rank1"},
                        // late launches: the idle steps, and the host-bound share of the idle time
                        Case{{"host_bound:3"}, {}, {"device_idle_bubble", "host_dispatch_bound"}, "rank3"},
                        Case{{"ep_imbalance:2"}, {}, {"ep_load_imbalance_suspected"}, "rank2"},
                        // a dummy rank: no attention at all, and its steps differ from its peers'
                        Case{{}, {3}, {"reduced_work_or_dummy_rank", "rank_workload_asymmetry"}, "rank3"}}) {
    ascprof::testing::ScratchDir dir("diag-fault");
    const auto found = findings_of(dir.path(), c.faults, c.dummy);
    std::set<std::string> types;
    for (const auto& f : found) {
      types.insert(f.type);
      EXPECT_EQ(f.suspected, std::set<std::string>{c.rank}) << f.type;
      EXPECT_GT(f.evidence, 0u);
    }
    EXPECT_EQ(types, c.types);
  }
}

// What counts as expert compute is knowledge's ([ep] expert_compute_categories), not the code's: with
// only gating counted, the hot expert's extra matmul time is no longer an imbalance (the finding from
// the skewed dispatch/combine alignments stays: operator_alignment.rules raises that one).
TEST(DiagnosticsPipeline, ExpertComputeIsWhatKnowledgeSays) {
  const auto expert_compute_findings = [](const std::vector<Reported>& found) {
    size_t n = 0;
    for (const auto& f : found)
      n += f.type == "ep_load_imbalance_suspected" && f.summary.find("in expert compute") != std::string::npos;
    return n;
  };
  ascprof::testing::ScratchDir shipped("diag-ep-shipped");
  EXPECT_EQ(expert_compute_findings(findings_of(shipped.path(), {"ep_imbalance:2"})), 1u);
  ascprof::testing::ScratchDir gating("diag-ep-gating");
  EXPECT_EQ(expert_compute_findings(findings_of(gating.path(), {"ep_imbalance:2"}, {}, "moe_mla_decode", 4, 3,
                                                [](knowledge::Knowledge& kb) {
                                                  kb.diagnostics.ep_expert_categories = {"moe.gating"};
                                                })),
            0u);
}

// A slow rank in data-parallel training: the DP collectives vote for it (shortest communication
// time), and its TP peer, which also looks slow there, is recognised as waiting for it.
TEST(DiagnosticsPipeline, SlowRankIsFoundAndItsPeerIsNotBlamed) {
  {
    ascprof::testing::ScratchDir dir("diag-train-clean");
    EXPECT_TRUE(findings_of(dir.path(), {}, {}, "training", 8, 6).empty());
  }
  for (const char* rank : {"1", "6"}) {
    ascprof::testing::ScratchDir dir("diag-slow");
    const auto found = findings_of(dir.path(), {std::string("slow_rank:") + rank}, {}, "training", 8, 6);
    ASSERT_EQ(found.size(), 1u) << rank;
    EXPECT_EQ(found[0].type, "slow_rank_suspected");
    EXPECT_EQ(found[0].suspected, std::set<std::string>{std::string("rank") + rank});
  }
}

// Throttled AI Cores (issue 21): the rank's AI Core Freq counter reads 1000 MHz and its compute
// kernels take 1.8x longer. aicore_frequency_reduced names it with every one of its steps, and the
// slow-rank finding the stretched kernels cause says the cores were throttled; a slow rank whose
// clock is nominal (slow_rank) does not.
TEST(DiagnosticsPipeline, ThrottledCoresAreNamedAndExplainTheSlowRank) {
  ascprof::testing::ScratchDir dir("diag-throttled");
  const auto found = findings_of(dir.path(), {"throttled_cores:3:1000"}, {}, "training", 8, 6);
  std::set<std::string> types;
  for (const auto& f : found) {
    types.insert(f.type);
    EXPECT_EQ(f.suspected, std::set<std::string>{"rank3"}) << f.type;
    if (f.type == "aicore_frequency_reduced") {
      EXPECT_EQ(f.evidence, 6u);  // the six steps
      EXPECT_NE(f.summary.find("lowest 1000 MHz"), std::string::npos) << f.summary;
    }
    if (f.type == "slow_rank_suspected") {
      EXPECT_NE(f.summary.find("reduced frequency for 100.0 %"), std::string::npos) << f.summary;
    }
  }
  EXPECT_EQ(types, (std::set<std::string>{"aicore_frequency_reduced", "slow_rank_suspected"}));
  ascprof::testing::ScratchDir plain("diag-slow-nominal");
  const auto nominal = findings_of(plain.path(), {"slow_rank:3"}, {}, "training", 8, 6);
  ASSERT_EQ(nominal.size(), 1u);
  EXPECT_EQ(nominal[0].type, "slow_rank_suspected");
  EXPECT_EQ(nominal[0].summary.find("frequency"), std::string::npos) << nominal[0].summary;
}

// A slow link: the rank's collectives take longest to move data; its peers also wait for it, which
// is folded into the one slow-link finding instead of a second, misleading slow-rank one. The
// operator alignments see the same rank finish its collectives last (communication_collective_slow).
TEST(DiagnosticsPipeline, SlowLinkIsFoundAsTheCause) {
  ascprof::testing::ScratchDir dir("diag-link");
  const auto found = findings_of(dir.path(), {"slow_collective:5"}, {}, "training", 8, 6);
  std::set<std::string> types;
  for (const auto& f : found) {
    types.insert(f.type);
    EXPECT_EQ(f.suspected, std::set<std::string>{"rank5"}) << f.type;
  }
  EXPECT_EQ(types, (std::set<std::string>{"slow_link_suspected", "communication_collective_slow"}));
  EXPECT_EQ(found.size(), 2u);
}

// Steps of ranks whose clocks are 30 ms apart still align once the offsets are applied.
TEST(DiagnosticsPipeline, StepsAlignAcrossSkewedClocks) {
  ascprof::testing::ScratchDir dir("diag-align");
  EXPECT_TRUE(findings_of(dir.path(), {"clock_offset:2:30000"}).empty());
  fs::path root_out;  // the one folder under out/, named by the root's slug
  for (const auto& e : fs::directory_iterator(dir / "out")) root_out = e.path();
  auto text = read_file(root_out / "cross_rank_alignment.json");
  ASSERT_TRUE(text.ok()) << root_out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(*text);
  size_t n = 0;
  size_t operators = 0;
  for (simdjson::dom::element a : doc["cross_rank_alignments"].get_array()) {
    if (std::string_view(a["alignment_type"]) == "operator") {
      // kernels of all 4 ranks meet in the same corrected millisecond despite rank 2's 30 ms clock skew
      if (simdjson::dom::array(a["rank_ids"]).size() == 4) ++operators;
      continue;
    }
    ++n;
    EXPECT_EQ(simdjson::dom::array(a["rank_ids"]).size(), 4u);
    EXPECT_EQ(std::string_view(a["metrics"]["alignment_confidence"]), "high");
    EXPECT_FALSE(bool(a["metrics"]["is_structure_mismatch"]));
  }
  EXPECT_EQ(n, 3u);  // one per step
  EXPECT_GT(operators, 30u);
}

TEST(Diagnostics, GateRefusesFindingsWithoutEvidenceAndClaimIdsAreStable) {
  model::Finding f;
  f.finding_type = "device_idle_bubble";
  f.scope = "step";
  f.summary = "x";
  f.rank_ids = {"0"};
  EXPECT_FALSE(analysis::finding_is_traceable(f));
  f.evidence_ids = {"evt_0_1"};
  EXPECT_TRUE(analysis::finding_is_traceable(f));
  analysis::set_claim_id(f);
  const std::string id = f.claim_id;
  EXPECT_EQ(id.rfind("claim_", 0), 0u);
  f.summary = "y";
  analysis::set_claim_id(f);
  EXPECT_NE(f.claim_id, id);
}

}  // namespace
}  // namespace ascprof::pipeline

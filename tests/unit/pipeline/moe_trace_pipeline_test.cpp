// In-kernel MoE traces end to end (issue 20) on generated captures whose ground truth holds every
// call's exact phases: the three collector variants give the same exact per-phase counts, sums,
// unions and slowest cores, each trace attaches to its FusedDeepMoe row, a clean capture gives no
// finding, each in-kernel fault gives its findings on the planted rank, and broken traces are counted
// while every rank's other analyses complete.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string_view>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/analyse_root.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;

// CMake found a python3 for the .pt stand-in (it always does where setup.sh ran: then the tests run).
bool have_python() {
  const std::string_view p = ASCPROF_PYTHON;
  return !p.empty() && p.find("NOTFOUND") == std::string_view::npos;
}

struct Analysed {
  std::vector<RankOutcome> outcomes;
  std::string out_dir;
  std::string truth;  // ground_truth.json
  std::vector<std::pair<std::string, std::set<std::string>>> findings;  // (type, suspected)
};

const knowledge::Knowledge& kb() { return ascprof::testing::shipped_knowledge(); }

synth::SynthSummary generate(const fs::path& dir, const std::string& variant, const std::vector<std::string>& faults) {
  auto gen = synth::generate_capture(ascprof::testing::moe_capture(dir / "c", variant, faults));
  EXPECT_TRUE(gen.ok()) << gen.status().to_string();
  return gen.ok() ? *gen : synth::SynthSummary{};
}

Analysed analyse(const fs::path& dir, const char* out = "out") {
  Analysed r;
  auto root = ascprof::testing::analyse_root(dir / "c", dir / out, kb());
  EXPECT_EQ(root.summary.status, "ok") << root.summary.error;
  r.outcomes = std::move(root.outcomes);
  r.out_dir = root.plan.out_dir;
  const RootPlan& plan = root.plan;
  r.truth = *read_file(dir / "c" / "ground_truth.json");
  auto text = read_file(fs::path(plan.out_dir) / "diagnosis_findings.json");
  EXPECT_TRUE(text.ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(*text);
  for (simdjson::dom::element f : doc["diagnosis_findings"].get_array()) {
    std::set<std::string> sus;
    for (simdjson::dom::element s : f["suspected_ranks"].get_array()) sus.insert(std::string(std::string_view(s)));
    r.findings.emplace_back(std::string(std::string_view(f["finding_type"])), sus);
  }
  EXPECT_EQ(uint64_t(doc["counts"]["refused_without_evidence"]), 0u);
  return r;
}

int64_t ns(simdjson::dom::element e) { return std::llround(double(e) * 1000.0); }

const RankOutcome& rank(const Analysed& r, const std::string& id) {
  for (const auto& o : r.outcomes)
    if (o.rank_id == id) return o;
  ADD_FAILURE() << "no rank " << id;
  return r.outcomes.front();
}

// Every rank's call against ground truth: attachment and the exact label-level phases and bubbles.
void expect_exact(const Analysed& r) {
  simdjson::dom::parser parser;
  simdjson::dom::element truth = parser.parse(r.truth)["moe_trace"];
  size_t ranks = 0;
  for (simdjson::dom::element t : truth["ranks"].get_array()) {
    ++ranks;
    const RankOutcome& o = rank(r, "rank" + std::string(std::string_view(t["rank_id"])));
    ASSERT_TRUE(o.ok) << o.error;
    ASSERT_EQ(o.moe.calls.size(), 1u);
    const auto& c = o.moe.calls[0];
    EXPECT_EQ(c.status, "attached") << c.detail;
    EXPECT_EQ(c.kernel_call, int64_t(t["kernel_row_index"]));
    EXPECT_EQ(c.kernel_duration_ns, ns(t["kernel_duration_us"]));
    EXPECT_EQ(c.span_ns, ns(t["span_us"]));
    EXPECT_EQ(c.kernel_name, "aclnnFusedDeepMoe_FusedDeepMoe_FusedDeepMoe");
    size_t phases = 0;
    for (simdjson::dom::element p : t["phases"].get_array()) {
      ++phases;
      const std::string label{std::string_view(p["label"])}, group{std::string_view(p["core_group"])};
      const auto* mine = [&]() -> const analysis::MoePhaseStats* {
        for (const auto& s : c.phases)
          if (s.label_level() && s.label == label && s.core_group == group) return &s;
        return nullptr;
      }();
      ASSERT_NE(mine, nullptr) << label << " on " << group;
      EXPECT_EQ(mine->count, uint64_t(p["count"])) << label;
      EXPECT_EQ(mine->total_ns, ns(p["total_us"])) << label;
      EXPECT_EQ(mine->union_ns, ns(p["union_us"])) << label;
      EXPECT_EQ(mine->max_core_ns, ns(p["max_core_us"])) << label;
    }
    size_t label_rows = 0;
    for (const auto& s : c.phases) label_rows += s.label_level() ? 1 : 0;
    EXPECT_EQ(label_rows, phases);
    size_t bubbles = 0;
    for (simdjson::dom::element b : t["bubbles"].get_array()) {
      ++bubbles;
      const std::string container{std::string_view(b["container"])}, group{std::string_view(b["core_group"])};
      bool found = false;
      for (const auto& mb : c.bubbles)
        if (mb.container == container && mb.core_group == group) {
          found = true;
          EXPECT_EQ(mb.total_ns, ns(b["total_us"])) << container << " on " << group;
        }
      EXPECT_TRUE(found) << container << " on " << group;
    }
    EXPECT_EQ(c.bubbles.size(), bubbles);
  }
  EXPECT_EQ(ranks, 4u);
}

TEST(MoeTracePipeline, EveryVariantGivesTheExactPhasesAndAttachesToItsRow) {
  for (const char* variant : {"skill", "umdk", "array"}) {
    SCOPED_TRACE(variant);
    ascprof::testing::ScratchDir dir("moe-pipe");
    generate(dir.path(), variant, {});
    const Analysed r = analyse(dir.path());
    expect_exact(r);
    EXPECT_TRUE(r.findings.empty()) << r.findings.front().first;
    for (const char* t : {"moe_trace_calls.csv", "moe_phase_summary.csv", "moe_phase_compare.csv", "moe_bubble_summary.csv"})
      EXPECT_TRUE(fs::exists(fs::path(r.out_dir) / t)) << t;
  }
}

TEST(MoeTracePipeline, InKernelFaultsAreFoundOnThePlantedRank) {
  struct Case {
    std::string fault, rank;
    std::vector<std::string> types;
  };
  for (const Case& c : {Case{"moe_slow_expert:1", "rank1", {"moe_in_kernel_ep_imbalance", "moe_combine_wait"}},
                        Case{"moe_recv_starved:2", "rank2", {"moe_in_kernel_ep_imbalance"}}}) {
    SCOPED_TRACE(c.fault);
    ascprof::testing::ScratchDir dir("moe-fault");
    generate(dir.path(), "skill", {c.fault});
    const Analysed r = analyse(dir.path());
    expect_exact(r);
    std::vector<std::string> types;
    for (const auto& [type, suspected] : r.findings) {
      types.push_back(type);
      EXPECT_EQ(suspected, std::set<std::string>{c.rank}) << type;
    }
    EXPECT_EQ(types, c.types);
  }
}

TEST(MoeTracePipeline, BrokenTracesAreCountedAndTheRanksStillAnalysed) {
  ascprof::testing::ScratchDir dir("moe-broken");
  const auto gen = generate(dir.path(), "skill", {});
  ASSERT_EQ(gen.ranks.size(), 4u);
  auto edit = [](const fs::path& p, auto change) {
    std::string text = *read_file(p);
    change(text);
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  };
  // rank 0: cut in half; rank 1: one E event's ph made unknown (dropped, and its B is left alone);
  // rank 2: the collector dropped 7 unmapped records; rank 3: no trace of this rank in its file
  edit(gen.ranks[0].moe_trace, [](std::string& t) { t.resize(t.size() / 2); });
  edit(gen.ranks[1].moe_trace, [](std::string& t) {
    const size_t at = t.find("\"ph\": \"E\"");
    ASSERT_NE(at, std::string::npos);
    t[at + 7] = 'Q';
  });
  edit(gen.ranks[2].moe_trace, [](std::string& t) {
    const size_t at = t.find("\"skipped_no_mapping\"");
    const size_t colon = t.find(':', at);
    t.replace(colon + 1, t.find_first_of(",}", colon) - colon - 1, " 7");
  });
  edit(gen.ranks[3].moe_trace, [](std::string& t) { t = R"({"traceEvents": []})"; });
  const Analysed r = analyse(dir.path());
  for (const auto& o : r.outcomes) {
    ASSERT_TRUE(o.ok) << o.error;
    EXPECT_GT(o.kernel_rows, 0u);
    EXPECT_GT(o.step_count, 0u);
    ASSERT_EQ(o.moe.calls.size(), 1u);
  }
  auto count = [](const RankOutcome& o, Stat s) { return o.stat_counts[static_cast<size_t>(s)]; };
  const auto& c0 = rank(r, "rank0").moe.calls[0];
  EXPECT_EQ(c0.status, "unreadable");
  EXPECT_NE(c0.detail.find("trace_call"), std::string::npos) << c0.detail;
  EXPECT_EQ(count(rank(r, "rank0"), Stat::moe_trace_unreadable), 1u);
  EXPECT_EQ(rank(r, "rank1").moe.calls[0].status, "attached");
  EXPECT_EQ(rank(r, "rank1").moe.calls[0].unmatched, 1u);  // its B
  EXPECT_EQ(rank(r, "rank1").moe.calls[0].bad_events, 1u);  // the E with ph Q
  EXPECT_EQ(count(rank(r, "rank1"), Stat::moe_trace_unmatched), 1u);
  EXPECT_EQ(count(rank(r, "rank1"), Stat::moe_trace_bad_event), 1u);
  EXPECT_EQ(rank(r, "rank2").moe.calls[0].unmapped, 7u);
  EXPECT_EQ(count(rank(r, "rank2"), Stat::moe_trace_unmapped), 1u);
  EXPECT_EQ(rank(r, "rank3").moe.calls[0].status, "empty");
  // ranks 1 and 2 are still compared: no finding from their (nominal) phases
  EXPECT_TRUE(r.findings.empty()) << r.findings.front().first;
}

// The device's own slots (rank*.pt + point_map.json, turned back from each rank's skill trace by a
// torch-free stand-in of torch.save) give exactly the phases, bubbles and attachment of the trace.
TEST(MoeTracePipeline, RankPtFilesGiveTheSamePhasesAsTheCollectorsTrace) {
  ascprof::testing::ScratchDir dir("moe-pt");
  const auto gen = generate(dir.path(), "skill", {"moe_recv_starved:2"});
  const Analysed json = analyse(dir.path(), "out-json");
  for (const auto& rs : gen.ranks) {
    const fs::path trace = rs.moe_trace;
    char name[64];  // rank003_call19.pt: the collector's rank file, with the call it holds
    std::snprintf(name, sizeof name, "rank%03d_%s.pt", rs.rank_id, trace.stem().string().substr(6).c_str());
    const fs::path pt = trace.parent_path() / name;
    const std::string cmd = std::string(ASCPROF_PYTHON) + " " + ASCPROF_MAKE_RANK_PT + " from-trace " + trace.string() + " " +
                            pt.string() + " " + (trace.parent_path() / "point_map.json").string();
    if (!have_python()) GTEST_SKIP() << "no python3 found at configure time";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << "make_rank_pt.py failed: " << cmd;
    fs::remove(trace);
  }
  const Analysed pt = analyse(dir.path(), "out-pt");
  ASSERT_EQ(pt.outcomes.size(), json.outcomes.size());
  for (size_t i = 0; i < pt.outcomes.size(); ++i) {
    const auto& a = json.outcomes[i].moe.calls.at(0);
    const auto& b = pt.outcomes[i].moe.calls.at(0);
    SCOPED_TRACE(b.file);
    EXPECT_EQ(b.variant, "rank_pt");
    EXPECT_EQ(b.status, "attached") << b.detail;
    EXPECT_EQ(b.kernel_row, a.kernel_row);
    EXPECT_EQ(b.span_ns, a.span_ns);
    ASSERT_EQ(b.phases.size(), a.phases.size());
    for (size_t k = 0; k < a.phases.size(); ++k) {
      EXPECT_EQ(b.phases[k].label, a.phases[k].label);
      EXPECT_EQ(b.phases[k].index, a.phases[k].index);
      EXPECT_EQ(b.phases[k].total_ns, a.phases[k].total_ns) << a.phases[k].label;
      EXPECT_EQ(b.phases[k].union_ns, a.phases[k].union_ns) << a.phases[k].label;
      EXPECT_EQ(b.phases[k].max_core_ns, a.phases[k].max_core_ns) << a.phases[k].label;
    }
    ASSERT_EQ(b.bubbles.size(), a.bubbles.size());
    for (size_t k = 0; k < a.bubbles.size(); ++k) EXPECT_EQ(b.bubbles[k].total_ns, a.bubbles[k].total_ns);
  }
  EXPECT_EQ(pt.findings, json.findings);
}

}  // namespace
}  // namespace ascprof::pipeline

// End-to-end normalize on generated captures with known ground truth: every count the generator
// wrote must come back exactly, with no data-quality warnings on a clean capture.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <map>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;

struct Truth {
  std::map<std::string, uint64_t> counts;  // per rank id: "<rank>.<name>"
  std::vector<std::string> rank_ids;
};

Truth read_truth(const fs::path& file) {
  Truth t;
  simdjson::dom::parser parser;
  auto text = read_file(file);
  EXPECT_TRUE(text.ok());
  simdjson::dom::element doc = parser.parse(*text);
  for (simdjson::dom::element r : doc["ranks"].get_array()) {
    const std::string id = "rank" + std::to_string(int64_t(r["rank_id"]));  // the tool names rank N "rankN"
    t.rank_ids.push_back(id);
    simdjson::dom::element c = r["counts"];
    simdjson::dom::element tb = c["trace_by_table"];
    t.counts[id + ".kernel_rows"] = uint64_t(c["kernel_rows"]);
    t.counts[id + ".trace_events"] = uint64_t(c["trace_events"]);
    t.counts[id + ".communication_json_ops"] = uint64_t(c["communication_json_ops"]);
    t.counts[id + ".step_trace_rows"] = uint64_t(c["step_trace_rows"]);
    for (const char* k : {"host_ops", "profiler_steps", "device_tasks", "comm_ops", "plane_tasks", "overlap", "flows"})
      t.counts[id + "." + k] = uint64_t(tb[k]);
  }
  return t;
}

class SynthPipelineTest : public ::testing::TestWithParam<const char*> {};

TEST_P(SynthPipelineTest, CountsMatchGroundTruthAndNoWarnings) {
  ascprof::testing::ScratchDir dir("synth-pipeline");
  synth::SynthOptions so;
  so.scenario = GetParam();
  so.out_dir = dir / "capture";
  so.ranks = 3;
  so.steps = 2;
  auto gen = synth::generate_capture(so);
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  const Truth truth = read_truth(gen->ground_truth);

  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  ASSERT_TRUE(kb.ok()) << kb.status().to_string();
  const RootPlan plan = plan_root(so.out_dir.string(), (dir / "out").string(), 0);
  ASSERT_TRUE(plan.ok) << plan.error;
  ASSERT_EQ(plan.tasks.size(), truth.rank_ids.size());
  std::vector<RankOutcome> outcomes;
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const RankTask& task = plan.tasks[i];
    EXPECT_EQ(task.rank_id, truth.rank_ids[i]);
    EXPECT_EQ(task.rank_id_source, "profiler_info_name");
    const RankOutcome o = run_rank_stages(task, *kb);
    ASSERT_TRUE(o.ok) << o.error;
    const std::string& id = task.rank_id;
    EXPECT_EQ(o.kernel_rows, truth.counts.at(id + ".kernel_rows")) << "rank " << id;
    EXPECT_EQ(o.trace_events, truth.counts.at(id + ".trace_events")) << "rank " << id;
    EXPECT_EQ(o.host_ops, truth.counts.at(id + ".host_ops")) << "rank " << id;
    EXPECT_EQ(o.profiler_steps, truth.counts.at(id + ".profiler_steps")) << "rank " << id;
    EXPECT_EQ(o.device_tasks, truth.counts.at(id + ".device_tasks")) << "rank " << id;
    EXPECT_EQ(o.comm_ops, truth.counts.at(id + ".comm_ops")) << "rank " << id;
    EXPECT_EQ(o.comm_plane_tasks, truth.counts.at(id + ".plane_tasks")) << "rank " << id;
    EXPECT_EQ(o.overlap_intervals, truth.counts.at(id + ".overlap")) << "rank " << id;
    EXPECT_EQ(o.flows, truth.counts.at(id + ".flows")) << "rank " << id;
    EXPECT_EQ(o.step_trace_rows, truth.counts.at(id + ".step_trace_rows")) << "rank " << id;
    // communication.json rows = ops + one "Total Op Info" per (step, section) present
    EXPECT_GE(o.comm_stat_rows, truth.counts.at(id + ".communication_json_ops")) << "rank " << id;
    EXPECT_EQ(o.data_loss_records, 0u) << o.stats_json;
    EXPECT_EQ(o.warning_records, 0u) << o.stats_json;
    EXPECT_EQ(o.damaged_spans, 0u);
    EXPECT_GT(o.pipeline_event_count, 0u);
    EXPECT_TRUE(fs::exists(fs::path(plan.out_dir) / o.h5_file));
    outcomes.push_back(o);
  }
  const RootSummary s = write_root_outputs(plan, outcomes, ascprof::testing::shipped_knowledge());
  EXPECT_EQ(s.status, "ok");
  EXPECT_EQ(s.ranks_ok, truth.rank_ids.size());
  auto manifest = read_file(fs::path(plan.out_dir) / "normalize_manifest.json");
  ASSERT_TRUE(manifest.ok());
  simdjson::dom::parser parser;
  simdjson::dom::element m = parser.parse(*manifest);
  EXPECT_EQ(uint64_t(m["rank_count"]), truth.rank_ids.size());
  size_t i = 0;
  for (simdjson::dom::element r : m["rank_summaries"].get_array())
    EXPECT_EQ(std::string_view(r["rank_id"]), truth.rank_ids[i++]);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, SynthPipelineTest, ::testing::Values("moe_mla_decode", "dense_gqa", "training"));

// Every window's evidence record in structure_evidence_graph.json carries the window's metrics, the
// same figures as its step_summary.csv / layer_summary.csv row, and a step's top bubbles name the
// kernel rows on either side as event objects.
TEST(RootOutputs, EvidenceRecordsCarryTheirWindowsMetrics) {
  ascprof::testing::ScratchDir dir("evidence-metrics");
  synth::SynthOptions so;
  so.scenario = "moe_mla_decode";
  so.out_dir = dir / "c";
  so.ranks = 2;
  so.steps = 2;
  ASSERT_TRUE(synth::generate_capture(so).ok());
  const RootPlan plan = plan_root(so.out_dir.string(), (dir / "out").string(), 0);
  ASSERT_TRUE(plan.ok) << plan.error;
  std::vector<RankOutcome> outcomes;
  for (const auto& t : plan.tasks) outcomes.push_back(run_rank_stages(t, ascprof::testing::shipped_knowledge()));
  ASSERT_EQ(write_root_outputs(plan, outcomes, ascprof::testing::shipped_knowledge()).status, "ok");
  std::map<std::string, std::map<std::string, std::string>> step_rows, layer_rows;
  for (auto& r : ascprof::testing::csv_rows(fs::path(plan.out_dir) / "step_summary.csv")) step_rows[r["segment_id"]] = r;
  for (auto& r : ascprof::testing::csv_rows(fs::path(plan.out_dir) / "layer_summary.csv")) layer_rows[r["layer_id"]] = r;
  auto text = read_file(fs::path(plan.out_dir) / "structure_evidence_graph.json");
  ASSERT_TRUE(text.ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(*text);
  size_t steps = 0, layers = 0, ranks = 0;
  for (simdjson::dom::element e : doc["evidence"].get_array()) {
    const std::string_view kind = e["kind"];
    simdjson::dom::element m;
    ASSERT_EQ(e["metrics"].get(m), simdjson::SUCCESS) << kind;
    const std::map<std::string, std::string>* row = nullptr;
    if (kind == "layer_window") {
      row = &layer_rows.at(std::string(std::string_view(e["layer_id"])));
      ++layers;
    } else if (kind == "rank_window") {
      ++ranks;
      EXPECT_GT(uint64_t(m["event_count"]), 0u);
      continue;
    } else {
      row = &step_rows.at(std::string(std::string_view(e["segment_id"])));
      if (kind == "step_window") {
        ++steps;
        EXPECT_EQ(uint64_t(m["main_layer_count"]), std::stoull(row->at("main_layer_count")));
        simdjson::dom::array bubbles = m["top_bubbles"];
        ASSERT_GT(bubbles.size(), 0u);
        EXPECT_EQ(std::string_view(bubbles.at(0)["before_event"]["rank_id"]), std::string_view(e["rank_id"]));
      }
    }
    for (const char* key : {"event_count", "bubble_count", "stream_count", "row_start", "row_end"})
      EXPECT_EQ(uint64_t(m[key]), std::stoull(row->at(key))) << kind << " " << key;
    for (const char* key : {"wall_ms", "busy_union_ms", "kernel_sum_ms", "wait_sum_ms", "underfeed_ms",
                            "internal_bubble_total_ms", "largest_internal_bubble_ms"})
      EXPECT_DOUBLE_EQ(double(m[key]), std::stod(row->at(key))) << kind << " " << key;
  }
  EXPECT_EQ(steps, 4u);
  EXPECT_GT(layers, 0u);
  EXPECT_EQ(ranks, 2u);
}

TEST(RootOutputs, DuplicateAndMissingRanksAreReported) {
  ascprof::testing::ScratchDir dir("dup-ranks");
  synth::SynthOptions so;
  so.scenario = "dense_gqa";
  so.out_dir = dir / "capture";
  so.ranks = 4;
  so.steps = 1;
  auto gen = synth::generate_capture(so);
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  // rank 2 disappears (a gap); rank 3's folder is copied under an older timestamp (a duplicate)
  fs::path rank2, rank3;
  for (const auto& r : gen->ranks) {
    if (r.rank_id == 2) rank2 = r.folder;
    if (r.rank_id == 3) rank3 = r.folder;
  }
  fs::remove_all(rank2);
  fs::copy(rank3, dir / "capture" / "oldnode_1_20200101000000000_ascend_pt", fs::copy_options::recursive);

  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  ASSERT_TRUE(kb.ok());
  const RootPlan plan = plan_root(so.out_dir.string(), (dir / "out").string(), 0);
  ASSERT_TRUE(plan.ok) << plan.error;
  ASSERT_EQ(plan.tasks.size(), 3u);
  EXPECT_EQ(plan.tasks[2].rank_id, "rank3");
  EXPECT_EQ(plan.tasks[2].rank_path, rank3.string());  // the newer folder wins
  ASSERT_EQ(plan.duplicates.size(), 1u);
  EXPECT_NE(plan.duplicates[0].dropped.find("oldnode_1_20200101000000000_ascend_pt"), std::string::npos);
  EXPECT_EQ(plan.missing_rank_ids, (std::vector<int64_t>{2}));
  std::vector<RankOutcome> outcomes;
  for (const auto& t : plan.tasks) outcomes.push_back(run_rank_stages(t, *kb));
  write_root_outputs(plan, outcomes, ascprof::testing::shipped_knowledge());
  auto manifest = read_file(fs::path(plan.out_dir) / "normalize_manifest.json");
  ASSERT_TRUE(manifest.ok());
  EXPECT_NE(manifest->find("\"missing_rank_ids\": [\n    \"2\"\n  ]"), std::string::npos) << *manifest;
  EXPECT_NE(manifest->find("oldnode_1_20200101000000000_ascend_pt"), std::string::npos);
}

}  // namespace
}  // namespace ascprof::pipeline

// A checkpoint stands for a rank only while every input the rank job read is unchanged. The list of
// inputs once lived by hand in the checkpoint code and forgot op_statistic.csv and api_statistic.csv,
// so a rerun into the same OUT reused a rank whose operator statistics had changed (issue 18).
#include <gtest/gtest.h>

#include <filesystem>
#include <algorithm>
#include <fstream>
#include <map>
#include <optional>

#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/parallel/checkpoint.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/pipeline/summary_outputs.hpp"
#include "ascprof/store/part_pack.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/test_support.hpp"

namespace ascprof::parallel {
namespace {

namespace fs = std::filesystem;

// A one-rank moe_mla_decode capture, its plan into `dir/out`, the rules and their fingerprint.
struct OneRank {
  synth::SynthOptions so;
  std::optional<knowledge::Knowledge> kb;
  std::string rules;
  pipeline::RootPlan plan;

  OneRank(const fs::path& dir, uint32_t steps) {
    so.scenario = "moe_mla_decode";
    so.out_dir = dir / "c";
    so.ranks = 1;
    so.steps = steps;
    EXPECT_TRUE(synth::generate_capture(so).ok());
    auto loaded = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
    EXPECT_TRUE(loaded.ok());
    if (loaded.ok()) kb.emplace(std::move(loaded).value());
    rules = knowledge_fingerprint(ascprof::testing::knowledge_dir());
    plan = pipeline::plan_root(so.out_dir.string(), (dir / "out").string(), 0);
    EXPECT_EQ(plan.tasks.size(), 1u);
  }
};

class CheckpointInputs : public ::testing::TestWithParam<std::string pipeline::RankTask::*> {};

TEST_P(CheckpointInputs, EditingAnInputBetweenTwoRunsRedoesTheRank) {
  ascprof::testing::ScratchDir dir("checkpoint-inputs");
  const OneRank r(dir.path(), 2);
  ASSERT_TRUE(r.kb.has_value() && r.plan.tasks.size() == 1);
  const auto& kb = r.kb;
  const std::string& rules = r.rules;
  const pipeline::RankTask& task = r.plan.tasks[0];
  const std::string& input = task.*GetParam();
  ASSERT_FALSE(input.empty()) << pipeline::input_kind_name(GetParam()) << " missing from the synth capture";

  const pipeline::RankOutcome o = pipeline::run_rank_stages(task, *kb, checkpoint_sealer(task, rules));
  ASSERT_TRUE(o.ok) << o.error;
  ASSERT_TRUE(load_checkpoint(task, rules).has_value()) << "an unchanged rank must be reused";

  std::ofstream(input, std::ios::app) << "\n";  // the file a user re-exported
  EXPECT_FALSE(load_checkpoint(task, rules).has_value())
      << "checkpoint reused after " << input << " (" << pipeline::input_kind_name(GetParam()) << ") changed";
}

INSTANTIATE_TEST_SUITE_P(EveryInputKind, CheckpointInputs,
                         ::testing::Values(&pipeline::RankTask::kernel_details, &pipeline::RankTask::trace_view,
                                           &pipeline::RankTask::communication, &pipeline::RankTask::op_statistic,
                                           &pipeline::RankTask::api_statistic, &pipeline::RankTask::profiler_info),
                         [](const auto& p) { return std::string(pipeline::input_kind_name(p.param)); });

// In-kernel MoE traces are a list of files: editing one, adding one or removing one redoes the rank.
TEST(CheckpointMoeTraces, AChangedAddedOrRemovedTraceRedoesTheRank) {
  ascprof::testing::ScratchDir dir("checkpoint-moe");
  synth::SynthOptions so;
  so.scenario = "moe_mla_decode";
  so.out_dir = dir / "c";
  so.ranks = 1;
  so.steps = 1;
  so.moe_trace = "skill";
  ASSERT_TRUE(synth::generate_capture(so).ok());
  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  ASSERT_TRUE(kb.ok());
  const std::string rules = knowledge_fingerprint(ascprof::testing::knowledge_dir());
  auto plan_task = [&] {
    auto plan = pipeline::plan_root(so.out_dir.string(), (dir / "out").string(), 0, pipeline::SourceChoice::kAuto,
                                    kb->moe_trace.folder);
    EXPECT_EQ(plan.tasks.size(), 1u);
    return plan.tasks.at(0);
  };
  pipeline::RankTask task = plan_task();
  ASSERT_EQ(task.moe_traces.size(), 1u);
  const fs::path trace = task.moe_traces[0];
  const pipeline::RankOutcome o = pipeline::run_rank_stages(task, *kb, checkpoint_sealer(task, rules));
  ASSERT_TRUE(o.ok) << o.error;
  ASSERT_EQ(o.moe.calls.size(), 1u);
  ASSERT_TRUE(load_checkpoint(task, rules).has_value());
  fs::copy_file(trace, trace.parent_path() / "extra.json");  // a second call exported since
  EXPECT_FALSE(load_checkpoint(plan_task(), rules).has_value()) << "reused with a new trace";
  fs::remove(trace.parent_path() / "extra.json");
  ASSERT_TRUE(load_checkpoint(plan_task(), rules).has_value());
  std::ofstream(trace, std::ios::app) << "\n";
  EXPECT_FALSE(load_checkpoint(plan_task(), rules).has_value()) << "reused after the trace changed";
  const pipeline::RankOutcome again = pipeline::run_rank_stages(plan_task(), *kb, checkpoint_sealer(plan_task(), rules));
  ASSERT_TRUE(again.ok) << again.error;
  ASSERT_TRUE(load_checkpoint(plan_task(), rules).has_value());
  fs::remove(trace);
  EXPECT_FALSE(load_checkpoint(plan_task(), rules).has_value()) << "reused after the trace was removed";
}

// The rank's rows of the root tables live in its part pack (ranks/<id>.parts): a checkpoint whose
// pack is gone, truncated, or misses a table's section must not stand for the rank, or the root
// would fail (or lose rows) on the reused rank.
TEST(CheckpointParts, AMissingOrDamagedPartPackRedoesTheRank) {
  ascprof::testing::ScratchDir dir("checkpoint-parts");
  const OneRank r(dir.path(), 1);
  ASSERT_TRUE(r.kb.has_value() && r.plan.tasks.size() == 1);
  const auto& kb = r.kb;
  const std::string& rules = r.rules;
  const pipeline::RankTask& task = r.plan.tasks[0];
  auto redo = [&] {
    const pipeline::RankOutcome o = pipeline::run_rank_stages(task, *kb, checkpoint_sealer(task, rules));
    ASSERT_TRUE(o.ok) << o.error;
    ASSERT_EQ(o.parts_file, "ranks/" + o.rank_id + ".parts");
    ASSERT_TRUE(load_checkpoint(task, rules).has_value());
  };
  const fs::path pack = fs::path(task.root_out) / ("ranks/" + task.rank_id + ".parts");

  redo();
  const auto size = fs::file_size(pack);
  fs::resize_file(pack, size - 10);  // the footer cut off (a disk that filled, a copy interrupted)
  EXPECT_FALSE(load_checkpoint(task, rules).has_value()) << "reused with a truncated part pack";

  redo();
  fs::remove(pack);
  EXPECT_FALSE(load_checkpoint(task, rules).has_value()) << "reused without its part pack";

  // a pack of an older build without one of today's sections (its checkpoint record intact): a
  // summary table's, and the structure rows' (the root renders neither itself)
  for (const std::string dropped : {"normalized_event_index.csv", "structure_classes", "step_segments.json"}) {
    redo();
    {
      auto sealed = store::PartPackReader::open(pack);
      ASSERT_TRUE(sealed.ok());
      std::map<std::string, std::string> sections;
      for (const auto& section : sealed->sections()) sections[section] = sealed->read(section).value();
      ASSERT_EQ(sections.count(dropped), 1u) << dropped;
      store::PartPackWriter w;
      ASSERT_TRUE(w.open(pack).ok());
      for (const auto& [section, bytes] : sections)
        if (section != dropped) w.add(section, bytes);
      ASSERT_TRUE(w.commit().ok());
    }
    EXPECT_FALSE(load_checkpoint(task, rules).has_value()) << "reused with section " << dropped << " missing";
  }

  // a rank job run without a sealer (a test harness, a bench) packs its rows but no checkpoint
  ASSERT_TRUE(pipeline::run_rank_stages(task, *kb).ok);
  EXPECT_FALSE(load_checkpoint(task, rules).has_value()) << "reused a pack that holds no checkpoint record";
}

// Issue 22: a rank leaves two files, its HDF5 file and its part pack (which holds the checkpoint);
// a rank redone into an OUT of an older layout loses that layout's .outcome file and .summary/ folder.
TEST(CheckpointParts, ARankLeavesTwoFilesAndNoLegacyOnes) {
  ascprof::testing::ScratchDir dir("checkpoint-files");
  const OneRank r(dir.path(), 1);
  ASSERT_TRUE(r.kb.has_value() && r.plan.tasks.size() == 1);
  const pipeline::RankTask& task = r.plan.tasks[0];
  const fs::path ranks = fs::path(task.root_out) / "ranks";
  fs::create_directories(ranks / (task.rank_id + ".summary"));
  std::ofstream(ranks / (task.rank_id + ".summary") / "operator_summary.csv.part") << "x\n";
  std::ofstream(ranks / (task.rank_id + ".outcome")) << "old";
  ASSERT_TRUE(pipeline::run_rank_stages(task, *r.kb, checkpoint_sealer(task, r.rules)).ok);
  remove_legacy_rank_files(task);
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(ranks)) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{task.rank_id + ".h5", task.rank_id + ".parts"}));
  EXPECT_TRUE(load_checkpoint(task, r.rules).has_value());
}

TEST(InputKinds, EveryTaskFieldHasOneKind) {
  // each kind once, each field once: the names are the keys of source_index.json
  for (size_t i = 0; i < std::size(pipeline::kInputKinds); ++i)
    for (size_t j = i + 1; j < std::size(pipeline::kInputKinds); ++j) {
      EXPECT_STRNE(pipeline::kInputKinds[i].kind, pipeline::kInputKinds[j].kind);
      EXPECT_NE(pipeline::kInputKinds[i].path, pipeline::kInputKinds[j].path);
    }
  EXPECT_STREQ(pipeline::input_kind_name(&pipeline::RankTask::op_statistic), "op_statistic_csv");
}

}  // namespace
}  // namespace ascprof::parallel

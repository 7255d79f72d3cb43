// The module breakdown (issue 21) through the pipeline: a generated training capture with nn.Module
// ranges gives every module's exact device time of its ground truth on every rank, the planted slow rank
// is the busiest in every attention and MLP module, the real e2-cnn-level2 capture gives its 26 modules
// per rank with their device time (launches followed through torch_npu's task queue), and a capture
// without module ranges writes no module table at all.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <map>
#include <set>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/module_outputs.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/store/h5_reader.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;

const knowledge::Knowledge& kb() {
  static const knowledge::Knowledge k = std::move(knowledge::Knowledge::load(ascprof::testing::knowledge_dir())).value();
  return k;
}

struct Analysed {
  std::vector<RankOutcome> outcomes;
  RootSummary summary;
  fs::path out;
};

Analysed analyse(const fs::path& capture, const fs::path& out) {
  Analysed a;
  const RootPlan plan = plan_root(capture.string(), out.string(), 0, SourceChoice::kAuto, kb().moe_trace.folder);
  EXPECT_TRUE(plan.ok) << plan.error;
  for (const auto& t : plan.tasks) a.outcomes.push_back(run_rank_stages(t, kb()));
  for (const auto& o : a.outcomes) EXPECT_TRUE(o.ok) << o.error;
  a.summary = write_root_outputs(plan, a.outcomes, kb());
  a.out = plan.out_dir;
  return a;
}

void generate(const fs::path& dir, bool with_modules, const std::vector<std::string>& faults = {}) {
  synth::SynthOptions o;
  o.scenario = "training";
  o.out_dir = dir;
  o.ranks = 4;
  o.steps = 2;
  o.with_modules = with_modules;
  o.faults = faults;
  auto gen = synth::generate_capture(o);
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
}


const RankOutcome& rank(const Analysed& a, std::string_view id) {
  for (const auto& o : a.outcomes)
    if (o.rank_id == id) return o;
  ADD_FAILURE() << "no rank " << id;
  return a.outcomes.front();
}

// Every rank's modules against ground truth, in ns: the order (parents first), calls, host time, self
// and total device time and tasks, the waiting part, and where every other task went.
TEST(ModuleBreakdownPipeline, SynthModulesMatchGroundTruthExactly) {
  ascprof::testing::ScratchDir dir("modules-synth");
  generate(dir / "c", true, {"slow_rank:1"});
  const Analysed a = analyse(dir / "c", dir / "out");
  ASSERT_EQ(a.summary.status, "ok") << a.summary.error;
  const std::string text = *read_file(dir / "c" / "ground_truth.json");
  simdjson::dom::parser parser;
  simdjson::dom::element truth = parser.parse(text)["modules"];
  size_t ranks = 0;
  for (simdjson::dom::element t : truth["ranks"].get_array()) {
    ++ranks;
    const std::string id = "rank" + std::string(std::string_view(t["rank_id"]));
    const analysis::ModuleRankSummary& m = rank(a, id).modules;
    ASSERT_TRUE(m.present()) << "rank " << id;
    EXPECT_EQ(m.ranges, uint64_t(t["ranges"])) << id;
    EXPECT_EQ(m.threads, 1u);
    EXPECT_EQ(m.improperly_nested, 0u);
    EXPECT_EQ(m.tasks, uint64_t(t["tasks"])) << id;
    EXPECT_EQ(m.device_ns, int64_t(t["device_ns"])) << id;
    EXPECT_EQ(m.module_tasks, uint64_t(t["module_tasks"])) << id;
    EXPECT_EQ(m.module_ns, int64_t(t["module_ns"])) << id;
    EXPECT_EQ(m.outside_tasks, uint64_t(t["outside_tasks"])) << id;
    EXPECT_EQ(m.outside_ns, int64_t(t["outside_ns"])) << id;
    EXPECT_EQ(m.unlaunched_tasks, uint64_t(t["unlaunched_tasks"])) << id;
    EXPECT_EQ(m.unlaunched_ns, int64_t(t["unlaunched_ns"])) << id;
    EXPECT_EQ(m.by_launch_thread, m.tasks - m.unlaunched_tasks);  // synchronous dispatch: the Python thread
    size_t k = 0;
    for (simdjson::dom::element row : t["modules"].get_array()) {
      ASSERT_LT(k, m.rows.size());
      const analysis::ModuleRow& r = m.rows[k++];
      const std::string path{std::string_view(row["path"])};
      EXPECT_EQ(r.path, path);
      EXPECT_EQ(r.calls, uint64_t(row["calls"])) << path;
      EXPECT_EQ(r.host_ns, int64_t(row["host_ns"])) << path;
      EXPECT_EQ(r.self_device_ns, int64_t(row["self_device_ns"])) << path;
      EXPECT_EQ(r.total_device_ns, int64_t(row["total_device_ns"])) << path;
      EXPECT_EQ(r.self_tasks, uint64_t(row["self_tasks"])) << path;
      EXPECT_EQ(r.tasks, uint64_t(row["tasks"])) << path;
      EXPECT_EQ(r.self_wait_ns, int64_t(row["self_wait_ns"])) << path;
      EXPECT_EQ(r.total_wait_ns, int64_t(row["total_wait_ns"])) << path;
    }
    EXPECT_EQ(k, m.rows.size()) << id;
    EXPECT_EQ(m.rows.size(), 13u);  // Model_0, 4 x (Layer, Attention, MLP)
    EXPECT_EQ(m.rows[0].path, "Model_0");
    EXPECT_EQ(m.rows[0].calls, 4u);  // 2 steps x 2 microbatches
    EXPECT_EQ(m.rows[2].path, "Model_0/Layer_0/Attention_0");
    EXPECT_EQ(m.module_ns, m.rows[0].total_device_ns);

    // the rank's HDF5 file holds the same rows and every call
    auto h5 = store::H5Reader::open(a.out / ("ranks/" + id + ".h5"));
    ASSERT_TRUE(h5.ok());
    auto rows = h5->read_table("/modules/summary");
    ASSERT_TRUE(rows.ok()) << rows.status().to_string();
    EXPECT_EQ(rows->strings("module_path")->size(), m.rows.size());
    auto calls = h5->read_table("/modules/calls");
    ASSERT_TRUE(calls.ok());
    EXPECT_EQ(calls->column<int64_t>("start_ns")->size(), m.ranges);
  }
  EXPECT_EQ(ranks, 4u);

  // the root tables; the planted slow rank is the busiest in every attention and MLP module (its TP
  // partner waits for it in the allReduces, so by total device time the partner can look slowest)
  for (const auto& f : module_tables()) EXPECT_TRUE(fs::exists(a.out / f)) << f;
  const auto compare = ascprof::testing::plain_csv_rows(a.out / "module_compare.csv");
  ASSERT_EQ(compare.size(), 13u);
  size_t parts = 0;
  for (const auto& c : compare) {
    EXPECT_EQ(c.at("ranks"), "4");
    const std::string& path = c.at("module_path");
    if (path.find("Attention_") == std::string::npos && path.find("MLP_") == std::string::npos) continue;
    ++parts;
    EXPECT_EQ(c.at("busiest_rank"), "rank1") << path;
    EXPECT_EQ(c.at("stands_out"), "True") << path;
    EXPECT_GT(std::stod(c.at("busiest_to_median")), 1.5) << path;
  }
  EXPECT_EQ(parts, 8u);
  EXPECT_EQ(ascprof::testing::plain_csv_rows(a.out / "module_summary.csv").size(), 4u * 13u);
  EXPECT_EQ(ascprof::testing::plain_csv_rows(a.out / "module_ranks.csv").size(), 4u);
}

// A clean capture: no module stands out.
TEST(ModuleBreakdownPipeline, CleanRanksHaveNoModuleStandingOut) {
  ascprof::testing::ScratchDir dir("modules-clean");
  generate(dir / "c", true);
  const Analysed a = analyse(dir / "c", dir / "out");
  const auto compare = ascprof::testing::plain_csv_rows(a.out / "module_compare.csv");
  EXPECT_EQ(compare.size(), 13u);
  for (const auto& c : compare) EXPECT_EQ(c.at("stands_out"), "False") << c.at("module_path");
}

// Without module ranges nothing new is written: no table, no HDF5 group, no outcome rows.
TEST(ModuleBreakdownPipeline, CaptureWithoutModulesWritesNoModuleFiles) {
  ascprof::testing::ScratchDir dir("modules-none");
  generate(dir / "c", false);
  const Analysed a = analyse(dir / "c", dir / "out");
  ASSERT_EQ(a.summary.status, "ok") << a.summary.error;
  for (const auto& f : module_tables()) EXPECT_FALSE(fs::exists(a.out / f)) << f;
  for (const auto& p : a.summary.outputs) EXPECT_EQ(p.find("module_"), std::string::npos) << p;
  for (const auto& o : a.outcomes) {
    EXPECT_FALSE(o.modules.present());
    EXPECT_TRUE(o.modules.rows.empty());
    auto h5 = store::H5Reader::open(a.out / o.h5_file);
    ASSERT_TRUE(h5.ok());
    EXPECT_FALSE(h5->exists("/modules"));
  }
}

// The real CNN capture (torch_npu, with_modules=True, task queue on): the CANN launches run on the
// dequeue thread, so each launch is followed back to its Enqueue on the Python thread. Numbers checked
// by hand against trace_view.json (a separate script binding the same flows): rank 0's Conv2d_0 holds
// four tasks of 401.028 us, CrossEntropyLoss_0 four of 55.44 us; the 477 other launched tasks (backward
// on the autograd thread, the optimizer, HCCL) are outside every module; two PLACE_HOLDER tasks have no
// launch.
TEST(ModuleBreakdownPipeline, RealCnnCaptureAttributesDeviceTimeToItsModules) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  const fs::path capture = ascprof::testing::real_fixtures_dir() / "e2-cnn-level2";
  if (!fs::exists(capture)) GTEST_SKIP() << "real fixture not found: " << capture;
  ascprof::testing::ScratchDir dir("modules-real");
  const Analysed a = analyse(capture, dir / "out");
  ASSERT_EQ(a.outcomes.size(), 2u);
  const std::set<std::string> names = {
      "DistributedDataParallel_0", "AlexNet_0", "Sequential_0", "Conv2d_0", "ReLU_0", "MaxPool2d_0", "Conv2d_1",
      "ReLU_1", "MaxPool2d_1", "Conv2d_2", "ReLU_2", "Conv2d_3", "ReLU_3", "Conv2d_4", "ReLU_4", "MaxPool2d_2",
      "AdaptiveAvgPool2d_0", "Sequential_1", "Dropout_0", "Linear_0", "ReLU_5", "Dropout_1", "Linear_1", "ReLU_6",
      "Linear_2", "CrossEntropyLoss_0"};
  struct Expect {
    const char* rank;
    int64_t ddp_ns, loss_ns, conv0_ns;
  };
  for (const Expect& e : {Expect{"rank0", 2335200, 55440, 401028}, Expect{"rank1", 2343822, 53440, 400808}}) {
    const analysis::ModuleRankSummary& m = rank(a, e.rank).modules;
    ASSERT_EQ(m.rows.size(), 26u) << e.rank;
    std::set<std::string> seen;
    for (const auto& r : m.rows) {
      seen.insert(r.module);
      EXPECT_EQ(r.calls, 1u) << r.path;
    }
    EXPECT_EQ(seen, names);
    EXPECT_EQ(m.ranges, 26u);
    EXPECT_EQ(m.threads, 1u);
    EXPECT_EQ(m.improperly_nested, 0u);
    EXPECT_EQ(m.tasks, 535u);
    EXPECT_EQ(m.module_tasks, 56u);
    EXPECT_EQ(m.outside_tasks, 477u);
    EXPECT_EQ(m.unlaunched_tasks, 2u);
    EXPECT_EQ(m.by_task_queue, 533u);  // every launch lies in a Dequeue slice of the dequeue thread
    EXPECT_EQ(m.module_ns + m.outside_ns + m.unlaunched_ns, m.device_ns);
    auto row = [&m](std::string_view path) -> const analysis::ModuleRow& {
      for (const auto& r : m.rows)
        if (r.path == path) return r;
      ADD_FAILURE() << "no module " << path;
      return m.rows.front();
    };
    const auto& ddp = row("DistributedDataParallel_0");
    EXPECT_EQ(ddp.depth, 0u);
    EXPECT_EQ(ddp.self_device_ns, 0);
    EXPECT_NEAR(ddp.total_device_ns, e.ddp_ns, 5);
    EXPECT_EQ(ddp.tasks, 52u);
    EXPECT_EQ(row("DistributedDataParallel_0/AlexNet_0").total_device_ns, ddp.total_device_ns);
    const auto& conv = row("DistributedDataParallel_0/AlexNet_0/Sequential_0/Conv2d_0");
    EXPECT_EQ(conv.depth, 3u);
    EXPECT_NEAR(conv.total_device_ns, e.conv0_ns, 2);
    EXPECT_EQ(conv.tasks, 4u);
    const auto& loss = row("CrossEntropyLoss_0");
    EXPECT_NEAR(loss.total_device_ns, e.loss_ns, 2);
    EXPECT_EQ(loss.tasks, 4u);
    EXPECT_EQ(m.module_ns, ddp.total_device_ns + loss.total_device_ns);  // the two outermost modules
    // a parent's total is its own time plus its children's
    const auto& seq0 = row("DistributedDataParallel_0/AlexNet_0/Sequential_0");
    int64_t children = 0;
    for (const auto& r : m.rows)
      if (r.depth == 3 && r.path.rfind(seq0.path + "/", 0) == 0) children += r.total_device_ns;
    EXPECT_EQ(seq0.total_device_ns, seq0.self_device_ns + children);
  }
  for (const auto& f : module_tables()) EXPECT_TRUE(fs::exists(a.out / f)) << f;
}

}  // namespace
}  // namespace ascprof::pipeline

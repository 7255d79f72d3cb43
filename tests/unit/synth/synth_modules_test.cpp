// synth --with-modules (issue 21): the training capture gets nn.Module ranges on the Python thread as
// torch_npu's with_modules=True writes them (python_function X events, Python id / parent id nesting
// by time), their count and paths in ground_truth.json, and nothing else changes: every other file is
// byte-identical to the capture without modules, and trace_view.json differs only by the module events.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>

#include "ascprof/synth/synth.hpp"
#include "support/test_support.hpp"
#include "synth_test_util.hpp"

namespace ascprof::synth {
namespace {

namespace fs = std::filesystem;
using testutil::Json;

SynthOptions opts(const fs::path& out, bool with_modules) {
  SynthOptions o;
  o.scenario = "training";
  o.out_dir = out;
  o.ranks = 2;
  o.steps = 2;
  o.seed = 7;
  o.with_modules = with_modules;
  return o;
}

// A µs literal with at most 3 decimals ("1765340000123.456", "12.5") as integer ns (exact).
int64_t ns(const std::string& us) {
  const size_t dot = us.find('.');
  std::string frac = dot == std::string::npos ? "" : us.substr(dot + 1);
  frac.resize(3, '0');
  return std::stoll(us.substr(0, dot)) * 1000 + std::stoll(frac);
}

fs::path only_rank_folder(const fs::path& root, int rank) {
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory() && fs::exists(e.path() / ("profiler_info_" + std::to_string(rank) + ".json"))) return e.path();
  ADD_FAILURE() << "no rank " << rank << " under " << root;
  return root;
}

TEST(SynthModules, OnlyTheTrainingScenarioHasModules) {
  ascprof::testing::ScratchDir dir("synth-modules-refused");
  SynthOptions o = opts(dir / "c", true);
  o.scenario = "dense_gqa";
  const auto r = generate_capture(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("with_modules applies to training only"), std::string::npos);
}

TEST(SynthModules, RangesNestOnThePythonThreadAndNothingElseChanges) {
  ascprof::testing::ScratchDir dir("synth-modules");
  ASSERT_TRUE(generate_capture(opts(dir / "on", true)).ok());
  ASSERT_TRUE(generate_capture(opts(dir / "off", false)).ok());
  Json gt;
  std::string err;
  ASSERT_TRUE(testutil::parse_json(testutil::slurp(dir / "on" / "ground_truth.json"), gt, err)) << err;
  const Json& truth = gt.at("modules").at("ranks");
  ASSERT_EQ(truth.items.size(), 2u);

  for (int rank = 0; rank < 2; ++rank) {
    const fs::path on = only_rank_folder(dir / "on", rank), off = only_rank_folder(dir / "off", rank);
    const fs::path out = "ASCEND_PROFILER_OUTPUT";
    for (const char* f : {"kernel_details.csv", "communication.json", "step_trace_time.csv", "op_statistic.csv",
                          "api_statistic.csv"})
      EXPECT_EQ(testutil::slurp(on / out / f), testutil::slurp(off / out / f)) << f;
    const std::string with = testutil::slurp(on / out / "trace_view.json");
    // the module events removed, the trace is the one without modules byte for byte
    static const std::regex kModuleEvent(R"(, \{"ph": "X", "name": "nn\.Module: [^{}]*\{[^{}]*\}\})");
    EXPECT_EQ(std::regex_replace(with, kModuleEvent, ""), testutil::slurp(off / out / "trace_view.json"));
    EXPECT_NE(testutil::slurp(on / ("profiler_info_" + std::to_string(rank) + ".json")).find("\"with_modules\": true"),
              std::string::npos);

    Json doc;
    ASSERT_TRUE(testutil::parse_json(with, doc, err)) << err;
    const Json& events = doc.type == Json::Type::kArray ? doc : doc.at("traceEvents");
    std::string python_pid;
    for (const Json& e : events.items)
      if (e.at("ph").text == "M" && e.at("name").text == "process_name" && e.at("args").at("name").text == "Python")
        python_pid = e.at("pid").text;
    struct Range {
      std::string name;
      int64_t start, end;
      std::string parent;
    };
    std::map<std::string, Range> by_id;  // Python id -> range
    std::map<std::string, int> names;
    for (const Json& e : events.items) {
      if (e.at("ph").text != "X" || e.at("name").text.rfind("nn.Module: ", 0) != 0) continue;
      EXPECT_EQ(e.at("cat").text, "python_function");
      EXPECT_EQ(e.at("pid").text, python_pid);
      const int64_t start = ns(e.at("ts").text), end = start + ns(e.at("dur").text);
      by_id[e.at("args").at("Python id").text] = {e.at("name").text.substr(11), start, end,
                                                  e.at("args").at("Python parent id").text};
      ++names[e.at("name").text.substr(11)];
    }
    const Json& t = truth.items[static_cast<size_t>(rank)];
    EXPECT_EQ(by_id.size(), static_cast<size_t>(std::stoull(t.at("ranges").text)));
    EXPECT_EQ(names["Model_0"], 4);  // 2 steps x 2 microbatches
    EXPECT_EQ(names["Attention_3"], 4);
    EXPECT_EQ(names.size(), 13u);
    for (const auto& [id, r] : by_id) {  // each range lies in its parent's (by Python parent id)
      if (r.name == "Model_0") {
        EXPECT_EQ(r.parent, "1");
        continue;
      }
      ASSERT_TRUE(by_id.count(r.parent)) << r.name;
      const Range& p = by_id.at(r.parent);
      EXPECT_LE(p.start, r.start) << r.name;
      EXPECT_GE(p.end, r.end) << r.name;
      if (r.name.rfind("Layer_", 0) == 0) EXPECT_EQ(p.name, "Model_0");
      else EXPECT_EQ(p.name, "Layer_" + r.name.substr(r.name.find('_') + 1)) << r.name;  // Attention_3 in Layer_3
    }
    // ground truth: the tree's totals add up, every task is somewhere
    const Json& rows = t.at("modules");
    ASSERT_EQ(rows.items.size(), 13u);
    EXPECT_EQ(rows.items[0].at("path").text, "Model_0");
    EXPECT_EQ(rows.items[1].at("path").text, "Model_0/Layer_0");
    EXPECT_EQ(rows.items[2].at("path").text, "Model_0/Layer_0/Attention_0");
    EXPECT_EQ(rows.items[3].at("path").text, "Model_0/Layer_0/MLP_0");
    int64_t children = 0;
    for (const Json& r : rows.items)
      if (std::count(r.at("path").text.begin(), r.at("path").text.end(), '/') == 1)
        children += std::stoll(r.at("total_device_ns").text);
    EXPECT_EQ(std::stoll(rows.items[0].at("total_device_ns").text),
              std::stoll(rows.items[0].at("self_device_ns").text) + children);
    EXPECT_EQ(std::stoll(t.at("module_ns").text), std::stoll(rows.items[0].at("total_device_ns").text));
    EXPECT_EQ(std::stoll(t.at("module_ns").text) + std::stoll(t.at("outside_ns").text) + std::stoll(t.at("unlaunched_ns").text),
              std::stoll(t.at("device_ns").text));
    EXPECT_EQ(std::stoull(t.at("unlaunched_tasks").text), 2u);  // the EVENT_RECORD of each step
  }
}

}  // namespace
}  // namespace ascprof::synth

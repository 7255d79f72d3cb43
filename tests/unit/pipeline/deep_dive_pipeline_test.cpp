// Operator deep dive end to end: generated captures with injected operator pathologies (the synth
// names the changed kernel in ground_truth.json) are classified on the right rank and kernel, healthy
// hot operators of a clean capture are not flagged, and the real fixtures give a table without errors.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <map>
#include <set>

#include "ascprof/common/files.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;

struct Row {
  std::string scope, rank_id, name, task_type, severity;
  std::set<std::string> classifications;
  size_t evidence = 0;
  size_t evidence_resolved = 0;  ///< ids that name a row of raw_kernel_index.csv with this kernel name
};

struct Result {
  std::vector<Row> rows;
  std::vector<std::pair<std::string, std::string>> host;  // (rank, classification)
  std::string fault_kernel;                                 // ground truth of the first fault, if any
};

const knowledge::Knowledge& kb() { return ascprof::testing::shipped_knowledge(); }

Result analyse(const fs::path& root, const fs::path& out) {
  Result res;
  RootPlan plan = plan_root(root.string(), out.string(), 0);
  std::vector<RankOutcome> outcomes;
  for (const auto& t : plan.tasks) outcomes.push_back(run_rank_stages(t, kb()));
  const auto summary = write_root_outputs(plan, outcomes, kb());
  EXPECT_NE(summary.status, "failed") << summary.error;
  auto text = read_file(fs::path(plan.out_dir) / "operator_deep_dive.json");
  EXPECT_TRUE(text.ok()) << text.status().to_string();
  if (!text.ok()) return res;
  // event id -> kernel name, from the raw kernel index (first two columns are event_id, rank_id; name is 5th)
  std::map<std::string, std::string> kernel_of;
  if (auto index = read_file(fs::path(plan.out_dir) / "raw_kernel_index.csv"); index.ok()) {
    std::string_view rest = *index;
    rest.remove_prefix(rest.find('\n') + 1);
    while (!rest.empty()) {
      const std::string_view line = rest.substr(0, rest.find('\n'));
      rest.remove_prefix(std::min(rest.size(), line.size() + 1));
      std::vector<std::string_view> cells;
      for (size_t p = 0; cells.size() < 5;) {
        const size_t q = line.find(',', p);
        cells.push_back(line.substr(p, q == std::string_view::npos ? std::string_view::npos : q - p));
        if (q == std::string_view::npos) break;
        p = q + 1;
      }
      if (cells.size() == 5) kernel_of.emplace(std::string(cells[0]), std::string(cells[4]));
    }
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(*text);
  for (simdjson::dom::element r : doc["rows"].get_array()) {
    Row row;
    row.scope = std::string(std::string_view(r["scope"]));
    row.rank_id = std::string(std::string_view(r["rank_id"]));
    row.name = std::string(std::string_view(r["name"]));
    row.task_type = std::string(std::string_view(r["task_type"]));
    row.severity = std::string(std::string_view(r["severity"]));
    for (simdjson::dom::element c : r["classifications"].get_array()) row.classifications.insert(std::string(std::string_view(c)));
    for (simdjson::dom::element e : r["evidence_ids"].get_array()) {
      ++row.evidence;
      const auto it = kernel_of.find(std::string(std::string_view(e)));
      row.evidence_resolved += it != kernel_of.end() && it->second == row.name ? 1 : 0;
    }
    res.rows.push_back(std::move(row));
  }
  for (simdjson::dom::element h : doc["host_api"].get_array())
    res.host.emplace_back(std::string(std::string_view(h["rank_id"])), std::string(std::string_view(h["classification"])));
  // the CSV has one line per JSON row plus the header
  auto csv = read_file(fs::path(plan.out_dir) / "operator_deep_dive.csv");
  EXPECT_TRUE(csv.ok());
  if (csv.ok()) {
    EXPECT_EQ(std::count(csv->begin(), csv->end(), '\n'), static_cast<long>(res.rows.size() + 1));
  }
  return res;
}

Result run_synth(const fs::path& dir, const std::vector<std::string>& faults, const char* scenario = "moe_mla_decode") {
  synth::SynthOptions o;
  o.scenario = scenario;
  o.out_dir = dir / "c";
  o.ranks = 4;
  o.steps = 2;
  o.faults = faults;
  auto gen = synth::generate_capture(o);
  EXPECT_TRUE(gen.ok()) << gen.status().to_string();
  Result res = analyse(dir / "c", dir / "out");
  auto gt = read_file(dir / "c" / "ground_truth.json");
  EXPECT_TRUE(gt.ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(*gt);
  for (simdjson::dom::element f : doc["faults"].get_array()) {
    simdjson::dom::element k;
    if (f["kernel"].get(k) == simdjson::SUCCESS) {
      res.fault_kernel = std::string(std::string_view(k["name"]));
      break;
    }
  }
  return res;
}

// The rank-scope rows of `rank` whose kernel is `name`.
std::vector<const Row*> rows_of(const Result& r, const std::string& rank, const std::string& name) {
  std::vector<const Row*> out;
  for (const auto& row : r.rows)
    if (row.scope == "rank" && row.rank_id == rank && row.name == name) out.push_back(&row);
  return out;
}

TEST(DeepDivePipeline, CleanCaptureFlagsNoHotOperator) {
  for (const char* scenario : {"moe_mla_decode", "dense_gqa", "training"}) {
    ascprof::testing::ScratchDir dir(std::string("dd-clean-") + scenario);
    const Result r = run_synth(dir.path(), {}, scenario);
    ASSERT_FALSE(r.rows.empty()) << scenario;
    size_t root_rows = 0;
    for (const auto& row : r.rows) {
      root_rows += row.scope == "root";
      EXPECT_TRUE(row.classifications.empty()) << scenario << ": " << row.scope << " " << row.rank_id << " " << row.name
                                               << " flagged " << *row.classifications.begin();
      EXPECT_GT(row.evidence, 0u) << row.name;
      EXPECT_EQ(row.evidence_resolved, row.evidence) << row.name << ": an evidence id is not a row of this kernel";
    }
    EXPECT_GE(root_rows, 20u) << scenario;
    EXPECT_TRUE(r.host.empty()) << scenario;
  }
}

TEST(DeepDivePipeline, InjectedOperatorPathologiesAreClassifiedOnTheirRankAndKernel) {
  struct Case {
    std::string fault, rank;
    std::set<std::string> expected;
  };
  for (const Case& c : {Case{"vector_scalar_heavy:2", "rank2", {"vector_scalar_heavy"}},
                        Case{"cube_underused:1", "rank1", {"cube_low_utilization", "aic_memory_bound"}},
                        Case{"aicpu_fallback:3", "rank3", {"aicpu_fallback"}},
                        // one core doing the work of 40 is also far above the transfer bound: both are true
                        Case{"block_dim_one:1", "rank1", {"block_dim_low", "far_above_lower_bound"}}}) {
    ascprof::testing::ScratchDir dir("dd-fault");
    const Result r = run_synth(dir.path(), {c.fault});
    ASSERT_FALSE(r.fault_kernel.empty()) << c.fault;
    const auto hit = rows_of(r, c.rank, r.fault_kernel);
    ASSERT_FALSE(hit.empty()) << c.fault << ": " << r.fault_kernel << " is not among rank " << c.rank << "'s hot operators";
    for (const Row* row : hit) EXPECT_EQ(row->classifications, c.expected) << c.fault << " " << row->name;
    // nothing else is flagged: not the same kernel on the other ranks, not another kernel
    for (const auto& row : r.rows) {
      if (row.classifications.empty()) continue;
      const bool the_fault = row.name == r.fault_kernel && (row.scope == "root" || row.rank_id == c.rank);
      EXPECT_TRUE(the_fault) << c.fault << ": unexpected " << *row.classifications.begin() << " on " << row.scope << " "
                             << row.rank_id << " " << row.name;
    }
  }
}

TEST(DeepDivePipeline, HostSyncHeavyIsAHostApiFindingOfItsRank) {
  ascprof::testing::ScratchDir dir("dd-sync");
  const Result r = run_synth(dir.path(), {"host_sync_heavy:2"});
  ASSERT_FALSE(r.host.empty());
  for (const auto& [rank, cls] : r.host) {
    EXPECT_EQ(rank, "rank2");
    EXPECT_EQ(cls, "sync_heavy");
  }
}

TEST(DeepDivePipeline, RealFixturesGiveATableWithoutErrors) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  const fs::path real = ascprof::testing::real_fixtures_dir();
  for (const char* name : {"e2-cnn-level2", "e2-cnn-level1", "e2-cnn-level0", "e1-2023-two-rank"}) {
    ascprof::testing::ScratchDir dir(std::string("dd-real-") + name);
    const Result r = analyse(real / name, dir.path());
    ASSERT_FALSE(r.rows.empty()) << name;
    EXPECT_EQ(r.rows.front().scope, "root") << name;
  }
}

}  // namespace
}  // namespace ascprof::pipeline

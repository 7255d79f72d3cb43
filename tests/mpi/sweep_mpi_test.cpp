// run_sweep under mpiexec with 1, 2 and 3 processes: 6 roots of uneven size and a broken root are
// analysed together (and give the rollup a single process gives), the summary and the rollup list every root, a rerun with --reuse-existing
// redoes nothing, and two shards merged by --rollup give the same rollup as the whole sweep.
#include <gtest/gtest.h>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/string.hpp>
#include <cstdlib>
#include <filesystem>

#include "ascprof/common/files.hpp"
#include "ascprof/importers/discovery.hpp"
#include "ascprof/parallel/sweep_run.hpp"
#include "ascprof/report/sweep.hpp"
#include "ascprof/report/tables.hpp"
#include "ascprof/synth/synth.hpp"
#include "ascprof/layout/out_layout.hpp"
#include "support/test_support.hpp"

namespace ascprof {
namespace {

namespace fs = std::filesystem;
namespace mpi = boost::mpi;

fs::path shared_dir(mpi::communicator& world, const std::string& tag) {
  std::string path;
  if (world.rank() == 0) {
    path = (fs::temp_directory_path() /
            ("ascprof-sweep-" + tag + "-" + std::to_string(::getpid()) + "-np" + std::to_string(world.size())))
               .string();
    fs::remove_all(path);
    fs::create_directories(path);
  }
  mpi::broadcast(world, path, 0);
  return path;
}

void generate(const fs::path& root, const char* scenario, int ranks, int steps) {
  synth::SynthOptions o;
  o.scenario = scenario;
  o.out_dir = root;
  o.ranks = ranks;
  o.steps = steps;
  auto r = synth::generate_capture(o);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
}

parallel::SweepRequest request(const fs::path& search, const fs::path& out) {
  parallel::SweepRequest req;
  req.search_roots = {search.string()};
  req.analyze.out = out.string();
  req.analyze.knowledge_dir = ascprof::testing::knowledge_dir().string();
  req.analyze.progress = parallel::ProgressMode::kNone;
  req.analyze.report.mode = "summary";
  req.analyze.report.skip_html = true;
  return req;
}

// Rollup rows as "root|status|rank_count|event_count|step_count" (paths of OUT differ between runs).
std::vector<std::string> rollup_rows(const fs::path& csv) {
  auto t = report::read_table(csv);
  EXPECT_TRUE(t.ok());
  std::vector<std::string> out;
  for (size_t i = 0; t.ok() && i < t->rows.size(); ++i)
    out.push_back(t->cell(i, "root") + "|" + t->cell(i, "status") + "|" + t->cell(i, "rank_count") + "|" +
                  t->cell(i, "event_count") + "|" + t->cell(i, "step_count") + "|" + t->cell(i, "top_step_class_id") + "|" +
                  t->cell(i, "wall_ms_sum") + "|" + t->cell(i, "diagnosis_counts") + "|" + t->cell(i, "block_kind_wall_ms_sum") +
                  "|" + t->cell(i, "hccl_total_ms") + "|" + t->cell(i, "union_layers"));
  return out;
}

TEST(SweepMpi, UnevenRootsBrokenRootReuseAndShards) {
  mpi::communicator world;
  const fs::path dir = shared_dir(world, "sweep");
  const fs::path search = dir / "captures";
  if (world.rank() == 0) {
    generate(search / "big_moe", "moe_mla_decode", 5, 3);
    generate(search / "small_dense", "dense_gqa", 2, 2);
    generate(search / "train", "training", 4, 2);
    // three more of uneven size, one nested deeper: 6 good roots in all (enough for uneven shares at
    // 2 and 3 processes; each root costs seconds under the sanitizers)
    const char* const scenarios[] = {"glm5_mtp", "dense_gqa", "moe_mla_decode"};
    for (int i = 0; i < 3; ++i)
      generate(search / (std::string(i == 1 ? "group/nested_" : "extra_") + std::to_string(i)), scenarios[i], 1 + (i * 5) % 6,
               2 + i % 3);
    // a root whose only rank is unreadable: recorded with its error, the others still analysed
    ascprof::testing::write_text(search / "broken" / "x_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv",
                                 "not,a\nkernel table\n");
  }
  world.barrier();

  auto whole = parallel::run_sweep(world, request(search, dir / "out"));
  EXPECT_EQ(whole.exit_code, 1) << whole.json;  // partial: one root failed
  if (world.rank() == 0) {
    auto text = read_file(dir / "out" / "sweep_summary.json");
    ASSERT_TRUE(text.ok());
    EXPECT_NE(text->find("\"root_count\": 7"), std::string::npos) << *text;
    EXPECT_NE(text->find("\"status_counts\": {\"error\":1,\"ok\":6}"), std::string::npos) << *text;
    const auto rows = rollup_rows(dir / "out" / "sweep_class_rollup.csv");
    ASSERT_EQ(rows.size(), 7u);
    // the same table in HDF5, readable without this tool
    const std::string dump = "h5dump -d /rollup " + (dir / "out" / "sweep_class_rollup.h5").string() + " > " +
                             (dir / "rollup_dump.txt").string();
    ASSERT_EQ(std::system(dump.c_str()), 0) << dump;
    auto dumped = read_file(dir / "rollup_dump.txt");
    ASSERT_TRUE(dumped.ok());
    EXPECT_NE(dumped->find("( 7 )"), std::string::npos) << *dumped;  // one record per root
    EXPECT_NE(dumped->find("H5T_IEEE_F64LE \"rank_count\""), std::string::npos) << *dumped;  // numbers as numbers
    EXPECT_EQ(rows[0].rfind((search / "big_moe").string() + "|ok|5|", 0), 0u) << rows[0];
    EXPECT_EQ(rows[1].rfind((search / "broken").string() + "|error|", 0), 0u) << rows[1];
    // the same sweep by one process gives the same rollup (with one process that run was this one)
    if (world.size() > 1) {
      mpi::communicator self(MPI_COMM_SELF, mpi::comm_attach);
      auto single = parallel::run_sweep(self, request(search, dir / "single"));
      EXPECT_EQ(single.exit_code, 1) << single.json;
      EXPECT_EQ(rollup_rows(dir / "single" / "sweep_class_rollup.csv"), rows);
    }
    for (const char* r : {"big_moe", "small_dense", "train"})
      EXPECT_TRUE(fs::exists(dir / "out" / layout::root_slug((search / r).string()) / "report" / "report.md")) << r;
  }

  // a rerun reuses the six finished roots and retries only the broken one
  auto req = request(search, dir / "out");
  req.reuse_existing = true;
  auto again = parallel::run_sweep(world, req);
  EXPECT_EQ(again.exit_code, 1);
  if (world.rank() == 0) {
    EXPECT_NE(again.json.find("\"roots_reused\":6"), std::string::npos) << again.json;
  }

  // two shards then the rollup: the same rows as the whole sweep
  for (uint32_t i = 0; i < 2; ++i) {
    auto shard = request(search, dir / "sharded");
    shard.shard_index = i;
    shard.shard_count = 2;
    parallel::run_sweep(world, shard);
  }
  auto rollup = request(search, dir / "sharded");
  rollup.rollup = true;
  if (world.rank() == 0) {  // a missing shard: nothing merged, said so
    fs::rename(report::shard_file(dir / "sharded", 1, 2), dir / "shard1.json");
  }
  world.barrier();
  auto incomplete = parallel::run_sweep(world, rollup);
  EXPECT_EQ(incomplete.exit_code, 3);
  if (world.rank() == 0) {
    EXPECT_NE(incomplete.json.find("shards 1 of 2 have no result yet"), std::string::npos) << incomplete.json;
    fs::rename(dir / "shard1.json", report::shard_file(dir / "sharded", 1, 2));
  }
  world.barrier();
  auto merged = parallel::run_sweep(world, rollup);
  EXPECT_EQ(merged.exit_code, 1) << merged.json;
  if (world.rank() == 0) {
    EXPECT_TRUE(fs::exists(report::shard_file(dir / "sharded", 0, 2)));
    EXPECT_TRUE(fs::exists(report::shard_file(dir / "sharded", 1, 2)));
    EXPECT_EQ(rollup_rows(dir / "sharded" / "sweep_class_rollup.csv"), rollup_rows(dir / "out" / "sweep_class_rollup.csv"));
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace ascprof

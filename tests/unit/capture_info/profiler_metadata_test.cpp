#include <gtest/gtest.h>

#include <string>

#include "ascprof/importers/capture_info.hpp"
#include "support/test_support.hpp"

namespace ascprof::importers {
namespace {

namespace fs = std::filesystem;
using testing::real_fixtures_dir;
using testing::ScratchDir;
using testing::write_text;

std::string arg(const model::ProfilerMetadata& m, std::string_view key) {
  for (const auto& [k, v] : m.distributed_args)
    if (k == key) return v;
  return "<absent>";
}

TEST(ProfilerMetadata, RealEightRankGroupsWithHashes) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  Stats stats;
  auto meta = read_profiler_metadata(real_fixtures_dir() / "single-files/e2_profiler_metadata_8rank_groups.json", stats);
  ASSERT_TRUE(meta.ok()) << meta.status().to_string();
  // 21 entries in parallel_group_info (counted with Python json.load), in file order.
  ASSERT_EQ(meta->groups.size(), 21u);
  const auto& g0 = meta->groups[0];
  EXPECT_EQ(g0.comm_name, "10.174.216.241%enp189s0f1_55000_0_1738895486152654");
  EXPECT_EQ(g0.group_name, "default_group");
  EXPECT_EQ(g0.group_rank, 0);
  EXPECT_EQ(g0.global_ranks, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(g0.hash, double_hash(g0.comm_name));
  // The tp group: its hash is the documented E2 example (input-formats.md §1).
  const auto& tp = meta->groups[6];
  EXPECT_EQ(tp.comm_name, "10.174.216.241%enp189s0f1_55000_0_1738895506630464");
  EXPECT_EQ(tp.group_name, "tp");
  EXPECT_EQ(tp.global_ranks, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(tp.hash, 6960437680420871035ULL);
  EXPECT_EQ(meta->groups[3].group_name, "cp");
  EXPECT_EQ(meta->groups[3].global_ranks, (std::vector<int64_t>{0}));
  EXPECT_EQ(meta->groups[20].group_name, "pp_new_stream");
  for (const auto& g : meta->groups) EXPECT_EQ(g.hash, double_hash(g.comm_name)) << g.comm_name;

  ASSERT_EQ(meta->distributed_args.size(), 8u);
  EXPECT_EQ(arg(*meta, "tensor_model_parallel_size"), "2");
  EXPECT_EQ(arg(*meta, "pipeline_model_parallel_size"), "2");
  EXPECT_EQ(arg(*meta, "data_parallel_size"), "2");
  EXPECT_EQ(arg(*meta, "sequence_parallel"), "true");
  EXPECT_EQ(arg(*meta, "world_size"), "8");
  EXPECT_EQ(stats.count(Stat::meta_bad_group), 0u);
}

TEST(ProfilerMetadata, RealE2LevelFilesHaveNoGroups) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  for (const char* level : {"e2-cnn-level0", "e2-cnn-level1", "e2-cnn-level2"}) {
    Stats stats;
    auto meta = read_profiler_metadata(real_fixtures_dir() / level / "rank0_ascend_pt/profiler_metadata.json", stats);
    ASSERT_TRUE(meta.ok()) << level << ": " << meta.status().to_string();
    EXPECT_TRUE(meta->groups.empty()) << level;
    EXPECT_TRUE(meta->distributed_args.empty()) << level;
  }
}

TEST(ProfilerMetadata, E3StyleNamesAndMalformedEntries) {
  ScratchDir dir("meta");
  const fs::path p = dir / "profiler_metadata.json";
  write_text(p, R"J({"parallel_group_info": {
      "group_name_0": {"group_name": "dp", "group_rank": 0, "global_ranks": [0, 2]},
      "group_name_19": {"group_name": "pp", "group_rank": "1", "global_ranks": [1, 3]},
      "group_name_5": 7,
      "group_name_6": {"group_name": "tp", "group_rank": 0},
      "group_name_7": {"group_name": "tp", "group_rank": 0, "global_ranks": [0, "x"]},
      "group_name_8": {"group_name": "cp", "group_rank": 0, "global_ranks": "0,1"},
      "group_name_9": {"global_ranks": [4]}},
    "distributed_args": {"rank": 3, "note": "hi", "nested": {"a": 1}}, "trace_id": "abc"})J");
  Stats stats;
  auto meta = read_profiler_metadata(p, stats);
  ASSERT_TRUE(meta.ok()) << meta.status().to_string();
  ASSERT_EQ(meta->groups.size(), 3u);
  EXPECT_EQ(meta->groups[0].comm_name, "group_name_0");
  EXPECT_EQ(meta->groups[0].hash, 5862276093215481612ULL);
  EXPECT_EQ(meta->groups[1].comm_name, "group_name_19");
  EXPECT_EQ(meta->groups[1].hash, 3985310405473756128ULL);
  EXPECT_EQ(meta->groups[1].group_rank, 1);  // numeric string tolerated
  EXPECT_EQ(meta->groups[2].comm_name, "group_name_9");
  EXPECT_EQ(meta->groups[2].group_name, "");
  EXPECT_EQ(meta->groups[2].group_rank, -1);
  EXPECT_EQ(stats.count(Stat::meta_bad_group), 4u);  // 5: not an object, 6: no ranks, 7: "x", 8: not an array
  bool saw_x = false;
  for (const auto& s : stats.samples(Stat::meta_bad_group))
    saw_x |= s.find("parallel_group_info.group_name_7: global_ranks holds a value") != std::string::npos;
  EXPECT_TRUE(saw_x);
  EXPECT_EQ(arg(*meta, "rank"), "3");
  EXPECT_EQ(arg(*meta, "note"), "hi");
  EXPECT_EQ(arg(*meta, "nested"), "<absent>");
  EXPECT_EQ(stats.count(Stat::meta_bad_value), 1u);
}

TEST(ProfilerMetadata, MissingTruncatedAndWrongTop) {
  ScratchDir dir("meta");
  Stats stats;
  auto missing = read_profiler_metadata(dir / "profiler_metadata.json", stats);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kIo);

  write_text(dir / "t.json", R"J({"parallel_group_info": {"group_name_0": {"group_name": "dp", "global_ranks": [0,)J");
  auto truncated = read_profiler_metadata(dir / "t.json", stats);
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.status().code(), ErrorCode::kParse);
  EXPECT_NE(truncated.status().message().find("t.json:byte "), std::string::npos) << truncated.status().message();

  write_text(dir / "s.json", R"J("just a string")J");
  auto str = read_profiler_metadata(dir / "s.json", stats);
  ASSERT_FALSE(str.ok());
  EXPECT_EQ(str.status().code(), ErrorCode::kSchema);
}

}  // namespace
}  // namespace ascprof::importers

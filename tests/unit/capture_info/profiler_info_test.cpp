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

TEST(DoubleHash, DocumentedVectors) {
  // input-formats.md §1, verified there against real E3 and E2 captures.
  EXPECT_EQ(double_hash("group_name_0"), 5862276093215481612ULL);
  EXPECT_EQ(double_hash("group_name_19"), 3985310405473756128ULL);
  EXPECT_EQ(double_hash("10.174.216.241%enp189s0f1_55000_0_1738895506630464"), 6960437680420871035ULL);
  EXPECT_EQ(double_hash(""), 0u);
  // "a" = 97 in both halves.
  EXPECT_EQ(double_hash("a"), (97ULL << 32) | 97ULL);
  // Python hashes code points: "é" (U+00E9, 2 UTF-8 bytes) must hash like the single value 0xE9.
  EXPECT_EQ(double_hash("\xC3\xA9"), (0xE9ULL << 32) | 0xE9ULL);
}

TEST(ProfilerInfoName, RankFromFileName) {
  EXPECT_EQ(rank_from_profiler_info_name("profiler_info_0.json"), 0);
  EXPECT_EQ(rank_from_profiler_info_name("profiler_info_13.json"), 13);
  EXPECT_EQ(rank_from_profiler_info_name("profiler_info_1023.json"), 1023);
  EXPECT_FALSE(rank_from_profiler_info_name("profiler_info.json"));
  EXPECT_FALSE(rank_from_profiler_info_name("profiler_info_.json"));
  EXPECT_FALSE(rank_from_profiler_info_name("profiler_info_x.json"));
  EXPECT_FALSE(rank_from_profiler_info_name("profiler_info_-1.json"));
  EXPECT_FALSE(rank_from_profiler_info_name("profiler_info_1.json.bak"));
  EXPECT_FALSE(rank_from_profiler_info_name("profiler_info_99999999999999999999.json"));
}

TEST(ProfilerInfo, RealE2Level1Rank0) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  Stats stats;
  auto info = read_profiler_info(real_fixtures_dir() / "e2-cnn-level1/rank0_ascend_pt/profiler_info_0.json", stats);
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  EXPECT_EQ(info->rank_id_from_name, 0);
  EXPECT_EQ(info->rank_id_from_body, 0);
  EXPECT_EQ(info->profiler_level, "Level1");
  EXPECT_EQ(info->aic_metrics, "ACL_AICORE_PIPE_UTILIZATION");
  EXPECT_TRUE(info->record_shapes);
  EXPECT_TRUE(info->profile_memory);
  EXPECT_TRUE(info->with_stack);
  EXPECT_EQ(info->export_type, "text");
  EXPECT_EQ(info->schedule_wait, 0);
  EXPECT_EQ(info->schedule_active, 1);
  EXPECT_EQ(info->schedule_warmup, 10);
  EXPECT_EQ(info->schedule_repeat, 1);
  EXPECT_EQ(info->schedule_skip_first, 40);
  EXPECT_EQ(info->syscnt_freq_mhz, 100);
  EXPECT_EQ(info->start_cnt, 17238197612056);
  EXPECT_EQ(info->start_monotonic_ns, 172163581670080);
  EXPECT_EQ(info->collection_time_end_ns, 1736408884023552840);
  EXPECT_EQ(info->monotonic_time_end_ns, 172164265133640);
  EXPECT_EQ(info->torch_npu_version, "");  // this era did not write it
  EXPECT_EQ(stats.count(Stat::info_bad_value), 0u);
  EXPECT_EQ(stats.count(Stat::info_bad_rank_id), 0u);
}

TEST(ProfilerInfo, RealE1UnderscoreScheduleKeys) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  Stats stats;
  auto info = read_profiler_info(real_fixtures_dir() / "e1-2023-two-rank/test_rank_1/profiler_info_1.json", stats);
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  EXPECT_EQ(info->rank_id_from_name, 1);
  EXPECT_EQ(info->rank_id_from_body, 1);
  EXPECT_EQ(info->profiler_level, "Level1");
  EXPECT_EQ(info->aic_metrics, "ACL_AICORE_L0B_AND_WIDTH");
  EXPECT_EQ(info->schedule_wait, 1);
  EXPECT_EQ(info->schedule_warmup, 0);
  EXPECT_EQ(info->schedule_active, 1);
  EXPECT_EQ(info->schedule_repeat, 1);
  EXPECT_EQ(info->schedule_skip_first, 1);
  EXPECT_EQ(info->syscnt_freq_mhz, -1);  // no start_info in 2023
  EXPECT_EQ(info->collection_time_end_ns, 1695115379274664320);
  EXPECT_EQ(stats.count(Stat::info_bad_value), 0u);
}

TEST(ProfilerInfo, E3StringRankListExportAndVersions) {
  ScratchDir dir("info");
  const fs::path p = dir / "profiler_info_3.json";
  write_text(p, R"J({"config": {"common_config": {"schedule": {"wait": 1, "active": 2, "warmup": 1, "repeat": 1,
    "skip_first": 5}, "record_shapes": true},
    "experimental_config": {"_profiler_level": "Level2", "_aic_metrics": "ACL_AICORE_PIPE_UTILIZATION",
    "_export_type": ["text", "db"], "_gc_detect_threshold": null}},
    "torch_npu_version": "2.7.1", "cann_version": "8.3.RC1", "rank_id": "3"})J");
  Stats stats;
  auto info = read_profiler_info(p, stats);
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  EXPECT_EQ(info->rank_id_from_name, 3);
  EXPECT_EQ(info->rank_id_from_body, 3);
  EXPECT_EQ(info->profiler_level, "Level2");
  EXPECT_EQ(info->export_type, "text,db");
  EXPECT_EQ(info->torch_npu_version, "2.7.1");
  EXPECT_EQ(info->cann_version, "8.3.RC1");
  EXPECT_EQ(info->schedule_skip_first, 5);
  EXPECT_EQ(stats.count(Stat::info_bad_value), 0u);
}

TEST(ProfilerInfo, NoRankAnywhereAndBadRanks) {
  ScratchDir dir("info");
  write_text(dir / "a/profiler_info.json", R"J({"config": {}})J");
  write_text(dir / "b/profiler_info.json", R"J({"rank_id": "abc"})J");
  write_text(dir / "c/profiler_info.json", R"J({"rank_id": 2.5})J");
  write_text(dir / "d/profiler_info.json", R"J({"rank_id": -1})J");
  write_text(dir / "e/profiler_info.json", R"J({"rank_id": null})J");
  write_text(dir / "f/profiler_info.json", R"J({"rank_id": 7})J");
  Stats stats;
  for (const char* sub : {"a", "b", "c", "d", "e"}) {
    auto info = read_profiler_info(dir / sub / "profiler_info.json", stats);
    ASSERT_TRUE(info.ok()) << sub << ": " << info.status().to_string();
    EXPECT_FALSE(info->rank_id_from_name) << sub;
    EXPECT_FALSE(info->rank_id_from_body) << sub;
  }
  EXPECT_EQ(stats.count(Stat::info_bad_rank_id), 2u);  // "abc" and 2.5; -1 and null mean "unknown"
  auto f = read_profiler_info(dir / "f/profiler_info.json", stats);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->rank_id_from_body, 7);
}

TEST(ProfilerInfo, WrongTypesCountedNotFatal) {
  ScratchDir dir("info");
  const fs::path p = dir / "profiler_info_0.json";
  write_text(p, R"J({"config": {"common_config": {"record_shapes": "yes", "schedule": {"_wait": "1", "_active": 1}},
    "experimental_config": {"_profiler_level": 1, "_aic_metrics": "ACL_AICORE_NONE"}}, "cann_version": [1]})J");
  Stats stats;
  auto info = read_profiler_info(p, stats);
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  EXPECT_EQ(info->schedule_active, 1);
  EXPECT_EQ(info->schedule_wait, -1);
  EXPECT_EQ(info->profiler_level, "");
  EXPECT_EQ(info->aic_metrics, "ACL_AICORE_NONE");
  EXPECT_EQ(stats.count(Stat::info_bad_value), 4u);  // record_shapes, _wait, _profiler_level, cann_version
  ASSERT_FALSE(stats.samples(Stat::info_bad_value).empty());
  EXPECT_NE(stats.samples(Stat::info_bad_value)[0].find("profiler_info_0.json:key record_shapes: not true/false"),
            std::string::npos)
      << stats.samples(Stat::info_bad_value)[0];
}

TEST(ProfilerInfo, BrokenFiles) {
  ScratchDir dir("info");
  Stats stats;
  auto missing = read_profiler_info(dir / "profiler_info_0.json", stats);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kIo);
  EXPECT_NE(missing.status().message().find("profiler_info_0.json"), std::string::npos);

  write_text(dir / "t/profiler_info_1.json", R"J({"config": {"common_config": {"schedule": {"wait": 1, )J");
  auto truncated = read_profiler_info(dir / "t/profiler_info_1.json", stats);
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.status().code(), ErrorCode::kParse);
  EXPECT_NE(truncated.status().message().find("t/profiler_info_1.json:byte "), std::string::npos)
      << truncated.status().message();
  EXPECT_NE(truncated.status().message().find("truncated"), std::string::npos) << truncated.status().message();

  write_text(dir / "s/profiler_info_2.json", "[0]");
  auto array = read_profiler_info(dir / "s/profiler_info_2.json", stats);
  ASSERT_FALSE(array.ok());
  EXPECT_EQ(array.status().code(), ErrorCode::kSchema);
}

}  // namespace
}  // namespace ascprof::importers

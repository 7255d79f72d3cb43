#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "ascprof/importers/discovery.hpp"
#include "support/test_support.hpp"

namespace ascprof::importers {
namespace {

namespace fs = std::filesystem;
using testing::real_fixtures_dir;
using testing::ScratchDir;
using testing::write_text;

constexpr std::string_view kKd = "Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us)\n";

// A minimal rank folder: ASCEND_PROFILER_OUTPUT/kernel_details.csv plus, when rank >= 0,
// profiler_info_<rank>.json.
void make_rank(const fs::path& dir, int rank) {
  write_text(dir / "ASCEND_PROFILER_OUTPUT/kernel_details.csv", kKd);
  if (rank >= 0) write_text(dir / ("profiler_info_" + std::to_string(rank) + ".json"), "{\"rank_id\": " + std::to_string(rank) + "}");
}

std::vector<std::string> ids(const CaptureRoot& r) {
  std::vector<std::string> out;
  for (const auto& rf : r.ranks) out.push_back(rf.rank_id);
  return out;
}

uint64_t size_of(const fs::path& p) { return p.empty() ? 0 : static_cast<uint64_t>(fs::file_size(p)); }

TEST(DiscoveryReal, E2CnnLevelsRankIdsDirsAndFiles) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  for (const char* level : {"e2-cnn-level0", "e2-cnn-level1", "e2-cnn-level2"}) {
    SCOPED_TRACE(level);
    Stats stats;
    auto root = discover_capture_root(real_fixtures_dir() / level, stats);
    ASSERT_TRUE(root.ok()) << root.status().to_string();
    ASSERT_EQ(ids(*root), (std::vector<std::string>{"rank0", "rank1"}));
    EXPECT_TRUE(root->failed.empty());
    EXPECT_TRUE(root->duplicates.empty());
    EXPECT_TRUE(root->missing_rank_ids.empty());
    for (int i = 0; i < 2; ++i) {
      const RankFolder& r = root->ranks[i];
      EXPECT_EQ(r.rank_dir, "rank" + std::to_string(i) + "_ascend_pt");
      EXPECT_EQ(r.rank_number, i);
      EXPECT_EQ(r.id_source, RankIdSource::kInfoFileName);
      EXPECT_EQ(r.files.profiler_info.filename(), "profiler_info_" + std::to_string(i) + ".json");
      EXPECT_EQ(r.files.kernel_details.parent_path().filename(), "ASCEND_PROFILER_OUTPUT");
      EXPECT_FALSE(r.files.trace_view.empty());
      EXPECT_FALSE(r.files.step_trace_time.empty());
      EXPECT_FALSE(r.files.profiler_metadata.empty());
      EXPECT_FALSE(r.folder_timestamp);  // "rank0_ascend_pt" has no timestamp field
      const bool has_comm = std::string(level) != "e2-cnn-level0";  // Level0 writes no communication files
      EXPECT_EQ(r.files.communication.empty(), !has_comm);
      EXPECT_EQ(r.files.communication_matrix.empty(), !has_comm);
      const RankFiles& f = r.files;
      uint64_t sum = 0;
      for (const fs::path* p : {&f.kernel_details, &f.trace_view, &f.communication, &f.communication_matrix,
                                &f.step_trace_time, &f.profiler_info, &f.profiler_metadata, &f.op_statistic,
                                &f.api_statistic})
        sum += size_of(*p);
      EXPECT_EQ(r.input_bytes, sum);
      EXPECT_GT(r.input_bytes, 1000000u);  // trace_view.json alone is 1.8+ MB
    }
    EXPECT_EQ(stats.count(Stat::info_rank_from_dirname), 0u);
  }
}

TEST(DiscoveryReal, E1TwoRankNamesFromProfilerInfo) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  Stats stats;
  auto root = discover_capture_root(real_fixtures_dir() / "e1-2023-two-rank", stats);
  ASSERT_TRUE(root.ok()) << root.status().to_string();
  ASSERT_EQ(ids(*root), (std::vector<std::string>{"rank0", "rank1"}));
  EXPECT_EQ(root->ranks[0].rank_dir, "test_rank_0");
  EXPECT_EQ(root->ranks[1].rank_dir, "test_rank_1");
  EXPECT_EQ(root->ranks[1].id_source, RankIdSource::kInfoFileName);
  EXPECT_TRUE(root->ranks[1].files.profiler_metadata.empty());  // test_rank_1 has none
  EXPECT_TRUE(root->ranks[1].files.trace_view.empty());
  EXPECT_FALSE(root->ranks[1].files.communication.empty());
}

TEST(DiscoveryReal, RootIsARankFolderOrAKernelDetailsFile) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  Stats stats;
  auto one = discover_capture_root(real_fixtures_dir() / "e2-cnn-level1/rank1_ascend_pt", stats);
  ASSERT_TRUE(one.ok()) << one.status().to_string();
  ASSERT_EQ(ids(*one), (std::vector<std::string>{"rank1"}));
  EXPECT_EQ(one->ranks[0].rank_dir, "rank1_ascend_pt");

  const fs::path kd = real_fixtures_dir() / "e2-cnn-level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
  auto file = discover_capture_root(kd, stats);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  ASSERT_EQ(ids(*file), (std::vector<std::string>{"rank0"}));
  EXPECT_EQ(file->ranks[0].rank_dir, "rank0_ascend_pt");
  EXPECT_EQ(file->ranks[0].files.kernel_details, kd);
  EXPECT_FALSE(file->ranks[0].files.communication.empty());
}

TEST(Discovery, SortedByRankNumberNotFolderName) {
  ScratchDir dir("disc");
  make_rank(dir / "w_1_20250101000000000_ascend_pt", 10);
  make_rank(dir / "w_2_20250101000000000_ascend_pt", 2);
  make_rank(dir / "w_3_20250101000000000_ascend_pt", 1);
  Stats stats;
  auto root = discover_capture_root(dir.path(), stats);
  ASSERT_TRUE(root.ok()) << root.status().to_string();
  ASSERT_EQ(ids(*root), (std::vector<std::string>{"rank1", "rank2", "rank10"}));
  EXPECT_EQ(root->ranks[2].rank_dir, "w_1_20250101000000000_ascend_pt");
  EXPECT_EQ(root->ranks[0].folder_timestamp, 20250101000000000);
  // 1, 2, 10: 3..9 are gaps
  EXPECT_EQ(root->missing_rank_ids, (std::vector<int64_t>{3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(stats.count(Stat::disc_missing_rank), 7u);
}

TEST(Discovery, DuplicateRankKeepsNewestFolder) {
  ScratchDir dir("disc");
  make_rank(dir / "hostA_100_20250102120000000_ascend_pt", 3);  // newer, but sorts first by name
  make_rank(dir / "hostB_200_20250101120000000_ascend_pt", 3);
  make_rank(dir / "hostC_300_20250101120000000_ascend_pt", 4);
  Stats stats;
  auto root = discover_capture_root(dir.path(), stats);
  ASSERT_TRUE(root.ok()) << root.status().to_string();
  ASSERT_EQ(ids(*root), (std::vector<std::string>{"rank3", "rank4"}));
  EXPECT_EQ(root->ranks[0].rank_dir, "hostA_100_20250102120000000_ascend_pt");
  ASSERT_EQ(root->duplicates.size(), 1u);
  EXPECT_EQ(root->duplicates[0].rank_id, "rank3");
  EXPECT_EQ(root->duplicates[0].dropped.filename(), "hostB_200_20250101120000000_ascend_pt");
  EXPECT_EQ(root->duplicates[0].kept.filename(), "hostA_100_20250102120000000_ascend_pt");
  EXPECT_EQ(root->duplicates[0].reason, "folder timestamp 20250101120000000 older than 20250102120000000");
  EXPECT_EQ(stats.count(Stat::disc_duplicate_rank), 1u);
}

TEST(Discovery, DuplicateRankWithoutTimestampsKeepsLaterPath) {
  ScratchDir dir("disc");
  make_rank(dir / "copy_a", 0);
  make_rank(dir / "copy_b", 0);
  Stats stats;
  auto root = discover_capture_root(dir.path(), stats);
  ASSERT_TRUE(root.ok()) << root.status().to_string();
  ASSERT_EQ(root->ranks.size(), 1u);
  EXPECT_EQ(root->ranks[0].rank_dir, "copy_b");
  ASSERT_EQ(root->duplicates.size(), 1u);
  EXPECT_EQ(root->duplicates[0].reason, "no folder timestamp; kept the later path");
}

TEST(Discovery, GapInRanks) {
  ScratchDir dir("disc");
  for (int r : {0, 1, 3}) make_rank(dir / ("rank" + std::to_string(r) + "_ascend_pt"), r);
  Stats stats;
  auto root = discover_capture_root(dir.path(), stats);
  ASSERT_TRUE(root.ok()) << root.status().to_string();
  EXPECT_EQ(ids(*root), (std::vector<std::string>{"rank0", "rank1", "rank3"}));
  EXPECT_EQ(root->missing_rank_ids, (std::vector<int64_t>{2}));
  EXPECT_EQ(stats.count(Stat::disc_missing_rank), 1u);
}

TEST(Discovery, RankFromBodyStringAndInt) {
  ScratchDir dir("disc");
  write_text(dir / "alpha/ASCEND_PROFILER_OUTPUT/kernel_details.csv", kKd);
  write_text(dir / "alpha/profiler_info.json", R"J({"rank_id": "5"})J");
  write_text(dir / "beta/ASCEND_PROFILER_OUTPUT/kernel_details.csv", kKd);
  write_text(dir / "beta/profiler_info.json", R"J({"rank_id": 6})J");
  Stats stats;
  auto root = discover_capture_root(dir.path(), stats);
  ASSERT_TRUE(root.ok()) << root.status().to_string();
  ASSERT_EQ(ids(*root), (std::vector<std::string>{"rank5", "rank6"}));
  EXPECT_EQ(root->ranks[0].id_source, RankIdSource::kInfoBody);
  EXPECT_EQ(root->ranks[1].id_source, RankIdSource::kInfoBody);
  EXPECT_EQ(root->ranks[0].rank_dir, "alpha");
  EXPECT_EQ(stats.count(Stat::info_rank_from_body), 2u);
}

TEST(Discovery, RankFromDirNameThenOrdinal) {
  ScratchDir dir("disc");
  make_rank(dir / "job_rank_7", -1);
  make_rank(dir / "dp0_pp1_tp0_dcp0_ep0_rank12", -1);
  make_rank(dir / "Device-4", -1);
  make_rank(dir / "mystery", -1);
  write_text(dir / "x/profiler_info.json", R"J({"config": {}})J");  // body without rank_id: falls to ordinal
  Stats stats;
  auto root = discover_capture_root(dir.path(), stats);
  ASSERT_TRUE(root.ok()) << root.status().to_string();
  // Path order: Device-4, dp0_..., job_rank_7, mystery, x -> ordinals 0..4
  ASSERT_EQ(ids(*root), (std::vector<std::string>{"rank7", "rank12", "device_4", "rank_3", "rank_4"}));
  EXPECT_EQ(root->ranks[0].id_source, RankIdSource::kDirName);
  EXPECT_EQ(root->ranks[2].device_id, 4);
  EXPECT_FALSE(root->ranks[2].rank_number);
  EXPECT_EQ(root->ranks[3].id_source, RankIdSource::kOrdinal);
  EXPECT_EQ(root->ranks[3].rank_dir, "mystery");
  EXPECT_EQ(stats.count(Stat::info_rank_from_dirname), 3u);
  EXPECT_EQ(stats.count(Stat::info_rank_from_ordinal), 2u);
  EXPECT_EQ(root->missing_rank_ids.size(), 4u);  // 8..11
}

TEST(Discovery, UnusableRankFoldersAreReportedOthersContinue) {
  ScratchDir dir("disc");
  make_rank(dir / "rank0_ascend_pt", 0);
  make_rank(dir / "rank1_ascend_pt", 1);
  fs::create_symlink(dir / "gone", dir / "rank2_ascend_pt");          // dangling symlink
  write_text(dir / "host_1_20250101000000000_ascend_pt", "not a folder");  // a file named like a rank folder
  fs::create_directories(dir / "rank4");                               // empty folder named like a rank
  bool chmod_tested = false;
  if (::geteuid() != 0) {  // root can read anything, so a chmod 000 folder only fails for other users
    make_rank(dir / "rank5_ascend_pt", 5);
    ASSERT_EQ(::chmod((dir / "rank5_ascend_pt").c_str(), 0), 0);
    chmod_tested = true;
  }
  Stats stats;
  auto root = discover_capture_root(dir.path(), stats);
  if (chmod_tested) ::chmod((dir / "rank5_ascend_pt").c_str(), 0755);
  ASSERT_TRUE(root.ok()) << root.status().to_string();
  EXPECT_EQ(ids(*root), (std::vector<std::string>{"rank0", "rank1"}));
  ASSERT_EQ(root->failed.size(), chmod_tested ? 4u : 3u);
  // sorted: numeric ids first (2, 4[, 5]), then the unnamed one
  EXPECT_EQ(root->failed[0].rank_id, "rank2");
  EXPECT_EQ(root->failed[0].error, "dangling symlink (target does not exist)");
  EXPECT_EQ(root->failed[1].rank_id, "rank4");
  EXPECT_EQ(root->failed[1].error, "no ASCEND_PROFILER_OUTPUT/, kernel_details.csv or profiler_info*.json in the folder");
  if (chmod_tested) {
    EXPECT_EQ(root->failed[2].rank_id, "rank5");
    EXPECT_NE(root->failed[2].error.find("cannot list folder: "), std::string::npos) << root->failed[2].error;
  }
  EXPECT_EQ(root->failed.back().rank_dir, "host_1_20250101000000000_ascend_pt");
  EXPECT_EQ(root->failed.back().error, "not a folder");
  EXPECT_EQ(stats.count(Stat::disc_rank_failed), root->failed.size());
  // Failed ranks with known ids close the gap: 0, 1, 2(failed), 4(failed) -> only 3 missing.
  EXPECT_EQ(root->missing_rank_ids, (std::vector<int64_t>{3}));
}

TEST(Discovery, SymlinkLoopInRootTerminates) {
  ScratchDir dir("disc");
  make_rank(dir / "rank0_ascend_pt", 0);
  make_rank(dir / "group/sub/rank1_ascend_pt", 1);
  fs::create_directory_symlink(dir.path(), dir / "group/sub/loop");   // back to the root
  fs::create_directory_symlink(dir / "group", dir / "group/sub/up");  // back to an ancestor
  fs::create_directory_symlink(dir / "rank0_ascend_pt", dir / "alias_of_rank0");
  Stats stats;
  auto root = discover_capture_root(dir.path(), stats);
  ASSERT_TRUE(root.ok()) << root.status().to_string();
  EXPECT_EQ(ids(*root), (std::vector<std::string>{"rank0", "rank1"}));
  EXPECT_TRUE(root->duplicates.empty());
  EXPECT_GE(stats.count(Stat::disc_revisited_dir), 3u);
}

TEST(Discovery, EmptyAndMissingRoots) {
  ScratchDir dir("disc");
  fs::create_directories(dir / "nothing/here");
  Stats stats;
  auto empty = discover_capture_root(dir.path(), stats);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), ErrorCode::kSchema);
  EXPECT_NE(empty.status().message().find("no rank folders found"), std::string::npos);
  auto missing = discover_capture_root(dir / "absent", stats);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kIo);
  EXPECT_NE(missing.status().message().find("absent"), std::string::npos);
}

TEST(Discovery, DeviceIdFromProfFolder) {
  ScratchDir dir("disc");
  make_rank(dir / "rank2_ascend_pt", 2);
  fs::create_directories(dir / "rank2_ascend_pt/PROF_000001_20250101000000000_ABCDEFGHIJKLMNOP/device_4");
  Stats stats;
  auto root = discover_capture_root(dir.path(), stats);
  ASSERT_TRUE(root.ok()) << root.status().to_string();
  ASSERT_EQ(root->ranks.size(), 1u);
  EXPECT_EQ(root->ranks[0].device_id, 4);
  EXPECT_EQ(root->ranks[0].rank_id, "rank2");
}

TEST(SweepDiscovery, CaseRootsFromKernelDetailsHits) {
  ScratchDir dir("sweep");
  make_rank(dir / "caseA/r0_ascend_pt", 0);
  make_rank(dir / "caseA/r1_ascend_pt", 1);
  write_text(dir / "caseB/kernel_details.csv", kKd);
  write_text(dir / "serving/vllm_profile/worker0/kernel_details.csv", kKd);
  make_rank(dir / "bak_old/r0_ascend_pt", 0);
  make_rank(dir / "caseC/profile_analysis/r0_ascend_pt", 0);
  make_rank(dir / "caseD.bak/rank0", 0);
  make_rank(dir / "caseE/test_rank_0", 0);
  fs::create_directory_symlink(dir.path(), dir / "caseA/loop");
  Stats stats;
  auto roots = discover_capture_roots({dir.path()}, stats);
  ASSERT_TRUE(roots.ok()) << roots.status().to_string();
  std::vector<fs::path> want = {dir / "caseA", dir / "caseB", dir / "caseE", dir / "serving/vllm_profile"};
  EXPECT_EQ(*roots, want);
  EXPECT_GE(stats.count(Stat::disc_revisited_dir), 1u);
  auto bad = discover_capture_roots({dir / "absent"}, stats);
  EXPECT_EQ(bad.status().code(), ErrorCode::kIo);
}

// The four text captures and the three database-only ones (db-cnn-level*, found by their
// ascend_pytorch_profiler_N.db: they have no kernel_details.csv).
TEST(SweepDiscovery, RealFixturesGiveSevenRoots) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  Stats stats;
  auto roots = discover_capture_roots({real_fixtures_dir()}, stats);
  ASSERT_TRUE(roots.ok()) << roots.status().to_string();
  std::vector<std::string> names;
  for (const auto& r : *roots) names.push_back(r.filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"db-cnn-level0", "db-cnn-level1", "db-cnn-level2", "e1-2023-two-rank",
                                              "e2-cnn-level0", "e2-cnn-level1", "e2-cnn-level2"}));
}

}  // namespace
}  // namespace ascprof::importers

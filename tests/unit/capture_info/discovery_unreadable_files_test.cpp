// A rank file present under its name but not readable as a file (a folder, a dangling symlink) is
// handed on as a path, so that reading it fails the rank with an io error naming it, instead of the
// rank being analysed as if the file were absent (found by tests/corpus/broken_corpus_test.py).
#include <gtest/gtest.h>

#include <string>

#include "ascprof/importers/discovery.hpp"
#include "support/test_support.hpp"

namespace ascprof::importers {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;
using testing::write_text;

TEST(DiscoveryUnreadableFiles, NonRegularEntriesAreReturnedNotDropped) {
  ScratchDir dir("disc-unreadable");
  const fs::path apo = dir / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT";
  write_text(dir / "rank0_ascend_pt" / "profiler_info_0.json", "{\"rank_id\": 0}");
  fs::create_directories(apo / "kernel_details.csv");                            // a folder
  fs::create_symlink(apo / "does-not-exist", apo / "trace_view.json");            // dangling
  write_text(apo / "communication.json", "{}");                                   // a normal file
  fs::create_directories(dir / "rank0_ascend_pt" / "step_trace_time.csv");        // a folder at the top

  Stats stats;
  auto root = discover_capture_root(dir.path(), stats);
  ASSERT_TRUE(root.ok()) << root.status().to_string();
  ASSERT_EQ(root->ranks.size(), 1u);
  const RankFiles& f = root->ranks[0].files;
  EXPECT_EQ(f.kernel_details, apo / "kernel_details.csv");
  EXPECT_EQ(f.trace_view, apo / "trace_view.json");
  EXPECT_EQ(f.communication, apo / "communication.json");
  EXPECT_EQ(f.step_trace_time, dir / "rank0_ascend_pt" / "step_trace_time.csv");
  EXPECT_TRUE(f.profiler_metadata.empty());  // truly absent stays absent
  EXPECT_TRUE(f.op_statistic.empty());
}

TEST(DiscoveryUnreadableFiles, RegularFileWinsOverNonRegularNamesake) {
  ScratchDir dir("disc-unreadable2");
  const fs::path rank = dir / "rank3_ascend_pt";
  write_text(rank / "profiler_info_3.json", "{\"rank_id\": 3}");
  fs::create_symlink(rank / "gone", rank / "trace_view.json");  // dangling at the top of the folder
  write_text(rank / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", "[]");
  write_text(rank / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", "Name,Start Time(us)\n");
  Stats stats;
  auto root = discover_capture_root(dir.path(), stats);
  ASSERT_TRUE(root.ok()) << root.status().to_string();
  ASSERT_EQ(root->ranks.size(), 1u);
  EXPECT_EQ(root->ranks[0].files.trace_view, rank / "ASCEND_PROFILER_OUTPUT" / "trace_view.json");
}

}  // namespace
}  // namespace ascprof::importers

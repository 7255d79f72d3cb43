// rank*.pt + point_map.json (issue 20): the device's profiling slots, as torch.save writes them
// (made here by a torch-free stand-in of torch.save, make_rank_pt.py), decode to the intervals the
// collector would write, keep each core's T0 and counter, flag an overflowed buffer, count unmapped
// point ids, and a damaged file or a missing map is a clear error.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "ascprof/common/files.hpp"
#include "ascprof/importers/moe_trace.hpp"
#include "support/test_support.hpp"

namespace ascprof::importers {
namespace {

namespace fs = std::filesystem;

// CMake found a python3 for the .pt stand-in (it always does where setup.sh ran: then the tests run).
bool have_python() {
  const std::string_view p = ASCPROF_PYTHON;
  return !p.empty() && p.find("NOTFOUND") == std::string_view::npos;
}
using ascprof::testing::ScratchDir;
using ascprof::testing::write_text;

// Writes `out` from a slot spec (make_rank_pt.py spec); false when Python is not there.
bool make_pt(const fs::path& spec_json, const fs::path& out) {
  const std::string cmd = std::string(ASCPROF_PYTHON) + " " + ASCPROF_MAKE_RANK_PT + " spec " + spec_json.string() + " " +
                          out.string();
  return std::system(cmd.c_str()) == 0;
}

constexpr const char* kMap = R"({"points": {
  "1": {"label": "processing", "event_type": "B", "file": "a.h", "line": 1},
  "4": {"label": "processing", "event_type": "E", "file": "a.h", "line": 9},
  "2": {"label": "dispatch-gmm1 moe-process", "event_type": "B", "file": "b.h", "line": 3},
  "3": {"label": "dispatch-gmm1 moe-process", "event_type": "E", "file": "b.h", "line": 5},
  "5": {"label": "odd", "event_type": "X"}}})";

struct Read {
  StringPool pool;
  model::MoeTraceCall call;
  Stats stats;
  std::string label(size_t i) const { return std::string(pool.view(call.intervals[i].label)); }
};

TEST(MoeRankPt, SlotsDecodeAsTheCollectorDecodesThemAndKeepT0) {
  ScratchDir dir;
  // 16 words per core (7 records fit); group 0 core 0: processing around moe-process #2 (extra word 2 << 8);
  // group 1 core 1 starts 25 cycles later with one unmapped id (99) and one of another type (5)
  write_text(dir / "spec.json", R"({"words": 16, "groups": [
    [{"t0": 1000, "records": [[1, 0, 1000], [2, 512, 1050], [3, 512, 1150], [4, 0, 1500]]}],
    [{"t0": 0, "records": []}, {"t0": 1025, "records": [[1, 0, 1025], [99, 0, 1030], [5, 0, 1040], [4, 0, 1125]]}]]})");
  write_text(dir / "point_map.json", kMap);
  if (!have_python()) GTEST_SKIP() << "no python3 found at configure time";
  ASSERT_TRUE(make_pt(dir / "spec.json", dir / "rank003.pt")) << "make_rank_pt.py failed";
  Read r;
  import_moe_rank_pt(dir / "rank003.pt", dir / "point_map.json", 3, 50.0, r.pool, r.call, r.stats);
  ASSERT_TRUE(r.call.error.empty()) << r.call.error;
  EXPECT_EQ(r.call.variant, "rank_pt");
  EXPECT_EQ(r.call.trace_rank, 3);
  ASSERT_EQ(r.call.intervals.size(), 3u);
  EXPECT_EQ(r.label(0), "processing");
  EXPECT_EQ(r.call.intervals[0].end_ns, 10000);  // 500 cycles at 50 per us
  EXPECT_EQ(r.label(1), "dispatch-gmm1 moe-process");
  EXPECT_EQ(r.call.intervals[1].index, 2);
  EXPECT_EQ(r.call.intervals[1].extra_id, 0);
  EXPECT_EQ(r.call.intervals[1].start_ns, 1000);
  EXPECT_EQ(r.call.intervals[1].end_ns, 3000);
  EXPECT_EQ(r.call.intervals[2].core_type, 1u);
  EXPECT_EQ(r.call.intervals[2].core_id, 1u);
  EXPECT_EQ(r.call.intervals[2].end_ns, 2000);
  ASSERT_EQ(r.call.cores.size(), 2u);  // the never-written slot is no core
  EXPECT_EQ(r.call.cores[0].t0_cycles, 1000);
  EXPECT_EQ(r.call.cores[1].t0_cycles, 1025);
  EXPECT_EQ(r.call.cores[1].records, 4u);
  EXPECT_EQ(r.call.unmapped_points, 2u);  // 99 is unknown, 5 is neither B nor E
  EXPECT_EQ(r.stats.count(Stat::moe_trace_unmapped), 1u);
  EXPECT_EQ(r.call.full_cores, 0u);
}

TEST(MoeRankPt, AnOverflowedBufferIsFlagged) {
  ScratchDir dir;
  // the device counted 12 records into a 16-word slot that holds 7: the newest overwrote the oldest
  write_text(dir / "spec.json", R"({"words": 16, "groups": [[{"t0": 0, "counter": 13,
    "records": [[1, 0, 0], [2, 0, 10], [3, 0, 20], [2, 0, 30], [3, 0, 40], [2, 0, 50], [3, 0, 60]]}]]})");
  write_text(dir / "point_map.json", kMap);
  if (!have_python()) GTEST_SKIP() << "no python3 found at configure time";
  ASSERT_TRUE(make_pt(dir / "spec.json", dir / "rank000.pt")) << "make_rank_pt.py failed";
  Read r;
  import_moe_rank_pt(dir / "rank000.pt", dir / "point_map.json", 0, 50.0, r.pool, r.call, r.stats);
  ASSERT_TRUE(r.call.error.empty()) << r.call.error;
  EXPECT_EQ(r.call.full_cores, 1u);
  EXPECT_EQ(r.call.cores[0].records, 12u);
  EXPECT_EQ(r.stats.count(Stat::moe_trace_core_buffer_full), 1u);
  EXPECT_EQ(r.call.unmatched_begin, 1u);  // processing's E was never stored
}

TEST(MoeRankPt, DamagedFilesAndMissingMapsAreClearErrors) {
  ScratchDir dir;
  write_text(dir / "spec.json", R"({"words": 16, "groups": [[{"t0": 0, "records": [[1, 0, 0], [4, 0, 10]]}]]})");
  write_text(dir / "point_map.json", kMap);
  if (!have_python()) GTEST_SKIP() << "no python3 found at configure time";
  ASSERT_TRUE(make_pt(dir / "spec.json", dir / "rank000.pt")) << "make_rank_pt.py failed";
  const std::string whole = *read_file(dir / "rank000.pt");
  write_text(dir / "cut.pt", whole.substr(0, whole.size() / 2));
  write_text(dir / "text.pt", "not a zip at all, just text");
  for (const char* name : {"cut.pt", "text.pt"}) {
    Read r;
    import_moe_rank_pt(dir / name, dir / "point_map.json", 0, 50.0, r.pool, r.call, r.stats);
    EXPECT_NE(r.call.error.find(name), std::string::npos) << r.call.error;
    EXPECT_TRUE(r.call.intervals.empty());
    EXPECT_EQ(r.stats.count(Stat::moe_trace_unreadable), 1u);
  }
  Read no_map;
  import_moe_rank_pt(dir / "rank000.pt", dir / "nope.json", 0, 50.0, no_map.pool, no_map.call, no_map.stats);
  EXPECT_NE(no_map.call.error.find("nope.json"), std::string::npos) << no_map.call.error;
  // the UMDK preprocessor's map has no "points" wrapper
  write_text(dir / "umdk_map.json", R"({"1": {"label": "processing", "event_type": "B"}, "4": {"label": "processing", "event_type": "E"}})");
  Read umdk;
  import_moe_rank_pt(dir / "rank000.pt", dir / "umdk_map.json", 0, 50.0, umdk.pool, umdk.call, umdk.stats);
  EXPECT_TRUE(umdk.call.error.empty()) << umdk.call.error;
  EXPECT_EQ(umdk.call.intervals.size(), 1u);
}

TEST(MoeRankPt, TheFolderListsPtFilesWithTheirPointMapLast) {
  ScratchDir dir;
  write_text(dir / "r" / "moe_trace" / "rank000.pt", "x");
  write_text(dir / "r" / "moe_trace" / "point_map.json", "{}");
  const auto files = find_moe_traces(dir / "r", "moe_trace");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].filename(), "rank000.pt");
  EXPECT_EQ(files[1].filename(), "point_map.json");
  write_text(dir / "j" / "moe_trace" / "t.json", "[]");
  write_text(dir / "j" / "moe_trace" / "point_map.json", "{}");
  EXPECT_EQ(find_moe_traces(dir / "j", "moe_trace").size(), 1u);  // no .pt: the map is no input
}

}  // namespace
}  // namespace ascprof::importers

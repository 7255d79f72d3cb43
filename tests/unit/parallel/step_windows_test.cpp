// StepWindows, the column table of step windows the coordinator aligns (issue 22): every window reads
// back as it went in, after appending tables whose rank ids and families are numbered differently,
// and after the trip through the archive that gathers and checkpoints outcomes.
#include <gtest/gtest.h>

#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "ascprof/analysis/align.hpp"

namespace ascprof::analysis {
namespace {

void expect_same(const StepWindows& got, const std::vector<StepWindow>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const StepWindowView v = got[i];
    EXPECT_EQ(v.rank_id, want[i].rank_id) << i;
    EXPECT_EQ(v.segment_id, want[i].segment_id) << i;
    EXPECT_EQ(v.step_family, want[i].step_family) << i;
    EXPECT_EQ(v.main_layer_count, want[i].main_layer_count) << i;
    EXPECT_EQ(v.start_ns, want[i].start_ns) << i;
    EXPECT_EQ(v.end_ns, want[i].end_ns) << i;
    EXPECT_EQ(v.microbatch_count, want[i].microbatch_count) << i;
  }
}

TEST(StepWindows, AppendedTablesReadBackWindowByWindow) {
  // rank b's table names "train" first, rank a's "decode" first: the appended table renumbers them;
  // a long dir-name rank id and an empty segment id take no special path
  const std::vector<StepWindow> a = {{"rank0", "seg_00aa", "decode", 61, 100, 200, 0},
                                     {"rank0", "seg_00ab", "train", 4, 250, 400, 8}};
  const std::vector<StepWindow> b = {{"node7_12345_20250101_ascend_pt", "seg_b1", "train", 4, 260, 420, 8},
                                     {"node7_12345_20250101_ascend_pt", "", "decode", 61, -5, 0, 0}};
  StepWindows all;
  all.append(StepWindows(a));
  all.append(StepWindows(b));
  std::vector<StepWindow> want = a;
  want.insert(want.end(), b.begin(), b.end());
  expect_same(all, want);
  EXPECT_EQ(all[3].window().rank_id, "node7_12345_20250101_ascend_pt");
}

TEST(StepWindows, SurviveTheArchiveAndStillIntern) {
  StepWindows t({{"rank1", "seg_1", "decode", 3, 10, 20, 0}, {"rank2", "seg_2", "decode", 3, 11, 21, 0}});
  std::stringstream buf;
  {
    boost::archive::binary_oarchive out(buf);
    out << t;
  }
  StepWindows back;
  {
    boost::archive::binary_iarchive in(buf);
    in >> back;
  }
  back.push_back({"rank1", "seg_3", "prefill", 3, 30, 40, 0});  // the loaded names are found again
  expect_same(back, {{"rank1", "seg_1", "decode", 3, 10, 20, 0},
                     {"rank2", "seg_2", "decode", 3, 11, 21, 0},
                     {"rank1", "seg_3", "prefill", 3, 30, 40, 0}});
  StepWindows twice = back;
  twice.append(back);
  EXPECT_EQ(twice.size(), 6u);
  EXPECT_EQ(twice[5].segment_id, "seg_3");
  EXPECT_LT(twice.bytes(), 6 * sizeof(StepWindow));  // the point of the table
}

}  // namespace
}  // namespace ascprof::analysis

// OUT's names: root folders readable, safe and unique; a rank's files beside each other.
#include <gtest/gtest.h>

#include "ascprof/layout/out_layout.hpp"

namespace ascprof::layout {
namespace {

TEST(RootSlug, ReadableSafeAndUnique) {
  const std::string a = layout::root_slug("/data/runs/job7/e2-cnn-level1");
  EXPECT_EQ(a.rfind("runs_job7_e2-cnn-level1-", 0), 0u) << a;
  EXPECT_EQ(a.size(), std::string("runs_job7_e2-cnn-level1-").size() + 8);
  EXPECT_EQ(layout::root_slug("/data/runs/job7/e2-cnn-level1/"), a);
  EXPECT_EQ(layout::root_slug("/data/runs/job7/./e2-cnn-level1"), a);
  EXPECT_NE(layout::root_slug("/other/runs/job7/e2-cnn-level1"), a);  // same tail, different root
  const std::string weird = layout::root_slug("/x/My Run (1)/\xC3\x9C" "ber:*?");
  for (char c : weird) EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.') << weird;
  EXPECT_EQ(weird.rfind("x_my_run_1_ber-", 0), 0u) << weird;
  EXPECT_EQ(layout::root_slug("/").rfind("root-", 0), 0u);
  EXPECT_LE(layout::root_slug("/" + std::string(300, 'a')).size(), 80u + 9u);
}

TEST(OutLayout, RankFilesAndRootFolder) {
  EXPECT_EQ(rank_h5("rank3"), "ranks/rank3.h5");
  EXPECT_EQ(rank_legacy_files("rank3"), (std::vector<std::string>{"ranks/rank3.outcome", "ranks/rank3.summary"}));
  EXPECT_EQ(rank_parts("rank3"), "ranks/rank3.parts");
  EXPECT_EQ(root_dir("/out", "/data/runs/job7/e2-cnn-level1"), std::filesystem::path("/out") / root_slug("/data/runs/job7/e2-cnn-level1"));
}

}  // namespace
}  // namespace ascprof::layout

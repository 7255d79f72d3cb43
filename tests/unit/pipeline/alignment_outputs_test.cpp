// cross_rank_alignment's operator rows: every member rank listed up to max_rank_ids_per_row; past
// it only the outlier ranks, the limitation saying so and the JSON row giving every member as runs.
#include "pipeline/alignment_outputs.hpp"

#include <gtest/gtest.h>

#include "ascprof/common/files.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

using namespace analysis;

struct Written {
  std::map<std::string, std::string> row;  // the CSV row
  std::string json;
};

// Five ranks at positions 0, 1, 3, 4, 5 (2 has no buckets) in one collective bucket; rank 4 slowest.
Written write_with_cap(size_t cap) {
  auto rules = testing::shipped_knowledge().operator_alignment;
  rules.max_rank_ids_per_row = cap;
  uint32_t cc = 0;
  for (uint32_t i = 0; i < rules.roles.size(); ++i)
    if (rules.roles[i].name == "communication.collective") cc = i;
  std::vector<RankOperatorBuckets> b(6);
  for (uint32_t r = 0; r < 6; ++r) {
    if (r == 2) continue;
    OperatorCandidates c;
    c.keys = {{cc, "hcom_allReduce_", "no_shape"}};
    c.key = {0};
    c.start_ns = {5'100'000 + r * 1000};
    c.dur_ns = {r == 4 ? 900'000 : 100'000};
    c.wait_ns = {0};
    c.row = {40 + r};
    b[r] = operator_buckets(c, 0, rules);
  }
  std::vector<const RankOperatorBuckets*> per_rank;
  for (const auto& x : b) per_rank.push_back(&x);
  const OperatorAlignments ops = align_operators(per_rank, rules);
  const std::vector<std::string> ids = {"rank0", "rank1", "rank2", "rank3", "rank4", "rank5"};
  const std::vector<uint32_t> ordinals = {0, 1, 2, 3, 4, 5};
  AlignmentTables t;
  t.operators = &ops;
  t.rank_ids = &ids;
  t.rank_ordinals = &ordinals;
  t.rules = &rules;
  ascprof::testing::ScratchDir dir("align-out");
  std::vector<std::string> written;
  EXPECT_TRUE(write_alignment_tables(dir.path(), t, &written).ok());
  Written w;
  const auto rows = ascprof::testing::csv_rows(dir / "cross_rank_alignment.csv");
  EXPECT_EQ(rows.size(), 1u);
  if (!rows.empty()) w.row = rows[0];
  auto json = read_file(dir / "cross_rank_alignment.json");
  EXPECT_TRUE(json.ok());
  if (json.ok()) w.json = *json;
  return w;
}

TEST(AlignmentOutputs, OperatorRowListsEveryMemberRankUpToTheCap) {
  const Written w = write_with_cap(5);
  EXPECT_EQ(w.row.at("rank_ids"), R"(["rank0","rank1","rank3","rank4","rank5"])");
  EXPECT_EQ(w.row.at("rank_count"), "5");
  EXPECT_EQ(w.row.at("alignment_limitations").find("outlier ranks"), std::string::npos);
  EXPECT_EQ(w.json.find("member_rank_runs"), std::string::npos);
}

TEST(AlignmentOutputs, PastTheCapTheRowNamesItsOutliersAndGivesEveryMemberAsRuns) {
  const Written w = write_with_cap(4);
  // latest start: rank5 (starts 1 us after each other), latest end and longest: rank4, shortest: rank0
  EXPECT_EQ(w.row.at("rank_ids"), R"(["rank0","rank4","rank5"])");
  EXPECT_EQ(w.row.at("rank_count"), "5");  // the count still counts every member
  EXPECT_NE(w.row.at("alignment_limitations")
                .find("rank_ids lists the 3 outlier ranks (latest start, latest end, longest, shortest) of the 5 member "
                      "ranks: rank0..rank1, rank3..rank5"),
            std::string::npos)
      << w.row.at("alignment_limitations");
  EXPECT_NE(w.json.find(R"("member_rank_runs":[["rank0","rank1"],["rank3","rank5"]])"), std::string::npos) << w.json;
}

}  // namespace
}  // namespace ascprof::pipeline

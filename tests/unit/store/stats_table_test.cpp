#include "ascprof/store/stats_table.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace ascprof::store {
namespace {

namespace fs = std::filesystem;
using ascprof::testing::ScratchDir;

TEST(StatsTable, WritesEveryDeclaredCounterAndReadsCountsBack) {
  ScratchDir dir("store");
  const fs::path file = dir / "stats.h5";
  Stats stats;
  stats.note(Stat::csv_row_too_few_fields, "kernel_details.csv:12: 3 fields, header has 5");
  stats.note(Stat::csv_row_too_few_fields, "kernel_details.csv:40: 4 fields, header has 5");
  stats.inc(Stat::csv_row_too_few_fields, 10);
  stats.inc(Stat::csv_blank_line, 3);  // counted without a sample
  stats.note(Stat::tv_damaged_span, "trace_view.json:byte 4096: \"unterminated\"\nstring 中文");
  {
    auto w = H5Writer::create(file);
    ASSERT_TRUE(w.ok());
    ASCPROF_ASSERT_OK(write_stats(*w, stats));
    ASCPROF_ASSERT_OK(w->commit("normalize"));
  }
  auto r = H5Reader::open(file);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->string_array_attr("/stats", "columns").value(),
            (std::vector<std::string>{"name", "severity", "count", "description", "first_sample"}));
  EXPECT_EQ(r->int_attr("/stats", "row_count").value(), static_cast<int64_t>(kStatCount));
  const auto names = r->read_strings("/stats/name").value();
  const auto severities = r->read_strings("/stats/severity").value();
  const auto descriptions = r->read_strings("/stats/description").value();
  const auto samples = r->read_strings("/stats/first_sample").value();
  const auto counts = r->read_column<uint64_t>("/stats/count").value();
  ASSERT_EQ(names.size(), kStatCount);
  const auto row = static_cast<size_t>(Stat::csv_row_too_few_fields);
  EXPECT_EQ(names[row], "csv_row_too_few_fields");
  EXPECT_EQ(severities[row], "warning");
  EXPECT_EQ(descriptions[row], stat_info(Stat::csv_row_too_few_fields).description);
  EXPECT_EQ(samples[row], "kernel_details.csv:12: 3 fields, header has 5");
  EXPECT_EQ(counts[row], 12u);
  const auto dmg = static_cast<size_t>(Stat::tv_damaged_span);
  EXPECT_EQ(severities[dmg], "data_loss");
  EXPECT_EQ(samples[dmg], "trace_view.json:byte 4096: \"unterminated\"\nstring 中文");
  EXPECT_EQ(counts[static_cast<size_t>(Stat::csv_bom_skipped)], 0u);

  Stats back;
  ASCPROF_ASSERT_OK(read_stats(*r, &back));
  for (size_t i = 0; i < kStatCount; ++i) EXPECT_EQ(back.count(static_cast<Stat>(i)), stats.count(static_cast<Stat>(i))) << i;
  ASSERT_EQ(back.samples(Stat::csv_row_too_few_fields).size(), 1u);  // only the first sample is stored
  EXPECT_EQ(back.samples(Stat::csv_row_too_few_fields)[0], "kernel_details.csv:12: 3 fields, header has 5");
  EXPECT_TRUE(back.samples(Stat::csv_blank_line).empty());
}

TEST(StatsTable, UnknownCounterNamesFromOtherVersionsAreIgnored) {
  ScratchDir dir("store");
  const fs::path file = dir / "stats.h5";
  {
    auto w = H5Writer::create(file);
    ASSERT_TRUE(w.ok());
    TableWriter t(*w, "/stats", 2);
    ASCPROF_ASSERT_OK(t.string_column("name", std::vector<std::string>{"csv_blank_line", "counter_from_the_future"}).status());
    ASCPROF_ASSERT_OK(t.column("count", std::vector<uint64_t>{4, 9}).status());
    ASCPROF_ASSERT_OK(t.string_column("first_sample", std::vector<std::string>{"", "x"}).status());
    ASCPROF_ASSERT_OK(t.finish());
    ASCPROF_ASSERT_OK(w->commit("normalize"));
  }
  auto r = H5Reader::open(file);
  ASSERT_TRUE(r.ok());
  Stats back;
  ASCPROF_ASSERT_OK(read_stats(*r, &back));
  EXPECT_EQ(back.count(Stat::csv_blank_line), 4u);
  uint64_t total = 0;
  for (size_t i = 0; i < kStatCount; ++i) total += back.count(static_cast<Stat>(i));
  EXPECT_EQ(total, 4u);

  Stats none;
  Status missing = read_stats(*r, &none, "/no_stats");
  EXPECT_FALSE(missing.ok());
}

}  // namespace
}  // namespace ascprof::store

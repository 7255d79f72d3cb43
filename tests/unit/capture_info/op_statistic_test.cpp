#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "ascprof/importers/discovery.hpp"
#include "ascprof/importers/op_statistics.hpp"
#include "support/test_support.hpp"

namespace ascprof::importers {
namespace {

namespace fs = std::filesystem;
using model::ApiStatisticRow;
using model::OpStatisticRow;
using testing::real_fixtures_dir;
using testing::ScratchDir;
using testing::write_text;

fs::path out_dir(const std::string& rel) { return real_fixtures_dir() / rel / "ASCEND_PROFILER_OUTPUT"; }

// ---------------------------------------------------------------- op_statistic: real captures

TEST(OpStatistic, RealE2Level2Rank0) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  std::vector<OpStatisticRow> rows;
  Stats stats;
  const fs::path path = out_dir("e2-cnn-level2/rank0_ascend_pt") / "op_statistic.csv";
  ASCPROF_ASSERT_OK(import_op_statistic(path, rows, stats));
  ASSERT_EQ(rows.size(), 33u);
  const OpStatisticRow& r = rows[0];
  EXPECT_EQ(r.op_type, "ForeachAddList");
  EXPECT_EQ(r.core_type, "AI_VECTOR_CORE");
  EXPECT_EQ(r.device_id, -1);  // E2: no Device_id column
  EXPECT_EQ(r.count, 3u);
  EXPECT_DOUBLE_EQ(r.total_us, 1954.719);
  EXPECT_DOUBLE_EQ(r.min_us, 623.732);
  EXPECT_DOUBLE_EQ(r.avg_us, 651.573);
  EXPECT_DOUBLE_EQ(r.max_us, 700.394);
  EXPECT_DOUBLE_EQ(r.ratio_pct, 22.042);
  EXPECT_EQ(r.source_line, 2u);
  EXPECT_EQ(rows[1].op_type, "TransData");
  EXPECT_EQ(rows[1].count, 57u);
  EXPECT_DOUBLE_EQ(rows[1].total_us, 1393.328);
  EXPECT_EQ(rows.back().op_type, "Fill");
  EXPECT_DOUBLE_EQ(rows.back().total_us, 1.4);
  EXPECT_DOUBLE_EQ(rows.back().ratio_pct, 0.016);
  EXPECT_EQ(rows.back().source_line, 34u);

  uint64_t calls = 0;
  double ratio = 0;
  std::map<std::string, int> cores;
  for (const auto& x : rows) {
    calls += x.count;
    ratio += x.ratio_pct;
    ++cores[x.core_type];
  }
  EXPECT_EQ(calls, 187u);
  EXPECT_NEAR(ratio, 100.0, 0.01);
  EXPECT_EQ(cores, (std::map<std::string, int>{{"AI_CORE", 5}, {"AI_VECTOR_CORE", 23}, {"DSA_SQE", 1}, {"MIX_AIV", 4}}));
  EXPECT_EQ(stats.count(Stat::op_stat_bad_row), 0u);
}

TEST(OpStatistic, RealAllE2RanksRowCounts) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  for (const char* rel : {"e2-cnn-level1/rank0_ascend_pt", "e2-cnn-level1/rank1_ascend_pt",
                          "e2-cnn-level2/rank0_ascend_pt", "e2-cnn-level2/rank1_ascend_pt"}) {
    SCOPED_TRACE(rel);
    std::vector<OpStatisticRow> rows;
    Stats stats;
    ASCPROF_ASSERT_OK(import_op_statistic(out_dir(rel) / "op_statistic.csv", rows, stats));
    EXPECT_EQ(rows.size(), 33u);
    EXPECT_EQ(rows[0].op_type, "ForeachAddList");
    EXPECT_EQ(stats.count(Stat::op_stat_bad_row), 0u);
  }
  std::vector<OpStatisticRow> rows;
  Stats stats;
  ASCPROF_ASSERT_OK(import_op_statistic(out_dir("e2-cnn-level1/rank1_ascend_pt") / "op_statistic.csv", rows, stats));
  EXPECT_DOUBLE_EQ(rows[0].total_us, 1954.139);
  EXPECT_DOUBLE_EQ(rows[0].ratio_pct, 22.01);
}

// ---------------------------------------------------------------- op_statistic: header eras and text shapes

TEST(OpStatistic, E3DeviceIdColumnCrlf) {
  const std::string text =
      "Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\r\n"
      "0,MatMulV2,AI_CORE,12,3000.5,100.25,250.041,400,61.2\r\n"
      "0,Add,AI_VECTOR_CORE,4,10,2,2.5,3,0.204\r\n";
  std::vector<OpStatisticRow> rows;
  Stats stats;
  ASCPROF_ASSERT_OK(import_op_statistic(text, "op_statistic.csv", rows, stats));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].device_id, 0);
  EXPECT_EQ(rows[0].op_type, "MatMulV2");
  EXPECT_EQ(rows[0].core_type, "AI_CORE");
  EXPECT_EQ(rows[0].count, 12u);
  EXPECT_DOUBLE_EQ(rows[0].total_us, 3000.5);
  EXPECT_DOUBLE_EQ(rows[0].min_us, 100.25);
  EXPECT_DOUBLE_EQ(rows[0].avg_us, 250.041);
  EXPECT_DOUBLE_EQ(rows[0].max_us, 400.0);
  EXPECT_DOUBLE_EQ(rows[0].ratio_pct, 61.2);
  EXPECT_EQ(rows[1].op_type, "Add");
  EXPECT_DOUBLE_EQ(rows[1].ratio_pct, 0.204);
  EXPECT_EQ(rows[1].source_line, 3u);
}

TEST(OpStatistic, ShuffledColumnsTabsQuotesAndCaseFound) {
  // Columns in another order, header names in another case, quoted cells, CANN's trailing TAB.
  const std::string text =
      "Ratio(%),\"Max Time(us)\",count,Core Type,Avg Time(us),op type,Total Time(us)\t,Min Time(us),DEVICE_ID\n"
      "\"12.5\",\"9.5\t\",\"7\",\"AI_CORE\",5.25\t,\"Conv2D\",36.75\t,1\t,\"3\"\n";
  std::vector<OpStatisticRow> rows;
  Stats stats;
  ASCPROF_ASSERT_OK(import_op_statistic(text, "op_statistic.csv", rows, stats));
  ASSERT_EQ(rows.size(), 1u);
  const OpStatisticRow& r = rows[0];
  EXPECT_EQ(r.op_type, "Conv2D");
  EXPECT_EQ(r.core_type, "AI_CORE");
  EXPECT_EQ(r.device_id, 3);
  EXPECT_EQ(r.count, 7u);
  EXPECT_DOUBLE_EQ(r.total_us, 36.75);
  EXPECT_DOUBLE_EQ(r.min_us, 1.0);
  EXPECT_DOUBLE_EQ(r.avg_us, 5.25);
  EXPECT_DOUBLE_EQ(r.max_us, 9.5);
  EXPECT_DOUBLE_EQ(r.ratio_pct, 12.5);
  EXPECT_EQ(stats.count(Stat::op_stat_bad_row), 0u);
}

TEST(OpStatistic, OptionalColumnsAbsentOrNullReadAsNaN) {
  const std::string text =
      "OP Type,Core Type,Count,Total Time(us),Avg Time(us)\n"
      "Cast,AI_VECTOR_CORE,2,8,N/A\n"
      "Mul,AI_VECTOR_CORE,1,3,\n";
  std::vector<OpStatisticRow> rows;
  Stats stats;
  ASCPROF_ASSERT_OK(import_op_statistic(text, "op_statistic.csv", rows, stats));
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    EXPECT_TRUE(std::isnan(r.min_us));
    EXPECT_TRUE(std::isnan(r.avg_us));
    EXPECT_TRUE(std::isnan(r.max_us));
    EXPECT_TRUE(std::isnan(r.ratio_pct));
    EXPECT_EQ(r.device_id, -1);
  }
  EXPECT_DOUBLE_EQ(rows[0].total_us, 8.0);
  EXPECT_EQ(rows[1].count, 1u);
}

TEST(OpStatistic, MissingRequiredColumnNamesFileAndColumn) {
  for (const char* missing : {"OP Type", "Core Type", "Count", "Total Time(us)"}) {
    SCOPED_TRACE(missing);
    std::string header;
    for (const char* c : {"OP Type", "Core Type", "Count", "Total Time(us)", "Ratio(%)"}) {
      if (std::string(c) == missing) continue;
      if (!header.empty()) header += ',';
      header += c;
    }
    std::vector<OpStatisticRow> rows{OpStatisticRow{}};
    Stats stats;
    Status st = import_op_statistic(header + "\n1,2,3,4\n", "/x/op_statistic.csv", rows, stats);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), ErrorCode::kSchema);
    EXPECT_NE(st.message().find("/x/op_statistic.csv:line 1: missing required column '" + std::string(missing) + "'"),
              std::string::npos)
        << st.message();
    EXPECT_NE(st.message().find("header has: "), std::string::npos);
    EXPECT_TRUE(rows.empty());
  }
}

TEST(OpStatistic, BadRowsSkippedAndCounted) {
  const std::string text =
      "OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n"
      "A,AI_CORE,1,10,10,10,10,50\n"
      "B,AI_CORE,abc,10,10,10,10,50\n"          // line 3: Count not a number
      "C,AI_CORE,1,ten,10,10,10,50\n"           // line 4: Total not a number
      "D,AI_CORE,1,10,10,10,10\n"               // line 5: too few fields
      "E,AI_CORE,1,10,10,10,10,50,extra\n"      // line 6: too many fields
      "F,AI_CORE,-2,10,10,10,10,50\n"           // line 7: negative Count
      "G,AI_CORE,1,10,1x,10,10,50\n"            // line 8: optional Min garbage
      "H,AI_CORE,2,,10,10,10,50\n"              // line 9: required Total empty
      "I,AI_VECTOR_CORE,3.0,20,5,6.5,8,50\n";   // line 10: float-written count accepted
  std::vector<OpStatisticRow> rows;
  Stats stats;
  ASCPROF_ASSERT_OK(import_op_statistic(text, "op_statistic.csv", rows, stats));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].op_type, "A");
  EXPECT_EQ(rows[1].op_type, "I");
  EXPECT_EQ(rows[1].count, 3u);
  EXPECT_EQ(rows[1].source_line, 10u);
  EXPECT_EQ(stats.count(Stat::op_stat_bad_row), 7u);
  const auto& s = stats.samples(Stat::op_stat_bad_row);
  ASSERT_EQ(s.size(), Stats::kMaxSamples);
  EXPECT_EQ(s[0], "op_statistic.csv:line 3: Count 'abc' is not a non-negative integer; row skipped");
  EXPECT_EQ(s[1], "op_statistic.csv:line 4: Total Time(us) 'ten' is not a number; row skipped");
  EXPECT_EQ(s[2], "op_statistic.csv:line 5: 7 fields, header has 8; row skipped");
  EXPECT_EQ(s[3], "op_statistic.csv:line 6: 9 fields, header has 8; row skipped");
  EXPECT_EQ(s[4], "op_statistic.csv:line 7: Count '-2' is not a non-negative integer; row skipped");
}

TEST(OpStatistic, BadDeviceIdSkipped) {
  const std::string text =
      "Device_id,OP Type,Core Type,Count,Total Time(us)\n"
      "host,A,AI_CORE,1,10\n"
      ",B,AI_CORE,1,10\n";
  std::vector<OpStatisticRow> rows;
  Stats stats;
  ASCPROF_ASSERT_OK(import_op_statistic(text, "op_statistic.csv", rows, stats));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].op_type, "B");
  EXPECT_EQ(rows[0].device_id, -1);
  ASSERT_EQ(stats.count(Stat::op_stat_bad_row), 1u);
  EXPECT_EQ(stats.samples(Stat::op_stat_bad_row)[0],
            "op_statistic.csv:line 2: Device_id 'host' is not an integer; row skipped");
}

TEST(OpStatistic, EmptyAndHeaderOnlyFiles) {
  ScratchDir dir("opstat");
  write_text(dir / "empty.csv", "");
  write_text(dir / "header.csv", "OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\r\n");
  std::vector<OpStatisticRow> rows{OpStatisticRow{}};
  Stats stats;
  Status st = import_op_statistic(dir / "empty.csv", rows, stats);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kSchema);
  EXPECT_EQ(st.message(), (dir / "empty.csv").string() + ": empty file");
  EXPECT_TRUE(rows.empty());

  rows.push_back(OpStatisticRow{});
  ASCPROF_ASSERT_OK(import_op_statistic(dir / "header.csv", rows, stats));
  EXPECT_TRUE(rows.empty());

  st = import_op_statistic(dir / "absent.csv", rows, stats);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kIo);
  EXPECT_NE(st.message().find("absent.csv"), std::string::npos);
}

// ---------------------------------------------------------------- api_statistic

TEST(ApiStatistic, RealE2Level2Rank0) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  std::vector<ApiStatisticRow> rows;
  Stats stats;
  ASCPROF_ASSERT_OK(import_api_statistic(out_dir("e2-cnn-level2/rank0_ascend_pt") / "api_statistic.csv", rows, stats));
  ASSERT_EQ(rows.size(), 75u);
  EXPECT_EQ(rows[0].level, "runtime");
  EXPECT_EQ(rows[0].api_name, "ContextGetCurrent");
  EXPECT_EQ(rows[0].device_id, "");
  EXPECT_DOUBLE_EQ(rows[0].time_us, 14.68);
  EXPECT_EQ(rows[0].count, 30u);
  const ApiStatisticRow* sync = nullptr;
  for (const auto& r : rows)
    if (r.api_name == "StreamSynchronize") sync = &r;
  ASSERT_NE(sync, nullptr);
  EXPECT_EQ(sync->level, "runtime");
  EXPECT_DOUBLE_EQ(sync->time_us, 90660.49);
  EXPECT_EQ(sync->count, 7u);
  EXPECT_DOUBLE_EQ(sync->avg_us, 12951.499);
  EXPECT_DOUBLE_EQ(sync->min_us, 4.83);
  EXPECT_DOUBLE_EQ(sync->max_us, 85509.38);
  EXPECT_DOUBLE_EQ(sync->variance, 880430845.95);
  EXPECT_EQ(sync->source_line, 22u);
  EXPECT_EQ(rows.back().api_name, "opCompile");
  EXPECT_EQ(rows.back().level, "acl");

  std::map<std::string, int> levels;
  uint64_t calls = 0;
  for (const auto& r : rows) {
    ++levels[r.level];
    calls += r.count;
  }
  EXPECT_EQ(levels, (std::map<std::string, int>{{"acl", 55}, {"hccl", 1}, {"node", 1}, {"runtime", 18}}));
  EXPECT_EQ(calls, 1134u);
  EXPECT_EQ(stats.count(Stat::api_stat_bad_row), 0u);
}

TEST(ApiStatistic, RealAllE2RanksRowCounts) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  const std::pair<const char*, size_t> cases[] = {{"e2-cnn-level1/rank0_ascend_pt", 57},
                                                  {"e2-cnn-level1/rank1_ascend_pt", 57},
                                                  {"e2-cnn-level2/rank0_ascend_pt", 75},
                                                  {"e2-cnn-level2/rank1_ascend_pt", 75}};
  for (const auto& [rel, n] : cases) {
    SCOPED_TRACE(rel);
    std::vector<ApiStatisticRow> rows;
    Stats stats;
    ASCPROF_ASSERT_OK(import_api_statistic(out_dir(rel) / "api_statistic.csv", rows, stats));
    EXPECT_EQ(rows.size(), n);
    EXPECT_EQ(stats.count(Stat::api_stat_bad_row), 0u);
  }
  std::vector<ApiStatisticRow> rows;
  Stats stats;
  ASCPROF_ASSERT_OK(import_api_statistic(out_dir("e2-cnn-level1/rank0_ascend_pt") / "api_statistic.csv", rows, stats));
  EXPECT_EQ(rows[0].level, "hccl");
  EXPECT_EQ(rows[0].api_name, "Launch_Ffts");
  EXPECT_DOUBLE_EQ(rows[0].time_us, 474.41);
  EXPECT_EQ(rows[0].count, 4u);
  EXPECT_DOUBLE_EQ(rows[0].variance, 389.155);
}

TEST(ApiStatistic, E3HostDeviceIdShuffledTabsQuotesCrlf) {
  const std::string text =
      "Device_id,Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance\r\n"
      "host,acl,aclrtSynchronizeStream,100.5\t,4\t,25.125\t,1\t,50\t,3.5\t\r\n"
      "0,\"runtime\",\"Stream, Synchronize\",7,1,7,7,7,0\r\n";
  std::vector<ApiStatisticRow> rows;
  Stats stats;
  ASCPROF_ASSERT_OK(import_api_statistic(text, "api_statistic.csv", rows, stats));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].device_id, "host");
  EXPECT_EQ(rows[0].level, "acl");
  EXPECT_EQ(rows[0].api_name, "aclrtSynchronizeStream");
  EXPECT_DOUBLE_EQ(rows[0].time_us, 100.5);
  EXPECT_EQ(rows[0].count, 4u);
  EXPECT_DOUBLE_EQ(rows[0].avg_us, 25.125);
  EXPECT_DOUBLE_EQ(rows[0].min_us, 1.0);
  EXPECT_DOUBLE_EQ(rows[0].max_us, 50.0);
  EXPECT_DOUBLE_EQ(rows[0].variance, 3.5);
  EXPECT_EQ(rows[1].device_id, "0");
  EXPECT_EQ(rows[1].level, "runtime");
  EXPECT_EQ(rows[1].api_name, "Stream, Synchronize");

  const std::string shuffled =
      "variance,Count,API NAME,max(us),Time(us)\n"
      "2.5,3,launch,9,21\n";
  ASCPROF_ASSERT_OK(import_api_statistic(shuffled, "api_statistic.csv", rows, stats));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].api_name, "launch");
  EXPECT_EQ(rows[0].level, "");
  EXPECT_EQ(rows[0].device_id, "");
  EXPECT_EQ(rows[0].count, 3u);
  EXPECT_DOUBLE_EQ(rows[0].time_us, 21.0);
  EXPECT_DOUBLE_EQ(rows[0].max_us, 9.0);
  EXPECT_DOUBLE_EQ(rows[0].variance, 2.5);
  EXPECT_TRUE(std::isnan(rows[0].avg_us));
  EXPECT_TRUE(std::isnan(rows[0].min_us));
  EXPECT_EQ(stats.count(Stat::api_stat_bad_row), 0u);
}

TEST(ApiStatistic, MissingRequiredColumnNamesFileAndColumn) {
  const std::pair<const char*, const char*> cases[] = {
      {"Level,Time(us),Count,Avg(us)", "API Name"},
      {"Level,API Name,Count,Avg(us)", "Time(us)"},
      {"Level,API Name,Time(us),Avg(us)", "Count"},
  };
  for (const auto& [header, missing] : cases) {
    SCOPED_TRACE(missing);
    std::vector<ApiStatisticRow> rows;
    Stats stats;
    Status st = import_api_statistic(std::string(header) + "\na,b,c,d\n", "/y/api_statistic.csv", rows, stats);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), ErrorCode::kSchema);
    EXPECT_NE(st.message().find("/y/api_statistic.csv:line 1: missing required column '" + std::string(missing) + "'"),
              std::string::npos)
        << st.message();
    EXPECT_TRUE(rows.empty());
  }
}

TEST(ApiStatistic, BadRowsSkippedAndCounted) {
  const std::string text =
      "Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance\n"
      "acl,ok1,10,2,5,4,6,1\n"
      "acl,bad_time,1e,2,5,4,6,1\n"       // line 3
      "acl,bad_var,10,2,5,4,6,x\n"        // line 4
      "acl,short,10,2\n"                  // line 5
      "acl,ok2,10,2,N/A,,6,1\n";          // line 6: null optional cells are fine
  std::vector<ApiStatisticRow> rows;
  Stats stats;
  ASCPROF_ASSERT_OK(import_api_statistic(text, "api_statistic.csv", rows, stats));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].api_name, "ok1");
  EXPECT_EQ(rows[1].api_name, "ok2");
  EXPECT_TRUE(std::isnan(rows[1].avg_us));
  EXPECT_TRUE(std::isnan(rows[1].min_us));
  EXPECT_DOUBLE_EQ(rows[1].max_us, 6.0);
  EXPECT_EQ(stats.count(Stat::api_stat_bad_row), 3u);
  const auto& s = stats.samples(Stat::api_stat_bad_row);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], "api_statistic.csv:line 3: Time(us) '1e' is not a number; row skipped");
  EXPECT_EQ(s[1], "api_statistic.csv:line 4: Variance 'x' is not a number; row skipped");
  EXPECT_EQ(s[2], "api_statistic.csv:line 5: 4 fields, header has 8; row skipped");
}

TEST(ApiStatistic, EmptyAndHeaderOnlyFiles) {
  ScratchDir dir("apistat");
  write_text(dir / "empty.csv", "");
  write_text(dir / "header.csv", "Device_id,Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance\n");
  std::vector<ApiStatisticRow> rows;
  Stats stats;
  Status st = import_api_statistic(dir / "empty.csv", rows, stats);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kSchema);
  EXPECT_EQ(st.message(), (dir / "empty.csv").string() + ": empty file");
  ASCPROF_ASSERT_OK(import_api_statistic(dir / "header.csv", rows, stats));
  EXPECT_TRUE(rows.empty());
  st = import_api_statistic(dir / "absent.csv", rows, stats);
  EXPECT_EQ(st.code(), ErrorCode::kIo);
}

// ---------------------------------------------------------------- discovery of both files

TEST(OpStatisticDiscovery, GeneratedRankFolders) {
  ScratchDir dir("opstat_disc");
  const std::string kd = "Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us)\n";
  // rank 0: both files in ASCEND_PROFILER_OUTPUT/; rank 1: api_statistic.csv in the rank folder itself;
  // rank 2: neither.
  write_text(dir / "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", kd);
  write_text(dir / "rank0_ascend_pt/profiler_info_0.json", "{}");
  write_text(dir / "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/op_statistic.csv", "OP Type\n");
  write_text(dir / "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/api_statistic.csv", "API Name\n");
  write_text(dir / "rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", kd);
  write_text(dir / "rank1_ascend_pt/profiler_info_1.json", "{}");
  write_text(dir / "rank1_ascend_pt/api_statistic.csv", "API Name\n");
  write_text(dir / "rank2_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", kd);
  write_text(dir / "rank2_ascend_pt/profiler_info_2.json", "{}");
  Stats stats;
  auto root = discover_capture_root(dir.path(), stats);
  ASSERT_TRUE(root.ok()) << root.status().to_string();
  ASSERT_EQ(root->ranks.size(), 3u);
  const RankFiles& f0 = root->ranks[0].files;
  EXPECT_EQ(f0.op_statistic, root->ranks[0].path / "ASCEND_PROFILER_OUTPUT" / "op_statistic.csv");
  EXPECT_EQ(f0.api_statistic, root->ranks[0].path / "ASCEND_PROFILER_OUTPUT" / "api_statistic.csv");
  const RankFiles& f1 = root->ranks[1].files;
  EXPECT_TRUE(f1.op_statistic.empty());
  EXPECT_EQ(f1.api_statistic, root->ranks[1].path / "api_statistic.csv");
  const RankFiles& f2 = root->ranks[2].files;
  EXPECT_TRUE(f2.op_statistic.empty());
  EXPECT_TRUE(f2.api_statistic.empty());
}

TEST(OpStatisticDiscovery, RealFixtureFolders) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  for (const char* level : {"e2-cnn-level1", "e2-cnn-level2"}) {
    SCOPED_TRACE(level);
    Stats stats;
    auto root = discover_capture_root(real_fixtures_dir() / level, stats);
    ASSERT_TRUE(root.ok()) << root.status().to_string();
    ASSERT_EQ(root->ranks.size(), 2u);
    for (const RankFolder& r : root->ranks) {
      EXPECT_EQ(r.files.op_statistic, r.path / "ASCEND_PROFILER_OUTPUT" / "op_statistic.csv");
      EXPECT_EQ(r.files.api_statistic, r.path / "ASCEND_PROFILER_OUTPUT" / "api_statistic.csv");
      std::vector<OpStatisticRow> ops;
      std::vector<ApiStatisticRow> apis;
      ASCPROF_ASSERT_OK(import_op_statistic(r.files.op_statistic, ops, stats));
      ASCPROF_ASSERT_OK(import_api_statistic(r.files.api_statistic, apis, stats));
      EXPECT_EQ(ops.size(), 33u);
      EXPECT_FALSE(apis.empty());
    }
  }
  // The e1 fixture holds neither file: both reported absent (empty path).
  Stats stats;
  auto e1 = discover_capture_root(real_fixtures_dir() / "e1-2023-two-rank", stats);
  ASSERT_TRUE(e1.ok()) << e1.status().to_string();
  for (const RankFolder& r : e1->ranks) {
    EXPECT_TRUE(r.files.op_statistic.empty()) << r.files.op_statistic;
    EXPECT_TRUE(r.files.api_statistic.empty()) << r.files.api_statistic;
  }
}

}  // namespace
}  // namespace ascprof::importers

#include "ascprof/importers/step_trace_time.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "support/test_support.hpp"

namespace ascprof::importers {
namespace {

namespace fs = std::filesystem;

fs::path out_dir(const std::string& rel) { return testing::real_fixtures_dir() / rel / "ASCEND_PROFILER_OUTPUT"; }

TEST(StepTraceTime, RealE1WithoutPreparing) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  model::StepTraceTable t;
  Stats stats;
  Status st = import_step_trace_time(out_dir("e1-2023-two-rank/test_rank_0") / "step_trace_time.csv", t, stats);
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.step[0], 2);
  EXPECT_EQ(t.device_id[0], -1);
  EXPECT_DOUBLE_EQ(t.computing[0], 75174.57464453117);
  EXPECT_DOUBLE_EQ(t.comm_not_overlapped[0], 146614.02034375005);
  EXPECT_DOUBLE_EQ(t.overlapped[0], 6987.303296874976);
  EXPECT_DOUBLE_EQ(t.communication[0], 153601.32364062502);
  EXPECT_DOUBLE_EQ(t.free[0], 69909.50350390615);
  EXPECT_DOUBLE_EQ(t.stage[0], 291698.0);
  EXPECT_DOUBLE_EQ(t.bubble[0], 0.0);
  EXPECT_DOUBLE_EQ(t.comm_not_overlapped_excl_receive[0], 146614.02034375005);
  EXPECT_TRUE(std::isnan(t.preparing[0]));

  model::StepTraceTable t1;
  ASSERT_TRUE(import_step_trace_time(out_dir("e1-2023-two-rank/test_rank_1") / "step_trace_time.csv", t1, stats).ok());
  ASSERT_EQ(t1.size(), 1u);
  EXPECT_DOUBLE_EQ(t1.computing[0], 75422.22);
  EXPECT_DOUBLE_EQ(t1.overlapped[0], 7129.459999999992);
  EXPECT_EQ(stats.count(Stat::step_trace_bad_row), 0u);
}

TEST(StepTraceTime, RealE2WithPreparingCrlfAndLf) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  struct Case {
    const char* rel;
    double computing;
    double stage;
    double preparing;
  };
  const Case cases[] = {
      {"e2-cnn-level0/rank0_ascend_pt", 8827.472999999998, 116251.25, 19358.0},   // CRLF
      {"e2-cnn-level1/rank1_ascend_pt", 8878.295000000006, 131912.5, 20433.25},   // CRLF
      {"e2-cnn-level2/rank0_ascend_pt", 8868.240000000003, 129862.75, 17483.75},  // LF
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.rel);
    model::StepTraceTable t;
    Stats stats;
    Status st = import_step_trace_time(out_dir(c.rel) / "step_trace_time.csv", t, stats);
    ASSERT_TRUE(st.ok()) << st.to_string();
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t.step[0], 50);
    EXPECT_EQ(t.device_id[0], -1);
    EXPECT_DOUBLE_EQ(t.computing[0], c.computing);
    EXPECT_DOUBLE_EQ(t.stage[0], c.stage);
    EXPECT_DOUBLE_EQ(t.preparing[0], c.preparing);
    EXPECT_DOUBLE_EQ(t.bubble[0], 0.0);
  }
  model::StepTraceTable t;
  Stats stats;
  ASSERT_TRUE(import_step_trace_time(out_dir("e2-cnn-level0/rank0_ascend_pt") / "step_trace_time.csv", t, stats).ok());
  EXPECT_DOUBLE_EQ(t.comm_not_overlapped[0], 81515.607);
  EXPECT_DOUBLE_EQ(t.overlapped[0], 4001.281999999992);
  EXPECT_DOUBLE_EQ(t.communication[0], 85516.889);
  EXPECT_DOUBLE_EQ(t.free[0], 25908.102000000003);
  EXPECT_DOUBLE_EQ(t.comm_not_overlapped_excl_receive[0], 81515.607);
}

TEST(StepTraceTime, E3DeviceIdAndSeveralRows) {
  const std::string text =
      "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
      "Communication(Not Overlapped and Exclude Receive),Preparing\r\n"
      "0,13,231290.09999999995,420174.2600000001,0.0,420174.2600000001,158558.00000000032,810022.25,0,"
      "420174.2600000001,206.25\r\n"
      "1,,10,20,0,20,5,35,0,20,1\r\n";
  model::StepTraceTable t;
  Stats stats;
  Status st = import_step_trace_time(text, "s.csv", t, stats);
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.device_id[0], 0);
  EXPECT_EQ(t.step[0], 13);
  EXPECT_DOUBLE_EQ(t.computing[0], 231290.09999999995);
  EXPECT_DOUBLE_EQ(t.comm_not_overlapped[0], 420174.2600000001);
  EXPECT_DOUBLE_EQ(t.free[0], 158558.00000000032);
  EXPECT_DOUBLE_EQ(t.stage[0], 810022.25);
  EXPECT_DOUBLE_EQ(t.preparing[0], 206.25);
  EXPECT_EQ(t.device_id[1], 1);
  EXPECT_EQ(t.step[1], -1);  // empty Step: no ProfilerStep markers
  EXPECT_DOUBLE_EQ(t.stage[1], 35.0);
}

TEST(StepTraceTime, BadRowSkippedWithLine) {
  const std::string text =
      "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
      "Communication(Not Overlapped and Exclude Receive)\n"
      "1,1,2,3,4,5,6,0,2\n"
      "2,abc,2,3,4,5,6,0,2\n"
      "3,1,2,3,4,5,6,,2\n";
  model::StepTraceTable t;
  Stats stats;
  ASSERT_TRUE(import_step_trace_time(text, "s.csv", t, stats).ok());
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.step[1], 3);
  EXPECT_TRUE(std::isnan(t.bubble[1]));
  EXPECT_EQ(stats.count(Stat::step_trace_bad_row), 1u);
  EXPECT_EQ(stats.samples(Stat::step_trace_bad_row)[0], "s.csv:line 3: Computing 'abc' is not a number; row skipped");
}

TEST(StepTraceTime, EmptyHeaderOnlyAndMissingStep) {
  model::StepTraceTable t;
  Stats stats;
  Status e = import_step_trace_time("", "s.csv", t, stats);
  EXPECT_EQ(e.code(), ErrorCode::kSchema);
  EXPECT_EQ(e.message(), "s.csv: empty file");
  Status h = import_step_trace_time("Step,Computing\r\n", "s.csv", t, stats);
  EXPECT_TRUE(h.ok());
  EXPECT_EQ(t.size(), 0u);
  Status m = import_step_trace_time("Computing,Free\n1,2\n", "s.csv", t, stats);
  EXPECT_EQ(m.code(), ErrorCode::kSchema);
  EXPECT_EQ(m.message(), "s.csv:line 1: missing required column 'Step' (header has: Computing, Free)");
  Status io = import_step_trace_time(fs::path("/nonexistent/step_trace_time.csv"), t, stats);
  EXPECT_EQ(io.code(), ErrorCode::kIo);
}

}  // namespace
}  // namespace ascprof::importers

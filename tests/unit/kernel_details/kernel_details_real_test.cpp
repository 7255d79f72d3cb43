// kernel_details.csv files written by real torch_npu / CANN versions (../shared/fixtures/real).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "ascprof/importers/kernel_details.hpp"
#include "support/test_support.hpp"

namespace ascprof::importers {
namespace {

namespace fs = std::filesystem;
using model::kAbsentI32;
using model::kAbsentI64;

fs::path kd(const std::string& rel) { return testing::real_fixtures_dir() / rel; }

uint64_t count_lines(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  uint64_t n = 0;
  std::string line;
  while (std::getline(in, line)) ++n;
  return n;
}

struct Loaded {
  StringPool pool;
  model::KernelTable t;
  Stats stats;
  Status st;
  std::string s(const std::vector<StrId>& col, size_t i) const { return std::string(pool.view(col[i])); }
  double metric(std::string_view name, size_t i) const {
    const int m = t.metric_index(name);
    return m < 0 ? -12345.0 : t.metrics[static_cast<size_t>(m)].values[i];
  }
};

void load(Loaded& l, const fs::path& p) { l.st = import_kernel_details(p, l.pool, l.t, l.stats); }

struct E2Case {
  const char* rel;
  int64_t first_start_ns;
  int64_t first_dur_ns;
  int64_t first_task_id;
  double first_aiv_time;
};

TEST(KernelDetailsReal, E2Level1And2AllRanks) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  const E2Case cases[] = {
      {"e2-cnn-level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", 1736408883704643212LL, 53741, 11051,
       50.522},
      {"e2-cnn-level1/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", 1736408883709301270LL, 53841, 11060,
       50.681},
      {"e2-cnn-level2/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", 1736412474730135222LL, 55161, 11061,
       50.078},
      {"e2-cnn-level2/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", 1736412474731158720LL, 53521, 11040,
       49.653},
  };
  for (const E2Case& c : cases) {
    SCOPED_TRACE(c.rel);
    Loaded l;
    load(l, kd(c.rel));
    ASSERT_TRUE(l.st.ok()) << l.st.to_string();
    ASSERT_EQ(l.t.size(), 191u);
    EXPECT_EQ(l.t.name.size(), 191u);
    EXPECT_EQ(l.t.source_line.front(), 2u);
    EXPECT_EQ(l.t.source_line.back(), 192u);

    const auto& h = l.t.header;
    EXPECT_EQ(h.era, "E2");
    EXPECT_TRUE(h.has_step_id);
    EXPECT_FALSE(h.has_device_id);
    EXPECT_TRUE(h.has_op_state);
    EXPECT_TRUE(h.has_hf32);
    EXPECT_FALSE(h.level0_short);
    EXPECT_EQ(h.block_column, "Block Dim");
    EXPECT_EQ(h.columns.size(), 46u);

    EXPECT_EQ(l.s(l.t.name, 0), "trans_TransData_0");
    EXPECT_EQ(l.s(l.t.type, 0), "TransData");
    EXPECT_EQ(l.s(l.t.accelerator_core, 0), "AI_VECTOR_CORE");
    EXPECT_EQ(l.s(l.t.op_state, 0), "dynamic");
    EXPECT_EQ(l.s(l.t.hf32_eligible, 0), "NO");
    EXPECT_EQ(l.t.start_ns[0], c.first_start_ns);
    EXPECT_EQ(l.t.dur_ns[0], c.first_dur_ns);
    EXPECT_EQ(l.t.wait_ns[0], 0);
    EXPECT_EQ(l.t.step_id[0], 50);
    EXPECT_EQ(l.t.device_id[0], kAbsentI32);
    EXPECT_EQ(l.t.model_id[0], 4294967295LL);
    EXPECT_EQ(l.t.task_id[0], c.first_task_id);
    EXPECT_EQ(l.t.stream_id[0], 2);
    EXPECT_EQ(l.t.block_dim[0], 32);
    EXPECT_EQ(l.t.mix_block_dim[0], 0);
    EXPECT_EQ(l.t.context_id[0], kAbsentI32);
    EXPECT_EQ(l.s(l.t.input_shapes, 0), "32,3,224,224");
    EXPECT_EQ(l.s(l.t.input_dtypes, 0), "FLOAT");
    EXPECT_EQ(l.s(l.t.input_formats, 0), "NCHW");
    EXPECT_EQ(l.s(l.t.output_shapes, 0), "32,1,224,224,8");
    EXPECT_EQ(l.s(l.t.output_formats, 0), "NC1HWC0");

    // Every column after Context ID is a metric, in header order, with its exact name.
    ASSERT_EQ(l.t.metrics.size(), 25u);
    EXPECT_EQ(l.t.metrics.front().name, "aicore_time(us)");
    EXPECT_EQ(l.t.metrics.back().name, "cube_utilization(%)");
    for (std::string_view p : kPipelineMetricNames) EXPECT_GE(l.t.metric_index(p), 0) << p;
    EXPECT_DOUBLE_EQ(l.metric("aiv_time(us)", 0), c.first_aiv_time);
    EXPECT_DOUBLE_EQ(l.metric("aicore_time(us)", 0), 0.0);
    for (const auto& m : l.t.metrics) EXPECT_EQ(m.values.size(), 191u) << m.name;

    // Communication rows: HCCL core, N/A task/stream and metrics read as absent.
    size_t hccl = 0;
    for (size_t i = 0; i < l.t.size(); ++i) {
      if (l.s(l.t.accelerator_core, i) != "HCCL") continue;
      ++hccl;
      EXPECT_EQ(l.t.task_id[i], kAbsentI64);
      EXPECT_EQ(l.t.stream_id[i], kAbsentI32);
      EXPECT_TRUE(std::isnan(l.metric("aiv_time(us)", i)));
    }
    EXPECT_EQ(hccl, 4u);
    EXPECT_EQ(l.stats.count(Stat::kd_bad_start_time), 0u);
    EXPECT_EQ(l.stats.count(Stat::kd_bad_metric), 0u);
    EXPECT_EQ(l.stats.count(Stat::csv_row_too_few_fields), 0u);
    EXPECT_GT(l.stats.count(Stat::kd_na_value), 0u);
  }
}

TEST(KernelDetailsReal, E2HcclRowValues) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  Loaded l;
  load(l, kd("e2-cnn-level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv"));
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  // Line 81 of the file is data row 79.
  ASSERT_EQ(l.t.source_line[79], 81u);
  EXPECT_EQ(l.s(l.t.name, 79), "hcom_allReduce__586_0_1");
  EXPECT_EQ(l.s(l.t.type, 79), "hcom_allReduce_");
  EXPECT_EQ(l.s(l.t.op_state, 79), "N/A");
  EXPECT_EQ(l.t.start_ns[79], 1736408883732241563LL);
  EXPECT_EQ(l.t.dur_ns[79], 79089520);
  EXPECT_EQ(l.t.wait_ns[79], 590331);
  EXPECT_EQ(l.t.block_dim[79], 0);
  EXPECT_EQ(l.t.mix_block_dim[79], kAbsentI32);
  EXPECT_EQ(l.s(l.t.input_shapes, 79), "N/A");
}

TEST(KernelDetailsReal, E2Level0ShortHeaderBothRanks) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  const std::pair<const char*, int64_t> cases[] = {
      {"e2-cnn-level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", 1736405443881410320LL},
      {"e2-cnn-level0/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", 1736405443897037309LL},
  };
  for (const auto& [rel, start] : cases) {
    SCOPED_TRACE(rel);
    Loaded l;
    load(l, kd(rel));
    ASSERT_TRUE(l.st.ok()) << l.st.to_string();
    ASSERT_EQ(l.t.size(), 191u);
    const auto& h = l.t.header;
    EXPECT_EQ(h.era, "level0-E2");
    EXPECT_TRUE(h.level0_short);
    EXPECT_TRUE(h.has_step_id);
    EXPECT_FALSE(h.has_device_id);
    EXPECT_FALSE(h.has_op_state);
    EXPECT_FALSE(h.has_hf32);
    EXPECT_EQ(h.block_column, "Block Dim");
    EXPECT_EQ(h.columns.size(), 8u);
    EXPECT_TRUE(l.t.metrics.empty());
    EXPECT_EQ(l.s(l.t.name, 0), "trans_TransData_0");
    // Level0 writes N/A for Type and Accelerator Core of compute kernels; kept as written.
    EXPECT_EQ(l.s(l.t.type, 0), "N/A");
    EXPECT_EQ(l.s(l.t.accelerator_core, 0), "N/A");
    EXPECT_EQ(l.t.start_ns[0], start);
    EXPECT_EQ(l.t.block_dim[0], 0);
    EXPECT_EQ(l.t.stream_id[0], kAbsentI32);
    EXPECT_EQ(l.t.task_id[0], kAbsentI64);
    EXPECT_EQ(l.t.input_shapes[0], 0u);
    EXPECT_EQ(l.t.input_shapes.size(), 191u);
    size_t hccl = 0;
    for (size_t i = 0; i < l.t.size(); ++i) hccl += l.s(l.t.accelerator_core, i) == "HCCL";
    EXPECT_EQ(hccl, 4u);
  }
  Loaded l;
  load(l, kd("e2-cnn-level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv"));
  EXPECT_EQ(l.t.dur_ns[0], 50621);
  EXPECT_EQ(l.t.wait_ns[1], 105722);
  EXPECT_EQ(l.t.dur_ns[1], 6280);
}

TEST(KernelDetailsReal, E1TwoRankCapture) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  for (const char* rel : {"e1-2023-two-rank/test_rank_0/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
                          "e1-2023-two-rank/test_rank_1/ASCEND_PROFILER_OUTPUT/kernel_details.csv"}) {
    SCOPED_TRACE(rel);
    Loaded l;
    load(l, kd(rel));
    ASSERT_TRUE(l.st.ok()) << l.st.to_string();
    EXPECT_EQ(l.t.size(), count_lines(kd(rel)) - 1);
    const auto& h = l.t.header;
    EXPECT_EQ(h.era, "E1");
    EXPECT_TRUE(h.has_step_id);
    EXPECT_FALSE(h.has_op_state);
    EXPECT_TRUE(h.has_hf32);  // the MemoryL0 variant (E1') carries HF32 Eligible
    EXPECT_FALSE(h.level0_short);
    EXPECT_FALSE(h.has_device_id);
    EXPECT_EQ(l.s(l.t.name, 0), "ZerosLike");
    EXPECT_EQ(l.s(l.t.accelerator_core, 0), "AI_CORE");
    EXPECT_EQ(l.t.step_id[0], 2);
    EXPECT_EQ(l.t.block_dim[0], 48);
    EXPECT_EQ(l.s(l.t.input_shapes, 0), "232138240");
    EXPECT_GE(l.t.metric_index("aic_l0a_read_bw(GB/s)"), 0);
    EXPECT_GE(l.t.metric_index("aiv_l0c_write_bw(GB/s)"), 0);
    EXPECT_EQ(l.t.metrics.size(), 12u);
  }
  Loaded r0;
  load(r0, kd("e1-2023-two-rank/test_rank_0/ASCEND_PROFILER_OUTPUT/kernel_details.csv"));
  EXPECT_EQ(r0.t.size(), 21u);
  // E1 times: no TAB, integer or variable decimals.
  EXPECT_EQ(r0.t.start_ns[0], 1695115378713661000LL);
  EXPECT_EQ(r0.t.dur_ns[0], 496851);  // 496.8508 µs rounds to 496851 ns
  EXPECT_EQ(r0.t.stream_id[0], 16);
  EXPECT_EQ(r0.t.task_id[0], 2451);
  EXPECT_EQ(r0.t.start_ns[1], 1695115378715400200LL);
  EXPECT_EQ(r0.t.wait_ns[1], 1242399);  // 1242.3992 µs
  EXPECT_EQ(r0.s(r0.t.accelerator_core, 1), "HCCL");
  // Line 17 was hand-edited to 31 fields: kept, counted.
  EXPECT_EQ(r0.stats.count(Stat::csv_row_too_few_fields), 1u);
  ASSERT_FALSE(r0.stats.samples(Stat::csv_row_too_few_fields).empty());
  EXPECT_NE(r0.stats.samples(Stat::csv_row_too_few_fields)[0].find("kernel_details.csv:line 17: 31 fields"),
            std::string::npos);

  Loaded r1;
  load(r1, kd("e1-2023-two-rank/test_rank_1/ASCEND_PROFILER_OUTPUT/kernel_details.csv"));
  EXPECT_EQ(r1.t.size(), 22u);
  EXPECT_EQ(r1.t.start_ns[0], 1695115378710248000LL);
  EXPECT_EQ(r1.t.dur_ns[0], 498400);
  EXPECT_EQ(r1.t.task_id[0], 2113);
}

TEST(KernelDetailsReal, E1ArithmeticUtilization591Rows) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  Loaded l;
  load(l, kd("single-files/e1_kernel_details_591rows.csv"));
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  ASSERT_EQ(l.t.size(), 591u);
  const auto& h = l.t.header;
  EXPECT_EQ(h.era, "E1");
  EXPECT_FALSE(h.has_hf32);
  EXPECT_FALSE(h.has_op_state);
  EXPECT_EQ(h.columns.size(), 33u);
  EXPECT_EQ(l.s(l.t.name, 0), "ZerosLike46");
  EXPECT_EQ(l.s(l.t.type, 0), "ZerosLike");
  EXPECT_EQ(l.s(l.t.accelerator_core, 0), "AI_VECTOR_CORE");
  EXPECT_EQ(l.t.start_ns[0], 1699529622790614800LL);  // "1699529622790614.8"
  EXPECT_EQ(l.t.dur_ns[0], 607980);
  EXPECT_EQ(l.t.wait_ns[0], 0);
  EXPECT_EQ(l.t.stream_id[0], 16);
  EXPECT_EQ(l.t.block_dim[0], 48);
  EXPECT_EQ(l.t.step_id[0], 1);
  EXPECT_EQ(l.s(l.t.input_shapes, 0), "544404480");
  EXPECT_EQ(l.s(l.t.input_dtypes, 0), "FLOAT16");
  EXPECT_EQ(l.s(l.t.input_formats, 0), "FORMAT_ND");
  ASSERT_EQ(l.t.metrics.size(), 14u);
  for (const char* m : {"aic_mac_fp16_ratio", "aic_mac_int8_ratio", "aic_cube_fops", "aic_vector_fops",
                        "aiv_vec_fp32_ratio", "aiv_vec_fp16_ratio", "aiv_vec_int32_ratio", "aiv_vec_misc_ratio",
                        "aiv_cube_fops", "aiv_vector_fops", "aic_total_cycles", "aiv_total_cycles"})
    EXPECT_GE(l.t.metric_index(m), 0) << m;
  EXPECT_DOUBLE_EQ(l.metric("aiv_time(us)", 0), 587.05);
  EXPECT_DOUBLE_EQ(l.metric("aiv_vec_int32_ratio", 0), 0.0822);
  EXPECT_DOUBLE_EQ(l.metric("aiv_vector_fops", 0), 137176320.0);
  EXPECT_DOUBLE_EQ(l.metric("aiv_total_cycles", 0), 52130051.0);
  EXPECT_EQ(l.s(l.t.name, 590), "StridedSlice219");
  EXPECT_EQ(l.t.start_ns[590], 1699529623307499000LL);
  EXPECT_EQ(l.stats.count(Stat::kd_bad_start_time), 0u);
  EXPECT_EQ(l.stats.count(Stat::kd_bad_metric), 0u);
}

TEST(KernelDetailsReal, E2QuotedStartTimeWithTab) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  Loaded l;
  load(l, kd("single-files/e2_kernel_details_quoted_start.csv"));
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  ASSERT_EQ(l.t.size(), 29u);
  EXPECT_EQ(l.t.header.era, "E2");
  EXPECT_EQ(l.s(l.t.name, 0), "aclnnMatmul_MatMulCommon_MatMulV2");
  EXPECT_EQ(l.t.start_ns[0], 1736413971558972912LL);  // "1736413971558972.912<TAB>" inside quotes
  EXPECT_EQ(l.t.dur_ns[0], 185504);
  EXPECT_EQ(l.t.wait_ns[0], 1087);
  EXPECT_EQ(l.t.stream_id[0], 2);
  EXPECT_EQ(l.t.task_id[0], 61653);
  EXPECT_EQ(l.t.step_id[0], 19);
  EXPECT_EQ(l.t.block_dim[0], 16);
  EXPECT_EQ(l.s(l.t.input_shapes, 0), "81920,4096;8192,512");
  EXPECT_EQ(l.s(l.t.input_dtypes, 0), "DT_BF16;DT_BF16");
  EXPECT_EQ(l.s(l.t.input_formats, 0), "ND;ND");
  EXPECT_EQ(l.s(l.t.output_shapes, 0), "4096,512");
  EXPECT_DOUBLE_EQ(l.metric("aic_mac_time(us)", 0), 151.425);
  EXPECT_DOUBLE_EQ(l.metric("cube_utilization(%)", 0), 79.295);
  // Last row (no final newline): shapes `""";"""` and `""""""`.
  EXPECT_EQ(l.s(l.t.name, 28), "aclnnAdd_AddAiCore_Add");
  EXPECT_EQ(l.t.start_ns[28], 1736413974268747953LL);
  EXPECT_EQ(l.s(l.t.input_shapes, 28), ";");
  EXPECT_EQ(l.t.output_shapes[28], 0u);
  EXPECT_EQ(l.stats.count(Stat::csv_truncated_last_row), 1u);
}

TEST(KernelDetailsReal, MissingFileIsAnIoError) {
  StringPool pool;
  model::KernelTable t;
  Stats stats;
  Status st = import_kernel_details(fs::path("/nonexistent/dir/kernel_details.csv"), pool, t, stats);
  EXPECT_EQ(st.code(), ErrorCode::kIo);
  EXPECT_NE(st.message().find("/nonexistent/dir/kernel_details.csv"), std::string::npos);
}

}  // namespace
}  // namespace ascprof::importers

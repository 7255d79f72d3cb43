// kernel_details.csv header eras and malformed inputs built inside the tests.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ascprof/common/numbers.hpp"
#include "ascprof/importers/kernel_details.hpp"
#include "support/test_support.hpp"

namespace ascprof::importers {
namespace {

using model::kAbsentI32;
using model::kAbsentI64;

// Headers copied verbatim from input-formats.md §2.
constexpr std::string_view kE1 =
    "Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block "
    "Dim,Mix Block Dim,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output "
    "Formats,Context ID,aicore_time(us),aic_total_cycles,aic_mac_fp16_ratio,aic_mac_int8_ratio,aic_cube_fops,aic_"
    "vector_fops,aiv_time(us),aiv_total_cycles,aiv_vec_fp32_ratio,aiv_vec_fp16_ratio,aiv_vec_int32_ratio,aiv_vec_"
    "misc_ratio,aiv_cube_fops,aiv_vector_fops";
constexpr std::string_view kE1Prime =
    "Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block "
    "Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data "
    "Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles,aic_l0a_read_bw(GB/s),aic_l0a_write_bw(GB/"
    "s),aic_l0b_read_bw(GB/s),aic_l0b_write_bw(GB/s),aic_l0c_read_bw_cube(GB/s),aic_l0c_write_bw_cube(GB/s),aiv_"
    "time(us),aiv_total_cycles,aiv_l0c_read_bw(GB/s),aiv_l0c_write_bw(GB/s)";
constexpr std::string_view kE2Prefix =
    "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),Wait "
    "Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output "
    "Data Types,Output Formats,Context ID";
constexpr std::string_view kPipeUtil =
    "aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aic_scalar_time(us),aic_scalar_ratio,aic_mte1_"
    "time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_"
    "rate,aiv_time(us),aiv_total_cycles,aiv_vec_time(us),aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_"
    "time(us),aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)";
constexpr std::string_view kE3Prefix =
    "Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),Wait "
    "Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output "
    "Data Types,Output Formats,Context ID";
constexpr std::string_view kE4Prefix =
    "Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),Wait "
    "Time(us),Block Num,Mix Block Num,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output "
    "Data Types,Output Formats,Context ID";
constexpr std::string_view kLevel0E2 =
    "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim";
constexpr std::string_view kLevel0E3 =
    "Step Id,Device_id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim";
constexpr std::string_view kLevel0E4 =
    "Step Id,Device_id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Num,Input "
    "Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats";

std::string zeros(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += i ? ",0.5" : "0.5";
  return s;
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

void load(Loaded& l, std::string_view text, std::string_view name = "k.csv", CsvOptions opt = {}) {
  l.st = import_kernel_details(text, name, l.pool, l.t, l.stats, opt);
}

TEST(KernelDetailsEras, E1ArithmeticUtilization) {
  std::string text(kE1);
  text +=
      "\r\n1,4294967295,1259,16,ZerosLike46,ZerosLike,AI_VECTOR_CORE,1699529622790614.8,607.98,0,48,0,"
      "\"\"\"544404480\"\"\",FLOAT16,FORMAT_ND,\"\"\"544404480\"\"\",FLOAT16,FORMAT_ND,N/A," +
      zeros(14) + "\r\n";
  Loaded l;
  load(l, text);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  ASSERT_EQ(l.t.size(), 1u);
  EXPECT_EQ(l.t.header.era, "E1");
  EXPECT_FALSE(l.t.header.has_hf32);
  EXPECT_FALSE(l.t.header.has_op_state);
  EXPECT_EQ(l.t.start_ns[0], 1699529622790614800LL);
  EXPECT_EQ(l.t.metrics.size(), 14u);
  EXPECT_GE(l.t.metric_index("aic_mac_fp16_ratio"), 0);
  EXPECT_EQ(l.t.op_state[0], 0u);  // column absent
  EXPECT_EQ(l.t.hf32_eligible[0], 0u);
}

TEST(KernelDetailsEras, E1PrimeMemoryL0) {
  std::string text(kE1Prime);
  text +=
      "\n2,4294967295,2451,16,ZerosLike,ZerosLike,AI_CORE,1695115378713661,496.8508,0,48,0,NO,"
      "\"\"\"232138240\"\"\",FLOAT,FORMAT_ND,\"\"\"232138240\"\"\",FLOAT,FORMAT_ND,N/A," +
      zeros(12) + "\n";
  Loaded l;
  load(l, text);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  EXPECT_EQ(l.t.header.era, "E1");
  EXPECT_TRUE(l.t.header.has_hf32);
  EXPECT_EQ(l.s(l.t.hf32_eligible, 0), "NO");
  EXPECT_EQ(l.t.metrics.size(), 12u);
  EXPECT_GE(l.t.metric_index("aic_l0c_write_bw_cube(GB/s)"), 0);
}

TEST(KernelDetailsEras, E2PipeUtilization) {
  std::string text = std::string(kE2Prefix) + "," + std::string(kPipeUtil) + "\r\n";
  text +=
      "50,4294967295,11051,2,trans_TransData_0,TransData,dynamic,AI_VECTOR_CORE,1736408883704643.212\t,53.741,0,32,"
      "0,NO,\"\"\"32,3,224,224\"\"\",FLOAT,NCHW,\"\"\"32,1,224,224,8\"\"\",FLOAT,NC1HWC0,N/A," +
      zeros(25) + "\r\n";
  Loaded l;
  load(l, text);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  EXPECT_EQ(l.t.header.era, "E2");
  EXPECT_TRUE(l.t.header.has_op_state);
  EXPECT_FALSE(l.t.header.has_device_id);
  EXPECT_EQ(l.t.start_ns[0], 1736408883704643212LL);
  EXPECT_EQ(l.s(l.t.input_shapes, 0), "32,3,224,224");
  EXPECT_EQ(l.t.metrics.size(), 25u);
  EXPECT_DOUBLE_EQ(l.metric("aic_fixpipe_time(us)", 0), 0.5);
}

TEST(KernelDetailsEras, E3DeviceId) {
  std::string text = std::string(kE3Prefix) + "," + std::string(kPipeUtil) + "\r\n";
  text +=
      "13,0,4294967295,77,2,aclnnMatmul_MatMulV3Common_MatMulV3,MatMulV3,dynamic,AI_CORE,1764246877073569.640\t,"
      "1892.920,1881.080000,20,0,NO,\"\"\"151936,1024;1,4096;1\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"4096,151936\"\"\","
      "DT_BF16,ND,N/A," +
      zeros(25) + "\r\n";
  text +=
      "13,0,4294967295,N/A,N/A,hcom_allReduce__1_2_3,hcom_allReduce_,N/A,COMMUNICATION,1764246877075569.640\t,"
      "10.000,107.640000,0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A";
  for (int i = 0; i < 25; ++i) text += ",N/A";
  text += "\r\n";
  Loaded l;
  load(l, text);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  ASSERT_EQ(l.t.size(), 2u);
  EXPECT_EQ(l.t.header.era, "E3");
  EXPECT_TRUE(l.t.header.has_device_id);
  EXPECT_EQ(l.t.device_id[0], 0);
  EXPECT_EQ(l.t.step_id[0], 13);
  EXPECT_EQ(l.t.start_ns[0], 1764246877073569640LL);
  EXPECT_EQ(l.t.dur_ns[0], 1892920);
  EXPECT_EQ(l.t.wait_ns[0], 1881080);
  EXPECT_EQ(l.s(l.t.input_shapes, 0), "151936,1024;1,4096;1");
  EXPECT_EQ(l.s(l.t.accelerator_core, 1), "COMMUNICATION");
  EXPECT_EQ(l.t.task_id[1], kAbsentI64);
  EXPECT_EQ(l.t.stream_id[1], kAbsentI32);
  EXPECT_EQ(l.t.mix_block_dim[1], kAbsentI32);
  EXPECT_TRUE(std::isnan(l.metric("aiv_time(us)", 1)));
  // N/A cells: Task ID, Stream ID, Mix Block Dim, Context ID x2 and 25 metrics.
  EXPECT_EQ(l.stats.count(Stat::kd_na_value), 30u);
  EXPECT_EQ(l.stats.count(Stat::kd_bad_metric), 0u);
}

TEST(KernelDetailsEras, E4BlockNumFull) {
  std::string text = std::string(kE4Prefix) + "," + std::string(kPipeUtil) + "\n";
  text +=
      "1,3,4294967295,77,2,k,T,static,MIX_AIC,100.5,2,0,24,48,YES,\"\"\"\"\"\",,,\"\"\";\"\"\",,,0," + zeros(25) + "\n";
  Loaded l;
  load(l, text);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  EXPECT_EQ(l.t.header.era, "E4");
  EXPECT_EQ(l.t.header.block_column, "Block Num");
  EXPECT_EQ(l.t.block_dim[0], 24);
  EXPECT_EQ(l.t.mix_block_dim[0], 48);
  EXPECT_EQ(l.t.device_id[0], 3);
  EXPECT_EQ(l.t.context_id[0], 0);
  EXPECT_EQ(l.t.input_shapes[0], 0u);  // `""""""` is an empty shape list
  EXPECT_EQ(l.s(l.t.output_shapes, 0), ";");
  EXPECT_EQ(l.t.start_ns[0], 100500);
}

TEST(KernelDetailsEras, Level0ShortHeaders) {
  struct Case {
    std::string_view header;
    std::string row;
    const char* era;
    const char* block;
    bool device;
  };
  const Case cases[] = {
      {kLevel0E2, "50,trans_TransData_0,N/A,N/A,1736405443881410.320\t,50.621,0,0", "level0-E2", "Block Dim", false},
      {kLevel0E3, "50,1,trans_TransData_0,N/A,N/A,1736405443881410.320\t,50.621,0,0", "level0-E3", "Block Dim", true},
      {kLevel0E4, "50,1,trans_TransData_0,N/A,N/A,1736405443881410.320\t,50.621,0,0,\"\"\"8,8\"\"\",FLOAT,ND,,,",
       "level0-E4", "Block Num", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.era);
    Loaded l;
    load(l, std::string(c.header) + "\r\n" + c.row + "\r\n");
    ASSERT_TRUE(l.st.ok()) << l.st.to_string();
    ASSERT_EQ(l.t.size(), 1u);
    EXPECT_EQ(l.t.header.era, c.era);
    EXPECT_TRUE(l.t.header.level0_short);
    EXPECT_EQ(l.t.header.block_column, c.block);
    EXPECT_EQ(l.t.header.has_device_id, c.device);
    EXPECT_EQ(l.t.start_ns[0], 1736405443881410320LL);
    EXPECT_EQ(l.t.dur_ns[0], 50621);
    EXPECT_EQ(l.t.model_id[0], kAbsentI64);
    EXPECT_TRUE(l.t.metrics.empty());
    EXPECT_EQ(l.s(l.t.accelerator_core, 0), "N/A");
  }
  Loaded l;
  load(l, std::string(kLevel0E4) + "\n" + cases[2].row + "\n");
  EXPECT_EQ(l.s(l.t.input_shapes, 0), "8,8");
  EXPECT_EQ(l.s(l.t.input_formats, 0), "ND");
}

TEST(KernelDetailsColumns, AlternativeNamesAndPerRowFallback) {
  // Reference candidate lists: Op Name for Name, Start Time / Duration / Wait Time without (us),
  // Core Type for Accelerator Core; a row whose Core Type is empty falls back to Type.
  const std::string text =
      "op name,type,CORE TYPE,Start Time,Duration,Wait Time,StreamId\n"
      "k1,MatMul,AI_CORE,10.5,2,1,7\n"
      "k2,Add,,11.5,3,0,8\n";
  Loaded l;
  load(l, text);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  ASSERT_EQ(l.t.size(), 2u);
  EXPECT_EQ(l.s(l.t.name, 0), "k1");
  EXPECT_EQ(l.s(l.t.accelerator_core, 0), "AI_CORE");
  EXPECT_EQ(l.s(l.t.accelerator_core, 1), "Add");
  EXPECT_EQ(l.s(l.t.type, 0), "MatMul");
  EXPECT_EQ(l.t.start_ns[1], 11500);
  EXPECT_EQ(l.t.dur_ns[1], 3000);
  EXPECT_EQ(l.t.stream_id[1], 8);
}

TEST(KernelDetailsColumns, PipelineAlternativesGetCanonicalNames) {
  const std::string text =
      "Name,Start Time(us),Duration(us),AI Core Time(us),AI Vector Time(us),aic_mac_time,aiv_vec_time,Context ID,"
      "aiv_mte3_time(us),my_metric\n"
      "k,1,2,3.5,4.5,5.5,6.5,N/A,7.5,8.5\n";
  Loaded l;
  load(l, text);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  std::vector<std::string> names;
  for (const auto& m : l.t.metrics) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"aicore_time(us)", "aiv_time(us)", "aic_mac_time(us)", "aiv_vec_time(us)",
                                             "aiv_mte3_time(us)", "my_metric"}));
  EXPECT_DOUBLE_EQ(l.metric("aicore_time(us)", 0), 3.5);
  EXPECT_DOUBLE_EQ(l.metric("aiv_time(us)", 0), 4.5);
  EXPECT_DOUBLE_EQ(l.metric("aic_mac_time(us)", 0), 5.5);
  EXPECT_DOUBLE_EQ(l.metric("aiv_vec_time(us)", 0), 6.5);
  EXPECT_DOUBLE_EQ(l.metric("my_metric", 0), 8.5);
}

TEST(KernelDetailsColumns, UnknownColumnsBeforeContextIdKeptOnlyWhenNumeric) {
  const std::string text =
      "Name,Start Time(us),Extra Count,Extra Text,All Empty,Context ID,m1\n"
      "a,1,5,hello,,0,1.5\n"
      "b,2,N/A,42,,0,x\n"
      "c,3,7,world,,0,2.5\n";
  Loaded l;
  load(l, text);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  std::vector<std::string> names;
  for (const auto& m : l.t.metrics) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Extra Count", "m1"}));
  EXPECT_DOUBLE_EQ(l.metric("Extra Count", 2), 7.0);
  EXPECT_TRUE(std::isnan(l.metric("Extra Count", 1)));
  // After Context ID a non-number is a bad metric cell, counted with its line.
  EXPECT_TRUE(std::isnan(l.metric("m1", 1)));
  EXPECT_EQ(l.stats.count(Stat::kd_bad_metric), 1u);
  EXPECT_EQ(l.stats.samples(Stat::kd_bad_metric)[0], "k.csv:line 3: m1 'x' is not a number; read as absent");
}

TEST(KernelDetailsColumns, EndTimeFillsMissingDuration) {
  const std::string text = "Name,Start Time(us),Duration(us),End Time(us)\nk,10,0,12.5\nj,20,1,30\n";
  Loaded l;
  load(l, text);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  EXPECT_EQ(l.t.dur_ns[0], 2500);
  EXPECT_EQ(l.t.dur_ns[1], 1000);  // a positive duration wins over End
}

TEST(KernelDetailsColumns, NumbersInUnusualForms) {
  const std::string text =
      "Name,Start Time(us),Duration(us),Wait Time(us),Block Dim,Context ID,m\n"
      "a,1.69512E+15,1e1,+2.5,48.0,N/A,\"1,234.5\"\n"
      "b, 1736405443881410.320\t ,  7 ,0.0000004,8,0,-3.25\n";
  Loaded l;
  load(l, text);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  EXPECT_EQ(l.t.start_ns[0], 1695120000000000000LL);
  EXPECT_EQ(l.t.dur_ns[0], 10000);
  EXPECT_EQ(l.t.wait_ns[0], 2500);
  EXPECT_EQ(l.t.block_dim[0], 48);
  EXPECT_DOUBLE_EQ(l.metric("m", 0), 1234.5);
  EXPECT_EQ(l.t.start_ns[1], 1736405443881410320LL);
  EXPECT_EQ(l.t.dur_ns[1], 7000);
  EXPECT_EQ(l.t.wait_ns[1], 0);
  EXPECT_DOUBLE_EQ(l.metric("m", 1), -3.25);
  EXPECT_EQ(l.stats.count(Stat::kd_bad_integer), 0u);
}

TEST(KernelDetailsColumns, FastNumberPathsAgreeWithCommonParsers) {
  // Times and metrics take inlined fast paths; they must give exactly what parse_us_to_ns /
  // parse_double give.
  const char* times[] = {"0",
                         "1881.080000",
                         "107.6405",
                         "107.64049",
                         "1.",
                         "0.0005",
                         "1764246877073569.640",
                         "12.3456789",
                         "9223372036854774.9994",
                         "00012.5",
                         "1e3",
                         "-2.5",
                         "9999999999999999.9999"};
  const char* metrics[] = {"0",
                           "0.0",
                           "-0.5",
                           "123456789.123456789",
                           "1e-3",
                           "0.1",
                           "9007199254740993",
                           "3.14159265358979323846",
                           "0.000000000000000000000001",
                           "+7.25",
                           "61.5",
                           "1850"};
  std::string text = "Name,Start Time(us),Context ID,m\n";
  for (size_t i = 0; i < std::size(times); ++i)
    text += "k,1," + std::string("0,") + metrics[i % std::size(metrics)] + "\n";
  std::string wt = "Name,Start Time(us),Wait Time(us)\n";
  for (const char* t : times) wt += std::string("k,1,") + t + "\n";
  Loaded l;
  load(l, text);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  for (size_t i = 0; i < std::size(metrics); ++i) {
    const auto want = parse_double(metrics[i]);
    ASSERT_TRUE(want.has_value()) << metrics[i];
    EXPECT_EQ(l.metric("m", i), *want) << metrics[i];
  }
  Loaded w;
  load(w, wt);
  ASSERT_TRUE(w.st.ok()) << w.st.to_string();
  ASSERT_EQ(w.t.size(), std::size(times));
  for (size_t i = 0; i < std::size(times); ++i) {
    const auto want = parse_us_to_ns(times[i]);
    EXPECT_EQ(w.t.wait_ns[i], want && *want > 0 ? *want : 0) << times[i];
  }
  EXPECT_EQ(w.t.wait_ns[2], 107641);
  EXPECT_EQ(w.t.wait_ns[3], 107640);
  EXPECT_EQ(w.t.wait_ns[1], 1881080);
  EXPECT_EQ(w.t.wait_ns[8], 9223372036854774999LL);
  EXPECT_EQ(w.t.wait_ns[12], 0);                    // does not fit in int64 ns
  EXPECT_EQ(w.stats.count(Stat::kd_bad_wait), 2u);  // the negative one and the overflow
}

TEST(KernelDetailsMalformed, NonNumericStartDropsRowWithLine) {
  const std::string text = "Name,Start Time(us),Duration(us)\na,1,2\nb,abc,2\nc,,2\nd,4,2\n";
  Loaded l;
  load(l, text);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  ASSERT_EQ(l.t.size(), 2u);
  EXPECT_EQ(l.s(l.t.name, 1), "d");
  EXPECT_EQ(l.t.source_line[1], 5u);
  EXPECT_EQ(l.stats.count(Stat::kd_bad_start_time), 2u);
  ASSERT_EQ(l.stats.samples(Stat::kd_bad_start_time).size(), 2u);
  EXPECT_EQ(l.stats.samples(Stat::kd_bad_start_time)[0],
            "k.csv:line 3: Start Time(us) 'abc' is not a number; row dropped");
  EXPECT_EQ(l.stats.samples(Stat::kd_bad_start_time)[1], "k.csv:line 4: Start Time(us) is empty; row dropped");
}

TEST(KernelDetailsMalformed, BadDurationWaitAndIntegersAreCountedAndZeroed) {
  const std::string text =
      "Name,Start Time(us),Duration(us),Wait Time(us),Stream ID,Task ID\n"
      "a,1,-5,xyz,two,N/A\n";
  Loaded l;
  load(l, text);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  ASSERT_EQ(l.t.size(), 1u);
  EXPECT_EQ(l.t.dur_ns[0], 0);
  EXPECT_EQ(l.t.wait_ns[0], 0);
  EXPECT_EQ(l.t.stream_id[0], kAbsentI32);
  EXPECT_EQ(l.t.task_id[0], kAbsentI64);
  EXPECT_EQ(l.stats.count(Stat::kd_bad_duration), 1u);
  EXPECT_EQ(l.stats.count(Stat::kd_bad_wait), 1u);
  EXPECT_EQ(l.stats.count(Stat::kd_bad_integer), 1u);
  EXPECT_EQ(l.stats.count(Stat::kd_na_value), 1u);
  EXPECT_EQ(l.stats.samples(Stat::kd_bad_integer)[0],
            "k.csv:line 2: Stream ID 'two' is not an integer; read as absent");
}

TEST(KernelDetailsMalformed, MissingRequiredColumnNamesColumnAndFile) {
  Loaded l;
  load(l, "Step Id,Name,Duration(us)\n1,a,2\n", "rank3/kernel_details.csv");
  EXPECT_EQ(l.st.code(), ErrorCode::kSchema);
  EXPECT_EQ(l.st.message(),
            "rank3/kernel_details.csv:line 1: missing required column 'Start Time(us)' (header has: Step Id, Name, "
            "Duration(us))");
  EXPECT_EQ(l.t.size(), 0u);
  Loaded n;
  load(n, "Step Id,Start Time(us)\n1,2\n");
  EXPECT_EQ(n.st.code(), ErrorCode::kSchema);
  EXPECT_NE(n.st.message().find("missing required column 'Name'"), std::string::npos);
}

TEST(KernelDetailsMalformed, EmptyFileAndHeaderOnly) {
  for (std::string_view empty : {std::string_view(""), std::string_view("\r\n\n"), std::string_view("\xEF\xBB\xBF")}) {
    Loaded l;
    load(l, empty, "e.csv");
    EXPECT_EQ(l.st.code(), ErrorCode::kSchema);
    EXPECT_EQ(l.st.message(), "e.csv: empty file");
  }
  Loaded h;
  load(h, std::string(kLevel0E2) + "\r\n");
  ASSERT_TRUE(h.st.ok()) << h.st.to_string();
  EXPECT_EQ(h.t.size(), 0u);
  EXPECT_EQ(h.t.header.era, "level0-E2");
  Loaded h2;
  load(h2, std::string(kE2Prefix) + "," + std::string(kPipeUtil));  // no final newline either
  ASSERT_TRUE(h2.st.ok()) << h2.st.to_string();
  EXPECT_EQ(h2.t.size(), 0u);
  EXPECT_EQ(h2.t.metrics.size(), 25u);
}

TEST(KernelDetailsMalformed, TruncatedMidRowAndMidQuote) {
  const std::string head = std::string(kE2Prefix) + "," + std::string(kPipeUtil) + "\r\n";
  const std::string good =
      "50,4294967295,1,2,k0,T,dynamic,AI_CORE,1736408883704643.212\t,53.741,0,32,0,NO,\"\"\"1,2\"\"\",FLOAT,ND,"
      "\"\"\"1,2\"\"\",FLOAT,ND,N/A," +
      zeros(25) + "\r\n";
  {
    // Cut after the Wait Time cell: the row keeps its start, the rest reads as absent.
    Loaded l;
    load(l, head + good + "50,4294967295,2,2,k1,T,dynamic,AI_CORE,1736408883704743.212\t,1.5,0");
    ASSERT_TRUE(l.st.ok()) << l.st.to_string();
    ASSERT_EQ(l.t.size(), 2u);
    EXPECT_EQ(l.t.start_ns[1], 1736408883704743212LL);
    EXPECT_EQ(l.t.dur_ns[1], 1500);
    EXPECT_EQ(l.t.block_dim[1], kAbsentI32);
    EXPECT_TRUE(std::isnan(l.metric("aiv_time(us)", 1)));
    EXPECT_EQ(l.stats.count(Stat::csv_row_too_few_fields), 1u);
    EXPECT_EQ(l.stats.count(Stat::csv_truncated_last_row), 1u);
  }
  {
    // Cut inside a tripled-quote shape cell: the partial row is dropped and counted.
    Loaded l;
    load(l, head + good + "50,4294967295,2,2,k1,T,dynamic,AI_CORE,1736408883704743.212\t,1.5,0,32,0,NO,\"\"\"4096,");
    ASSERT_TRUE(l.st.ok()) << l.st.to_string();
    ASSERT_EQ(l.t.size(), 1u);
    EXPECT_EQ(l.stats.count(Stat::csv_unterminated_quote), 1u);
    EXPECT_EQ(l.stats.samples(Stat::csv_unterminated_quote)[0],
              "k.csv:line 3: file ended inside a quoted field; partial row dropped");
  }
}

TEST(KernelDetailsMalformed, ExtraAndMissingFieldsPerRow) {
  const std::string text = "Name,Start Time(us),Duration(us)\na,1,2,surplus,more\nb,2\nc,3,4\n";
  Loaded l;
  load(l, text);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  ASSERT_EQ(l.t.size(), 3u);
  EXPECT_EQ(l.t.dur_ns[0], 2000);
  EXPECT_EQ(l.t.dur_ns[1], 0);
  EXPECT_EQ(l.t.dur_ns[2], 4000);
  EXPECT_EQ(l.stats.count(Stat::csv_row_too_many_fields), 1u);
  EXPECT_EQ(l.stats.count(Stat::csv_row_too_few_fields), 1u);
}

TEST(KernelDetailsMalformed, CrlfLfAndBomGiveIdenticalTables) {
  const std::string lf = std::string(kLevel0E2) + "\n50,a,N/A,N/A,1.5\t,2,0,0\n50,b,N/A,HCCL,3.5\t,2,0,0\n";
  std::string crlf;
  for (char c : lf) {
    if (c == '\n')
      crlf += "\r\n";
    else
      crlf += c;
  }
  const std::string bom = "\xEF\xBB\xBF" + crlf;
  Loaded a, b, c;
  load(a, lf);
  load(b, crlf);
  load(c, bom);
  for (Loaded* l : {&a, &b, &c}) {
    ASSERT_TRUE(l->st.ok()) << l->st.to_string();
    ASSERT_EQ(l->t.size(), 2u);
    EXPECT_EQ(l->t.header.columns.front(), "Step Id");
    EXPECT_TRUE(l->t.header.has_step_id);
    EXPECT_EQ(l->t.start_ns, (std::vector<int64_t>{1500, 3500}));
    EXPECT_EQ(l->s(l->t.accelerator_core, 1), "HCCL");
    EXPECT_EQ(l->t.source_line, (std::vector<uint64_t>{2, 3}));
  }
  EXPECT_EQ(c.stats.count(Stat::csv_bom_skipped), 1u);
}

TEST(KernelDetailsMalformed, EmbeddedNulIsCounted) {
  std::string text = "Name,Start Time(us)\nab";
  text += '\0';
  text += "c,5\n";
  Loaded l;
  load(l, text);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  ASSERT_EQ(l.t.size(), 1u);
  EXPECT_EQ(l.stats.count(Stat::csv_embedded_nul), 1u);
  EXPECT_EQ(l.pool.view(l.t.name[0]).size(), 4u);
}

TEST(KernelDetailsMalformed, FieldAboveLimitIsKLimit) {
  CsvOptions opt;
  opt.max_field_bytes = 1000;
  const std::string text = "Name,Start Time(us)\na,1\n" + std::string(2000, 'n') + ",2\n";
  Loaded l;
  load(l, text, "big.csv", opt);
  EXPECT_EQ(l.st.code(), ErrorCode::kLimit);
  EXPECT_EQ(l.st.message(), "big.csv:line 3: field of 2000 bytes exceeds the limit of 1000 bytes");
  EXPECT_EQ(l.t.size(), 0u);
}

TEST(KernelDetailsMalformed, OutOfOrderRowsAreKeptAndCounted) {
  Loaded l;
  load(l, "Name,Start Time(us)\na,5\nb,3\nc,6\n");
  ASSERT_TRUE(l.st.ok());
  EXPECT_EQ(l.t.start_ns, (std::vector<int64_t>{5000, 3000, 6000}));
  EXPECT_EQ(l.stats.count(Stat::kd_rows_out_of_order), 1u);
}

TEST(KernelDetails, PathOverloadReadsAFileAndReplacesOutput) {
  testing::ScratchDir dir("kd");
  testing::write_text(dir / "kernel_details.csv", std::string(kLevel0E2) + "\r\n50,a,N/A,N/A,1.5\t,2,0,0\r\n");
  StringPool pool;
  model::KernelTable t;
  t.start_ns = {1, 2, 3};  // stale content is replaced
  Stats stats;
  Status st = import_kernel_details(dir / "kernel_details.csv", pool, t, stats);
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.start_ns[0], 1500);
  EXPECT_EQ(t.name.size(), 1u);
}

TEST(KernelDetails, StringsAreInternedOnce) {
  std::string text = "Name,Type,Start Time(us)\n";
  for (int i = 0; i < 1000; ++i) text.append(1, 'k').append(std::to_string(i % 3)).append(",T,1\n");
  Loaded l;
  load(l, text);
  ASSERT_TRUE(l.st.ok());
  EXPECT_EQ(l.t.size(), 1000u);
  EXPECT_EQ(l.pool.size(), 5u);  // "", k0, k1, k2, T
  EXPECT_EQ(l.t.name[0], l.t.name[3]);
}

}  // namespace
}  // namespace ascprof::importers

namespace ascprof::importers {
namespace {

// Damaged inputs (quotes, delimiters, line ends, NULs, cuts at random places) must never crash and
// must always leave a consistent table: every column as long as the row count.
TEST(KernelDetailsRobustness, RandomDamageKeepsColumnsConsistent) {
  std::string base = std::string(kE3Prefix) + "," + std::string(kPipeUtil) + "\r\n";
  for (int i = 0; i < 12; ++i) {
    base += "13,0,4294967295," + std::to_string(77 + i) +
            ",2,aclnnMatmul_MatMulV3Common_MatMulV3,MatMulV3,dynamic,AI_CORE,1764246877073569.640\t,1892.920,"
            "1881.080000,20,0,NO,\"\"\"151936,1024;1,4096;1\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"4096,151936\"\"\","
            "DT_BF16,ND,N/A," +
            zeros(25) + "\r\n";
  }
  const char kNoise[] = {'"', ',', '\n', '\r', '\0', '\t', 'x', '9', '.', '-'};
  uint64_t rng = 0x9E3779B97F4A7C15ULL;
  auto next = [&rng](uint64_t bound) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng % bound;
  };
  size_t ok_count = 0;
  for (int round = 0; round < 400; ++round) {
    std::string text = base;
    const int edits = 1 + static_cast<int>(next(6));
    for (int e = 0; e < edits; ++e) {
      const size_t at = next(text.size());
      switch (next(3)) {
        case 0:
          text[at] = kNoise[next(sizeof kNoise)];
          break;
        case 1:
          text.insert(at, 1, kNoise[next(sizeof kNoise)]);
          break;
        default:
          text.erase(at, 1 + next(8));
          break;
      }
    }
    if (next(4) == 0) text.resize(next(text.size()));
    Loaded l;
    load(l, text);
    if (!l.st.ok()) {
      EXPECT_TRUE(l.st.code() == ErrorCode::kSchema || l.st.code() == ErrorCode::kParse) << l.st.to_string();
      EXPECT_EQ(l.t.size(), 0u);
      continue;
    }
    ++ok_count;
    const size_t n = l.t.size();
    EXPECT_LE(n, 12u + 6u);
    for (size_t col :
         {l.t.source_line.size(),    l.t.step_id.size(),          l.t.device_id.size(),     l.t.model_id.size(),
          l.t.task_id.size(),        l.t.stream_id.size(),        l.t.name.size(),          l.t.type.size(),
          l.t.op_state.size(),       l.t.accelerator_core.size(), l.t.dur_ns.size(),        l.t.wait_ns.size(),
          l.t.block_dim.size(),      l.t.mix_block_dim.size(),    l.t.hf32_eligible.size(), l.t.input_shapes.size(),
          l.t.input_dtypes.size(),   l.t.input_formats.size(),    l.t.output_shapes.size(), l.t.output_dtypes.size(),
          l.t.output_formats.size(), l.t.context_id.size()})
      EXPECT_EQ(col, n);
    for (const auto& m : l.t.metrics) EXPECT_EQ(m.values.size(), n) << m.name;
    for (size_t i = 1; i < n; ++i) EXPECT_GT(l.t.source_line[i], l.t.source_line[i - 1]);
  }
  EXPECT_GT(ok_count, 200u);
}

}  // namespace
}  // namespace ascprof::importers

namespace ascprof::importers {
namespace {

// Files above 4 MiB take the sampled row estimate and the prefaulted reservation; rows of very
// different lengths in different regions must still all arrive, with capacity not far above size.
TEST(KernelDetailsLarge, SampledEstimateWithUnevenRows) {
  std::string text = std::string(kE3Prefix) + "," + std::string(kPipeUtil) + "\r\n";
  const std::string long_tail = ",N/A," + zeros(25) + "\r\n";
  size_t rows = 0;
  while (text.size() < (size_t{3} << 20)) {  // short rows first: a dense region
    text += "1,0,4294967295,1,2,k,T,dynamic,AI_CORE," + std::to_string(1000 + rows) + ",1,0\r\n";
    ++rows;
  }
  const size_t short_rows = rows;
  while (text.size() < (size_t{9} << 20)) {
    text += "1,0,4294967295,1,2,kernel_" + std::to_string(rows % 50) + ",T,dynamic,AI_VECTOR_CORE," +
            std::to_string(1000 + rows) +
            ".5\t,1,0,40,0,NO,\"\"\"4096,128\"\"\",DT_BF16,ND,\"\"\"4096,128\"\"\",DT_BF16,ND" + long_tail;
    ++rows;
  }
  Loaded l;
  load(l, text);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  ASSERT_EQ(l.t.size(), rows);
  EXPECT_EQ(l.t.start_ns.front(), 1000000);
  EXPECT_EQ(l.t.start_ns.back(), static_cast<int64_t>(1000 + rows - 1) * 1000 + 500);
  EXPECT_EQ(l.s(l.t.input_shapes, rows - 1), "4096,128");
  EXPECT_DOUBLE_EQ(l.metric("aiv_time(us)", rows - 1), 0.5);
  EXPECT_TRUE(std::isnan(l.metric("aiv_time(us)", 0)));
  EXPECT_LE(l.t.start_ns.capacity(), rows + rows / 4 + 1024);
  EXPECT_EQ(l.stats.count(Stat::csv_row_too_few_fields), short_rows);  // the short rows lack metric cells
}

}  // namespace
}  // namespace ascprof::importers

namespace ascprof::importers {
namespace {

TEST(KernelDetailsColumns, UntrimmedFastPathsAgreeWithTrimmedParsing) {
  // Numbers are first tried on the cell as written (8-digit word steps for times, a "0.0" shortcut
  // for metrics); blanks, signs and odd digits must still give what the general parsers give.
  const char* times[] = {"12345678",    "12345678.5",  "1234567.5",  "123456789",         " 12345678.25",
                         "12345678\t",  "1234567a",    "12345678a",  "1766406184511064.4951",
                         "17664061845110649", "00000000000000001.5", "1234567812345678", "+12.5"};
  const char* ints[] = {"0", "7", "123456789012345678", " 42", "42 ", "+5", "-3", "2147483647", "2147483648", "N/A",
                        "12a", ""};
  const char* metrics[] = {"0.0", "0", " 0.0", "0.0 ", "-0.0", "0.00", "00", "0.", "N/A", "6.138", "0.0x", ""};
  // `m` after Context ID: a metric even where its cell is text.
  std::string wt = "Name,Start Time(us),Wait Time(us),Stream ID,Context ID,m\n";
  const size_t n = std::size(times);
  for (size_t i = 0; i < n; ++i)
    wt += std::string("k,1,\"") + times[i] + "\"," + ints[i % std::size(ints)] + ",0," +
          metrics[i % std::size(metrics)] + "\n";
  Loaded l;
  load(l, wt);
  ASSERT_TRUE(l.st.ok()) << l.st.to_string();
  ASSERT_EQ(l.t.size(), n);
  for (size_t i = 0; i < n; ++i) {
    const auto want = parse_us_to_ns(times[i]);
    EXPECT_EQ(l.t.wait_ns[i], want && *want > 0 ? *want : 0) << times[i];
  }
  EXPECT_EQ(l.t.wait_ns[0], 12345678000LL);
  EXPECT_EQ(l.t.wait_ns[5], 12345678000LL);   // trailing TAB
  EXPECT_EQ(l.t.wait_ns[8], 1766406184511064495LL);
  EXPECT_EQ(l.t.wait_ns[11], 1234567812345678000LL);
  const int32_t want_stream[] = {0, 7, kAbsentI32 /* out of int32 range */, 42, 42, 5, -3, 2147483647,
                                 kAbsentI32, kAbsentI32, kAbsentI32, kAbsentI32, 0};
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(l.t.stream_id[i], want_stream[i]) << ints[i % std::size(ints)];
  for (size_t i = 0; i < n; ++i) {
    const char* m = metrics[i % std::size(metrics)];
    const double got = l.metric("m", i);
    const auto want = parse_double(trim(m));
    if (want) {
      EXPECT_EQ(got, *want) << m;
      EXPECT_EQ(std::signbit(got), std::signbit(*want)) << m;
    } else {
      EXPECT_TRUE(std::isnan(got)) << m;
    }
  }
}

}  // namespace
}  // namespace ascprof::importers

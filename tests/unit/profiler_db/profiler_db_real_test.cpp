// The database importer on real captures no one here wrote: db-cnn-level{0,1,2}, the same CNN job as
// the text captures e2-cnn-level{0,1,2} (another run, so times differ; PROVENANCE.md).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "ascprof/importers/kernel_details.hpp"
#include "ascprof/importers/profiler_db.hpp"
#include "support/test_support.hpp"

namespace ascprof {
namespace {

namespace fs = std::filesystem;
using testing::real_fixtures_dir;

fs::path db_of(const std::string& level, int rank) {
  return real_fixtures_dir() / ("db-cnn-" + level) / ("rank" + std::to_string(rank) + "_ascend_pt") /
         "ASCEND_PROFILER_OUTPUT" / ("ascend_pytorch_profiler_" + std::to_string(rank) + ".db");
}
fs::path analysis_of(const std::string& level, int rank) {
  return db_of(level, rank).parent_path() / "analysis.db";
}
fs::path text_of(const std::string& level, int rank) {
  return real_fixtures_dir() / ("e2-cnn-" + level) / ("rank" + std::to_string(rank) + "_ascend_pt") /
         "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv";
}

struct Loaded {
  StringPool pool;
  Stats stats;
  model::TraceTables trace;
  model::KernelTable k;
};

void load(const fs::path& db, Loaded& out) {
  ASSERT_TRUE(importers::import_db_trace(db, out.pool, out.trace, out.stats).ok());
  const Status st = importers::import_db_kernels(db, out.pool, out.trace.steps, out.k, out.stats);
  ASSERT_TRUE(st.ok()) << st.to_string();
}

// Every level: 191 kernel rows per rank, in the text export's order, names as the text twin's.
TEST(ProfilerDbReal, KernelRowsMatchTheTextCaptureOfTheSameJob) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  const std::map<std::string, size_t> min_same_names = {{"level0", 187}, {"level1", 179}, {"level2", 187}};
  for (const auto& [level, min_same] : min_same_names) {
    for (int rank = 0; rank < 2; ++rank) {
      SCOPED_TRACE(level + " rank " + std::to_string(rank));
      Loaded d;
      load(db_of(level, rank), d);
      ASSERT_EQ(d.k.size(), 191u);
      StringPool tp;
      Stats ts;
      model::KernelTable t;
      ASSERT_TRUE(importers::import_kernel_details(text_of(level, rank), tp, t, ts).ok());
      ASSERT_EQ(t.size(), 191u);
      size_t same = 0, comm = 0;
      for (size_t i = 0; i < 191; ++i) {
        same += d.pool.view(d.k.name[i]) == tp.view(t.name[i]) ? 1 : 0;
        comm += d.k.source_table[i] == static_cast<uint8_t>(model::KernelSource::kCommunicationOp) ? 1 : 0;
        if (i > 0) {
          EXPECT_LE(d.k.start_ns[i - 1], d.k.start_ns[i]);
        }
        EXPECT_GE(d.k.wait_ns[i], 0);
      }
      EXPECT_GE(same, min_same);
      EXPECT_EQ(comm, 4u);
      // Every row sits in the one profiled step, as the text's Step Id column says.
      for (size_t i = 0; i < 191; ++i) EXPECT_EQ(d.k.step_id[i], 50) << i;
    }
  }
}

TEST(ProfilerDbReal, Level2Rank0ColumnsReadAsTheTextExportSpellsThem) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  Loaded d;
  load(db_of("level2", 0), d);
  const auto& k = d.k;
  size_t compute = 0;
  for (size_t i = 0; i < k.size(); ++i)
    compute += k.source_table[i] == static_cast<uint8_t>(model::KernelSource::kComputeTask) ? 1 : 0;
  EXPECT_EQ(compute, 187u);
  // The first row: trans_TransData_0, TransData on the vector core, Block Dim 32, shapes unquoted.
  EXPECT_EQ(d.pool.view(k.name[0]), "trans_TransData_0");
  EXPECT_EQ(d.pool.view(k.type[0]), "TransData");
  EXPECT_EQ(d.pool.view(k.accelerator_core[0]), "AI_VECTOR_CORE");
  EXPECT_EQ(k.block_dim[0], 32);
  EXPECT_EQ(d.pool.view(k.input_shapes[0]), "32,3,224,224");
  EXPECT_EQ(d.pool.view(k.input_dtypes[0]), "FLOAT");
  EXPECT_EQ(k.stream_id[0], 2);
  EXPECT_EQ(k.task_id[0], 11049);
  EXPECT_EQ(k.context_id[0], model::kAbsentI32);  // 4294967295 in the database, N/A in the text
  EXPECT_EQ(k.start_ns[0], 1736414119651037828);
  EXPECT_EQ(k.dur_ns[0], 51641);
  EXPECT_EQ(k.wait_ns[0], 0);
  EXPECT_EQ(k.wait_ns[1], 1736414119651192391 - (1736414119651037828 + 51641));
  EXPECT_EQ(k.header.era, "DB-1.0.0");
  EXPECT_EQ(k.header.block_column, "Block Dim");  // schema 1.0 has blockDim
  // Conv2D1 (third row) has its PMU metrics pivoted: aicore_time(us) from aic_total_time (ns).
  const int aicore = k.metric_index("aicore_time(us)"), mac_ratio = k.metric_index("aic_mac_ratio");
  ASSERT_GE(aicore, 0);
  ASSERT_GE(mac_ratio, 0);
  EXPECT_EQ(d.pool.view(k.name[2]), "Conv2D1");
  EXPECT_NEAR(k.metrics[static_cast<size_t>(aicore)].values[2], 310.660763888889, 1e-9);
  EXPECT_NEAR(k.metrics[static_cast<size_t>(mac_ratio)].values[2], 0.522508474879373, 1e-12);
  // The hcom rows: Accelerator Core HCCL (schema 1.0's text spelling), Type hcom_allReduce_, no metrics.
  size_t hcom = 0;
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.source_table[i] != static_cast<uint8_t>(model::KernelSource::kCommunicationOp)) continue;
    ++hcom;
    EXPECT_EQ(d.pool.view(k.accelerator_core[i]), "HCCL");
    EXPECT_EQ(d.pool.view(k.type[i]), "hcom_allReduce_");
    EXPECT_EQ(d.pool.view(k.name[i]).substr(0, 16), "hcom_allReduce__");
    EXPECT_TRUE(std::isnan(k.metrics[static_cast<size_t>(aicore)].values[i]));
    EXPECT_EQ(k.block_dim[i], 0);
  }
  EXPECT_EQ(hcom, 4u);
}

TEST(ProfilerDbReal, TraceTablesCarryStepsLaunchesAndCommunication) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  Loaded d;
  load(db_of("level2", 0), d);
  const auto& tr = d.trace;
  ASSERT_EQ(tr.steps.size(), 1u);
  EXPECT_EQ(tr.steps.step[0], 50);
  EXPECT_EQ(tr.device_tasks.size(), 552u);       // every TASK row
  EXPECT_EQ(tr.comm_ops.size(), 4u);             // COMMUNICATION_OP
  EXPECT_EQ(tr.comm_plane_tasks.size(), 296u);   // COMMUNICATION_TASK_INFO ⋈ TASK
  // host ops: 2460 PYTORCH_API (ProfilerStep#50 among them) + 1133 CANN_API
  EXPECT_EQ(tr.host_ops.size(), 2460u + 1133u);
  // AICORE_FREQ: three samples at the nominal 1800 MHz, in time order
  EXPECT_EQ(tr.aicore_freq.ts_ns,
            (std::vector<int64_t>{1736414119518476000, 1736414119520479360, 1736414119924891000}));
  EXPECT_EQ(tr.aicore_freq.mhz, (std::vector<uint32_t>{1800, 1800, 1800}));
  // The 191 node launches link to device tasks as HostToDevice flows ('s' on the host, 'f' on the task).
  StrId h2d = 0;
  ASSERT_TRUE(d.pool.find("HostToDevice", &h2d));
  std::set<int64_t> starts, ends;
  for (size_t i = 0; i < tr.flows.size(); ++i) {
    if (tr.flows.cat[i] != h2d) continue;
    (tr.flows.phase[i] == 's' ? starts : ends).insert(tr.flows.id[i]);
  }
  EXPECT_GE(starts.size(), 150u);
  for (const int64_t id : starts) EXPECT_TRUE(ends.count(id)) << id;
  for (size_t i = 1; i < tr.device_tasks.size(); ++i) {
    EXPECT_LE(tr.device_tasks.start_ns[i - 1], tr.device_tasks.start_ns[i]);
  }
}

TEST(ProfilerDbReal, AnalysisDbGivesCommunicationAndStepTraceRows) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  StringPool pool;
  Stats stats;
  model::CommStatTable c;
  ASSERT_TRUE(importers::import_analysis_db_communication(analysis_of("level2", 0), pool, c, stats).ok());
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(pool.view(c.op_name[0]), "hcom_allReduce__865_0_1");
  EXPECT_EQ(c.group_hash[0], 11978775601474615865ULL);
  EXPECT_EQ(c.step[0], 50);
  EXPECT_EQ(pool.view(c.op_kind[0]), "allreduce");
  EXPECT_NEAR(c.elapse_ms[0], 80.45024740625, 1e-12);
  EXPECT_EQ(c.start_ns[0], 1736414119678217000);
  // HCCS traffic of the first op: 28.647232 MB in 1.80929621875 ms (its three bandwidth rows agree)
  const auto& hccs = c.transport[static_cast<size_t>(model::Transport::kHccs)];
  EXPECT_NEAR(hccs.size_mb[0], 28.647232, 1e-12);
  EXPECT_NEAR(hccs.bandwidth_gbps[0], 15.8334, 1e-12);
  EXPECT_NEAR(c.wait_ratio[0], std::round(0.04808096875 / (0.04808096875 + 0.23684471875) * 1e4) / 1e4, 1e-12);
  model::StepTraceTable s;
  ASSERT_TRUE(importers::import_analysis_db_step_trace(analysis_of("level2", 0), s, stats).ok());
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s.step[0], 50);
  EXPECT_NEAR(s.computing[0], 8900.456, 1e-9);
}

TEST(ProfilerDbReal, RankDeviceAndSchemaFromTheDatabase) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  Stats stats;
  auto info = importers::read_profiler_db_info(db_of("level1", 1), stats);
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  EXPECT_EQ(info->schema_version, "1.0.0");
  EXPECT_EQ(info->rank_id, 1);
  EXPECT_GE(info->device_id, 0);
}

}  // namespace
}  // namespace ascprof

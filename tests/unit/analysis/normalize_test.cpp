#include "ascprof/analysis/normalize.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "support/test_support.hpp"

namespace ascprof::analysis {
namespace {

struct Row {
  const char* name;
  const char* type;
  const char* core;
  const char* in_shapes;
  double aiv_time;      // NaN = cell N/A
  double aiv_vec_time;
};

model::KernelTable make_table(StringPool& pool, const std::vector<Row>& rows, bool with_pipeline) {
  model::KernelTable k;
  k.header.columns = {"Name", "Type", "Accelerator Core", "Start Time(us)", "Duration(us)", "Input Shapes"};
  if (with_pipeline) {
    k.header.columns.push_back("aiv_time(us)");
    k.header.columns.push_back("aiv_vec_time(us)");
    k.metrics.push_back({"aiv_time(us)", {}});
    k.metrics.push_back({"aiv_vec_time(us)", {}});
  }
  int64_t t = 1'736'408'883'704'643'212;
  for (const auto& r : rows) {
    k.name.push_back(pool.intern(r.name));
    k.type.push_back(pool.intern(r.type));
    k.accelerator_core.push_back(pool.intern(r.core));
    k.input_shapes.push_back(pool.intern(r.in_shapes));
    k.output_shapes.push_back(0);
    k.start_ns.push_back(t);
    k.dur_ns.push_back(1000);
    t += 2000;
    if (with_pipeline) {
      k.metrics[0].values.push_back(r.aiv_time);
      k.metrics[1].values.push_back(r.aiv_vec_time);
    }
  }
  return k;
}

class NormalizeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto k = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    kb_ = std::make_unique<knowledge::Knowledge>(std::move(k).value());
  }
  std::string op_type(const NormalizedKernels& n, size_t r) { return kb_->vocab.op_types()[n.op_type[r]]; }
  std::unique_ptr<knowledge::Knowledge> kb_;
};

TEST_F(NormalizeTest, ClassifiesAndMemoisesPerDistinctKernel) {
  StringPool pool;
  const double nan = std::nan("");
  auto k = make_table(pool,
                      {{"AddRmsNorm", "AddRmsNorm", "AI_VECTOR_CORE", "\"1,7168;7168\"", 3.0, 2.0},
                       {"aclnnMatmul_MatMulV3Common_MatMulV3", "MatMulV3", "AI_CORE", "\"1,7168;7168,2048\"", 0, 0},
                       {"AddRmsNorm", "AddRmsNorm", "AI_VECTOR_CORE", "\"1,7168;7168\"", 3.0, 2.0},
                       {"hcom_allReduce__612_4_1", "hcom_allReduce_", "COMMUNICATION", "N/A", nan, nan},
                       {"MatmulAllReduceAiv", "hcom_allReduce_", "COMMUNICATION", "", 5.0, 0},
                       {"Cast", "Cast", "AI_CPU", "\"1\"", 0, 0}},
                      true);
  Stats stats;
  const NormalizedKernels n = normalize_kernels(k, pool, *kb_, stats);
  ASSERT_EQ(n.taxon.size(), 6u);
  EXPECT_EQ(n.taxa.size(), 5u);  // the repeated AddRmsNorm is one taxon
  EXPECT_EQ(n.taxon[0], n.taxon[2]);
  EXPECT_EQ(role_names(n.taxa[n.taxon[0]].roles, kb_->vocab), (std::vector<std::string>{"block_head", "normalization"}));
  EXPECT_EQ(op_type(n, 0), "aiv");
  EXPECT_EQ(op_type(n, 1), "aic");
  EXPECT_EQ(op_type(n, 3), "communication");
  EXPECT_EQ(op_type(n, 4), "mix_comm_aiv");  // COMMUNICATION with aiv_time > 0
  EXPECT_EQ(op_type(n, 5), "aicpu");
  EXPECT_EQ(kb_->vocab.hccl_kinds()[n.taxa[n.taxon[3]].hccl_kind], "allreduce");
  // shape signatures only for attention/moe/compute/communication roles; identical cells, identical ids
  EXPECT_EQ(n.shape_signature[0], 0u);  // normalization only: no signature
  EXPECT_NE(n.shape_signature[1], 0u);
  EXPECT_EQ(pool.view(n.shape_signature[1]).substr(0, 6), "shape_");
  EXPECT_EQ(pool.view(n.shape_signature[1]).size(), 6u + 16u);
  EXPECT_NE(n.shape_signature[3], 0u);  // "N/A" is a byte string like any other (reference behaviour)
  EXPECT_EQ(n.shape_signature[4], 0u);  // empty cell: no signature
  // pipeline signal: any stage > 0 (aiv_time is a total, not a stage)
  EXPECT_EQ(n.pipeline_signal[0], 1);
  EXPECT_EQ(n.pipeline_signal[4], 0);
  EXPECT_EQ(n.pipeline_event_count, 2u);
  EXPECT_EQ(n.start_ns, 1'736'408'883'704'643'212);
  EXPECT_EQ(n.end_ns, 1'736'408'883'704'643'212 + 5 * 2000 + 1000);
  EXPECT_EQ(pool.view(n.taxa[n.taxon[1]].name_key), "aclnnmatmul_matmulv_common_matmulv");
}

TEST_F(NormalizeTest, MissingPipelineColumnsAreAbsentNotZero) {
  StringPool pool;
  auto k = make_table(pool, {{"MatMul", "MatMul", "N/A", "", 0, 0}}, false);
  Stats stats;
  const NormalizedKernels n = normalize_kernels(k, pool, *kb_, stats);
  for (size_t f = 0; f < n.pipeline_metric.size(); ++f) {
    EXPECT_EQ(n.pipeline_metric[f], -1);
    EXPECT_TRUE(std::isnan(n.pipeline_value(k, 0, f)));
  }
  EXPECT_EQ(op_type(n, 0), "unknown");  // Level0 compute rows say N/A
  EXPECT_EQ(n.pipeline_event_count, 0u);
}

}  // namespace
}  // namespace ascprof::analysis

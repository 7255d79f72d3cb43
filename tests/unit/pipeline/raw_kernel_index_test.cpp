// raw_kernel_index.csv (reference-analysis.md §2.5.9): one row per kernel with exact µs text, the
// source_index.json source id, sorted JSON role/category lists and formula-guarded names; rank
// fragments stream to disk and concatenate under one header in rank order.
#include <gtest/gtest.h>

#include <cmath>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "ascprof/analysis/normalize.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/common/stable_id.hpp"
#include "ascprof/importers/kernel_details.hpp"
#include "ascprof/pipeline/rank_job.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/pipeline/summary_outputs.hpp"
#include "part_packs.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;

const knowledge::Knowledge& kb() { return ascprof::testing::shipped_knowledge(); }

struct Kernel {
  std::string name, type;
  int64_t start_ns, dur_ns, wait_ns;
  std::vector<std::string> roles, categories;
  std::string shape;  // "" = no signature
};

// A kernel table and its normalized columns, one taxon per row (set by hand so the expected cells do
// not depend on the taxonomy rules).
struct Rank {
  StringPool pool;
  model::KernelTable k;
  analysis::NormalizedKernels norm;
};

void fill(Rank& r, const std::vector<Kernel>& rows) {
  for (const auto& x : rows) {
    r.k.name.push_back(r.pool.intern(x.name));
    r.k.type.push_back(r.pool.intern(x.type));
    r.k.start_ns.push_back(x.start_ns);
    r.k.dur_ns.push_back(x.dur_ns);
    r.k.wait_ns.push_back(x.wait_ns);
    analysis::TaxonEntry e;
    e.name = r.k.name.back();
    e.type = r.k.type.back();
    for (const auto& role : x.roles) {
      const int i = kb().vocab.role_index(role);
      ASSERT_GE(i, 0) << role;
      e.roles.set(static_cast<size_t>(i));
    }
    for (const auto& c : x.categories) {
      const int i = kb().vocab.category_index(c);
      ASSERT_GE(i, 0) << c;
      e.categories.set(static_cast<size_t>(i));
    }
    r.norm.taxon.push_back(static_cast<uint32_t>(r.norm.taxa.size()));
    r.norm.taxa.push_back(e);
    r.norm.shape_signature.push_back(x.shape.empty() ? 0 : r.pool.intern(x.shape));
  }
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

constexpr const char* kKernelCsv = "/captures/run1/rank0/ASCEND_PROFILER_OUTPUT/kernel_details.csv";

TEST(RawKernelIndex, ExactCellsGuardedNamesAndRankOrder) {
  ascprof::testing::ScratchDir dir("raw-index");
  ascprof::testing::PartPacks packs;
  Rank a, b;
  fill(a, {{"aclnnFusedInferAttentionScore", "FusedInferAttentionScore", 1'764'000'000'123'456'789, 2'500, 0,
            {"compute", "attention"}, {"attention.generic", "attention.flash_score"}, "shape_0123456789abcdef"},
           {"=HYPERLINK(\"x\")", "Cast", 1'764'000'000'123'460'000, 1, 999, {}, {}, ""},
           {"a,b \"c\"", "AI_CPU", 1'764'000'000'123'470'000, 12'345'678, 1'000, {"aicpu"}, {"aicpu"}, ""}});
  fill(b, {{"hcom_allReduce__123", "AllReduce", 5, 7, 3, {"communication"}, {"communication.allreduce"}, ""},
           {"MatMulV2", "MatMulV2", 1'000'000, 2'000, 0, {"compute"}, {"compute.matmul"}, "shape_ffff"}});

  const model::RankStructure s;
  const model::RankClasses c;
  const model::RankSummary sum;
  ASCPROF_ASSERT_OK(write_rank_summary_parts(packs.at(dir / "ranks/0.parts"), 0, "0", s, c, sum, kb()));
  ASCPROF_ASSERT_OK(write_rank_summary_parts(packs.at(dir / "ranks/1.parts"), 1, "1", s, c, sum, kb()));
  ASCPROF_ASSERT_OK(
      write_raw_kernel_index_part(packs.at(dir / "ranks/0.parts"), 0, "0", "kernel_details_csv", kKernelCsv, "profile_test", a.k, a.norm, a.pool, kb()));
  ASCPROF_ASSERT_OK(write_raw_kernel_index_part(packs.at(dir / "ranks/1.parts"), 1, "1", "kernel_details_csv", "/captures/run1/rank1/k.csv", "profile_test", b.k,
                                                b.norm, b.pool, kb()));
  ASSERT_NE(std::find(summary_tables().begin(), summary_tables().end(), "raw_kernel_index.csv"),
            summary_tables().end());
  ASCPROF_ASSERT_OK(packs.commit());
  auto files = write_root_summary_outputs(dir.path(), {{dir / "ranks/0.parts", "0"}, {dir / "ranks/1.parts", "1"}}, kb());
  ASCPROF_ASSERT_OK(files);
  EXPECT_NE(std::find(files->begin(), files->end(), dir / "raw_kernel_index.csv"), files->end());

  auto text = read_file(dir / "raw_kernel_index.csv");
  ASCPROF_ASSERT_OK(text);
  const auto l = lines(*text);
  ASSERT_EQ(l.size(), 1u + 3 + 2) << *text;
  EXPECT_EQ(l[0],
            "event_id,rank_id,source_id,row_idx,name,task_type,start_us,duration_us,wait_us,roles,categories,"
            "shape_signature");
  const std::string src0 = stable_id("src", {"0", "kernel_details_csv", kKernelCsv});
  ASSERT_EQ(src0.rfind("src_", 0), 0u);
  EXPECT_EQ(l[1], "evt_0_0,0," + src0 +
                      ",0,aclnnFusedInferAttentionScore,FUSEDINFERATTENTIONSCORE,1764000000123456.789,2.500,0.000,"
                      "\"[\"\"attention\"\",\"\"compute\"\"]\","
                      "\"[\"\"attention.flash_score\"\",\"\"attention.generic\"\"]\",shape_0123456789abcdef");
  // a formula-like name is prefixed with ' (and quoted for its quotes); no roles -> []
  EXPECT_EQ(l[2], "evt_0_1,0," + src0 + ",1,\"'=HYPERLINK(\"\"x\"\")\",CAST,1764000000123460.000,0.001,0.999,[],[],");
  // a comma and quotes in a name: one quoted cell
  EXPECT_EQ(l[3], "evt_0_2,0," + src0 +
                      ",2,\"a,b \"\"c\"\"\",AI_CPU,1764000000123470.000,12345.678,1.000,\"[\"\"aicpu\"\"]\","
                      "\"[\"\"aicpu\"\"]\",");
  // rank 1 after rank 0, its own ordinal, rank id and source id
  const std::string src1 = stable_id("src", {"1", "kernel_details_csv", "/captures/run1/rank1/k.csv"});
  EXPECT_NE(src1, src0);
  EXPECT_EQ(l[4].rfind("evt_1_0,1," + src1 + ",0,hcom_allReduce__123,ALLREDUCE,0.005,0.007,0.003,", 0), 0u) << l[4];
  EXPECT_EQ(l[5].rfind("evt_1_1,1," + src1 + ",1,MatMulV2,", 0), 0u) << l[5];
  EXPECT_EQ(l[5].substr(l[5].size() - 11), ",shape_ffff");

  auto manifest = read_file(dir / "summary_manifest.json");
  ASCPROF_ASSERT_OK(manifest);
  EXPECT_NE(manifest->find("\"raw_kernel_rows\":5"), std::string::npos) << *manifest;
  for (const auto& e : fs::recursive_directory_iterator(dir.path()))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
}

// normalized_event_index.csv (reference-analysis.md §2.1) in the same pass: the profile id after the
// event id, task type and core upper-cased, a stream the row lacks "N/A" (as CANN writes it), end = start + duration,
// categories before roles, shape_features {}, the pipeline fields the capture has (N/A and negative
// values 0), the op type by name.
TEST(NormalizedEventIndex, ReferenceColumnsFromTheSamePass) {
  ascprof::testing::ScratchDir dir("event-index");
  ascprof::testing::PartPacks packs;
  Rank a;
  fill(a, {{"MatMulV2", "MatMulV2", 1'000'000, 2'500, 100, {"compute"}, {"compute.matmul"}, "shape_ab"},
           {"Cast", "Cast", 1'010'000, 1'000, 0, {}, {}, ""},
           {"Add", "Add", 1'020'000, 500, 0, {}, {}, ""}});
  for (const char* core : {"ai_core", "AI_VECTOR_CORE", "mix_aic"}) a.k.accelerator_core.push_back(a.pool.intern(core));
  a.k.stream_id = {2, model::kAbsentI32, 7};
  a.k.header.has_stream_id = true;  // the column exists; row 1 had N/A in it
  model::MetricColumn aicore;
  aicore.name = "aicore_time(us)";
  aicore.values = {1.5, std::nan(""), -2.0};
  a.k.metrics.push_back(aicore);
  a.norm.pipeline_metric.assign(kb().pipeline.fields().size(), -1);
  ASSERT_EQ(kb().pipeline.fields().at(0).name, "aicore_time(us)");
  a.norm.pipeline_metric[0] = 0;
  const int aic = kb().vocab.op_type_index("aic");
  ASSERT_GE(aic, 0);
  a.norm.op_type = {static_cast<uint8_t>(aic), static_cast<uint8_t>(aic), static_cast<uint8_t>(aic)};

  ASCPROF_ASSERT_OK(write_rank_summary_parts(packs.at(dir / "ranks/0.parts"), 0, "0", {}, {}, {}, kb()));
  ASCPROF_ASSERT_OK(write_raw_kernel_index_part(packs.at(dir / "ranks/0.parts"), 0, "0", "kernel_details_csv", kKernelCsv,
                                                "profile_x", a.k, a.norm, a.pool, kb()));
  ASCPROF_ASSERT_OK(packs.commit());
  ASCPROF_ASSERT_OK(write_root_summary_outputs(dir.path(), {{dir / "ranks/0.parts", "0"}}, kb()));
  auto text = read_file(dir / "normalized_event_index.csv");
  ASCPROF_ASSERT_OK(text);
  const auto l = lines(*text);
  ASSERT_EQ(l.size(), 4u) << *text;
  EXPECT_EQ(l[0],
            "event_id,profile_id,rank_id,source_id,row_idx,name_raw,task_type,accelerator_core,stream_id,start_us,"
            "end_us,duration_us,wait_us,op_categories,op_roles,shape_signature,shape_features,pipeline_us,op_type");
  const std::string src = stable_id("src", {"0", "kernel_details_csv", kKernelCsv});
  EXPECT_EQ(l[1], "evt_0_0,profile_x,0," + src +
                      ",0,MatMulV2,MATMULV2,AI_CORE,2,1000.000,1002.500,2.500,0.100,\"[\"\"compute.matmul\"\"]\","
                      "\"[\"\"compute\"\"]\",shape_ab,{},\"{\"\"aicore_time\"\":1.5}\",aic");
  EXPECT_EQ(l[2], "evt_0_1,profile_x,0," + src +
                      ",1,Cast,CAST,AI_VECTOR_CORE,N/A,1010.000,1011.000,1.000,0.000,[],[],,{},"
                      "\"{\"\"aicore_time\"\":0}\",aic");
  EXPECT_NE(l[3].find(",MIX_AIC,7,"), std::string::npos) << l[3];
  EXPECT_NE(l[3].find("\"{\"\"aicore_time\"\":0}\""), std::string::npos) << l[3];
  EXPECT_EQ(root_profile_id("/data/run1").rfind("profile_", 0), 0u);
  EXPECT_NE(root_profile_id("/data/run1"), root_profile_id("/data/run2"));
}

// More rows than one 4 MB chunk: every row is written once, in order, and the root counts them all
// (a quoted newline inside a name is not a row end).
TEST(RawKernelIndex, StreamsManyRowsExactly) {
  ascprof::testing::ScratchDir dir("raw-index-big");
  ascprof::testing::PartPacks packs;
  Rank r;
  std::vector<Kernel> rows;
  constexpr size_t kRows = 120'000;
  for (size_t i = 0; i < kRows; ++i)
    rows.push_back({i == 7 ? "two\nlines" : "aclnnMatmul_" + std::to_string(i % 50), "MatMulV2",
                    1'764'000'000'000'000'000 + static_cast<int64_t>(i) * 1000, 900, 100, {"compute"},
                    {"compute.matmul"}, "shape_0123456789abcdef"});
  fill(r, rows);
  ASCPROF_ASSERT_OK(write_rank_summary_parts(packs.at(dir / "ranks/3.parts"), 3, "3", {}, {}, {}, kb()));
  ASCPROF_ASSERT_OK(write_raw_kernel_index_part(packs.at(dir / "ranks/3.parts"), 3, "3", "kernel_details_csv", kKernelCsv, "profile_test", r.k, r.norm, r.pool, kb()));
  ASCPROF_ASSERT_OK(packs.commit());
  auto pack = store::PartPackReader::open(dir / "ranks/3.parts");
  ASCPROF_ASSERT_OK(pack);
  EXPECT_GT(pack->size("raw_kernel_index.csv"), 8u << 20);  // several flushes, each a segment
  ASCPROF_ASSERT_OK(write_root_summary_outputs(dir.path(), {{dir / "ranks/3.parts", "3"}}, kb()));
  auto text = read_file(dir / "raw_kernel_index.csv");
  ASCPROF_ASSERT_OK(text);
  EXPECT_EQ(static_cast<size_t>(std::count(text->begin(), text->end(), '\n')), 1 + kRows + 1);  // + quoted newline
  const auto l = lines(*text);
  EXPECT_EQ(l.back().rfind("evt_3_119999,3,", 0), 0u) << l.back();
  EXPECT_NE(l.back().find(",119999,aclnnMatmul_49,MATMULV2,1764000000119999.000,0.900,0.100,"), std::string::npos)
      << l.back();
  EXPECT_NE(text->find(",7,\"two\nlines\",MATMULV2,"), std::string::npos);
  auto manifest = read_file(dir / "summary_manifest.json");
  ASCPROF_ASSERT_OK(manifest);
  EXPECT_NE(manifest->find("\"raw_kernel_rows\":120000"), std::string::npos) << *manifest;
}

// A real capture: one row per kernel_details row, times exactly as the CSV wrote them (the CANN tab
// after the start time is gone).
TEST(RawKernelIndex, RealCaptureHasOneRowPerKernel) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  const fs::path csv =
      ascprof::testing::real_fixtures_dir() / "e2-cnn-level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
  StringPool pool;
  model::KernelTable k;
  Stats stats;
  ASCPROF_ASSERT_OK(importers::import_kernel_details(csv, pool, k, stats));
  ASSERT_EQ(k.size(), 191u);
  const auto norm = analysis::normalize_kernels(k, pool, kb(), stats);
  ascprof::testing::ScratchDir dir("raw-index-real");
  ascprof::testing::PartPacks packs;
  ASCPROF_ASSERT_OK(write_raw_kernel_index_part(packs.at(dir / "ranks/0.parts"), 5, "0", "kernel_details_csv", csv.string(), "profile_test", k, norm, pool, kb()));
  ASCPROF_ASSERT_OK(packs.commit());
  auto text = ascprof::testing::PartPacks::section(dir / "ranks/0.parts", "raw_kernel_index.csv");
  ASCPROF_ASSERT_OK(text);
  const auto l = lines(*text);
  ASSERT_EQ(l.size(), 191u);
  const std::string src = stable_id("src", {"0", "kernel_details_csv", csv.string()});
  EXPECT_EQ(l[0].rfind("evt_5_0,0," + src + ",0,trans_TransData_0,TRANSDATA,1736408883704643.212,53.741,0.000,", 0), 0u)
      << l[0];
  EXPECT_EQ(l[1].rfind("evt_5_1,0," + src + ",1,trans_TransData_1,TRANSDATA,1736408883704801.156,6.540,104.202,", 0), 0u)
      << l[1];
  EXPECT_EQ(l[190].rfind("evt_5_190,0," + src + ",190,", 0), 0u) << l[190];
}

// Through the rank job and the root: both ranks' kernels, in rank order, with the source id that
// source_index.json gives each rank's kernel_details.csv.
TEST(RawKernelIndex, PipelineRowsPointAtSourceIndexEntries) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  ascprof::testing::ScratchDir out("raw-index-pipeline");
  const RootPlan plan = plan_root((ascprof::testing::real_fixtures_dir() / "e2-cnn-level1").string(), out.path().string(), 0);
  ASSERT_TRUE(plan.ok) << plan.error;
  ASSERT_EQ(plan.tasks.size(), 2u);
  std::vector<RankOutcome> outcomes;
  for (const auto& t : plan.tasks) {
    outcomes.push_back(run_rank_stages(t, kb()));
    ASSERT_TRUE(outcomes.back().ok) << outcomes.back().error;
  }
  const auto summary = write_root_outputs(plan, outcomes, kb());
  ASSERT_EQ(summary.status, "ok") << summary.error;
  auto text = read_file(fs::path(plan.out_dir) / "raw_kernel_index.csv");
  ASCPROF_ASSERT_OK(text);
  const auto l = lines(*text);
  ASSERT_EQ(l.size(), 1u + 191 + 191);
  EXPECT_EQ(l[1].rfind("evt_0_0,rank0,src_", 0), 0u) << l[1];
  EXPECT_EQ(l[191].rfind("evt_0_190,rank0,src_", 0), 0u) << l[191];
  EXPECT_EQ(l[192].rfind("evt_1_0,rank1,src_", 0), 0u) << l[192];
  auto sources = read_file(fs::path(plan.out_dir) / "source_index.json");
  ASCPROF_ASSERT_OK(sources);
  for (const size_t row : {1, 192}) {
    const std::string id = l[row].substr(l[row].find(",src_") + 1, 20);
    const size_t at = sources->find("\"source_id\": \"" + id + "\"");
    ASSERT_NE(at, std::string::npos) << id << "\n" << *sources;
    EXPECT_EQ(sources->find("\"kind\": \"kernel_details_csv\"", at), sources->find("\"kind\"", at)) << *sources;
  }
}

TEST(RawKernelIndex, RankWithoutKernelsGivesAnEmptyTable) {
  ascprof::testing::ScratchDir dir("raw-index-empty");
  ascprof::testing::PartPacks packs;
  Rank r;
  ASCPROF_ASSERT_OK(write_raw_kernel_index_part(packs.at(dir / "ranks/0.parts"), 0, "0", "kernel_details_csv", kKernelCsv, "profile_test", r.k, r.norm, r.pool, kb()));
  ASCPROF_ASSERT_OK(write_rank_summary_parts(packs.at(dir / "ranks/0.parts"), 0, "0", {}, {}, {}, kb()));
  ASCPROF_ASSERT_OK(packs.commit());
  auto part = ascprof::testing::PartPacks::section(dir / "ranks/0.parts", "raw_kernel_index.csv");
  ASCPROF_ASSERT_OK(part);
  EXPECT_EQ(part->size(), 0u);
  ASCPROF_ASSERT_OK(write_root_summary_outputs(dir.path(), {{dir / "ranks/0.parts", "0"}}, kb()));
  EXPECT_EQ(fs::file_size(dir / "raw_kernel_index.csv"), 0u);  // no header without rows
}

TEST(RawKernelIndex, NormalizedColumnsOutOfStepAreRefused) {
  ascprof::testing::ScratchDir dir("raw-index-bad");
  ascprof::testing::PartPacks packs;
  Rank r;
  fill(r, {{"A", "B", 0, 1, 0, {}, {}, ""}, {"C", "D", 2, 1, 0, {}, {}, ""}});
  r.norm.taxon.pop_back();
  const Status st =
      write_raw_kernel_index_part(packs.at(dir / "ranks/0.parts"), 0, "0", "kernel_details_csv", kKernelCsv, "profile_test", r.k, r.norm, r.pool, kb());
  EXPECT_EQ(st.code(), ErrorCode::kInternal);
  EXPECT_NE(st.message().find("not parallel to the 2 kernel rows"), std::string::npos) << st.message();
  EXPECT_FALSE(fs::exists(dir / "ranks/0.parts"));  // the rank job does not commit its pack after an error
}

TEST(RawKernelIndex, MissingFragmentFailsTheRootTable) {
  ascprof::testing::ScratchDir dir("raw-index-missing");
  ascprof::testing::PartPacks packs;
  ASCPROF_ASSERT_OK(write_rank_summary_parts(packs.at(dir / "ranks/0.parts"), 0, "0", {}, {}, {}, kb()));
  ASCPROF_ASSERT_OK(packs.commit());
  auto files = write_root_summary_outputs(dir.path(), {{dir / "ranks/0.parts", "0"}}, kb());
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().code(), ErrorCode::kSchema);
  EXPECT_NE(files.status().message().find("ranks/0.parts"), std::string::npos) << files.status().message();
  EXPECT_NE(files.status().message().find("raw_kernel_index.csv"), std::string::npos) << files.status().message();
  EXPECT_FALSE(fs::exists(dir / "raw_kernel_index.csv"));
}

}  // namespace
}  // namespace ascprof::pipeline

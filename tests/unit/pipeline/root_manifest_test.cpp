// The root manifest.json (issue 23): the reference's run manifest, composed from the stage records.
#include "ascprof/pipeline/root_manifest.hpp"

#include <gtest/gtest.h>
#include <simdjson.h>

#include "ascprof/common/files.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;

TEST(RootManifest, EmbedsEachExecutedStagesRecord) {
  ascprof::testing::ScratchDir dir("root-manifest");
  const fs::path out = dir / "root";
  fs::create_directories(out / "report");
  ASCPROF_ASSERT_OK(write_file_atomic(out / "normalize_manifest.json", "{\"analysis_stage\": \"normalize\", \"rank_count\": 2}\n"));
  ASCPROF_ASSERT_OK(write_file_atomic(out / "segment_manifest.json", "{\"analysis_stage\": \"segment\"}\n"));
  ASCPROF_ASSERT_OK(write_file_atomic(out / "diagnosis_findings.json",
                                      "{\"diagnosis_findings\": [{\"finding_type\": \"x\"}], \"counts\": {\"finding_count\": 1}}"));
  ASCPROF_ASSERT_OK(write_file_atomic(out / "report" / "report.md", "# r\n"));
  // classify was executed but left no record; the report record is absent too
  ASCPROF_ASSERT_OK(write_root_manifest(out, "/data/capture",
                                        {Stage::kNormalize, Stage::kSegment, Stage::kClassify, Stage::kDiagnostics}));
  auto text = read_file(out / "manifest.json");
  ASCPROF_ASSERT_OK(text);
  simdjson::dom::parser p;
  simdjson::dom::element m;
  ASSERT_EQ(p.parse(*text).get(m), simdjson::SUCCESS) << *text;
  EXPECT_EQ(std::string_view(m["analysis_stage"]), "full_pipeline");
  EXPECT_EQ(std::string_view(m["output_dir"]), out.string());
  EXPECT_EQ(std::string_view(m["profile_root"]), "/data/capture");
  EXPECT_EQ(uint64_t(m["schema_version"]), 1u);
  EXPECT_EQ(std::string_view(m["files"]["normalize_manifest"]), "normalize_manifest.json");
  EXPECT_EQ(std::string_view(m["files"]["report_md"]), "report/report.md");
  EXPECT_TRUE(m["files"]["classify_manifest"].error());  // no record, no entry
  EXPECT_TRUE(m["files"]["report_manifest"].error());
  EXPECT_EQ(uint64_t(m["stage_results"]["normalize"]["rank_count"]), 2u);
  EXPECT_EQ(uint64_t(m["stage_results"]["diagnostics"]["counts"]["finding_count"]), 1u);
  EXPECT_TRUE(m["stage_results"]["diagnostics"]["diagnosis_findings"].error());  // counts only
  std::vector<std::string> stages;
  for (simdjson::dom::element s : m["stages_executed"].get_array()) stages.emplace_back(std::string_view(s));
  EXPECT_EQ(stages, (std::vector<std::string>{"normalize", "segment", "diagnostics"}));
}

TEST(RootManifest, FindingsWithoutCountsAreAnErrorNamingTheFile) {
  ascprof::testing::ScratchDir dir("root-manifest-bad");
  ASCPROF_ASSERT_OK(write_file_atomic(dir / "diagnosis_findings.json", "{\"diagnosis_findings\": []}"));
  const Status st = write_root_manifest(dir.path(), "r", {Stage::kDiagnostics});
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("diagnosis_findings.json"), std::string::npos) << st.message();
  EXPECT_FALSE(fs::exists(dir / "manifest.json"));
}

}  // namespace
}  // namespace ascprof::pipeline

// run_analyze under mpiexec with 1, 2 and 3 processes: the per-rank HDF5 files are identical to a
// serial run whatever the process count, a broken rank fails alone, and no phase deadlocks.
#include <gtest/gtest.h>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/string.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "ascprof/common/files.hpp"
#include "ascprof/importers/discovery.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/parallel/analyze_run.hpp"
#include "ascprof/pipeline/root_plan.hpp"
#include "ascprof/report/report.hpp"
#include "ascprof/synth/synth.hpp"
#include "ascprof/layout/out_layout.hpp"
#include "support/test_support.hpp"

namespace ascprof {
namespace {

namespace fs = std::filesystem;
namespace mpi = boost::mpi;

// A folder shared by all processes of this test run (named on process 0, broadcast).
// A file's text with one run's output folder written as another's: manifests record their output_dir,
// and everything else must be the same bytes in both folders.
std::string in_folder(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

fs::path shared_dir(mpi::communicator& world, const std::string& tag) {
  std::string path;
  if (world.rank() == 0) {
    path = (fs::temp_directory_path() / ("ascprof-mpi-" + tag + "-" + std::to_string(::getpid()) + "-np" +
                                         std::to_string(world.size())))
               .string();
    fs::remove_all(path);
    fs::create_directories(path);
  }
  mpi::broadcast(world, path, 0);
  return path;
}

void generate(const fs::path& root, const std::string& scenario, int ranks) {
  synth::SynthOptions o;
  o.scenario = scenario;
  o.out_dir = root;
  o.ranks = ranks;
  o.steps = 2;
  auto r = synth::generate_capture(o);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
}

parallel::AnalyzeRequest request(const fs::path& root, const fs::path& out) {
  parallel::AnalyzeRequest req;
  req.roots = {root.string()};
  req.out = out.string();
  req.knowledge_dir = ascprof::testing::knowledge_dir().string();
  req.progress = parallel::ProgressMode::kNone;
  return req;
}

TEST(AnalyzeMpi, RankFilesIdenticalToSerialRunForAnyProcessCount) {
  mpi::communicator world;
  const fs::path dir = shared_dir(world, "identical");
  const fs::path capture = dir / "capture";
  if (world.rank() == 0) generate(capture, "dense_gqa", 5);  // 5 ranks: not a multiple of 2 or 3
  world.barrier();

  const auto result = parallel::run_analyze(world, request(capture, dir / "out"));
  ASSERT_EQ(result.exit_code, 0) << result.json;
  if (world.rank() != 0) return;
  EXPECT_NE(result.json.find("\"rank_count\":5,"), std::string::npos) << result.json;
  // several processes take the ranks from the dynamic queue (largest first, whoever is free)
  EXPECT_NE(result.json.find(world.size() > 1 ? "\"scheduling\":\"dynamic\"" : "\"scheduling\":\"single\""),
            std::string::npos)
      << result.json;

  // Serial reference: the same plain functions, one process, another folder.
  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  ASSERT_TRUE(kb.ok());
  pipeline::RootPlan plan = pipeline::plan_root(capture.string(), (dir / "serial").string(), 0);
  ASSERT_TRUE(plan.ok) << plan.error;
  ASSERT_EQ(plan.tasks.size(), 5u);
  const fs::path mpi_root = dir / "out" / plan.slug;
  std::vector<pipeline::RankOutcome> outcomes;
  for (const auto& task : plan.tasks) {
    const auto o = pipeline::run_rank_stages(task, *kb);
    ASSERT_TRUE(o.ok) << o.error;
    outcomes.push_back(o);
    const fs::path a = fs::path(plan.out_dir) / o.h5_file;
    const fs::path b = mpi_root / o.h5_file;
    ASSERT_TRUE(fs::exists(b)) << b;
    const std::string cmd = std::string(ASCPROF_H5DIFF) + " -q " + a.string() + " " + b.string();
    EXPECT_EQ(std::system(cmd.c_str()), 0) << "HDF5 content differs: " << cmd;
  }
  EXPECT_TRUE(fs::exists(mpi_root / "normalize_manifest.json"));
  EXPECT_TRUE(fs::exists(mpi_root / "source_index.json"));
  EXPECT_TRUE(fs::exists(mpi_root / "analysis.h5"));
  // The structure files the coordinator composes from the rank files equal a serial composition.
  const auto serial = pipeline::write_root_outputs(plan, outcomes, *kb);
  ASSERT_EQ(serial.status, "ok") << serial.error;
  for (const char* f : {"step_segments.json", "layer_segments.json", "block_segments.json", "class_signatures.json",
                        "structure_evidence_graph.json", "step_summary.csv", "layer_summary.csv", "operator_summary.csv",
                        "rank_summary.csv", "step_anatomy.csv", "hccl_op_summary.csv", "block_summary.csv",
                        "operator_class_summary.csv", "hccl_class_summary.csv", "block_class_summary.csv",
                        "layer_class_summary.csv", "step_class_summary.csv", "raw_kernel_index.csv",
                        "cross_rank_alignment.json", "cross_rank_alignment.csv", "cross_rank_manifest.json",
                        "diagnosis_findings.json", "evidence_index.csv", "operator_deep_dive.csv",
                        "operator_deep_dive.json", "critical_path.csv", "critical_path_steps.csv",
                        "critical_path_ranks.csv"}) {
    auto a = read_file(fs::path(plan.out_dir) / f);
    auto b = read_file(mpi_root / f);
    ASSERT_TRUE(a.ok() && b.ok()) << f;
    EXPECT_EQ(in_folder(*a, plan.out_dir, mpi_root.string()), *b)
        << f << " differs between the MPI run and a serial composition";
  }
  // the operator alignment took part: its buckets went up the reduction tree (equal to the serial
  // composition's local fold, compared above)
  auto manifest = read_file(mpi_root / "cross_rank_manifest.json");
  ASSERT_TRUE(manifest.ok());
  EXPECT_EQ(manifest->find("\"operator_alignment_count\": 0"), std::string::npos) << *manifest;
  EXPECT_NE(manifest->find("\"operator_alignment_count\""), std::string::npos);
  // The report's parts were spread over the processes; the result equals one process writing them
  // in turn: the same markdown, timeline and page, the same manifest apart from its id.
  auto serial_report = report::write_report(plan.out_dir);
  ASSERT_TRUE(serial_report.ok()) << serial_report.status().to_string();
  for (const char* f : {"report/report.md", "report/timeline.json", "report/report.html", "report/manifest.json"}) {
    auto a = read_file(fs::path(plan.out_dir) / f);
    auto b = read_file(mpi_root / f);
    ASSERT_TRUE(a.ok() && b.ok()) << f;
    if (std::string(f) == "report/manifest.json") {  // report_id hashes the output folder's path
      const auto drop_id = [](std::string s) {
        const size_t at = s.find("\"report_id\"");
        return at == std::string::npos ? s : s.erase(at, s.find('\n', at) - at);
      };
      EXPECT_EQ(drop_id(in_folder(*a, plan.out_dir, mpi_root.string())), drop_id(*b)) << f;
      EXPECT_NE(b->find("\"raw_kernel_index\""), std::string::npos) << "the workbook's sheet map: " << *b;
    } else {
      EXPECT_EQ(*a, *b) << f << " differs between the MPI run and a serial report";
    }
  }
  EXPECT_TRUE(fs::exists(mpi_root / "report" / "report.xlsx"));
  EXPECT_NE(result.json.find("\"report_xlsx_cpu\""), std::string::npos) << result.json;
  fs::remove_all(dir);
}

// In-kernel MoE traces (issue 20): the same tables, findings, report section and timeline lanes at
// 1, 2 and 3 processes as one process composing them from the plain functions.
TEST(AnalyzeMpi, InKernelMoeTracesIdenticalForAnyProcessCount) {
  mpi::communicator world;
  const fs::path dir = shared_dir(world, "moe");
  const fs::path capture = dir / "capture";
  if (world.rank() == 0) {
    synth::SynthOptions o;
    o.scenario = "moe_mla_decode";
    o.out_dir = capture;
    o.ranks = 5;
    o.steps = 2;
    o.layers = 8;
    o.moe_trace = "umdk";
    o.faults = {"moe_slow_expert:3"};
    auto r = synth::generate_capture(o);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
  }
  world.barrier();
  const auto result = parallel::run_analyze(world, request(capture, dir / "out"));
  ASSERT_EQ(result.exit_code, 0) << result.json;
  if (world.rank() != 0) return;
  auto kb = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
  ASSERT_TRUE(kb.ok());
  pipeline::RootPlan plan = pipeline::plan_root(capture.string(), (dir / "serial").string(), 0,
                                                pipeline::SourceChoice::kAuto, kb->moe_trace.folder);
  ASSERT_TRUE(plan.ok) << plan.error;
  std::vector<pipeline::RankOutcome> outcomes;
  for (const auto& task : plan.tasks) outcomes.push_back(pipeline::run_rank_stages(task, *kb));
  const auto serial = pipeline::write_root_outputs(plan, outcomes, *kb);
  ASSERT_EQ(serial.status, "ok") << serial.error;
  ASSERT_TRUE(report::write_report(plan.out_dir).ok());
  const fs::path mpi_root = dir / "out" / plan.slug;
  for (const char* f : {"moe_trace_calls.csv", "moe_phase_summary.csv", "moe_phase_compare.csv", "moe_bubble_summary.csv",
                        "diagnosis_findings.json", "report/report.md", "report/timeline.json", "report/report.html"}) {
    auto a = read_file(fs::path(plan.out_dir) / f);
    auto b = read_file(mpi_root / f);
    ASSERT_TRUE(a.ok() && b.ok()) << f;
    EXPECT_EQ(*a, *b) << f << " differs between the MPI run and a serial composition";
  }
  auto findings = read_file(mpi_root / "diagnosis_findings.json");
  EXPECT_NE(findings->find("\"moe_in_kernel_ep_imbalance\""), std::string::npos);
  EXPECT_NE(findings->find("\"moe_combine_wait\""), std::string::npos);
  auto timeline = read_file(mpi_root / "report" / "timeline.json");
  EXPECT_NE(timeline->find("MoE cube core 0"), std::string::npos);
  fs::remove_all(dir);
}

// A partial rerun from cross_rank takes every rank from its checkpoint and rewrites the same
// cross-rank tables; a rank whose checkpoint is gone fails alone with the reason.
TEST(AnalyzeMpi, FromCrossRankUsesTheRankCheckpoints) {
  mpi::communicator world;
  const fs::path dir = shared_dir(world, "fromstage");
  const fs::path capture = dir / "capture";
  if (world.rank() == 0) generate(capture, "moe_mla_decode", 4);
  world.barrier();
  auto req = request(capture, dir / "out");
  ASSERT_EQ(parallel::run_analyze(world, req).exit_code, 0);
  const fs::path root = dir / "out" / layout::root_slug(capture);
  std::string alignment, findings;
  if (world.rank() == 0) {
    alignment = read_file(root / "cross_rank_alignment.csv").value();
    findings = read_file(root / "diagnosis_findings.json").value();
  }
  req.checkpoints_only = true;
  req.write_report = false;  // --only-stage cross_rank
  auto again = parallel::run_analyze(world, req);
  ASSERT_EQ(again.exit_code, 0) << again.json;
  if (world.rank() == 0) {
    EXPECT_NE(again.json.find("\"ranks_reused\":4"), std::string::npos) << again.json;
    EXPECT_EQ(read_file(root / "cross_rank_alignment.csv").value(), alignment);
    EXPECT_EQ(read_file(root / "diagnosis_findings.json").value(), findings);
    fs::remove(root / "ranks" / "rank2.parts");  // its checkpoint record with it
  }
  world.barrier();
  auto missing = parallel::run_analyze(world, req);
  EXPECT_EQ(missing.exit_code, 1);  // partial: rank 2 failed, the others analysed
  if (world.rank() == 0) {
    EXPECT_NE(missing.json.find("no valid checkpoint for this rank"), std::string::npos) << missing.json;
    EXPECT_NE(missing.json.find("\"ranks_reused\":3"), std::string::npos) << missing.json;
    fs::remove_all(dir);
  }
}

TEST(AnalyzeMpi, ToStageStopsAfterTheRequestedRankStage) {
  mpi::communicator world;
  const fs::path dir = shared_dir(world, "tostage");
  const fs::path capture = dir / "capture";
  if (world.rank() == 0) generate(capture, "moe_mla_decode", 3);
  world.barrier();
  for (const int32_t last : {pipeline::kStageNormalize, pipeline::kStageSegment}) {
    auto req = request(capture, dir / ("out" + std::to_string(last)));
    req.last_stage = last;
    const auto result = parallel::run_analyze(world, req);
    ASSERT_EQ(result.exit_code, 0) << result.json;
    if (world.rank() != 0) continue;
    const fs::path root = dir / ("out" + std::to_string(last)) / layout::root_slug(capture);
    EXPECT_TRUE(fs::exists(root / "normalize_manifest.json"));
    EXPECT_EQ(fs::exists(root / "segment_manifest.json"), last == pipeline::kStageSegment);
    EXPECT_FALSE(fs::exists(root / "classify_manifest.json"));
    EXPECT_NE(result.json.find(last == pipeline::kStageNormalize ? "\"stages_executed\":[\"normalize\"]"
                                                                 : "\"stages_executed\":[\"normalize\",\"segment\"]"),
              std::string::npos)
        << result.json;
    // resume works (checkpoints): it is not listed as missing any more
    EXPECT_NE(result.json.find("\"stages_not_available\":[]"), std::string::npos) << result.json;
  }
  if (world.rank() == 0) fs::remove_all(dir);
}

// A capture whose structure breaks the rules: everything is written, the hard errors are in
// segment_manifest.json, and the exit code (4) and status say so on every process.
TEST(AnalyzeMpi, StructureHardErrorsGiveExitCode4) {
  mpi::communicator world;
  const fs::path dir = shared_dir(world, "island");
  const fs::path capture = dir / "capture";
  if (world.rank() == 0) {
    synth::SynthOptions o;
    o.scenario = "dense_gqa";
    o.out_dir = capture;
    o.ranks = 3;
    o.steps = 3;
    o.faults = {"interior_island:2"};
    auto r = synth::generate_capture(o);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
  }
  world.barrier();
  const auto result = parallel::run_analyze(world, request(capture, dir / "out"));
  EXPECT_EQ(result.exit_code, 4) << result.json;
  if (world.rank() == 0) {
    EXPECT_NE(result.json.find("\"status\":\"structure_errors\""), std::string::npos) << result.json;
    EXPECT_NE(result.json.find("\"hard_error_count\":2,"), std::string::npos) << result.json;
    EXPECT_NE(result.json.find("\"interior_island_total\":1,"), std::string::npos) << result.json;
    fs::remove_all(dir);
  }
}

TEST(AnalyzeMpi, BrokenRankFailsAloneAndOthersComplete) {
  mpi::communicator world;
  const fs::path dir = shared_dir(world, "broken");
  const fs::path capture = dir / "capture";
  std::string broken_csv;
  if (world.rank() == 0) {
    generate(capture, "moe_mla_decode", 3);
    for (const auto& e : fs::directory_iterator(capture))
      if (fs::exists(e.path() / "profiler_info_1.json")) broken_csv = (e.path() / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").string();
    // A header without any start column: the file cannot be used at all.
    ascprof::testing::write_text(broken_csv, "Name,Type,Duration(us)\nMatMul,MatMul,1.0\n");
  }
  world.barrier();
  const auto result = parallel::run_analyze(world, request(capture, dir / "out"));
  EXPECT_EQ(result.exit_code, 1) << result.json;  // partial: the same code on every process
  if (world.rank() == 0) {
    ASSERT_FALSE(broken_csv.empty());
    EXPECT_NE(result.json.find("\"status\":\"partial\""), std::string::npos) << result.json;
    EXPECT_NE(result.json.find("\"rank_count\":2,"), std::string::npos) << result.json;
    EXPECT_NE(result.json.find("kernel_details.csv"), std::string::npos) << result.json;
    auto manifest = read_file(dir / "out" / pipeline::plan_root(capture.string(), "x", 0).slug / "normalize_manifest.json");
    ASSERT_TRUE(manifest.ok());
    EXPECT_NE(manifest->find("\"failed_ranks\""), std::string::npos);
    EXPECT_NE(manifest->find("missing required column"), std::string::npos) << *manifest;
    fs::remove_all(dir);
  }
}

TEST(AnalyzeMpi, SeveralRootsOfUnevenSizeInOneRun) {
  mpi::communicator world;
  const fs::path dir = shared_dir(world, "roots");
  if (world.rank() == 0) {
    generate(dir / "train", "training", 2);
    generate(dir / "decode", "moe_mla_decode", 1);  // fewer ranks than processes at np 2/3
  }
  world.barrier();
  auto req = request(dir / "train", dir / "out");
  req.roots.push_back((dir / "decode").string());
  const auto result = parallel::run_analyze(world, req);
  ASSERT_EQ(result.exit_code, 0) << result.json;
  if (world.rank() == 0) {
    EXPECT_NE(result.json.find("\"root_count\":2,\"rank_count\":3,"), std::string::npos) << result.json;
    for (const char* root : {"train", "decode"}) {
      const auto plan = pipeline::plan_root((dir / root).string(), (dir / "out").string(), 0);
      EXPECT_TRUE(fs::exists(fs::path(plan.out_dir) / "normalize_manifest.json")) << plan.out_dir;
      for (const auto& t : plan.tasks) EXPECT_TRUE(fs::exists(fs::path(plan.out_dir) / "ranks" / (t.rank_id + ".h5")));
      // both roots' report parts (8 items on the queue) came together into one manifest per root
      auto manifest = read_file(fs::path(plan.out_dir) / "report" / "manifest.json");
      ASSERT_TRUE(manifest.ok()) << plan.out_dir;
      for (const char* part : {"report/report.md", "report/report.xlsx", "report/timeline.json", "report/report.html"}) {
        const std::string name = fs::path(part).filename().string();  // files: kind -> name in report/
        EXPECT_NE(manifest->find(": \"" + name + "\""), std::string::npos) << *manifest;
        EXPECT_TRUE(fs::exists(fs::path(plan.out_dir) / part)) << part;
      }
    }
    fs::remove_all(dir);
  }
}

// --from-stage report over two roots on the process count at hand: each root's evidence gate runs
// before any of its parts; a root whose finding cannot be traced gets no report and says why, the
// other root's parts are written by whichever processes are free and come together in its manifest.
TEST(AnalyzeMpi, ReportOnlyGateRefusesOneRootAndReportsTheOther) {
  mpi::communicator world;
  const fs::path dir = shared_dir(world, "gate");
  if (world.rank() == 0) {
    synth::SynthOptions o;
    o.scenario = "moe_mla_decode";
    o.ranks = 2;
    o.steps = 3;
    o.faults = {"ep_imbalance:1"};  // findings with evidence ids
    for (const char* root : {"bad", "good"}) {
      o.out_dir = dir / root;
      ASSERT_TRUE(synth::generate_capture(o).ok());
    }
  }
  world.barrier();
  auto req = request(dir / "bad", dir / "out");
  req.roots.push_back((dir / "good").string());
  ASSERT_EQ(parallel::run_analyze(world, req).exit_code, 0);
  const auto bad = pipeline::plan_root((dir / "bad").string(), (dir / "out").string(), 0);
  const auto good = pipeline::plan_root((dir / "good").string(), (dir / "out").string(), 0);
  if (world.rank() == 0) {
    // a finding of "bad" now points at a kernel row its rank does not have, with no limitation
    auto text = read_file(fs::path(bad.out_dir) / "diagnosis_findings.json");
    ASSERT_TRUE(text.ok());
    std::string doc = *text;
    const size_t pos = doc.find("\"evidence_ids\": [");
    ASSERT_NE(pos, std::string::npos) << "no finding with evidence ids";
    doc.insert(pos + 17, "\"evt_0_99999999\",");
    const size_t lim = doc.find("\"limitations\": [", pos);
    doc.erase(lim + 16, doc.find(']', lim) - (lim + 16));
    ASSERT_TRUE(write_file_atomic(fs::path(bad.out_dir) / "diagnosis_findings.json", doc).ok());
    fs::remove_all(fs::path(bad.out_dir) / "report");
    fs::remove_all(fs::path(good.out_dir) / "report");
  }
  world.barrier();
  req.report_only = true;
  const auto result = parallel::run_analyze(world, req);
  EXPECT_EQ(result.exit_code, 1) << result.json;  // partial: one root reported
  if (world.rank() != 0) return;
  EXPECT_NE(result.json.find("\"status\":\"partial\""), std::string::npos) << result.json;
  EXPECT_NE(result.json.find("cannot be traced"), std::string::npos) << result.json;
  EXPECT_NE(result.json.find("evt_0_99999999"), std::string::npos) << result.json;
  EXPECT_FALSE(fs::exists(fs::path(bad.out_dir) / "report")) << "nothing of a refused root is written";
  auto manifest = read_file(fs::path(good.out_dir) / "report" / "manifest.json");
  ASSERT_TRUE(manifest.ok()) << result.json;
  for (const char* part : {"report/report.md", "report/report.xlsx", "report/timeline.json", "report/report.html"})
    EXPECT_TRUE(fs::exists(fs::path(good.out_dir) / part)) << part;
  EXPECT_NE(manifest->find("\"findings_checked\""), std::string::npos);
  fs::remove_all(dir);
}

TEST(AnalyzeMpi, MissingRootIsReportedAndNothingAnalysedIsExitThree) {
  mpi::communicator world;
  const fs::path dir = shared_dir(world, "missing");
  auto req = request(dir / "does-not-exist", dir / "out");
  const auto result = parallel::run_analyze(world, req);
  EXPECT_EQ(result.exit_code, 3) << result.json;
  if (world.rank() == 0) {
    EXPECT_NE(result.json.find("\"failed_roots\":[\"" + (dir / "does-not-exist").string() + "\"]"), std::string::npos)
        << result.json;
    fs::remove_all(dir);
  }
}

TEST(AnalyzeMpi, RefusesForeignNonEmptyOutputFolder) {
  mpi::communicator world;
  const fs::path dir = shared_dir(world, "foreign");
  if (world.rank() == 0) ascprof::testing::write_text(dir / "out" / "thesis.tex", "precious");
  world.barrier();
  const auto result = parallel::run_analyze(world, request(dir, dir / "out"));
  EXPECT_EQ(result.exit_code, 2);
  if (world.rank() == 0) {
    EXPECT_NE(result.json.find("not empty"), std::string::npos) << result.json;
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace ascprof

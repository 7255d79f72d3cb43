// The summarize tables: per-rank fragments, their root concatenation in rank order under one header,
// the reference's empty-file rule, exact µs text, and input strings that cannot act as formulas.
#include "ascprof/pipeline/summary_outputs.hpp"
#include "part_packs.hpp"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "ascprof/analysis/normalize.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/store/table_index.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;

const knowledge::Knowledge& kb() {
  static const knowledge::Knowledge k = [] {
    auto r = knowledge::Knowledge::load(ascprof::testing::knowledge_dir());
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return std::move(r).value();
  }();
  return k;
}

struct Rank {
  model::RankStructure s;
  model::RankClasses c;
  model::RankSummary sum;
};

Rank make_rank(const std::string& id, const std::string& op_name) {
  Rank r;
  r.s.rank_id = id;
  model::StepSegment g;
  g.segment_id = "seg_" + id;
  g.type = model::SegmentType::kStep;
  g.complete = true;
  g.row_start = 0;
  g.row_end = 9;
  g.main_layer_count = 1;
  g.layer_count = 1;
  g.step_family = "attention_workload";
  g.structure_signature = "main_len=1 ; main_period=x";
  g.cluster_id = "cluster_abc";
  r.s.segments.push_back(g);
  model::LayerSegment l;
  l.layer_id = "layer_" + id;
  l.row_start = 0;
  l.row_end = 9;
  r.s.layers.push_back(l);
  r.s.layer_signatures.push_back("anchors:attention.flash_score:x|block_head");
  model::SegmentSummary ss;
  ss.segment = 0;
  ss.metrics.event_count = 10;
  ss.metrics.start_ns = 1'764'000'000'123'456'789;
  ss.metrics.end_ns = ss.metrics.start_ns + 2'500'000;
  ss.metrics.wall_ns = 2'500'000;
  ss.metrics.busy_union_ns = 2'000'000;
  ss.metrics.underfeed_ns = 500'000;
  ss.metrics.underfeed_ratio = 0.2;
  ss.metrics.top_bubbles.push_back({0, ss.metrics.start_ns + 1000, ss.metrics.start_ns + 501'000, 3, 4});
  ss.anomaly_tags = {"INTERNAL_BUBBLE_HEAVY"};
  ss.anatomy.anatomy_kind = "full";
  ss.anatomy.main.empty = false;
  ss.anatomy.main.row_end = 9;
  ss.anatomy.main_ratio = 1;
  r.sum.segments.push_back(ss);
  model::LayerSummary ls;
  ls.layer = 0;
  ls.metrics.event_count = 10;
  r.sum.layers.push_back(ls);
  model::OperatorRow o;
  o.name = op_name;
  o.task_type = "FUSEDINFERATTENTIONSCORE";
  o.roles = "attention";
  o.call_count = 2;
  o.duration_sum_ns = 3000;
  o.sample_rows = {1, 5};
  o.row_ranges = {{1, 1}, {5, 5}};
  o.op_type = "mix_cv";
  o.bound = {"aic_mac_time(us)", "cube", "aic"};
  r.sum.operators.push_back(o);
  return r;
}

// A finding about a step_summary row gains that row's columns in its metrics, as the reference copies
// the row (each column's CSV text), and keeps its own typed figures; a finding about no row is untouched.
TEST(SummaryOutputs, FindingMetricsCarryTheirRowsColumns) {
  ascprof::testing::ScratchDir dir("summary-metrics");
  ascprof::testing::PartPacks packs;
  Rank a = make_rank("0", "aclnnFusedInferAttentionScore");
  std::vector<model::Finding> findings(2);
  findings[0].metrics_json = R"({"wall_ms":2.5,"segment_type":"ours"})";
  findings[0].row_table = "step_summary.csv";
  findings[0].row_index = 0;
  findings[1].metrics_json = R"({"x":1})";
  ASCPROF_ASSERT_OK(write_rank_summary_parts(packs.at(dir / "ranks/0.parts"), 0, "0", a.s, a.c, a.sum, kb(), {}, &findings));
  simdjson::dom::parser p;
  simdjson::dom::element m;
  ASSERT_EQ(p.parse(findings[0].metrics_json).get(m), simdjson::SUCCESS) << findings[0].metrics_json;
  EXPECT_EQ(double(m["wall_ms"]), 2.5);                              // its own figure, typed
  EXPECT_EQ(std::string_view(m["segment_type"]), "ours");            // not overwritten by the row
  EXPECT_EQ(std::string_view(m["segment_id"]), a.s.segments[0].segment_id);  // the row's columns, as text
  EXPECT_EQ(std::string_view(m["rank_id"]), "0");
  EXPECT_EQ(std::string_view(m["anomaly_tags"]), R"(["INTERNAL_BUBBLE_HEAVY"])");
  EXPECT_EQ(findings[1].metrics_json, R"({"x":1})");
}

// A damaged bubble part (the root merges those by their duration keys) is an error naming the file
// and the line, not a crash.
TEST(SummaryOutputs, DamagedBubblePartIsAnErrorNamingTheFile) {
  ascprof::testing::ScratchDir dir("summary-damaged");
  ascprof::testing::PartPacks packs;
  Rank a = make_rank("0", "aclnnFusedInferAttentionScore");
  ASCPROF_ASSERT_OK(write_rank_summary_parts(packs.at(dir / "ranks/0.parts"), 0, "0", a.s, a.c, a.sum, kb()));
  const StringPool pool;
  const model::KernelTable k;
  const analysis::NormalizedKernels norm;
  ASCPROF_ASSERT_OK(write_raw_kernel_index_part(packs.at(dir / "ranks/0.parts"), 0, "0", "kernel_details_csv", "k.csv",
                                                "profile_test", k, norm, pool, kb()));
  packs.at(dir / "ranks/0.parts").add("bubble_windows.jsonl", "12x\t{\"a\":1}\n");
  ASCPROF_ASSERT_OK(packs.commit());
  auto files = write_root_summary_outputs(dir.path(), {{dir / "ranks/0.parts", "0"}}, kb());
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().code(), ErrorCode::kParse);
  EXPECT_NE(files.status().message().find("ranks/0.parts"), std::string::npos) << files.status().to_string();
  EXPECT_NE(files.status().message().find("bubble_windows.jsonl"), std::string::npos) << files.status().to_string();
  EXPECT_NE(files.status().message().find("12x"), std::string::npos) << files.status().to_string();
  EXPECT_FALSE(fs::exists(dir / "evidence" / "bubble_windows.jsonl"));
}

TEST(SummaryOutputs, RanksConcatenateUnderOneHeaderInRankOrder) {
  ascprof::testing::ScratchDir dir("summary-out");
  ascprof::testing::PartPacks packs;
  Rank a = make_rank("0", "aclnnFusedInferAttentionScore");
  Rank b = make_rank("1", "=cmd|' /C calc'!A0");  // a name that must stay text in a spreadsheet
  ASCPROF_ASSERT_OK(write_rank_summary_parts(packs.at(dir / "ranks/0.parts"), 0, "0", a.s, a.c, a.sum, kb()));
  ASCPROF_ASSERT_OK(write_rank_summary_parts(packs.at(dir / "ranks/1.parts"), 1, "1", b.s, b.c, b.sum, kb()));
  {  // raw_kernel_index.csv has its own tests (raw_kernel_index_test.cpp); here: no kernels
    const StringPool pool;
    const model::KernelTable k;
    const analysis::NormalizedKernels norm;
    for (const char* id : {"0", "1"})
      ASCPROF_ASSERT_OK(write_raw_kernel_index_part(packs.at(dir / "ranks" / (std::string(id) + ".parts")),
                                                    static_cast<uint32_t>(id[0] - '0'), id, "kernel_details_csv", "k.csv", "profile_test", k, norm,
                                                    pool, kb()));
  }
  ASCPROF_ASSERT_OK(packs.commit());
  auto files = write_root_summary_outputs(dir.path(), {{dir / "ranks/0.parts", "0"}, {dir / "ranks/1.parts", "1"}}, kb());
  ASSERT_TRUE(files.ok()) << files.status().to_string();
  EXPECT_EQ(files->size(), summary_tables().size() + 2);  // + bubble_windows.jsonl, summary_manifest.json

  auto ops = read_file(dir / "operator_summary.csv");
  ASSERT_TRUE(ops.ok());
  std::istringstream in(*ops);
  std::string header, row0, row1, extra;
  std::getline(in, header);
  std::getline(in, row0);
  std::getline(in, row1);
  EXPECT_FALSE(std::getline(in, extra));
  EXPECT_EQ(header.rfind("rank_id,name,task_type,roles,categories,call_count,duration_sum_us", 0), 0u) << header;
  EXPECT_EQ(row0.rfind("0,aclnnFusedInferAttentionScore,FUSEDINFERATTENTIONSCORE,attention,[],2,3,0,3,1.5,", 0), 0u) << row0;
  EXPECT_EQ(row1.rfind("1,'=cmd|' /C calc'!A0,FUSEDINFERATTENTIONSCORE,", 0), 0u) << row1;
  EXPECT_NE(row0.find(",\"[1,5]\",\"[\"\"evt_0_1\"\",\"\"evt_0_5\"\"]\","), std::string::npos) << row0;

  auto steps = read_file(dir / "step_summary.csv");
  ASSERT_TRUE(steps.ok());
  // exact µs text of an epoch start (more digits than a double holds), bubble evidence with event ids
  EXPECT_NE(steps->find(",1764000000123456.789,1764000000125956.789,"), std::string::npos) << *steps;
  EXPECT_NE(steps->find("\"\"before_event\"\":\"\"evt_1_3\"\""), std::string::npos) << *steps;
  EXPECT_NE(steps->find("INTERNAL_BUBBLE_HEAVY"), std::string::npos);

  // bubble evidence of both ranks, largest first, with ids that evidence_index.csv lists
  auto bubbles = read_file(dir / "evidence" / "bubble_windows.jsonl");
  ASSERT_TRUE(bubbles.ok());
  EXPECT_EQ(std::count(bubbles->begin(), bubbles->end(), '\n'), 2);
  EXPECT_NE(bubbles->find("\"before_event\":\"evt_0_3\""), std::string::npos) << *bubbles;
  auto evidence = read_file(dir / "evidence_index.csv");
  ASSERT_TRUE(evidence.ok());
  const size_t id_at = bubbles->find("evd_");
  ASSERT_NE(id_at, std::string::npos);
  EXPECT_NE(evidence->find(bubbles->substr(id_at, 20)), std::string::npos) << *evidence;
  EXPECT_NE(evidence->find(",step_window,0,seg_0,"), std::string::npos) << *evidence;
  EXPECT_NE(evidence->find(",layer_window,1,seg_1,0,9,"), std::string::npos) << *evidence;
  EXPECT_NE(evidence->find(",layer_1\n"), std::string::npos) << *evidence;  // layer_id last, as the reference

  // no HCCL rows on any rank: an empty file, no header (the reference's convention)
  EXPECT_EQ(fs::file_size(dir / "hccl_op_summary.csv"), 0u);
  auto manifest = read_file(dir / "summary_manifest.json");
  ASSERT_TRUE(manifest.ok());
  EXPECT_NE(manifest->find("\"operator_summary_rows\":2"), std::string::npos) << *manifest;
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
}

// Two ranks' packs as the rank jobs leave them (summary parts and an empty raw kernel index).
std::vector<SummaryPart> two_rank_packs(const fs::path& dir) {
  ascprof::testing::PartPacks packs;
  Rank a = make_rank("0", "aclnnFusedInferAttentionScore");
  Rank b = make_rank("1", "opB");
  EXPECT_TRUE(write_rank_summary_parts(packs.at(dir / "ranks/0.parts"), 0, "0", a.s, a.c, a.sum, kb()).ok());
  EXPECT_TRUE(write_rank_summary_parts(packs.at(dir / "ranks/1.parts"), 1, "1", b.s, b.c, b.sum, kb()).ok());
  const StringPool pool;
  const model::KernelTable k;
  const analysis::NormalizedKernels norm;
  for (const char* id : {"0", "1"})
    EXPECT_TRUE(write_raw_kernel_index_part(packs.at(dir / "ranks" / (std::string(id) + ".parts")),
                                            static_cast<uint32_t>(id[0] - '0'), id, "kernel_details_csv", "k.csv",
                                            "profile_test", k, norm, pool, kb())
                    .ok());
  EXPECT_TRUE(packs.commit().ok());
  return {{dir / "ranks/0.parts", "0"}, {dir / "ranks/1.parts", "1"}};
}

// A root table over knowledge's [root_tables] budget is kept as an index of the ranks' pack ranges:
// the header and the listed ranges are byte for byte the table the copy holds (evidence_index.csv's
// merged bubble rows included), the manifest is the same, a table without rows stays an empty file,
// and a later run under the budget puts the copy back and removes the index.
TEST(SummaryOutputs, TableOverTheBudgetIsAnIndexOfTheSameBytes) {
  ascprof::testing::ScratchDir dir("summary-indexed");
  const auto parts = two_rank_packs(dir.path());
  ASSERT_TRUE(write_root_summary_outputs(dir.path(), parts, kb()).ok());
  std::map<std::string, std::string> copied;
  for (const auto& t : summary_tables()) {
    auto text = read_file(dir / t);
    ASSERT_TRUE(text.ok()) << t;
    copied[t] = *text;
    EXPECT_FALSE(fs::exists(store::table_index_path(dir / t))) << t;
  }
  const auto manifest = read_file(dir / "summary_manifest.json");
  ASSERT_TRUE(manifest.ok());

  knowledge::Knowledge small = kb();
  small.summarize.root_table_max_mib = 0;  // every table with rows is over the budget
  auto files = write_root_summary_outputs(dir.path(), parts, small);
  ASSERT_TRUE(files.ok()) << files.status().to_string();
  size_t indexed = 0;
  for (const auto& t : summary_tables()) {
    if (copied[t].empty()) {  // no rows on any rank: the reference's empty file, no index
      EXPECT_EQ(fs::file_size(dir / t), 0u) << t;
      EXPECT_FALSE(fs::exists(store::table_index_path(dir / t))) << t;
      continue;
    }
    ++indexed;
    EXPECT_FALSE(fs::exists(dir / t)) << t << ": the copy of the earlier run is removed";
    EXPECT_NE(std::find(files->begin(), files->end(), store::table_index_path(dir / t)), files->end()) << t;
    auto index = store::read_table_index(dir / t);
    ASSERT_TRUE(index.ok()) << index.status().to_string();
    std::string bytes = index->header;
    for (const auto& p : index->parts) {
      EXPECT_FALSE(fs::path(p.file).is_absolute()) << p.file;  // the root folder moves whole
      std::string part;
      ASSERT_TRUE(store::read_table_part(dir.path(), p, part).ok());
      bytes += part;
    }
    EXPECT_EQ(bytes, copied[t]) << t;
    EXPECT_EQ(index->rows, static_cast<uint64_t>(std::count(copied[t].begin(), copied[t].end(), '\n')) - 1) << t;
  }
  EXPECT_GE(indexed, 5u);
  EXPECT_TRUE(fs::exists(dir / "evidence_index.csv.bubbles"));  // the merged bubble rows the index names
  EXPECT_EQ(*read_file(dir / "summary_manifest.json"), *manifest);

  ASSERT_TRUE(write_root_summary_outputs(dir.path(), parts, kb()).ok());  // under the budget again
  for (const auto& t : summary_tables()) {
    EXPECT_EQ(*read_file(dir / t), copied[t]) << t;
    EXPECT_FALSE(fs::exists(store::table_index_path(dir / t))) << t;
  }
  EXPECT_FALSE(fs::exists(dir / "evidence_index.csv.bubbles"));
}

// A table larger than one write chunk (a big rank's block table is over 100 MB) is streamed to its
// part pack in pieces (segments): every row arrives exactly once, in order, and no temporary file is left.
TEST(SummaryOutputs, TableLargerThanOneChunkIsWrittenWholeAndInOrder) {
  ascprof::testing::ScratchDir dir("summary-big");
  ascprof::testing::PartPacks packs;
  Rank r = make_rank("0", "op");
  constexpr uint32_t kLayers = 30000;
  for (uint32_t i = 1; i < kLayers; ++i) {
    model::LayerSegment l = r.s.layers[0];
    l.layer_id = "layer_0_" + std::to_string(i);
    l.layer_index = i;
    r.s.layers.push_back(l);
    model::LayerSummary ls = r.sum.layers[0];
    ls.layer = i;
    r.sum.layers.push_back(ls);
  }
  ASCPROF_ASSERT_OK(write_rank_summary_parts(packs.at(dir / "0.parts"), 0, "0", r.s, r.c, r.sum, kb()));
  ASCPROF_ASSERT_OK(packs.commit());
  auto text = ascprof::testing::PartPacks::section(dir / "0.parts", "layer_summary.csv");
  ASSERT_TRUE(text.ok()) << text.status().to_string();
  EXPECT_GT(text->size(), size_t{4} << 20);  // more than one 4 MiB chunk
  std::istringstream in(*text);
  std::string line;
  uint32_t rows = 0;
  while (std::getline(in, line)) {
    const std::string id = rows == 0 ? "layer_0," : "layer_0_" + std::to_string(rows) + ",";
    ASSERT_EQ(line.rfind(id, 0), 0u) << "row " << rows << ": " << line.substr(0, 40);
    ++rows;
  }
  EXPECT_EQ(rows, kLayers);
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
}

// One operator on two ranks is one class row with both ranks' spread; no HCCL rows: empty file.
TEST(SummaryOutputs, OperatorClassesMergeAcrossRanks) {
  ascprof::testing::ScratchDir dir("summary-classes");
  Rank a = make_rank("0", "aclnnFusedInferAttentionScore");
  Rank b = make_rank("1", "aclnnFusedInferAttentionScore");
  b.sum.operators[0].duration_sum_ns = 9000;
  auto files = write_root_class_summaries(dir.path(), {a.sum.operators, b.sum.operators}, {{}, {}}, kb());
  ASSERT_TRUE(files.ok()) << files.status().to_string();
  auto text = read_file(dir / "operator_class_summary.csv");
  ASSERT_TRUE(text.ok());
  std::istringstream in(*text);
  std::string header, row, extra;
  std::getline(in, header);
  std::getline(in, row);
  EXPECT_FALSE(std::getline(in, extra));
  // name, task_type, op_type, roles, rank_count 2, calls 4, 12 µs in total, min 3 / max 9 / p50 6, skew (9-3)/6 = 1
  EXPECT_EQ(row.rfind("aclnnFusedInferAttentionScore,FUSEDINFERATTENTIONSCORE,mix_cv,attention,2,4,12,0,12,3,0,0,3,9,6,1,", 0),
            0u)
      << header << "\n" << row;
  EXPECT_EQ(fs::file_size(dir / "hccl_class_summary.csv"), 0u);
}

// The ranks' sections are placed by the runner it is given (the orchestration spreads them over
// the processes): run in pieces and in reverse, the tables are byte for byte those of the copies
// run in place; a runner that fails publishes no table and leaves no temporary file.
TEST(SummaryOutputs, SectionCopiesRunAnywhereGiveTheSameTables) {
  ascprof::testing::ScratchDir here("summary-copies-here"), there("summary-copies-there");
  const auto parts_here = two_rank_packs(here.path());
  const auto parts_there = two_rank_packs(there.path());
  ASSERT_TRUE(write_root_summary_outputs(here.path(), parts_here, kb()).ok());
  size_t ran = 0;
  const store::SectionCopyRunner pieces = [&ran](const std::vector<store::SectionCopy>& copies) {
    const auto bounds = store::split_section_copies(copies, 3);
    for (size_t k = 3; k-- > 0;) ASCPROF_RETURN_IF_ERROR(store::run_section_copies(copies, bounds[k], bounds[k + 1]));
    ran += copies.size();
    return Status{};
  };
  ASSERT_TRUE(write_root_summary_outputs(there.path(), parts_there, kb(), {}, pieces).ok());
  EXPECT_GT(ran, 2u);
  for (const auto& t : summary_tables()) {
    const auto a = read_file(here / t), b = read_file(there / t);
    ASSERT_TRUE(a.ok() && b.ok()) << t;
    EXPECT_EQ(*a, *b) << t;
  }
  for (const char* t : {"step_summary.csv", "evidence_index.csv", "operator_summary.csv"})
    EXPECT_GT(fs::file_size(there / t), 0u) << t;

  ascprof::testing::ScratchDir failing("summary-copies-fail");
  const auto parts_failing = two_rank_packs(failing.path());
  const store::SectionCopyRunner fails = [](const std::vector<store::SectionCopy>&) {
    return Status(ErrorCode::kIo, "another process: disk full");
  };
  auto files = write_root_summary_outputs(failing.path(), parts_failing, kb(), {}, fails);
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.status().message().find("disk full"), std::string::npos) << files.status().to_string();
  EXPECT_FALSE(fs::exists(failing / "step_summary.csv"));
  for (const auto& e : fs::directory_iterator(failing.path()))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
}

TEST(SummaryOutputs, MissingFragmentFailsWithoutPublishing) {
  ascprof::testing::ScratchDir dir("summary-missing");
  ascprof::testing::PartPacks packs;
  ASCPROF_ASSERT_OK(packs.commit());
  auto files = write_root_summary_outputs(dir.path(), {{dir / "ranks/9.parts", "9"}}, kb());
  ASSERT_FALSE(files.ok());
  EXPECT_FALSE(fs::exists(dir / "step_summary.csv"));
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
}

}  // namespace
}  // namespace ascprof::pipeline

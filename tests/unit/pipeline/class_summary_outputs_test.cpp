// block/layer/step_class_summary.csv on a generated capture run through the real stages (import,
// normalize, segment, classify, summarize, per-rank partials, root merge): the reference's headers,
// member counts that add up to the ranks' blocks / layers / steps, class ids that are the
// structure's, and one class's values recomputed here from the rank summaries.
#include "ascprof/pipeline/class_summary_outputs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "ascprof/analysis/classify.hpp"
#include "ascprof/analysis/normalize.hpp"
#include "ascprof/analysis/segment.hpp"
#include "ascprof/analysis/summarize.hpp"
#include "ascprof/common/files.hpp"
#include "ascprof/importers/discovery.hpp"
#include "ascprof/importers/kernel_details.hpp"
#include "ascprof/importers/trace_view.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/shipped_knowledge.hpp"
#include "support/test_support.hpp"

namespace ascprof::pipeline {
namespace {

namespace fs = std::filesystem;

const knowledge::Knowledge& kb() { return ascprof::testing::shipped_knowledge(); }

struct Rank {
  std::string rank_id;
  model::RankStructure s;
  model::RankClasses c;
  model::RankSummary sum;
};

std::vector<Rank> run_stages(const fs::path& root) {
  std::vector<Rank> out;
  Stats stats;
  auto cap = importers::discover_capture_root(root, stats);
  EXPECT_TRUE(cap.ok()) << cap.status().to_string();
  if (!cap.ok()) return out;
  for (const auto& rank : cap->ranks) {
    StringPool pool;
    model::KernelTable k;
    Status st = importers::import_kernel_details(rank.files.kernel_details, pool, k, stats);
    EXPECT_TRUE(st.ok()) << st.to_string();
    model::TraceTables tr;
    st = importers::import_trace_view(rank.files.trace_view, pool, tr, stats);
    EXPECT_TRUE(st.ok()) << st.to_string();
    const auto norm = analysis::normalize_kernels(k, pool, kb(), stats);
    analysis::SegmentInput in;
    in.kernels = &k;
    in.normalized = &norm;
    in.pool = &pool;
    in.profiler_steps = &tr.steps;
    in.rank_id = rank.rank_id;
    in.use_declared_steps = true;
    Rank r;
    r.rank_id = rank.rank_id;
    r.s = analysis::segment_rank(in, kb());
    r.c = analysis::classify_rank(r.s, k, norm, pool, kb());
    analysis::SummarizeInput sin{&k, &norm, &pool, &kb()};
    r.sum = analysis::summarize_rank(sin, r.s, r.c);
    out.push_back(std::move(r));
  }
  return out;
}

// RFC 4180 fields of one line (no embedded newlines in these tables).
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> f(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        f.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        f.back() += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      f.emplace_back();
    } else {
      f.back() += ch;
    }
  }
  return f;
}

struct Table {
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
};

Table read_table(const fs::path& p) {
  Table t;
  auto text = read_file(p);
  EXPECT_TRUE(text.ok()) << p;
  if (!text.ok()) return t;
  std::istringstream in(*text);
  std::string line;
  if (!std::getline(in, line)) return t;
  t.header = fields(line);
  while (std::getline(in, line)) {
    const auto f = fields(line);
    EXPECT_EQ(f.size(), t.header.size()) << line;
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < f.size() && i < t.header.size(); ++i) row[t.header[i]] = f[i];
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::vector<std::string> split_header(const std::string& s) { return fields(s); }

double num(const std::map<std::string, std::string>& row, const std::string& col) {
  return std::strtod(row.at(col).c_str(), nullptr);
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = static_cast<double>(v.size() - 1) * q;
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

TEST(ClassSummaryOutputs, SynthCaptureTablesAddUpToTheStructure) {
  ascprof::testing::ScratchDir dir("class-summaries");
  synth::SynthOptions so;
  so.scenario = "moe_mla_decode";
  so.out_dir = dir / "capture";
  so.ranks = 2;
  so.steps = 3;
  auto gen = synth::generate_capture(so);
  ASSERT_TRUE(gen.ok()) << gen.status().to_string();
  const std::vector<Rank> ranks = run_stages(so.out_dir);
  ASSERT_EQ(ranks.size(), 2u);

  std::vector<analysis::ClassPartials> partials;
  for (const Rank& r : ranks) partials.push_back(analysis::class_partials(r.s, r.c, r.sum, kb()));
  const analysis::ClassSummaries cs = analysis::merge_class_partials(partials, kb());
  auto written = write_root_structure_class_summaries(dir / "out", cs, kb());
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  ASSERT_EQ(written->size(), 3u);
  for (const auto& t : class_summary_tables()) EXPECT_TRUE(fs::exists(dir / "out" / t)) << t;

  const Table blocks = read_table(dir / "out" / "block_class_summary.csv");
  const Table layers = read_table(dir / "out" / "layer_class_summary.csv");
  const Table steps = read_table(dir / "out" / "step_class_summary.csv");
  EXPECT_EQ(blocks.header,
            split_header("block_class_id,block_kind,companion_layer,member_count,rank_count,has_unknown_shape,"
                         "wall_ms_sum,wall_ms_mean,wall_ms_p50,wall_ms_p90,busy_ms_sum,busy_ms_mean,bubble_ms_mean,"
                         "comm_share_mean,comm_duration_us_sum,pipeline_signal,bound_stage,bound_family,dominant_core,"
                         "dominant_op_type,bound_family_member_histogram,op_type_counts,top_ops,aicore_time,aiv_time,"
                         "aic_mac_time,aic_fixpipe_time,aic_mte1_time,aic_mte2_time,aic_scalar_time,aiv_vec_time,"
                         "aiv_mte2_time,aiv_mte3_time,aiv_scalar_time"));
  EXPECT_EQ(layers.header,
            split_header("layer_class_id,structure_signature,block_kinds,block_class_ids,companion_layer,"
                         "has_unknown_shape,member_count,rank_count,wall_ms_sum,wall_ms_mean,wall_ms_p50,wall_ms_p90,"
                         "busy_ms_mean,bubble_ms_mean,block_kind_wall_ms_mean,block_kind_wall_ms_share_mean,top_ops"));
  EXPECT_EQ(steps.header,
            split_header("step_class_id,structure_signature,step_family,main_layer_count,layer_count,"
                         "has_unknown_shape,member_count,rank_count,wall_ms_sum,wall_ms_mean,wall_ms_p50,wall_ms_p90,"
                         "busy_ms_mean,bubble_ms_mean,head_ms_mean,main_ms_mean,tail_ms_mean,head_ratio_mean,"
                         "main_ratio_mean,tail_ratio_mean,bubble_ratio_mean,top_layer_classes,top_ops"));
  ASSERT_FALSE(blocks.rows.empty());
  ASSERT_FALSE(layers.rows.empty());
  ASSERT_FALSE(steps.rows.empty());

  // member counts add up to the ranks' classified blocks / layers / steps; ids are the structure's
  uint64_t n_blocks = 0, n_layers = 0, n_steps = 0;
  std::set<std::string> block_ids, layer_ids, step_ids;
  for (const Rank& r : ranks) {
    n_blocks += r.c.blocks.size();
    for (const int32_t lc : r.c.layer_class) n_layers += lc >= 0 ? 1 : 0;
    for (const int32_t sc : r.c.step_class) n_steps += sc >= 0 ? 1 : 0;
    for (const auto& k : r.c.block_classes) block_ids.insert(k.class_id);
    for (const auto& k : r.c.layer_classes) layer_ids.insert(k.class_id);
    for (const auto& k : r.c.step_classes) step_ids.insert(k.class_id);
  }
  EXPECT_GT(n_blocks, 0u);
  EXPECT_EQ(n_steps, 6u);  // 3 steps on each of 2 ranks
  auto check = [](const Table& t, const std::string& id_col, uint64_t members, const std::set<std::string>& ids) {
    uint64_t sum = 0;
    std::set<std::string> seen;
    uint64_t last = UINT64_MAX;
    for (const auto& row : t.rows) {
      const uint64_t m = std::stoull(row.at("member_count"));
      EXPECT_LE(m, last) << "sorted by member_count desc";
      last = m;
      sum += m;
      EXPECT_TRUE(ids.count(row.at(id_col))) << row.at(id_col);
      EXPECT_TRUE(seen.insert(row.at(id_col)).second) << "duplicate " << row.at(id_col);
      const uint64_t rc = std::stoull(row.at("rank_count"));
      EXPECT_GE(rc, 1u);
      EXPECT_LE(rc, 2u);
    }
    EXPECT_EQ(sum, members) << id_col;
    EXPECT_EQ(seen, ids) << id_col;
  };
  check(blocks, "block_class_id", n_blocks, block_ids);
  check(layers, "layer_class_id", n_layers, layer_ids);
  check(steps, "step_class_id", n_steps, step_ids);

  // the largest block class, recomputed from the ranks' block rows
  const auto& top = blocks.rows[0];
  const std::string id = top.at("block_class_id");
  std::vector<double> walls;
  std::set<std::string> holders;
  double busy = 0, comm_share = 0, comm_us = 0;
  for (const Rank& r : ranks) {
    for (const auto& b : r.sum.blocks) {
      if (r.c.block_classes[r.c.blocks[b.block].block_class].class_id != id) continue;
      walls.push_back(static_cast<double>(b.metrics.wall_ns) / 1e6);
      busy += static_cast<double>(b.metrics.busy_union_ns) / 1e6;
      comm_share += b.comm_share;
      comm_us += static_cast<double>(b.comm_duration_ns) / 1e3;
      holders.insert(r.rank_id);
    }
  }
  ASSERT_FALSE(walls.empty());
  const double n = static_cast<double>(walls.size());
  double wall_sum = 0;
  for (const double w : walls) wall_sum += w;
  EXPECT_EQ(std::stoull(top.at("member_count")), walls.size());
  EXPECT_EQ(std::stoull(top.at("rank_count")), holders.size());
  EXPECT_NEAR(num(top, "wall_ms_sum"), wall_sum, 0.0005);
  EXPECT_NEAR(num(top, "wall_ms_mean"), wall_sum / n, 1e-6);
  EXPECT_NEAR(num(top, "wall_ms_p50"), quantile(walls, 0.5), 1e-6);
  EXPECT_NEAR(num(top, "wall_ms_p90"), quantile(walls, 0.9), 1e-6);
  EXPECT_NEAR(num(top, "busy_ms_mean"), busy / n, 1e-6);
  EXPECT_NEAR(num(top, "comm_share_mean"), comm_share / n, 1e-6);
  EXPECT_NEAR(num(top, "comm_duration_us_sum"), comm_us, 0.0005);
  EXPECT_EQ(top.at("pipeline_signal") == "True", !top.at("aiv_time").empty());
  EXPECT_EQ(top.at("top_ops").front(), '[');
  EXPECT_NE(top.at("top_ops").find("\"duration_sum_us\":"), std::string::npos) << top.at("top_ops");

  // every step class lists its layer classes; they are layer classes of the tables
  for (const auto& row : steps.rows) {
    const std::string& tl = row.at("top_layer_classes");
    size_t at = 0;
    while ((at = tl.find("\"layer_class_id\":\"", at)) != std::string::npos) {
      at += 18;
      EXPECT_TRUE(layer_ids.count(tl.substr(at, tl.find('"', at) - at))) << tl;
    }
    // the windows never cover more than the step (gaps between them are in neither)
    EXPECT_LE(num(row, "head_ratio_mean") + num(row, "main_ratio_mean") + num(row, "tail_ratio_mean"), 1.0 + 1e-5);
  }

  // the largest step class's anatomy means, recomputed from the ranks' step rows
  const auto& st = steps.rows[0];
  double main_ms = 0, tail_ms = 0, main_ratio = 0, bubble_ratio = 0, members = 0;
  for (const Rank& r : ranks) {
    for (const auto& g : r.sum.segments) {
      const int32_t sc = r.c.step_class[g.segment];
      if (sc < 0 || r.c.step_classes[static_cast<size_t>(sc)].class_id != st.at("step_class_id")) continue;
      ++members;
      main_ms += g.anatomy.main.empty ? 0 : static_cast<double>(g.anatomy.main.wall_ns) / 1e6;
      tail_ms += g.anatomy.tail.empty ? 0 : static_cast<double>(g.anatomy.tail.wall_ns) / 1e6;
      main_ratio += g.anatomy.main_ratio;
      bubble_ratio += g.anatomy.bubble_ratio;
    }
  }
  ASSERT_GT(members, 0);
  EXPECT_EQ(std::stod(st.at("member_count")), members);
  EXPECT_NEAR(num(st, "main_ms_mean"), main_ms / members, 1e-6);
  EXPECT_NEAR(num(st, "tail_ms_mean"), tail_ms / members, 1e-6);
  EXPECT_NEAR(num(st, "main_ratio_mean"), main_ratio / members, 1e-6);
  EXPECT_NEAR(num(st, "bubble_ratio_mean"), bubble_ratio / members, 1e-6);
}

TEST(ClassSummaryOutputs, NoClassesWriteEmptyFiles) {
  ascprof::testing::ScratchDir dir("class-summaries-empty");
  auto written = write_root_structure_class_summaries(dir.path(), analysis::ClassSummaries{}, kb());
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  for (const auto& t : class_summary_tables()) EXPECT_EQ(fs::file_size(dir / t), 0u) << t;
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
}

// One hand-made row per table, cell by cell (µs / ms decimals, JSON cells, empty pipeline cell).
TEST(ClassSummaryOutputs, CellsAreFormattedAsTheReference) {
  ascprof::testing::ScratchDir dir("class-summaries-cells");
  analysis::ClassSummaries cs;
  analysis::BlockClassSummaryRow b;
  b.block_class_id = "blk_cls_0123456789abcdef";
  b.block_kind = "moe";
  b.member_count = 3;
  b.rank_count = 2;
  b.wall_ms_sum = 1.23456789;
  b.wall_ms_mean = 0.411522630;
  b.wall_ms_p50 = 0.4;
  b.wall_ms_p90 = 0.5;
  b.busy_ms_sum = 1.0;
  b.busy_ms_mean = 1.0 / 3;
  b.bubble_ms_mean = 0.1;
  b.comm_share_mean = 0.5;
  b.comm_duration_us_sum = 12.3456;
  b.bound = {"communication", "communication", "none"};
  b.dominant_op_type = "communication";
  b.bound_family_member_histogram = {{"communication", 3}};
  b.op_type_counts = {{"communication", 9}};
  b.top_ops = {{"hcom_allReduce_", "HCCL", 9, 12'345}};
  cs.blocks.push_back(b);
  analysis::LayerClassSummaryRow l;
  l.layer_class_id = "lyr_cls_x";
  l.structure_signature = "a,b";
  l.block_kinds = {"attention", "moe"};
  l.block_class_ids = {"blk_cls_1", "blk_cls_2"};
  l.member_count = 1;
  l.rank_count = 1;
  l.block_kind_wall_ms_mean = {{"attention", 0.5}, {"moe", 0.25}};
  l.block_kind_wall_ms_share_mean = {{"attention", 0.5}, {"moe", 0.25}};
  cs.layers.push_back(l);
  analysis::StepClassSummaryRow s;
  s.step_class_id = "stp_cls_x";
  s.member_count = 1;
  s.rank_count = 1;
  s.main_ratio_mean = 1;
  s.top_layer_classes = {{"lyr_cls_x", 2.5, 4}};
  cs.steps.push_back(s);
  ASSERT_TRUE(write_root_structure_class_summaries(dir.path(), cs, kb()).ok());

  auto line2 = [&dir](const char* file) {
    auto text = read_file(dir / file);
    EXPECT_TRUE(text.ok());
    std::istringstream in(*text);
    std::string header, row;
    std::getline(in, header);
    std::getline(in, row);
    return row;
  };
  EXPECT_EQ(line2("block_class_summary.csv"),
            "blk_cls_0123456789abcdef,moe,False,3,2,False,1.235,0.411523,0.4,0.5,1,0.333333,0.1,0.5,12.346,False,"
            "communication,communication,none,communication,\"{\"\"communication\"\":3}\",\"{\"\"communication\"\":9}\","
            "\"[{\"\"name\"\":\"\"hcom_allReduce_\"\",\"\"task_type\"\":\"\"HCCL\"\",\"\"duration_sum_us\"\":12.345,"
            "\"\"call_count\"\":9}]\",,,,,,,,,,,");  // no pipeline signal: 11 empty pipeline cells
  EXPECT_EQ(line2("layer_class_summary.csv"),
            "lyr_cls_x,\"a,b\",\"[\"\"attention\"\",\"\"moe\"\"]\",\"[\"\"blk_cls_1\"\",\"\"blk_cls_2\"\"]\",False,False,1,1,"
            "0,0,0,0,0,0,\"{\"\"attention\"\":0.500000,\"\"moe\"\":0.250000}\","
            "\"{\"\"attention\"\":0.500000,\"\"moe\"\":0.250000}\",[]");
  EXPECT_EQ(line2("step_class_summary.csv"),
            "stp_cls_x,,,0,0,False,1,1,0,0,0,0,0,0,0,0,0,0,1,0,0,"
            "\"[{\"\"layer_class_id\"\":\"\"lyr_cls_x\"\",\"\"wall_ms_sum\"\":2.500,\"\"member_count\"\":4}]\",[]");
}

}  // namespace
}  // namespace ascprof::pipeline

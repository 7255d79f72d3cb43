// A big rank's segment/classify/summarize tables written to and read back from its HDF5 file (the
// rank job writes them, the root and --from-stage read them): 2,000 segments, 38,000 layers and
// 76,000 blocks with their metric, anatomy and JSON cells, as a GB-class decode rank has.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "ascprof/store/h5_writer.hpp"
#include "pipeline/structure_store.hpp"
#include "pipeline/summary_store.hpp"

namespace {

using namespace ascprof;
namespace fs = std::filesystem;

constexpr uint32_t kSegments = 2000, kLayersPerSegment = 19, kBlocksPerLayer = 2;

model::WindowMetrics metrics(uint32_t i) {
  model::WindowMetrics m;
  m.event_count = 40 + i % 7;
  m.row_start = i * 40;
  m.row_end = i * 40 + 39;
  m.start_ns = 1'700'000'000'000'000'000 + int64_t{i} * 1000;
  m.end_ns = m.start_ns + 900;
  m.wall_ns = 900;
  m.busy_union_ns = 800;
  m.kernel_sum_ns = 850;
  m.total_cost_ns = 870;
  m.underfeed_ns = 100;
  m.underfeed_ratio = 0.111;
  m.bubble_count = 3;
  m.stream_count = 2;
  m.task_type_counts = {{"AI_CORE", 30}, {"AI_VECTOR_CORE", 10}};
  m.role_counts = {{"attention", 4}, {"compute", 20}, {"moe", 6}, {"norm", 2}};
  m.category_counts = {{"matmul", 12}, {"elementwise", 20}};
  return m;
}

struct BigRank {
  model::RankStructure structure;
  model::RankClasses classes;
  model::RankSummary summary;
};

BigRank make_rank() {
  BigRank b;
  auto& s = b.structure;
  s.rank_id = "rank0";
  s.layer_signatures = {"anchors:attention.mla+moe|core:aic,aiv|attention:MlaPreprocess,FusedInferAttentionScore"};
  for (uint32_t g = 0; g < kSegments; ++g) {
    model::StepSegment seg;
    seg.segment_id = "seg_" + std::to_string(g);
    seg.complete = true;
    seg.step_family = "attention_moe_workload";
    seg.structure_signature = "main_len=19 ; main_period=1";
    seg.cluster_id = "cluster_0123456789ab";
    seg.first_layer = g * kLayersPerSegment;
    seg.layer_count = kLayersPerSegment;
    seg.frame_reasons = {"exact_step_plan"};
    seg.selection_rows = {g * 800 + 799};
    s.segments.push_back(seg);
    model::SegmentSummary sum;
    sum.segment = g;
    sum.metrics = metrics(g);
    sum.metrics.top_bubbles = {{0, 1, 2, 3, 4}, {1, 5, 6, 7, 8}};
    sum.anatomy.anatomy_kind = "full";
    b.summary.segments.push_back(sum);
    for (uint32_t l = 0; l < kLayersPerSegment; ++l) {
      const uint32_t li = g * kLayersPerSegment + l;
      model::LayerSegment layer;
      layer.layer_id = "layer_" + std::to_string(li);
      layer.segment = g;
      layer.layer_index = l;
      s.layers.push_back(layer);
      b.summary.layers.push_back({li, metrics(li), true, true, false});
      b.classes.layer_class.push_back(0);
      for (uint32_t k = 0; k < kBlocksPerLayer; ++k) {
        model::BlockSegment blk;
        blk.block_id = "blk_" + std::to_string(li) + "_" + std::to_string(k);
        blk.layer = li;
        blk.block_index = k;
        b.classes.blocks.push_back(blk);
        model::BlockSummary bs;
        bs.block = static_cast<uint32_t>(b.classes.blocks.size() - 1);
        bs.metrics = metrics(bs.block);
        bs.op_type_counts = {{"matmul", 8}, {"vector", 12}};
        bs.dominant_op_type = "matmul";
        bs.pipeline_signal = true;
        bs.pipeline_us = {1.5, 0, 2.25, 0, 0, 0.5, 3, 0, 0, 1, 0.125};
        bs.bound = {"aic_mac_time", "cube", "aic"};
        bs.top_ops = {{"MatMulV2", "AI_CORE", 4, 4000}, {"GroupedMatmul", "AI_CORE", 2, 3000}};
        b.summary.blocks.push_back(bs);
      }
    }
    b.classes.step_class.push_back(0);
  }
  model::ShapeClass c;
  c.class_id = "blk_0123456789abcdef";
  for (uint32_t i = 0; i < b.classes.blocks.size(); ++i) {
    c.members.push_back(i);
    b.classes.blocks[i].block_class = 0;
  }
  b.classes.block_classes = {c};
  c.members.clear();
  for (uint32_t i = 0; i < s.layers.size(); ++i) c.members.push_back(i);
  b.classes.layer_classes = {c};
  c.members.clear();
  for (uint32_t i = 0; i < kSegments; ++i) c.members.push_back(i);
  b.classes.step_classes = {c};
  b.summary.rank = metrics(0);
  return b;
}

fs::path scratch() { return fs::temp_directory_path() / ("rank_tables_bench_" + std::to_string(::getpid()) + ".h5"); }

void write(const BigRank& b, const fs::path& p) {
  auto w = store::H5Writer::create(p);
  if (!w.ok() || !pipeline::write_structure_tables(*w, b.structure, b.classes).ok() ||
      !pipeline::write_summary_tables(*w, b.summary).ok() || !w->commit("summarize").ok())
    std::abort();
}

void BM_WriteRankTables(benchmark::State& state) {
  const BigRank b = make_rank();
  const fs::path p = scratch();
  for (auto _ : state) write(b, p);
  fs::remove(p);
}
BENCHMARK(BM_WriteRankTables)->Unit(benchmark::kMillisecond)->Iterations(5);

void BM_ReadRankTables(benchmark::State& state) {
  const fs::path p = scratch();
  write(make_rank(), p);
  for (auto _ : state) {
    auto s = pipeline::read_structure_tables(p.string());
    auto m = pipeline::read_summary_tables(p.string());
    if (!s.ok() || !m.ok()) std::abort();
    benchmark::DoNotOptimize(m->blocks.data());
  }
  fs::remove(p);
}
BENCHMARK(BM_ReadRankTables)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace

BENCHMARK_MAIN();

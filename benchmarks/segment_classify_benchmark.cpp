// Throughput of the segment and classify stages (events per second, one process).
//
// Input: one generated moe_mla_decode rank (DeepSeek-like decode; 61 layers: 3 dense + 58 MoE, 2 MTP
// layers, ArgMax delimiters, 943 kernel rows per step; or the default 10 layers, 185 rows per step),
// imported and normalized once in setup (untimed); its kernel table is then tiled k times with
// shifted times and Step Ids, so sizes have the same structure and span 10x in events (cost must grow
// linearly). Timed regions: one segment_rank call, one classify_rank call, or both.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

#include "ascprof/analysis/classify.hpp"
#include "ascprof/analysis/normalize.hpp"
#include "ascprof/analysis/segment.hpp"
#include "ascprof/common/allocator.hpp"
#include "ascprof/importers/discovery.hpp"
#include "ascprof/importers/kernel_details.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/synth/synth.hpp"

namespace {

namespace fs = std::filesystem;
using namespace ascprof;

struct Input {
  StringPool* pool = nullptr;  // shared by every size (the tiles reuse the base table's ids)
  model::KernelTable kernels;
  analysis::NormalizedKernels norm;
  knowledge::Knowledge kb;
};

// Appends `copies` copies of the rows of `src` to `dst`, each shifted past the previous one in time
// and in Step Id (metrics are not needed by these stages and are left out).
void tile(const model::KernelTable& src, int copies, model::KernelTable& dst) {
  const int64_t span = src.start_ns.back() + src.dur_ns.back() - src.start_ns.front() + 1000;
  int32_t max_step = 0;
  for (const int32_t s : src.step_id) max_step = std::max(max_step, s);
  for (int c = 0; c < copies; ++c)
    for (size_t r = 0; r < src.size(); ++r) {
      dst.source_line.push_back(dst.source_line.size() + 2);
      dst.step_id.push_back(src.step_id[r] + c * (max_step + 1));
      dst.device_id.push_back(src.device_id[r]);
      dst.model_id.push_back(src.model_id[r]);
      dst.task_id.push_back(src.task_id[r]);
      dst.stream_id.push_back(src.stream_id[r]);
      dst.name.push_back(src.name[r]);
      dst.type.push_back(src.type[r]);
      dst.op_state.push_back(src.op_state[r]);
      dst.accelerator_core.push_back(src.accelerator_core[r]);
      dst.start_ns.push_back(src.start_ns[r] + c * span);
      dst.dur_ns.push_back(src.dur_ns[r]);
      dst.wait_ns.push_back(src.wait_ns[r]);
      dst.block_dim.push_back(src.block_dim[r]);
      dst.mix_block_dim.push_back(src.mix_block_dim[r]);
      dst.hf32_eligible.push_back(src.hf32_eligible[r]);
      dst.input_shapes.push_back(src.input_shapes[r]);
      dst.input_dtypes.push_back(src.input_dtypes[r]);
      dst.input_formats.push_back(src.input_formats[r]);
      dst.output_shapes.push_back(src.output_shapes[r]);
      dst.output_dtypes.push_back(src.output_dtypes[r]);
      dst.output_formats.push_back(src.output_formats[r]);
      dst.context_id.push_back(src.context_id[r]);
    }
  dst.header = src.header;
}

// One base capture per layer count, tiled `copies` times.
Input& input(int layers, int copies) {
  static std::map<std::pair<int, int>, std::unique_ptr<Input>> cache;
  static std::map<int, model::KernelTable> bases;
  static StringPool base_pool;
  auto it = cache.find({layers, copies});
  if (it != cache.end()) return *it->second;
  model::KernelTable& base = bases[layers];
  if (base.size() == 0) {
    const fs::path dir = fs::temp_directory_path() / ("ascprof_seg_bench_" + std::to_string(::getpid()));
    synth::SynthOptions o;
    o.scenario = "moe_mla_decode";
    o.out_dir = dir;
    o.ranks = 1;
    o.steps = layers >= 30 ? 40 : 200;
    o.layers = layers;
    o.force = true;
    auto gen = synth::generate_capture(o);
    if (!gen.ok()) std::abort();
    Stats stats;
    auto cap = importers::discover_capture_root(dir, stats);
    if (!cap.ok() || cap->ranks.empty()) std::abort();
    if (!importers::import_kernel_details(cap->ranks[0].files.kernel_details, base_pool, base, stats).ok()) std::abort();
    fs::remove_all(dir);
  }
  auto in = std::make_unique<Input>();
  in->pool = &base_pool;
  tile(base, copies, in->kernels);
  auto kb = knowledge::Knowledge::load(knowledge::default_knowledge_dir());
  if (!kb.ok()) std::abort();
  in->kb = std::move(kb).value();
  Stats stats;
  in->norm = analysis::normalize_kernels(in->kernels, *in->pool, in->kb, stats);
  return *cache.emplace(std::make_pair(layers, copies), std::move(in)).first->second;
}

analysis::SegmentInput segment_input(Input& in) {
  analysis::SegmentInput s;
  s.kernels = &in.kernels;
  s.normalized = &in.norm;
  s.pool = in.pool;
  s.rank_id = "0";
  return s;
}

void BM_Segment(benchmark::State& state) {
  Input& in = input(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  size_t steps = 0;
  for (auto _ : state) {
    auto s = analysis::segment_rank(segment_input(in), in.kb);
    steps = s.step_count();
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * in.kernels.size()));
  state.counters["events"] = static_cast<double>(in.kernels.size());
  state.counters["steps"] = static_cast<double>(steps);
}

void BM_Classify(benchmark::State& state) {
  Input& in = input(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  const auto s = analysis::segment_rank(segment_input(in), in.kb);
  for (auto _ : state) {
    auto c = analysis::classify_rank(s, in.kernels, in.norm, *in.pool, in.kb);
    benchmark::DoNotOptimize(c);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * in.kernels.size()));
  state.counters["events"] = static_cast<double>(in.kernels.size());
}

void BM_SegmentAndClassify(benchmark::State& state) {
  Input& in = input(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state) {
    auto s = analysis::segment_rank(segment_input(in), in.kb);
    auto c = analysis::classify_rank(s, in.kernels, in.norm, *in.pool, in.kb);
    benchmark::DoNotOptimize(c);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * in.kernels.size()));
  state.counters["events"] = static_cast<double>(in.kernels.size());
}

// {layers, copies}: 61 layers x 40 steps x 2 / 6 / 20 copies = 75,440 / 226,320 / 754,400 events
// (10x); and the demo's 10-layer decode (12 layers of ~15 rows per step), 200 steps x 20 copies =
// 740,000 events, where per-layer and per-step costs weigh most.
#define ASCPROF_SIZES ->Args({61, 2})->Args({61, 6})->Args({61, 20})->Args({10, 20})->Unit(benchmark::kMillisecond)
BENCHMARK(BM_Segment) ASCPROF_SIZES;
BENCHMARK(BM_Classify) ASCPROF_SIZES;
BENCHMARK(BM_SegmentAndClassify) ASCPROF_SIZES;

}  // namespace

// The tool's allocator setting (common/allocator.hpp), so the timings are those of ascprof-mpi.
int main(int argc, char** argv) {
  ascprof::keep_freed_heap_for_reuse();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

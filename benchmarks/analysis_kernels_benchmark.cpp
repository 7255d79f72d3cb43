// Hot inner pieces of the analysis, one process: the taxonomy lookup of a kernel (name, Type, core)
// uncached, as normalize does once per distinct triple, and the interval union of a window's kernels
// (busy time and bubbles, §2.5.1), as summarize does for every step, layer and block; plus the
// deep-dive operator profiles of a whole rank (one hash lookup per row).
//
// Input: one generated moe_mla_decode rank (200 steps, ~37k kernel rows), imported and normalized in
// setup (untimed).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "ascprof/analysis/deep_dive.hpp"
#include "ascprof/analysis/normalize.hpp"
#include "ascprof/analysis/summarize.hpp"
#include "ascprof/importers/discovery.hpp"
#include "ascprof/importers/kernel_details.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/synth/synth.hpp"

namespace {

namespace fs = std::filesystem;
using namespace ascprof;

struct Input {
  StringPool pool;
  model::KernelTable kernels;
  analysis::NormalizedKernels norm;
  knowledge::Knowledge kb;
};

Input& input() {
  static std::unique_ptr<Input> in;
  if (in) return *in;
  in = std::make_unique<Input>();
  const fs::path dir = fs::temp_directory_path() / ("ascprof_kernels_bench_" + std::to_string(::getpid()));
  synth::SynthOptions o;
  o.scenario = "moe_mla_decode";
  o.out_dir = dir;
  o.ranks = 1;
  o.steps = 200;
  o.force = true;
  if (!synth::generate_capture(o).ok()) std::abort();
  Stats stats;
  auto cap = importers::discover_capture_root(dir, stats);
  if (!cap.ok() || cap->ranks.empty()) std::abort();
  if (!importers::import_kernel_details(cap->ranks[0].files.kernel_details, in->pool, in->kernels, stats).ok()) std::abort();
  fs::remove_all(dir);
  auto kb = knowledge::Knowledge::load(knowledge::default_knowledge_dir());
  if (!kb.ok()) std::abort();
  in->kb = std::move(kb).value();
  in->norm = analysis::normalize_kernels(in->kernels, in->pool, in->kb, stats);
  return *in;
}

// Every row classified from scratch (normalize memoises per distinct triple; this is the miss cost).
void BM_TaxonomyLookup(benchmark::State& state) {
  Input& in = input();
  const auto& k = in.kernels;
  for (auto _ : state) {
    size_t bits = 0;
    for (size_t r = 0; r < k.size(); ++r) {
      const auto t = in.kb.taxonomy.classify(in.pool.view(k.name[r]), in.pool.view(k.type[r]),
                                             in.pool.view(k.accelerator_core[r]));
      bits += t.categories.count();
    }
    benchmark::DoNotOptimize(bits);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * k.size()));
}
BENCHMARK(BM_TaxonomyLookup)->Unit(benchmark::kMillisecond)->UseRealTime();

// The union of all of the rank's kernel intervals in one window (sort + sweep) with its bubbles.
void BM_IntervalUnion(benchmark::State& state) {
  Input& in = input();
  const analysis::SummarizeInput si{&in.kernels, &in.norm, &in.pool, &in.kb};
  const auto last = static_cast<uint32_t>(in.kernels.size() - 1);
  for (auto _ : state) {
    auto m = analysis::window_metrics(si, 0, last, 8);
    benchmark::DoNotOptimize(m.busy_union_ns);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * in.kernels.size()));
}
BENCHMARK(BM_IntervalUnion)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_DeepDiveProfiles(benchmark::State& state) {
  Input& in = input();
  for (auto _ : state) {
    auto p = analysis::operator_profiles(in.kernels, in.norm, in.pool, in.kb);
    benchmark::DoNotOptimize(p.kernel_time_ns);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * in.kernels.size()));
}
BENCHMARK(BM_DeepDiveProfiles)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

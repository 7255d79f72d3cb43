// Cross-rank step alignment on the coordinator (issue 22): N ranks × 228 decode steps (the coordinator
// benchmark's template), every window jittered by ±200 µs around its step and shifted by its rank's
// clock offset of up to ±50 ms (corrected by the offsets passed in). Counters: windows/s and the
// alignments found (one per step when the steps are in lockstep). Before issue 22's rewrite this was
// per-window string work against every rank: ~200 s at 1,024 ranks in the coordinator benchmark.
#include <benchmark/benchmark.h>

#include <random>

#include "ascprof/analysis/align.hpp"
#include "ascprof/knowledge/knowledge.hpp"

namespace {

using namespace ascprof;

const knowledge::Knowledge& kb() {
  static const knowledge::Knowledge k = std::move(knowledge::Knowledge::load(knowledge::default_knowledge_dir())).value();
  return k;
}

constexpr int kSteps = 228;
constexpr int64_t kStepNs = 28'000'000, kGapNs = 400'000;

void BM_AlignSteps(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> jitter(-200'000, 200'000), clock(-50'000'000, 50'000'000);
  std::vector<analysis::StepWindow> w;
  std::vector<int64_t> off;
  w.reserve(static_cast<size_t>(ranks) * kSteps);
  for (int r = 0; r < ranks; ++r) {
    const int64_t c = clock(rng);
    for (int s = 0; s < kSteps; ++s) {
      const int64_t begin = s * (kStepNs + kGapNs) + jitter(rng) + c;
      w.push_back({std::to_string(r), "rank" + std::to_string(r) + "_step" + std::to_string(s), "decode", 61, begin,
                   begin + kStepNs + jitter(rng), 0});
      off.push_back(c);
    }
  }
  size_t found = 0;
  for (auto _ : state) {
    auto a = analysis::align_steps(w, off, kb().diagnostics);
    found = a.size();
    benchmark::DoNotOptimize(a.data());
  }
  state.counters["windows/s"] = benchmark::Counter(static_cast<double>(w.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["alignments"] = static_cast<double>(found);
}
BENCHMARK(BM_AlignSteps)->Arg(1024)->Arg(4096)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

// Throughput of the synthetic capture writer: bytes written per second for one large rank
// (moe_mla_decode, ~500 MB at the default argument) and for a small 4-rank capture (fixed costs).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "ascprof/synth/synth.hpp"

namespace {

namespace fs = std::filesystem;

fs::path scratch(const char* tag) {
  return fs::temp_directory_path() / ("ascprof_synth_bench_" + std::string(tag) + "_" + std::to_string(::getpid()));
}

void run(benchmark::State& state, const char* scenario, int ranks, double scale, const char* tag) {
  const fs::path dir = scratch(tag);
  uint64_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::error_code ec;
    fs::remove_all(dir, ec);
    state.ResumeTiming();
    ascprof::synth::SynthOptions o;
    o.scenario = scenario;
    o.out_dir = dir;
    o.ranks = ranks;
    o.steps = 3;
    o.scale = scale;
    o.seed = 1;
    auto r = ascprof::synth::generate_capture(o);
    if (!r.ok()) {
      state.SkipWithError(r.status().to_string().c_str());
      break;
    }
    bytes += r->total_bytes;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["MB_per_iteration"] = static_cast<double>(bytes) / 1e6 / static_cast<double>(state.iterations());
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// One rank, scale 380 x 3 steps = 1140 profiler steps: ~500 MB of kernel_details + trace_view + ...
void BM_SynthWriteOneLargeRank(benchmark::State& state) {
  run(state, "moe_mla_decode", 1, static_cast<double>(state.range(0)), "large");
}
BENCHMARK(BM_SynthWriteOneLargeRank)->Arg(380)->Iterations(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SynthWriteSmallCapture(benchmark::State& state) { run(state, "training", 4, 1.0, "small"); }
BENCHMARK(BM_SynthWriteSmallCapture)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

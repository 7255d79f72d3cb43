// In-kernel MoE traces (issue 20): reading one rank's MoeTracing Chrome trace (skill collector variant,
// 72 cores, as synth --moe-trace writes it) and analysing it (phases, unions, bubbles, attachment).
// Generated once per process (untimed) in the temp folder.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "ascprof/analysis/moe_trace.hpp"
#include "ascprof/importers/moe_trace.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/synth/synth.hpp"

namespace {

namespace fs = std::filesystem;

struct Fixture {
  fs::path dir, trace;
  uintmax_t bytes = 0;
  ascprof::knowledge::MoeTraceRules rules;
};

const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture x;
    x.dir = fs::temp_directory_path() / ("ascprof_moe_bench_" + std::to_string(::getpid()));
    ascprof::synth::SynthOptions o;
    o.scenario = "moe_mla_decode";
    o.out_dir = x.dir;
    o.ranks = 1;
    o.steps = 1;
    o.moe_trace = "skill";
    auto gen = ascprof::synth::generate_capture(o);
    if (!gen.ok() || gen->ranks.empty()) std::abort();
    x.trace = gen->ranks[0].moe_trace;
    x.bytes = fs::file_size(x.trace);
    auto kb = ascprof::knowledge::Knowledge::load(ascprof::knowledge::default_knowledge_dir());
    if (!kb.ok()) std::abort();
    x.rules = kb->moe_trace;
    return x;
  }();
  return f;
}

void BM_MoeTraceImport(benchmark::State& state) {
  const Fixture& f = fixture();
  uint64_t events = 0;
  for (auto _ : state) {
    ascprof::StringPool pool;
    ascprof::Stats stats;
    ascprof::model::MoeTraceCall call;
    ascprof::importers::import_moe_trace(f.trace, 0, f.rules.records_per_core, pool, call, stats);
    events = call.events;
    benchmark::DoNotOptimize(call.intervals.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f.bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events));
  state.counters["events"] = static_cast<double>(events);
}

void BM_MoeTraceAnalyse(benchmark::State& state) {
  const Fixture& f = fixture();
  ascprof::StringPool pool;
  ascprof::Stats stats;
  std::vector<ascprof::model::MoeTraceCall> calls(1);
  ascprof::importers::import_moe_trace(f.trace, 0, f.rules.records_per_core, pool, calls[0], stats);
  for (auto _ : state) {
    auto s = ascprof::analysis::summarize_moe_traces(calls, {}, pool, f.rules, stats);
    benchmark::DoNotOptimize(s.calls.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * calls[0].intervals.size()));
}

BENCHMARK(BM_MoeTraceImport)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MoeTraceAnalyse)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  fs::remove_all(fixture().dir);
  return 0;
}

// The critical path's two halves (issue 21): a rank reducing its steps to skeletons (per kernel row), and
// the coordinator walking the skeletons of many ranks (per rank x step). A rank of 215k kernel rows in 16
// steps, one communication op every 20 rows; 256 / 1,024 ranks of 16 steps of 540 communication ops
// (a rank of the first benchmark), every step walked. Counters: rows/s, skeleton bytes per rank and per
// communication op (serialised as the gather carries it), rank-steps walked per second.
#include <benchmark/benchmark.h>

#include <boost/archive/binary_oarchive.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <sstream>

#include "ascprof/analysis/critical_path.hpp"
#include "ascprof/analysis/normalize.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/model/kernel_table.hpp"
#include "ascprof/model/structure.hpp"
#include "ascprof/model/trace_tables.hpp"

namespace {

using namespace ascprof;

const knowledge::Knowledge& kb() {
  static const knowledge::Knowledge k = std::move(knowledge::Knowledge::load(knowledge::default_knowledge_dir())).value();
  return k;
}

constexpr uint32_t kSteps = 16, kRowsPerStep = 215000 / kSteps, kCommEvery = 20;

// One rank: compute on stream 1, a collective every kCommEvery rows on stream 2 that the next kernel
// waits for; `jitter` shifts the rank's times a little so ranks differ.
struct Rank {
  StringPool pool;
  model::KernelTable k;
  analysis::NormalizedKernels norm;
  model::CommOpTable ops;
  model::RankStructure s;

  explicit Rank(uint32_t jitter) {
    const uint8_t aic = static_cast<uint8_t>(kb().vocab.op_type_index("aic"));
    const uint8_t comm = static_cast<uint8_t>(kb().vocab.op_type_index("communication"));
    const StrId matmul = pool.intern("MatMul"), group = pool.intern("Group g Communication");
    int64_t t = 0;
    uint32_t seq = 0;
    for (uint32_t st = 0; st < kSteps; ++st) {
      model::StepSegment g;
      g.type = model::SegmentType::kStep;
      g.segment_id = "seg" + std::to_string(st);
      g.row_start = static_cast<uint32_t>(k.size());
      g.start_ns = t;
      for (uint32_t i = 0; i < kRowsPerStep; ++i) {
        const bool is_comm = i % kCommEvery == kCommEvery - 1;
        const int64_t dur = is_comm ? 30000 : 8000 + (i * 7919 + jitter * 104729) % 4000;
        StrId name = matmul;
        if (is_comm) {
          name = pool.intern("hcom_allReduce__1_" + std::to_string(seq++) + "_1");
          ops.name.push_back(name);
          ops.group.push_back(group);
          ops.start_ns.push_back(t);
          ops.dur_ns.push_back(dur);
        }
        k.name.push_back(name);
        k.stream_id.push_back(is_comm ? 2 : 1);
        k.start_ns.push_back(t);
        k.dur_ns.push_back(dur);
        norm.op_type.push_back(is_comm ? comm : aic);
        t += dur + 600;
      }
      g.row_end = static_cast<uint32_t>(k.size() - 1);
      g.end_ns = t - 600;
      s.segments.push_back(g);
      t += 200000;
    }
  }
};

size_t serialised_bytes(const analysis::RankPathSkeleton& sk) {
  std::ostringstream out;
  boost::archive::binary_oarchive ar(out, boost::archive::no_header);
  ar << sk;
  return out.str().size();
}

// every step of the rank (max_steps raised to kSteps): bytes per communication op do not depend on it
const knowledge::Knowledge& all_steps() {
  static const knowledge::Knowledge k = [] {
    knowledge::Knowledge c = std::move(knowledge::Knowledge::load(knowledge::default_knowledge_dir())).value();
    c.diagnostics.critical_path_max_steps = kSteps;
    return c;
  }();
  return k;
}

void BM_StepSkeleton(benchmark::State& state) {
  const Rank r(0);
  size_t bytes = 0;
  for (auto _ : state) {
    auto sk = analysis::step_path_skeleton(r.k, r.norm, r.pool, r.ops, r.s, all_steps());
    benchmark::DoNotOptimize(sk.steps.data());
    bytes = serialised_bytes(sk);
  }
  state.counters["rows/s"] = benchmark::Counter(static_cast<double>(r.k.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["skeleton_bytes"] = static_cast<double>(bytes);
  state.counters["bytes_per_comm_op"] = static_cast<double>(bytes) / static_cast<double>(r.ops.size());
}
BENCHMARK(BM_StepSkeleton)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_WalkCriticalPaths(benchmark::State& state) {
  const size_t ranks = static_cast<size_t>(state.range(0));
  // a few distinct ranks' skeletons, shared by many (the walk reads, never copies, them)
  std::vector<analysis::RankPathSkeleton> distinct;
  for (uint32_t j = 0; j < 4; ++j) {
    const Rank r(j);
    distinct.push_back(analysis::step_path_skeleton(r.k, r.norm, r.pool, r.ops, r.s, all_steps()));
  }
  std::vector<analysis::PathRankView> views;
  std::vector<analysis::StepWindow> windows;
  for (size_t i = 0; i < ranks; ++i) {
    const auto& sk = distinct[i % distinct.size()];
    views.push_back({std::to_string(i), static_cast<uint32_t>(i), 0, &sk});
    for (const auto& st : sk.steps) windows.push_back({std::to_string(i), st.segment_id, "", 0, st.start_ns, st.end_ns, 0});
  }
  std::vector<analysis::StepAlignment> alignments(kSteps);
  for (uint32_t st = 0; st < kSteps; ++st) {
    alignments[st].alignment_id = "align_" + std::to_string(st);
    for (size_t i = 0; i < ranks; ++i) alignments[st].members.push_back(i * kSteps + st);
    alignments[st].start_ns = windows[st].start_ns;
    alignments[st].end_ns = windows[st].end_ns;
  }
  knowledge::DiagnosticsRules rules = kb().diagnostics;
  rules.critical_path_max_steps = kSteps;  // walk every step built here
  for (auto _ : state) {
    auto paths = analysis::walk_critical_paths(views, windows, alignments, rules);
    benchmark::DoNotOptimize(paths.elements.data());
  }
  state.counters["rank_steps/s"] =
      benchmark::Counter(static_cast<double>(ranks * kSteps), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_WalkCriticalPaths)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

#pragma once
/// The MPI orchestration of `ascprof-mpi sweep` (reference-analysis.md §2.10, issue 6): process 0
/// discovers the capture roots under the search roots, keeps this shard's share (roots sorted; root
/// j belongs to shard j % K), skips finished roots with --reuse-existing, and every process then
/// analyses the remaining roots together (their ranks are one task pool, so uneven roots keep every
/// process busy). Writes OUT/sweep_summary.json + OUT/sweep_class_rollup.csv, or, for a shard,
/// OUT/sweep_shards/shard-I-of-K.json for a later `sweep --rollup`.
#include <cstdint>
#include <string>
#include <vector>

#include "ascprof/parallel/analyze_run.hpp"

namespace ascprof::parallel {

struct SweepRequest {
  std::vector<std::string> search_roots;
  AnalyzeRequest analyze;       ///< out, knowledge, force, progress, report options (roots filled here)
  int64_t limit = 0;            ///< analyse at most this many roots (0 = all)
  bool reuse_existing = false;  ///< a root whose report/manifest.json exists is not redone
  uint32_t shard_index = 0, shard_count = 0;  ///< shard_count 0: the whole sweep
  bool rollup = false;          ///< merge OUT/sweep_shards/*.json instead of analysing
};

/// Runs the sweep; the result JSON (process 0) lists the roots, and the exit code is 0 all ok, 1
/// some roots failed, 2 configuration error, 3 nothing analysed.
AnalyzeResult run_sweep(boost::mpi::communicator& world, const SweepRequest& request);

}  // namespace ascprof::parallel

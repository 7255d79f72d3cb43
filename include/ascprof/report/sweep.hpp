#pragma once
/// Sweep outputs over many capture roots (reference-analysis.md §2.10): sweep_summary.json with one
/// result per root and sweep_class_rollup.csv with one row per root (the "model × configuration"
/// comparison table). Each root's numbers are read from its own output folder, so shard results of
/// a Slurm array can be merged later (rollup) without rerunning anything. Plain functions, no MPI.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ascprof/common/status.hpp"

namespace ascprof::report {

/// How one root of a sweep ended.
struct SweepRootRun {
  std::string root;        ///< capture root path as discovered
  std::string output_dir;  ///< OUT/<root-slug>
  std::string status;      ///< ok | error
  std::string error;       ///< when status is error
  double elapsed_s = 0;    ///< analysis time attributed to this root
  bool reused = false;     ///< finished earlier and skipped (--reuse-existing)
};

/// The sweep's settings, echoed in sweep_summary.json.
struct SweepConfig {
  std::vector<std::string> search_roots;
  std::string output_dir;
  uint64_t processes = 1;
  bool skip_html = true;
  std::string report_mode = "summary";
  bool reuse_existing = false;
  std::string shard;  ///< "I/K" or "" (whole sweep)
};

/// One result object of sweep_summary.json (compact JSON): the run fields plus, for an ok root,
/// rank/event/segment/layer counts, diagnosis_counts, rank_layer_inventory and union_layers read
/// from the root's output folder.
Result<std::string> sweep_result_json(const SweepRootRun& run);

/// Writes `json_path` (sweep_summary.json or a shard file) with the given results, and, when
/// `rollup_csv` is not empty, sweep_class_rollup.csv (one row per root; failed roots get only
/// root, status, error) and the same table in sweep_class_rollup.h5 (/rollup). All atomically.
Status write_sweep_summary(const std::filesystem::path& json_path, const std::filesystem::path& rollup_csv,
                           const SweepConfig& config, const std::vector<SweepRootRun>& runs, double elapsed_s);

/// Merges the shard files OUT/sweep_shards/*.json into OUT/sweep_summary.json and
/// OUT/sweep_class_rollup.csv (roots in path order). kIo when there is no shard file, kParse naming
/// a damaged one. Returns the number of roots and how many failed.
struct RollupCounts {
  uint64_t roots = 0, failed = 0, shards = 0;
};
Result<RollupCounts> rollup_sweep_shards(const std::filesystem::path& out);

/// The shard file of shard I of K: OUT/sweep_shards/shard-I-of-K.json.
std::filesystem::path shard_file(const std::filesystem::path& out, uint32_t index, uint32_t count);

}  // namespace ascprof::report

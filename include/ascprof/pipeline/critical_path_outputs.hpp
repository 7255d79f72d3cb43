#pragma once
/// The root's critical-path tables (issue 21; analysis/critical_path.hpp), written when at least one
/// aligned step was walked (a root with one rank, or with no aligned steps, writes nothing new):
///   critical_path.csv         one row per element of each walked step's chain, in time order: the rank,
///                             the kind holding most of it (compute, transfer, waiting, host_gap), start
///                             and end µs from the step's start (reference rank's clock), its duration
///                             split by kind, the kernels of a local stretch, the communication op with
///                             its group and sequence number, how long the first member waited for this
///                             one (transfer) and the collective's members, and an evidence id (the op,
///                             or a local stretch's longest kernel)
///   critical_path_steps.csv   one row per walked step: its alignment, wall and walked µs (the walk
///                             stops at the first task it finds, so walked <= wall), the rank whose step
///                             ended last, the kinds' µs, the ranks on the path and the hops between them
///   critical_path_ranks.csv   one row per rank: the walked steps it is a member of and whose paths pass
///                             through it, its µs on the paths by kind, its share of all walked time,
///                             and how long the others waited for it at collectives on the paths
/// µs with 3 decimals. Every file is written under a temporary name and renamed.
#include <filesystem>
#include <string>
#include <vector>

#include "ascprof/analysis/critical_path.hpp"
#include "ascprof/common/status.hpp"

namespace ascprof::pipeline {

/// The file names above, in the order they are written.
const std::vector<std::string>& critical_path_tables();

/// Writes the three tables when `paths` has a walked step; returns the files written. Without one it
/// writes none and removes those an earlier run into the same folder left.
Result<std::vector<std::filesystem::path>> write_critical_path_outputs(const std::filesystem::path& root_out,
                                                                       const analysis::CriticalPaths& paths);

}  // namespace ascprof::pipeline

#pragma once
/// The root's in-kernel MoE trace tables (issue 20), written only when a rank has a trace:
///   moe_trace_calls.csv     one row per rank and trace file: variant, status (attached, not_attached,
///                           unreadable, empty), why, the kernel row (event_id evt_<ordinal>_<row>),
///                           span, and the data-quality counts of the file
///   moe_phase_summary.csv   one row per rank, call, phase and core group (label rows, then per
///                           expert-group instance): count, cores, total/union/per-core µs, share of
///                           the span; evidence_id moe_<ordinal>_<call>_<phase> (what findings cite)
///   moe_phase_compare.csv   the same phase across ranks, core group by core group, call position by
///                           call position: min / median / max of the slowest core and of the union,
///                           and the rank that is slowest
///   moe_bubble_summary.csv  per rank, call, container and core group: time not covered by a phase
/// µs with 3 decimals. Every file is written under a temporary name and renamed.
#include <filesystem>
#include <string>
#include <vector>

#include "ascprof/analysis/moe_trace.hpp"
#include "ascprof/common/status.hpp"

namespace ascprof::pipeline {

/// The file names above, in the order they are written.
const std::vector<std::string>& moe_trace_tables();

/// Writes the four tables for `ranks` (rank order). Returns the files written.
Result<std::vector<std::filesystem::path>> write_moe_trace_outputs(const std::filesystem::path& root_out,
                                                                   const std::vector<analysis::MoeRankView>& ranks);

}  // namespace ascprof::pipeline

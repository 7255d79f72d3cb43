#pragma once
// Everything read for one rank, held only while that rank is processed.
#include <optional>
#include <vector>

#include "ascprof/analysis/normalize.hpp"
#include "ascprof/common/stats.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/model/capture_info.hpp"
#include "ascprof/model/comm_table.hpp"
#include "ascprof/model/kernel_table.hpp"
#include "ascprof/model/trace_tables.hpp"
#include "ascprof/pipeline/rank_job.hpp"
#include "ascprof/store/fingerprint.hpp"

namespace ascprof::pipeline {

struct RankData {
  StringPool pool;
  model::KernelTable kernels;
  model::TraceTables trace;
  model::CommStatTable comm;
  std::vector<int32_t> comm_group;  // row -> index into meta.groups, -1 unknown
  model::StepTraceTable step_trace;
  std::optional<model::ProfilerInfo> info;
  model::ProfilerMetadata meta;
  Stats stats;
  std::vector<store::Fingerprint> fingerprints;
  std::vector<std::string> fingerprint_kinds;
};

// Writes the rank's HDF5 file (atomically). Defined in rank_store.cpp.
Status write_rank_h5(const std::string& path, const RankTask& task, const RankData& data,
                     const analysis::NormalizedKernels& norm, const knowledge::Knowledge& kb);

}  // namespace ascprof::pipeline

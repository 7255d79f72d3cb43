#pragma once
// Writers for the sections of OUT/<root-slug>/ranks/<rank_id>.h5 (layout in rank_store.cpp).
// The rank job writes each section as soon as its input is read, then frees that input, so a
// rank's peak memory is its largest table set, not the sum of all of them.
#include <cstdint>
#include <string>
#include <vector>

#include "ascprof/analysis/module_breakdown.hpp"
#include "ascprof/analysis/moe_trace.hpp"
#include "ascprof/analysis/normalize.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/model/capture_info.hpp"
#include "ascprof/model/comm_table.hpp"
#include "ascprof/model/kernel_table.hpp"
#include "ascprof/model/moe_trace.hpp"
#include "ascprof/model/trace_tables.hpp"
#include "ascprof/pipeline/rank_job.hpp"
#include "ascprof/store/h5_writer.hpp"

namespace ascprof::pipeline {

/// /kernels, /kernel_metrics and /taxa.
Status write_kernel_tables(store::H5Writer& w, const model::KernelTable& k, const analysis::NormalizedKernels& n,
                           const knowledge::Knowledge& kb);
/// /trace/*.
Status write_trace_tables(store::H5Writer& w, const model::TraceTables& tr);
/// /communication (with each row's communicator) and /parallel_groups.
Status write_comm_tables(store::H5Writer& w, const model::CommStatTable& c, const std::vector<int32_t>& comm_group,
                         const model::ProfilerMetadata& meta);
/// /step_trace.
Status write_step_trace_table(store::H5Writer& w, const model::StepTraceTable& s);
/// /moe_trace/{intervals,cores,calls,phases,bubbles}: the rank's in-kernel MoE traces (`calls[k]` is
/// summarised in `summary.calls[k]`; labels are ids into `pool`).
Status write_moe_trace_tables(store::H5Writer& w, const std::vector<model::MoeTraceCall>& calls,
                              const analysis::MoeRankSummary& summary, const StringPool& pool);
/// /modules/{summary,calls}: the rank's module breakdown (only written when it has module ranges).
Status write_module_tables(store::H5Writer& w, const analysis::ModuleBreakdown& breakdown);
/// Root attributes naming the rank.
Status write_rank_attributes(store::H5Writer& w, const RankTask& task, int64_t device_id,
                             const std::string& profiler_level, const std::string& header_era);

}  // namespace ascprof::pipeline

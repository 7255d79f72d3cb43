#pragma once
/// communication.json importer (one file per rank, ASCEND_PROFILER_OUTPUT/) and the link from the
/// `@<group_hash>` suffix of op keys to the communicators of profiler_metadata.json.
///
/// File shape: {"step<N>"|"step": {"collective"|"p2p": {"<op>@<hash>"|"Total Op Info":
///   {"Communication Time Info": {...}, "Communication Bandwidth Info": {RDMA, HCCS, PCIE, SDMA[, SIO]}}}}}.
/// One table row per (step, section, op key), in file order.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/status.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/model/capture_info.hpp"
#include "ascprof/model/comm_table.hpp"

namespace ascprof::importers {

/// Lower-case communication kind of an op name:
/// - "hcom_<kind>__..." and "hcom_<kind>_AicpuKernel_..." -> the letters after "hcom_" up to the
///   first '_' or digit ("hcom_reduceScatter__483_4" -> "reducescatter"), with a trailing
///   "AivKernel"/"AicpuKernel"/"Aicpu"/"Aiv" glued to the kind removed ("hcom_allReduceAivKernel_1"
///   -> "allreduce"). Unlike torch_npu's regex, reduceScatter stays "reducescatter" and alltoallv
///   stays "alltoallv".
/// - MC2 fused compute+communication ops (no "hcom_" prefix, name contains "matmul" or
///   "moedistribute", any case: "MatmulAllReduceAicpu", "MoeDistributeDispatch") -> "mc2".
/// - "Total Op Info" (any name starting with "total", any case) -> "".
/// - anything else -> "other".
std::string comm_op_kind(std::string_view op_name);

/// Imports communication.json at `path`, appending rows to `table` (strings interned in `pool`).
/// - step: N of "step<N>", -1 for "step"; is_p2p from the section; is_total for "Total Op Info".
/// - group_hash: the number after the last '@' (0 when there is none, e.g. totals).
/// - start_ns: "Start Timestamp(us)" converted exactly from the number's text; kAbsentI64 for
///   totals and when missing (counted).
/// - Missing time/bandwidth keys of an op: value 0, Stat::comm_missing_key (totals legitimately
///   lack Start Timestamp, Bandwidth and Large Packet Ratio: NaN there, not counted). A missing
///   "Communication Time Info" block counts once (times 0, start absent); a missing
///   "Communication Bandwidth Info" block counts once (all transports NaN).
/// - A transport absent from "Communication Bandwidth Info" (SIO in 2023 files): all four of its
///   columns NaN, Stat::comm_transport_absent.
/// - A value of the wrong type: Stat::comm_bad_value; numeric strings are still parsed, anything
///   else reads as 0. Unknown keys at step/section level: Stat::comm_unexpected_key, skipped.
/// Errors (table left unchanged): kIo (unreadable), kParse (broken/truncated JSON: "FILE:byte N:
/// <reason>"), kSchema (top level not an object).
Status import_communication(const std::filesystem::path& path, StringPool& pool, model::CommStatTable& table,
                            Stats& stats);

/// Same as import_communication on an in-memory document; `file_label` names it in messages.
Status import_communication_text(std::string_view json, std::string_view file_label, StringPool& pool,
                                 model::CommStatTable& table, Stats& stats);

/// For each row of `table`, the index into `meta.groups` of the communicator whose hash equals
/// the row's group_hash (first match), or -1. Rows without a hash (totals) get -1 silently; each
/// distinct hash with no communicator is counted once in Stat::comm_unknown_group_hash (with
/// `file_label` in the sample). Note that metadata from runs without torch.distributed has no
/// groups at all, so every hash is unknown there. `meta.groups[i].hash` must be filled
/// (read_profiler_metadata does).
std::vector<int32_t> link_groups(const model::CommStatTable& table, const model::ProfilerMetadata& meta,
                                 Stats& stats, std::string_view file_label = "communication.json");

}  // namespace ascprof::importers

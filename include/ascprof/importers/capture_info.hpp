#pragma once
/// Readers for the small per-rank capture description files: profiler_info_<N>.json and
/// profiler_metadata.json, plus the communicator "double hash" that links communication files
/// (`op@<hash>`) to profiler_metadata.json `parallel_group_info` keys.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "ascprof/common/double_hash.hpp"  // double_hash() links @hash suffixes to groups
#include "ascprof/common/stats.hpp"
#include "ascprof/common/status.hpp"
#include "ascprof/model/capture_info.hpp"

namespace ascprof::importers {

/// N of a file named exactly "profiler_info_<N>.json" (N decimal, fits int64); nullopt for
/// "profiler_info.json" or any other name.
std::optional<int64_t> rank_from_profiler_info_name(std::string_view file_name);

/// Reads profiler_info[_<N>].json. rank_id_from_name comes from the file name; rank_id_from_body
/// from "rank_id" (int, or numeric string as in E3; absent, null or -1 -> nullopt; anything else
/// -> nullopt and Stat::info_bad_rank_id). Keys are looked up with and without the leading
/// underscore (E1 writes "_wait", later eras "wait"; "_profiler_level" / "profiler_level").
/// Errors: kIo (missing/unreadable), kParse (broken JSON, with byte offset), kSchema (top level
/// not an object). Values of the wrong type are ignored and counted (Stat::info_bad_value).
Result<model::ProfilerInfo> read_profiler_info(const std::filesystem::path& path, Stats& stats);

/// Reads profiler_metadata.json: every parallel_group_info entry {comm name: {group_name,
/// group_rank, global_ranks}} in file order with hash = double_hash(comm name), and
/// distributed_args as (key, value text) pairs (strings unquoted, numbers/bools as written).
/// An entry that is not an object or lacks a global_ranks array of integers is skipped and
/// counted (Stat::meta_bad_group); a missing group_name reads as "", a missing group_rank as -1.
/// A file without parallel_group_info yields no groups (normal for single-process captures).
/// Errors: kIo (missing/unreadable: the caller decides whether that matters), kParse, kSchema.
Result<model::ProfilerMetadata> read_profiler_metadata(const std::filesystem::path& path, Stats& stats);

/// Same rules over JSON text already in memory (a database's META_DATA rows, joined into one
/// object); `label` names it in messages.
Result<model::ProfilerMetadata> parse_profiler_metadata(std::string_view json, const std::string& label, Stats& stats);

}  // namespace ascprof::importers

#pragma once
/// Capture-root discovery: which folders under a root are profiling ranks, which rank each one is,
/// and which input files it holds.
///
/// A capture root is one of:
///  - a kernel_details.csv file: its rank folder is the parent, or the grandparent when the parent
///    is ASCEND_PROFILER_OUTPUT (reference §2.1);
///  - itself a rank folder (see below);
///  - a folder holding rank folders, searched recursively (depth <= kMaxRankSearchDepth), without
///    descending into a rank folder once found.
/// A folder is a rank folder when its name ends in "_ascend_pt" or "_ascend_ms", or when it holds a
/// kernel_details.csv file, an ascend_pytorch_profiler*.db file, an ASCEND_PROFILER_OUTPUT/ folder or a profiler_info*.json file, or
/// (direct children of the root only) when its name is rank<N>... ("rank0", "rank_3_x", any case).
/// A name-matched rank folder that cannot be used (unlistable, dangling symlink, a file, or holding
/// none of the above) is reported in `failed` with a clear message; the others carry on.
/// Symlinks are followed, but every folder is visited once (canonical paths are tracked), so
/// loops and aliases cannot repeat or hang the search.
///
/// Rank id, in order of trust (RankIdSource):
///  1. N of the profiler_info_<N>.json file name (authoritative; msprof-analyze does the same);
///  2. the "rank_id" in the profiler_info body (int or string), when the file is profiler_info.json;
///  3. N of ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_<N>.db (a database-only capture);
///  4. the folder name, with the reference's infer_rank_id regexes (case-insensitive):
///     "dp<a>_pp<b>_tp<c>_dcp<d>_ep<e>_rank<N>" and "rank[_-]?<N>" give the number N (the reference
///     kept the text "rank_3"; we keep the number, so ids stay decimal strings); "device[_-]?<N>"
///     gives the reference's sanitised text ("device_3", or the whole folder name when it matches
///     ^(rank|device)[_-]?\d+_.+_ascend_pt$), since a device id is not a rank id;
///  5. "rank_<ordinal>", ordinal = position of the folder among all rank folders sorted by path.
/// Numeric ids are written as plain decimal strings ("0", "13").
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/status.hpp"

namespace ascprof::importers {

/// Folder depth below a capture root searched for rank folders.
inline constexpr int kMaxRankSearchDepth = 6;
/// Folder depth below a sweep search root searched for kernel_details.csv.
inline constexpr int kMaxSweepSearchDepth = 16;

enum class RankIdSource : uint8_t { kInfoFileName, kInfoBody, kDbFileName, kDirName, kOrdinal };
/// "profiler_info_name", "profiler_info_body", "profiler_db_name", "dir_name", "ordinal".
const char* rank_id_source_name(RankIdSource s);

/// Input files of a rank folder, each looked up in the folder itself, then in
/// ASCEND_PROFILER_OUTPUT/ (kernel_details.csv also in the first sub-folder that has it, up to 3
/// levels deep, as the reference does). Empty path = absent.
struct RankFiles {
  std::filesystem::path kernel_details;        ///< kernel_details.csv
  std::filesystem::path trace_view;            ///< trace_view.json
  std::filesystem::path communication;         ///< communication.json
  std::filesystem::path communication_matrix;  ///< communication_matrix.json
  std::filesystem::path step_trace_time;       ///< step_trace_time.csv
  std::filesystem::path profiler_info;         ///< profiler_info_<N>.json (lowest N) or profiler_info.json
  std::filesystem::path profiler_metadata;     ///< profiler_metadata.json
  std::filesystem::path op_statistic;          ///< op_statistic.csv
  std::filesystem::path api_statistic;         ///< api_statistic.csv
  /// ascend_pytorch_profiler_<N>.db (lowest N) or ascend_pytorch_profiler.db (single card)
  std::filesystem::path profiler_db;
  std::filesystem::path analysis_db;           ///< analysis.db (communication statistics, step trace)
};

/// One rank folder of a capture root.
struct RankFolder {
  std::string rank_id;                  ///< "rank13" for numeric ranks (rank_label); "device_3"/"rank_<ordinal>" otherwise
  std::optional<int64_t> rank_number;   ///< the number when rank_id is numeric
  std::string rank_dir;                 ///< folder name ("rank0_ascend_pt")
  std::filesystem::path path;           ///< folder path (as found under the root)
  RankIdSource id_source = RankIdSource::kOrdinal;
  RankFiles files;
  uint64_t input_bytes = 0;             ///< sum of the sizes of `files` (for largest-first scheduling)
  /// {YYYYmmddHHMMSSfff} of "{worker}_{pid}_{ts}_ascend_pt" (3rd '_'-field from the end), if digits.
  std::optional<int64_t> folder_timestamp;
  std::optional<int32_t> device_id;     ///< from PROF_*/device_<N>/ or a device<N> folder name
  std::string error;                    ///< why the folder failed (only in CaptureRoot::failed)
};

/// A rank folder that lost to another folder claiming the same rank id.
struct DuplicateRank {
  std::string rank_id;
  std::filesystem::path kept;
  std::filesystem::path dropped;
  std::string reason;  ///< e.g. "folder timestamp 20250109... older than 20250110..."
};

struct CaptureRoot {
  std::filesystem::path root;           ///< as given
  /// Usable ranks: numeric ids ascending by number (never by folder name), then other ids by text.
  std::vector<RankFolder> ranks;
  std::vector<RankFolder> failed;       ///< unusable rank folders, `error` set, ids where known
  /// Two folders with one rank id: the newer folder timestamp wins; when equal or unknown, the
  /// later path (lexicographic) wins. The loser is listed here and not in `ranks`.
  std::vector<DuplicateRank> duplicates;
  /// Gaps between the lowest and highest numeric rank ids of `ranks` and `failed` (at most
  /// 100000 listed). Ranks below the lowest or above the highest cannot be known to be missing.
  std::vector<int64_t> missing_rank_ids;
};

/// Discovers the ranks of one capture root (rules above). Counters: info_rank_from_body,
/// info_rank_from_dirname, info_rank_from_ordinal, info_multiple_profiler_info,
/// disc_duplicate_rank, disc_missing_rank, disc_rank_failed, disc_unreadable_dir,
/// disc_revisited_dir, disc_depth_limit. Errors: kIo when `root` does not exist or cannot be
/// listed; kSchema when no rank folder at all is found (message says what was looked for).
Result<CaptureRoot> discover_capture_root(const std::filesystem::path& root, Stats& stats);

/// A numeric rank's id in every file we write: "rank<N>" with N the profiler rank (issue 23: the
/// reference's files name ranks "rank0", and our own files use the same id so they join with them).
std::string rank_label(int64_t rank_number);

/// Sweep root discovery (reference §2.10): search each of `search_roots` (recursively, depth <=
/// kMaxSweepSearchDepth, each folder once) for kernel_details.csv or ascend_pytorch_profiler*.db, skipping folders (below the
/// search root) whose name contains "profile_analysis", "ascend_profile_framework", "__pycache__" or ".bak",
/// or starting with "bak_"; map each hit to its rank folder (parent, or grandparent when the parent
/// is ASCEND_PROFILER_OUTPUT) and the rank folder to a capture root: its parent when that is named
/// "vllm_profile" or "vllm_profile_rank"; else its parent when the rank folder's name looks like a
/// rank (^rank[_-]?\d+, _rank[_-]?\d+, ^dp\d+_pp\d+_tp\d+, _ascend_pt$ or _ascend_ms$, any case; the
/// reference lacks the optional [_-] and _ascend_ms, which split real "test_rank_0" captures); else the
/// rank folder itself. Rank folders are not searched further (PROF_* raw data can hold millions of
/// files). Returns the roots de-duplicated and sorted. Errors: kIo when a search root does not exist.
Result<std::vector<std::filesystem::path>> discover_capture_roots(
    const std::vector<std::filesystem::path>& search_roots, Stats& stats);

}  // namespace ascprof::importers

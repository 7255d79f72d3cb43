#pragma once
/// Rank checkpoints (issue 6): after a rank job, its compact outcome and its operator-alignment
/// candidates are saved next to its HDF5 file (`ranks/<rank_id>.outcome`, written under a temporary
/// name and renamed, so a killed job never leaves a half checkpoint). A rerun takes a rank from its
/// checkpoint instead of redoing it when the checkpoint's tool version, knowledge fingerprint and
/// requested stage match and every input file still has the recorded size, mtime and prefix hash;
/// anything else redoes the rank. Orchestration code (Boost.Serialization), no MPI.
#include <filesystem>
#include <optional>
#include <string>

#include "ascprof/pipeline/rank_job.hpp"

namespace ascprof::parallel {

/// BLAKE2b of every *.rules file of the knowledge folder (names and contents, sorted by name): a
/// changed rule redoes the ranks it could change.
std::string knowledge_fingerprint(const std::filesystem::path& knowledge_dir);

/// The checkpoint file of a task: <root_out>/ranks/<rank_id>.outcome.
std::filesystem::path checkpoint_path(const pipeline::RankTask& task);

/// Saves a successful outcome (and its candidates) atomically. Failures are returned, not thrown.
Status save_checkpoint(const pipeline::RankTask& task, const pipeline::RankOutcome& outcome,
                       const std::string& knowledge_hash);

/// The outcome of `task` from its checkpoint when it is complete and still valid (see above),
/// marked reused; nullopt otherwise (absent, damaged, other version/rules/stage, changed input,
/// missing rank outputs).
std::optional<pipeline::RankOutcome> load_checkpoint(const pipeline::RankTask& task, const std::string& knowledge_hash);

}  // namespace ascprof::parallel

#pragma once
/// Rank checkpoints (issue 6): a rank job's compact outcome and its operator-alignment candidates
/// are the `checkpoint` section of its part pack (`ranks/<rank_id>.parts`, issue 22: two files per
/// rank), added just before the pack is renamed into place as the job's last write, so a killed job
/// never leaves a half checkpoint and a checkpoint never outlives its outputs. A rerun takes a rank from its
/// checkpoint instead of redoing it when the checkpoint's tool version, knowledge fingerprint and
/// requested stage match and every input file still has the recorded size, mtime and prefix hash;
/// anything else redoes the rank. Orchestration code (Boost.Serialization), no MPI.
#include <filesystem>
#include <optional>
#include <string>

#include "ascprof/pipeline/rank_job.hpp"
#include "ascprof/store/part_pack.hpp"

namespace ascprof::parallel {

/// BLAKE2b of every *.rules file of the knowledge folder (names and contents, sorted by name): a
/// changed rule redoes the ranks it could change.
std::string knowledge_fingerprint(const std::filesystem::path& knowledge_dir);

/// The part pack section holding a rank's checkpoint record.
inline constexpr char kCheckpointSection[] = "checkpoint";

/// The file holding a task's checkpoint: its part pack, <root_out>/ranks/<rank_id>.parts.
std::filesystem::path checkpoint_path(const pipeline::RankTask& task);

/// Adds the record of a successful outcome (and its candidates) to the rank's open pack. kInternal
/// naming the pack if it cannot be serialised; failures are returned, not thrown.
Status add_checkpoint(store::PartPackWriter& pack, const pipeline::RankTask& task, const pipeline::RankOutcome& outcome,
                      const std::string& knowledge_hash);

/// The sealer run_rank_stages takes: add_checkpoint, with a failure warned on stderr (the rank's
/// result stands; only a rerun redoes it).
pipeline::CheckpointSealer checkpoint_sealer(const pipeline::RankTask& task, const std::string& knowledge_hash);

/// Removes what earlier layouts left for a redone rank (layout::rank_legacy_files), so an old OUT
/// rerun holds each rank's two files only. Best effort.
void remove_legacy_rank_files(const pipeline::RankTask& task);

/// The outcome of `task` from its checkpoint when it is complete and still valid (see above),
/// marked reused; nullopt otherwise (absent, damaged, other version/rules/stage, changed input,
/// missing rank outputs).
std::optional<pipeline::RankOutcome> load_checkpoint(const pipeline::RankTask& task, const std::string& knowledge_hash);

}  // namespace ascprof::parallel

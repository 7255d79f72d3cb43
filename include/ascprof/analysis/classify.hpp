#pragma once
/// The classify stage for one rank (reference-analysis.md §2.4): layers decomposed into attention /
/// ffn / moe / aicpu blocks, and block, layer and step classes by strict ordered
/// (name key, shape signature) equality, with the `unknown_shape` singleton rule.
///
/// Class ids are content hashes (BLAKE2b of the reference's compact JSON), so the same class on two
/// ranks has the same id and classes merge across ranks by id. Pure function: no files, no MPI.
#include "ascprof/analysis/normalize.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/model/kernel_table.hpp"
#include "ascprof/model/structure.hpp"

namespace ascprof::analysis {

/// Decomposes every layer of `structure` into blocks and computes the three class levels.
model::RankClasses classify_rank(const model::RankStructure& structure, const model::KernelTable& kernels,
                                 const NormalizedKernels& normalized, const StringPool& pool,
                                 const knowledge::Knowledge& kb);

/// The reference's class id: "<prefix>_" + 16 hex of BLAKE2b-8 over the compact JSON
/// `[structure, scope_label, [[name_key, shape_sig], ...]]`; with no pairs,
/// "<prefix>_unknown_shape_" + 12 hex of BLAKE2b-6 over `member_id`.
std::string class_signature_id(std::string_view prefix, std::string_view structure, std::string_view scope_label,
                               const std::vector<std::pair<std::string, std::string>>& pairs,
                               std::string_view member_id);

}  // namespace ascprof::analysis

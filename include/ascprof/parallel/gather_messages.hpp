#pragma once
/// What analyze_run's processes send each other after the rank phase, declared once for it and for
/// the coordinator benchmark (benchmarks/coordinator_bench.cpp), which runs the same exchanges on
/// fabricated ranks: the clock offset of one rank (broadcast by the coordinator), the reduction of
/// the root merges, plus the packed size a value has on the wire.
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/packed_oarchive.hpp>
#include <cstdint>
#include <map>
#include <string>

#include "ascprof/analysis/operator_align.hpp"
#include "ascprof/pipeline/rank_job.hpp"
#include "ascprof/pipeline/root_plan.hpp"

namespace ascprof::parallel {

/// Every process's rank outcomes to process 0, as one gather would leave them (all[p]: process p's,
/// in its order; empty elsewhere), but one message per outcome: Boost.MPI's gather counts the bytes
/// reaching the root in an int, and a big root's outcomes pass 2 GiB (~640 KB a rank of 215k kernel
/// rows: ~3,300 ranks). On process 0 the outcomes of `mine` move into all[0] and `mine` keeps, of
/// each, its root and rank index, ok / partial and operator candidates (what the bucket fold reads);
/// elsewhere `mine` is unchanged. Collective.
void gather_rank_outcomes(boost::mpi::communicator& world, std::vector<pipeline::RankOutcome>& mine,
                          std::vector<std::vector<pipeline::RankOutcome>>& all);

/// Merges every process's root merges (root index -> its ranks' operator buckets and class
/// summaries merged) up a binomial tree of processes: in round k a process whose k-th bit is its
/// lowest set bit sends its map to the process 2^k below and stops; ceil(log2 P) rounds. Process 0
/// ends with every root's merge, the others with an empty map. Collective. Returns the bytes this
/// process sent.
uint64_t reduce_root_merges(boost::mpi::communicator& world, std::map<int32_t, pipeline::RootMerge>& merges,
                            const knowledge::Knowledge& kb);

/// After reduce_root_merges: the exact p50 / p90 of every class's walls of every root, selected
/// over the processes that hold them (`walls`: this process's, by root, sorted in place; they never
/// travel), set in process 0's merges. 64 all-reduces of one count per statistic at most. Collective.
void set_class_wall_quantiles(boost::mpi::communicator& world, std::map<int32_t, pipeline::RootMerge>& merges,
                              std::map<int32_t, analysis::ClassWalls>& walls);

/// The clock offset of one rank, broadcast by the coordinator.
struct RankOffset {
  int32_t root_index = 0, rank_index = 0;
  int64_t offset_ns = 0;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & root_index & rank_index & offset_ns;
  }
};

/// Bytes `value` takes in a Boost.MPI packed archive (what a gather of it moves).
template <class T>
uint64_t packed_size(boost::mpi::communicator& world, const T& value) {
  boost::mpi::packed_oarchive oa(world);
  oa << value;
  return oa.size();
}

}  // namespace ascprof::parallel

#pragma once
/// What analyze_run's processes send each other after the rank phase, declared once for it and for
/// the coordinator benchmark (benchmarks/coordinator_bench.cpp), which runs the same gathers on
/// fabricated ranks: the operator bucket partials of one rank (second gather) and the clock offset of
/// one rank (broadcast by the coordinator), plus the packed size a value has on the wire.
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/packed_oarchive.hpp>
#include <cstdint>
#include <string>

namespace ascprof::parallel {

/// One rank's operator bucket partials (analysis::pack_buckets), sent in the second gather.
struct RankBucketsMessage {
  int32_t root_index = 0, rank_index = 0;
  std::string packed;

  template <class Ar>
  void serialize(Ar& ar, unsigned /*version*/) {
    ar & root_index & rank_index & packed;
  }
};

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

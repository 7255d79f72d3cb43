// The operator buckets' reduction tree (gather_messages.hpp).
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/packed_iarchive.hpp>
#include <boost/mpi/packed_oarchive.hpp>
#include <boost/serialization/map.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>

#include "ascprof/parallel/gather_messages.hpp"

namespace ascprof::parallel {

namespace mpi = boost::mpi;

namespace {
constexpr int kTagOperatorBuckets = 7201;  // apart from the work queue's tags
}

uint64_t reduce_operator_buckets(mpi::communicator& world, std::map<int32_t, analysis::OperatorBucketMerge>& merges,
                                 const knowledge::OperatorAlignmentRules& rules) {
  const int me = world.rank(), size = world.size();
  for (int step = 1; step < size; step <<= 1) {
    if ((me & step) != 0) {
      mpi::packed_oarchive out(world);
      out << merges;
      merges.clear();
      world.send(me - step, kTagOperatorBuckets, out);
      return out.size();
    }
    if (me + step < size) {
      mpi::packed_iarchive in(world);
      world.recv(me + step, kTagOperatorBuckets, in);
      std::map<int32_t, analysis::OperatorBucketMerge> theirs;
      in >> theirs;
      for (auto& [root, m] : theirs) analysis::merge_bucket_merges(merges[root], std::move(m), rules);
    }
  }
  return 0;
}

}  // namespace ascprof::parallel

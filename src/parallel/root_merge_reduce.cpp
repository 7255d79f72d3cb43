// The root merges' reduction tree and the class walls' quantile selection (gather_messages.hpp).
#include <mpi.h>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/packed_iarchive.hpp>
#include <boost/mpi/packed_oarchive.hpp>
#include <boost/serialization/array.hpp>
#include <boost/serialization/map.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

#include "ascprof/parallel/gather_messages.hpp"

namespace ascprof::parallel {

namespace mpi = boost::mpi;

namespace {
constexpr int kTagRootMerges = 7201;  // apart from the work queue's tags
}

uint64_t reduce_root_merges(mpi::communicator& world, std::map<int32_t, pipeline::RootMerge>& merges,
                            const knowledge::Knowledge& kb) {
  const int me = world.rank(), size = world.size();
  for (int step = 1; step < size; step <<= 1) {
    if ((me & step) != 0) {
      mpi::packed_oarchive out(world);
      out << merges;
      merges.clear();
      world.send(me - step, kTagRootMerges, out);
      return out.size();
    }
    if (me + step < size) {
      mpi::packed_iarchive in(world);
      world.recv(me + step, kTagRootMerges, in);
      std::map<int32_t, pipeline::RootMerge> theirs;
      in >> theirs;
      for (auto& [root, m] : theirs) pipeline::merge_root_merges(merges[root], std::move(m), kb);
    }
  }
  return 0;
}

void set_class_wall_quantiles(mpi::communicator& world, std::map<int32_t, pipeline::RootMerge>& merges,
                              std::map<int32_t, analysis::ClassWalls>& walls) {
  std::vector<analysis::WallRequest> requests;  // process 0 knows the classes; everyone needs the list
  if (world.rank() == 0)
    for (const auto& [root, m] : merges) {
      auto r = m.classes.wall_requests(root);
      requests.insert(requests.end(), std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
    }
  mpi::broadcast(world, requests, 0);
  if (requests.empty()) return;
  const std::vector<double> quantiles = analysis::class_wall_quantiles(
      requests,
      [&walls](int32_t root) {
        const auto it = walls.find(root);
        return it == walls.end() ? nullptr : &it->second;
      },
      [&world](std::vector<uint64_t>& counts) {
        MPI_Allreduce(MPI_IN_PLACE, counts.data(), static_cast<int>(counts.size()), MPI_UINT64_T, MPI_SUM, world);
      });
  if (world.rank() != 0) return;
  size_t at = 0;  // requests are root by root, in each merge's own order
  for (auto& [root, m] : merges) {
    const size_t n = m.classes.wall_requests(root).size();
    m.classes.set_wall_quantiles(std::span<const double>(quantiles).subspan(2 * at, 2 * n));
    at += n;
  }
}

}  // namespace ascprof::parallel

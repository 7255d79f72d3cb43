// The rank outcomes' gather to process 0, one message per outcome (gather_messages.hpp).
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/packed_iarchive.hpp>
#include <boost/mpi/packed_oarchive.hpp>
#include <boost/serialization/array.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

#include "ascprof/parallel/gather_messages.hpp"

namespace ascprof::parallel {

namespace mpi = boost::mpi;

namespace {
constexpr int kTagOutcomeCount = 7301, kTagOutcome = 7302;  // apart from the work queue's and the tree's
}

void gather_rank_outcomes(mpi::communicator& world, std::vector<pipeline::RankOutcome>& mine,
                          std::vector<std::vector<pipeline::RankOutcome>>& all) {
  all.clear();
  if (world.rank() != 0) {
    world.send(0, kTagOutcomeCount, static_cast<uint64_t>(mine.size()));
    for (const auto& o : mine) {
      mpi::packed_oarchive out(world);
      out << o;
      world.send(0, kTagOutcome, out);
    }
    return;
  }
  all.resize(static_cast<size_t>(world.size()));
  // Process 0's own outcomes move over and `mine` keeps only what its rank side reads later (the
  // bucket fold): a copy held both for the rest of the run (~125 KB a rank of 215k kernel rows,
  // 625 MB of process 0's memory at 10,000 ranks on 2 processes).
  all[0].reserve(mine.size());
  for (auto& o : mine) {
    pipeline::RankOutcome kept;
    kept.root_index = o.root_index;
    kept.rank_index = o.rank_index;
    kept.ok = o.ok;
    kept.partial = o.partial;
    kept.candidates = std::move(o.candidates);
    all[0].push_back(std::move(o));
    o = std::move(kept);
  }
  for (int p = 1; p < world.size(); ++p) {  // in process order, as a gather
    uint64_t count = 0;
    world.recv(p, kTagOutcomeCount, count);
    all[static_cast<size_t>(p)].resize(count);
    for (auto& o : all[static_cast<size_t>(p)]) {
      mpi::packed_iarchive in(world);
      world.recv(p, kTagOutcome, in);
      in >> o;
    }
  }
}

}  // namespace ascprof::parallel

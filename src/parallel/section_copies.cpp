// A root's concatenated tables assembled by every process (see section_copies.hpp).
#include "ascprof/parallel/section_copies.hpp"

#include "ascprof/common/cores.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace boost::serialization {
template <class Archive>
void serialize(Archive& ar, ascprof::store::SectionCopy& c, const unsigned int /*version*/) {
  ar & c.pack & c.section & c.dest & c.offset & c.length & c.skip;
}
}  // namespace boost::serialization

namespace ascprof::parallel {

namespace mpi = boost::mpi;

namespace {

struct Batch {
  bool done = false;
  std::vector<store::SectionCopy> copies;
  template <class Archive>
  void serialize(Archive& ar, const unsigned int /*version*/) {
    ar & done & copies;
  }
};

// This process's share of `copies`; its error as (code, message), code 0 when ok.
std::pair<int, std::string> run_share(const std::vector<store::SectionCopy>& copies, int me, int size) {
  const std::vector<size_t> bounds = store::split_section_copies(copies, static_cast<size_t>(size));
  const Status st = store::run_section_copies(copies, bounds[static_cast<size_t>(me)], bounds[static_cast<size_t>(me) + 1]);
  return st.ok() ? std::make_pair(0, std::string()) : std::make_pair(static_cast<int>(st.code()), st.message());
}

}  // namespace

store::SectionCopyRunner section_copies_on_all_processes(mpi::communicator& world) {
  if (world.size() == 1) {  // a lone process spreads them over its cores instead (1: in place)
    const unsigned threads = std::min(usable_cores(), 8u);  // the copies are inflate and pwrite
    if (threads <= 1) return {};
    return [threads](const std::vector<store::SectionCopy>& copies) {
      return store::run_section_copies_on_threads(copies, threads);
    };
  }
  return [&world](const std::vector<store::SectionCopy>& copies) {
    Batch batch{false, copies};
    mpi::broadcast(world, batch, 0);
    const auto mine = run_share(batch.copies, 0, world.size());
    std::vector<std::pair<int, std::string>> all;
    mpi::gather(world, mine, all, 0);
    for (const auto& [code, message] : all)
      if (code != 0) return Status(static_cast<ErrorCode>(code), message);
    return Status{};
  };
}

void end_section_copies(mpi::communicator& world) {
  if (world.size() == 1) return;
  Batch end{true, {}};
  mpi::broadcast(world, end, 0);
}

void serve_section_copies(mpi::communicator& world) {
  for (;;) {
    Batch batch;
    mpi::broadcast(world, batch, 0);
    if (batch.done) return;
    const auto mine = run_share(batch.copies, world.rank(), world.size());
    mpi::gather(world, mine, 0);
  }
}

}  // namespace ascprof::parallel

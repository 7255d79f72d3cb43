#include "ascprof/parallel/work_queue.hpp"

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>

#include "ascprof/parallel/schedule.hpp"

namespace ascprof::parallel {

namespace mpi = boost::mpi;

namespace {

constexpr int kTagRequest = 7101, kTagItem = 7102;
constexpr long long kNoMore = -1;

}  // namespace

const char* run_work_queue(mpi::communicator& world, const std::vector<uint64_t>& sizes,
                           const std::function<void(size_t)>& run) {
  std::vector<size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&sizes](size_t a, size_t b) { return sizes[a] > sizes[b]; });
  const int n = world.size();
  // The same decision on every process: the thread level is a property of the MPI library.
  const bool dynamic = n > 1 && mpi::environment::thread_level() >= mpi::threading::serialized;
  if (!dynamic) {
    const auto assignment = assign_largest_first(sizes, n);
    for (const size_t i : assignment[static_cast<size_t>(world.rank())]) run(i);
    return n > 1 ? "static" : "single";
  }
  if (world.rank() != 0) {
    for (;;) {
      world.send(0, kTagRequest, 0);
      long long next = kNoMore;
      world.recv(0, kTagItem, next);
      if (next == kNoMore) break;
      run(static_cast<size_t>(next));
    }
    return "dynamic";
  }
  std::atomic<size_t> next{0};
  // Only this thread makes MPI calls while the main thread works (thread level "serialized").
  // It polls with a short sleep instead of a blocking receive, which would spin a core.
  std::thread dispatcher([&] {
    int finished = 0;
    while (finished < n - 1) {
      if (auto st = world.iprobe(mpi::any_source, kTagRequest)) {
        int dummy = 0;
        world.recv(st->source(), kTagRequest, dummy);
        const size_t k = next.fetch_add(1);
        const long long item = k < order.size() ? static_cast<long long>(order[k]) : kNoMore;
        if (item == kNoMore) ++finished;
        world.send(st->source(), kTagItem, item);
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
  });
  for (size_t k = next.fetch_add(1); k < order.size(); k = next.fetch_add(1)) run(order[k]);
  dispatcher.join();
  return "dynamic";
}

}  // namespace ascprof::parallel

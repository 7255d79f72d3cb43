#include "ascprof/parallel/work_queue.hpp"

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <algorithm>
#include <atomic>
#include <mutex>
#include <chrono>
#include <numeric>
#include <thread>

#include "ascprof/common/interrupt.hpp"
#include "ascprof/parallel/schedule.hpp"

namespace ascprof::parallel {

namespace mpi = boost::mpi;

namespace {

constexpr int kTagRequest = 7101, kTagItem = 7102;
constexpr long long kNoMore = -1;

}  // namespace

const char* run_work_queue(mpi::communicator& world, const std::vector<uint64_t>& sizes,
                           const std::function<void(size_t)>& run, const std::function<void(uint64_t, uint64_t)>& on_progress,
                           unsigned local_threads) {
  std::mutex progress_mutex;
  uint64_t items_done = 0, bytes_done = 0;
  auto finished = [&](size_t item) {
    if (!on_progress) return;
    std::lock_guard<std::mutex> lock(progress_mutex);
    ++items_done;
    bytes_done += sizes[item];
    on_progress(items_done, bytes_done);
  };
  std::vector<size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&sizes](size_t a, size_t b) { return sizes[a] > sizes[b]; });
  const int n = world.size();
  if (n == 1 && local_threads > 1 && sizes.size() > 1) {
    std::atomic<size_t> next{0};
    const auto take = [&] {
      for (size_t k = next.fetch_add(1); k < order.size() && !interrupted(); k = next.fetch_add(1)) {
        run(order[k]);
        finished(order[k]);
      }
    };
    std::vector<std::thread> helpers;
    for (unsigned t = 1; t < local_threads && t < sizes.size(); ++t) helpers.emplace_back(take);
    take();
    for (auto& h : helpers) h.join();
    return "threads";
  }
  // The same decision on every process: the thread level is a property of the MPI library.
  const bool dynamic = n > 1 && mpi::environment::thread_level() >= mpi::threading::serialized;
  if (!dynamic) {
    const auto assignment = assign_largest_first(sizes, n);
    for (const size_t i : assignment[static_cast<size_t>(world.rank())]) {
      if (interrupted()) break;
      run(i);
      if (world.rank() == 0) finished(i);
    }
    return n > 1 ? "static" : "single";
  }
  if (world.rank() != 0) {
    for (;;) {
      // the request carries this process's stop signal (0: none), so process 0 stops handing out
      // work to everyone when any process was signalled
      world.send(0, kTagRequest, interrupt_signal());
      long long next = kNoMore;
      world.recv(0, kTagItem, next);
      if (next == kNoMore) break;
      run(static_cast<size_t>(next));
    }
    return "dynamic";
  }
  std::atomic<size_t> next{0};
  std::vector<long long> in_flight(static_cast<size_t>(n), kNoMore);  // each worker's current item
  // Only this thread makes MPI calls while the main thread works (thread level "serialized").
  // It polls with a short sleep instead of a blocking receive, which would spin a core.
  std::thread dispatcher([&] {
    int workers_done = 0;
    while (workers_done < n - 1) {
      if (auto st = world.iprobe(mpi::any_source, kTagRequest)) {
        int worker_signal = 0;
        world.recv(st->source(), kTagRequest, worker_signal);
        if (worker_signal != 0) request_interrupt(worker_signal);
        // a worker asking again has finished the item it had (or abandoned it, when stopping)
        long long& previous = in_flight[static_cast<size_t>(st->source())];
        if (previous != kNoMore) finished(static_cast<size_t>(previous));
        const size_t k = interrupted() ? order.size() : next.fetch_add(1);
        const long long item = k < order.size() ? static_cast<long long>(order[k]) : kNoMore;
        previous = item;
        if (item == kNoMore) ++workers_done;
        world.send(st->source(), kTagItem, item);
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
  });
  for (size_t k = next.fetch_add(1); k < order.size() && !interrupted(); k = next.fetch_add(1)) {
    run(order[k]);
    finished(order[k]);
  }
  dispatcher.join();
  return "dynamic";
}

}  // namespace ascprof::parallel

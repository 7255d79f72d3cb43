// parallel::run_work_queue under mpiexec with 1, 2 and 3 processes: every item runs exactly once
// whatever the process count and `local_threads`; a single process takes its items on several
// threads at once (the report parts of a plain one-process run), counts its progress exactly and
// stops handing out items after a stop.
#include <gtest/gtest.h>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ascprof/common/interrupt.hpp"
#include "ascprof/parallel/work_queue.hpp"

namespace ascprof::parallel {
namespace {

namespace mpi = boost::mpi;

TEST(WorkQueueMpi, EveryItemRunsOnceForAnyProcessCountAndThreadCount) {
  mpi::communicator world;
  std::vector<uint64_t> sizes;
  for (uint64_t i = 0; i < 24; ++i) sizes.push_back((i * 7919) % 97 + 1);
  for (const unsigned threads : {1u, 3u}) {
    std::vector<int> runs(sizes.size(), 0);
    std::mutex m;
    std::atomic<int> active{0}, most_active{0};
    uint64_t progress_items = 0, progress_bytes = 0;
    const std::string how = run_work_queue(
        world, sizes,
        [&](size_t i) {
          const int now = ++active;
          for (int seen = most_active.load(); now > seen && !most_active.compare_exchange_weak(seen, now);) {
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          --active;
          std::lock_guard<std::mutex> lock(m);
          ++runs[i];
        },
        [&](uint64_t items, uint64_t bytes) {
          progress_items = items;
          progress_bytes = bytes;
        },
        threads);
    std::vector<int> total(sizes.size(), 0);
    mpi::all_reduce(world, runs.data(), static_cast<int>(runs.size()), total.data(), std::plus<int>());
    EXPECT_EQ(total, std::vector<int>(sizes.size(), 1)) << threads << " threads";
    if (world.size() == 1) {
      EXPECT_EQ(how, threads > 1 ? "threads" : "single");
      if (threads > 1) EXPECT_GE(most_active.load(), 2) << "the items never overlapped";
      else EXPECT_EQ(most_active.load(), 1);
      EXPECT_EQ(progress_items, sizes.size());
      uint64_t bytes = 0;
      for (const uint64_t s : sizes) bytes += s;
      EXPECT_EQ(progress_bytes, bytes);
    } else {
      EXPECT_EQ(most_active.load(), 1) << "with several processes each runs one item at a time";
    }
  }
}

TEST(WorkQueueMpi, OneProcessOnThreadsStopsHandingOutAfterAStop) {
  mpi::communicator world;
  if (world.size() != 1) GTEST_SKIP() << "the threaded hand-out is the single-process path";
  const std::vector<uint64_t> sizes(40, 1);
  std::atomic<int> ran{0};
  std::mutex m;  // the third start and its stop are one step for the other thread
  run_work_queue(
      world, sizes,
      [&](size_t) {
        {
          std::lock_guard<std::mutex> lock(m);
          if (++ran == 3) request_interrupt(15);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      },
      nullptr, 2);
  clear_interrupt_for_testing();
  EXPECT_GE(ran.load(), 3);
  EXPECT_LE(ran.load(), 4) << "items started after the stop (2 threads: at most one more in flight)";
}

}  // namespace
}  // namespace ascprof::parallel

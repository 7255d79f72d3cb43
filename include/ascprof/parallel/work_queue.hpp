#pragma once
/// Dynamic work distribution: items are handed out largest first, one at a time, to whichever
/// process asks next, so a process that finishes early takes more and uneven inputs (a 40-root
/// sweep, one huge rank) keep every process busy. Process 0 works too: a small dispatcher thread
/// answers the others' requests while its main thread runs items (this needs MPI thread level
/// "serialized"; without it the static largest-first assignment of schedule.hpp is used).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace boost::mpi {
class communicator;
}

namespace ascprof::parallel {

/// Runs `run(i)` for items i (sizes `item_bytes`) across all processes of `world`, each item
/// exactly once; returns how the items were handed out ("dynamic" or "static"). Collective: every
/// process must call it. `run` must not make MPI calls.
/// A stop (common/interrupt.hpp) on any process ends the hand-out: no item starts after process 0
/// learns of it (a worker's request carries its signal), and process 0 passes it on to the others
/// with their next request; the items in flight are left to `run`, which should abandon them.
/// `on_progress(items_done, bytes_done)`, when given, is called on process 0 whenever it learns that
/// an item finished anywhere (a worker asking for more has finished its last one); calls are
/// serialised. With the static assignment it sees only process 0's own items.
/// `local_threads` > 1 (for a `run` that is safe to call from several threads at once): when the
/// run has a single process, that many threads take the items, largest first ("threads"); with
/// more processes each process still runs one item at a time, as the dispatch above needs.
const char* run_work_queue(boost::mpi::communicator& world, const std::vector<uint64_t>& item_bytes,
                           const std::function<void(size_t)>& run,
                           const std::function<void(uint64_t, uint64_t)>& on_progress = nullptr,
                           unsigned local_threads = 1);

}  // namespace ascprof::parallel

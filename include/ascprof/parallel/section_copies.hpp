#pragma once
/// A root's concatenated tables assembled by every process (issue 17: no serial tail). Process 0
/// plans each root's tables (offsets from the ranks' pack indexes) while it writes the root's
/// outputs, and hands the plan's section copies to all processes through the runner below; each
/// process inflates and writes its share of the ranks (store::split_section_copies: contiguous
/// runs of about equal bytes) at their offsets, and process 0 renames the tables once every
/// process is done. The other processes serve copies until process 0 ends the phase.
#include <boost/mpi/communicator.hpp>

#include "ascprof/store/part_pack.hpp"

namespace ascprof::parallel {

/// Process 0: a runner that broadcasts `copies`, runs its own share and returns the first error of
/// any process (its own first). With one process: a runner that spreads them over the process's
/// cores (store::run_section_copies_on_threads), or empty on one core (the copies run in place).
store::SectionCopyRunner section_copies_on_all_processes(boost::mpi::communicator& world);
/// Process 0: releases the processes serving copies. Collective with serve_section_copies.
void end_section_copies(boost::mpi::communicator& world);
/// Every other process: runs its share of each batch process 0 broadcasts until it ends them.
void serve_section_copies(boost::mpi::communicator& world);

}  // namespace ascprof::parallel

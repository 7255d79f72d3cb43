// Shared main for MPI GTest binaries: every process runs the tests, only process 0 prints, and
// all processes exit with the worst result so CTest sees one verdict.
#include <gtest/gtest.h>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <functional>

#include "ascprof/parallel/mpi_environment.hpp"

int main(int argc, char** argv) {
  const ascprof::parallel::MpiEnvironment env(argc, argv);  // as the CLI: dynamic work queue
  boost::mpi::communicator world;
  ::testing::InitGoogleTest(&argc, argv);
  if (world.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int rc = RUN_ALL_TESTS();
  int worst = 0;
  boost::mpi::all_reduce(world, rc, worst, boost::mpi::maximum<int>());
  return worst;
}

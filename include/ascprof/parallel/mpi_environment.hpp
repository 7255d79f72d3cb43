#pragma once
/// The process's MPI environment: MPI_Init_thread at thread level "serialized" (process 0's
/// dispatcher thread hands out work while its main thread analyses ranks; see work_queue.hpp) and
/// MPI_Finalize when it goes out of scope. Every MPI program of the project (the CLI, the MPI test
/// binaries) starts through it.
#include <memory>

namespace boost::mpi {
class environment;
}

namespace ascprof::parallel {

class MpiEnvironment {
 public:
  MpiEnvironment(int& argc, char**& argv);
  ~MpiEnvironment();
  MpiEnvironment(const MpiEnvironment&) = delete;
  MpiEnvironment& operator=(const MpiEnvironment&) = delete;

 private:
  std::unique_ptr<boost::mpi::environment> env_;
};

}  // namespace ascprof::parallel

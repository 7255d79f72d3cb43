#include "ascprof/parallel/mpi_environment.hpp"

#include <boost/mpi/environment.hpp>

#if defined(__SANITIZE_ADDRESS__)
#define ASCPROF_HAS_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASCPROF_HAS_LSAN 1
#endif
#endif
#if defined(ASCPROF_HAS_LSAN)
#include <dlfcn.h>
#include <link.h>
#include <sanitizer/lsan_interface.h>

#include <cstddef>
#endif

namespace ascprof::parallel {

namespace {

// Open MPI and its plugins allocate inside MPI_Init and MPI_Finalize and keep it until exit. In
// sanitizer builds LeakSanitizer ignores what this thread allocates inside those two calls. A
// suppression file cannot: the allocating frame is often libc (strdup, vasprintf) called by MPI,
// which only a full stack unwind on every malloc of the run (a slower suite) would
// attribute to MPI. Our own code allocates nothing there.
struct LeakCheckPause {
#if defined(ASCPROF_HAS_LSAN)
  LeakCheckPause() { __lsan_disable(); }
  ~LeakCheckPause() { __lsan_enable(); }
#endif
};

// Open MPI 4.1 unloads its plugins in MPI_Finalize, so what their own threads (PMIx's event loop)
// allocated and kept shows up at exit with "<unknown module>" frames that no suppression in
// tests/lsan_mpi.supp can name. One more reference to every loaded object keeps them mapped, and
// named, until the leak check. Sanitizer builds only.
void keep_libraries_mapped() {
#if defined(ASCPROF_HAS_LSAN)
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void*) -> int {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
          (void)dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);  // never closed, on purpose
        return 0;
      },
      nullptr);
#endif
}

}  // namespace

MpiEnvironment::MpiEnvironment(int& argc, char**& argv) {
  [[maybe_unused]] const LeakCheckPause pause;
  env_ = std::make_unique<boost::mpi::environment>(argc, argv, boost::mpi::threading::serialized);
}

MpiEnvironment::~MpiEnvironment() {
  [[maybe_unused]] const LeakCheckPause pause;
  keep_libraries_mapped();
  env_.reset();
}

}  // namespace ascprof::parallel

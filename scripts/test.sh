#!/usr/bin/env bash
# Sets up (packages + build) and runs every test: unit, MPI (1/2/3 processes), end-to-end, real
# fixtures, the browser and the Slurm tests. The suite is built with AddressSanitizer +
# UndefinedBehaviorSanitizer (-DASCPROF_SANITIZE=ON, in build-asan/): a memory error, leak or UB
# anywhere fails the test that hit it. This is the one build CI makes.
#
#   scripts/test.sh [EXTRA_CTEST_ARGS...]
#
#   env SANITIZE=0  plain Release build in build/ instead (the one the README's demo uses)
#   env BUILD_DIR   build folder (default build-asan, or build with SANITIZE=0)
#   env JOBS        build and ctest parallelism (default nproc)
#
# Real-fixture tests read ../shared/fixtures/real (or $ASCPROF_REAL_FIXTURES) and skip with a
# message if absent. Open MPI's own allocations kept until exit are suppressed in tests/lsan_mpi.supp.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${SANITIZE:-1}" = 0 ]; then
  export BUILD_DIR="${BUILD_DIR:-build}"
  bash scripts/setup.sh
else
  # benchmarks are left out: they run only in benchmarks/run_suite.sh, on a Release build
  export BUILD_DIR="${BUILD_DIR:-build-asan}"
  BUILD_TYPE=RelWithDebInfo CMAKE_ARGS="-DASCPROF_SANITIZE=ON -DASCPROF_BUILD_BENCHMARKS=OFF ${CMAKE_ARGS:-}" \
    bash scripts/setup.sh
fi
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "${JOBS:-$(nproc)}" "$@"

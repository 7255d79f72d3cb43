#!/usr/bin/env bash
# Builds the test suite with AddressSanitizer + UndefinedBehaviorSanitizer (-DASCPROF_SANITIZE=ON) and
# runs it. Expects the packages scripts/setup.sh installs; does not install anything itself.
#
#   scripts/test_sanitized.sh [EXTRA_CTEST_ARGS...]
#
#   env BUILD_DIR  build folder (default build-asan, relative to the repository root, or absolute)
#   env JOBS       build and ctest parallelism (default nproc)
#
# The "browser" (Chromium) and "slurm" (a real slurmctld/slurmd) tests are left out: they drive external
# daemons and programs that are not instrumented, and they exercise the same ascprof-mpi code paths the
# e2e tests already run. LeakSanitizer/UBSan suppressions for third-party code are set by
# tests/CMakeLists.txt (tests/lsan_mpi.supp, tests/ubsan.supp) in every test's environment.
# Exits non-zero if the build fails or any test fails.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-build-asan}"
[[ "$BUILD_DIR" = /* ]] || BUILD_DIR="$ROOT/$BUILD_DIR"
JOBS="${JOBS:-$(nproc)}"

cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DASCPROF_SANITIZE=ON \
  -DASCPROF_BUILD_BENCHMARKS=OFF -DASCPROF_BUILD_TESTS=ON >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS"
ctest --test-dir "$BUILD_DIR" -j "$JOBS" --output-on-failure -LE 'browser|slurm' "$@"

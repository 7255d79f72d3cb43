#!/usr/bin/env bash
# Sets up (packages + build) and runs every test: unit, MPI (1/2/3 processes), end-to-end, real fixtures.
# Real-fixture tests read ../shared/fixtures/real (or $ASCPROF_REAL_FIXTURES) and skip with a message if absent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "${JOBS:-$(nproc)}" "$@"

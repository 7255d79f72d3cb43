#!/usr/bin/env bash
# Installs the Debian packages ascprof-mpi needs (only those missing) and builds it in ./build.
# Idempotent: a second run installs nothing and rebuilds only what changed.
#   scripts/setup.sh              install + configure + build (Release)
#   BUILD_DIR=b scripts/setup.sh  another build folder
#   CMAKE_ARGS="-DASCPROF_SANITIZE=ON" scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config ccache
  libopenmpi-dev openmpi-bin                              # MPI
  libboost-mpi-dev libboost-serialization-dev libboost-program-options-dev
  libsimdjson-dev                                         # trace_view.json / communication.json
  libhdf5-dev hdf5-tools python3-h5py python3-pandas      # per-rank intermediates; h5dump, h5py and pandas for interop tests
  libxlsxwriter-dev zlib1g-dev libdeflate-dev             # report.xlsx; zlib reads the rank part packs, libdeflate writes them and the HDF5 chunks
  libsqlite3-dev sqlite3                                  # ascend_pytorch_profiler_N.db / analysis.db; sqlite3 CLI for tests
  libgtest-dev libgmock-dev libbenchmark-dev              # tests and benchmarks
  chromium python3-openpyxl                               # report tests: real browser, independent xlsx reader
  slurm-wlm munge                                         # tests/slurm: a real one-node Slurm
  clang libclang-rt-14-dev                                # fuzz/: libFuzzer targets (scripts/fuzz.sh)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build_dir="${BUILD_DIR:-build}"
jobs="${JOBS:-$(nproc)}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" -j "$jobs"
echo "setup: built $build_dir/ascprof-mpi" >&2

#!/usr/bin/env bash
# The benchmark suite (issue 7): one command that builds the benchmarks, generates its inputs with
# the synth generator (outside every timed run), runs each scenario with MPI and prints one table:
# per stage and end to end MB/s and events/s per process, peak RSS per process (and its ratio to the
# largest rank's input), HDF5 bytes written and gathered bytes per rank. Results also go to
# WORKDIR/suite_results.json so runs can be compared.
#
#   benchmarks/run_suite.sh [--quick] [--only NAME[,NAME...]] [--keep] [WORKDIR=/tmp/ascprof-suite]
#
# Scenarios (sizes for the full run; --quick divides every scale by 20 for a smoke run):
#   huge_rank   1 rank, scale 3600: ~5.3 GB trace_view.json + ~1.0 GB kernel_details.csv, 1 process
#   root8       8 ranks x ~0.5 GB (scale 290, ~4 GB) with 1 and with 2 processes (MPI scaling), and
#               with 2 processes and --h5-deflate 0 (uncompressed rank HDF5 files)
#   linear      the 8-rank root at scales 29, 92 and 290 (input spanning 10x), 2 processes
#   root64      64 ranks x ~70 MB (scale 40, ~4.5 GB), 2 processes (coordinator cost per rank)
#   report_threads  the report stage alone of the scale-92 8-rank root, 1 process, twice bound to a
#               core (one sheet thread) and twice with --bind-to none (a thread per core)
#   sweep24     24 generated roots of uneven size (benchmarks/run_sweep.sh), 2 processes
#   micro       the Google Benchmark binaries (CSV tokenizer, trace_view walker, taxonomy lookup,
#               interval union, segmentation, HDF5 table write), JSON output
# Captures are deleted after each scenario unless --keep (they need up to ~12 GB at once).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0 keep=0 only=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --keep) keep=1 ;;
    --only) only="$2"; shift ;;
    *) args+=("$1") ;;
  esac
  shift
done
work="${args[0]:-/tmp/ascprof-suite}"
build="${BUILD_DIR:-build-bench}"
jobs="${JOBS:-$(nproc)}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"

# a fresh build folder gets a Release build without tests; an existing one (BUILD_DIR=build) only
# gets the benchmarks switched on
if [ -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DASCPROF_BUILD_BENCHMARKS=ON >/dev/null
else
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DASCPROF_BUILD_BENCHMARKS=ON -DASCPROF_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j "$jobs" --target ascprof-mpi >/dev/null
cmake --build "$build" -j "$jobs" >/dev/null
exe="$(pwd)/$build/ascprof-mpi"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

want() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }
scaled() { if [ "$quick" = 1 ]; then echo $(( ($1 + 19) / 20 )); else echo "$1"; fi; }

# gen NAME RANKS SCALE: a moe_mla_decode capture under $work/NAME (kept between runs of the suite
# with --keep; regenerated when absent)
gen() {
  local dir="$work/$1"
  if [ ! -f "$dir/ground_truth.json" ]; then
    rm -rf "$dir"
    "$exe" synth --scenario moe_mla_decode --ranks "$2" --scale "$3" --force -o "$dir" >/dev/null
  fi
}

# run LABEL CAPTURE NP [OPTION...]: analyze every stage except the HTML page (plus the options), each
# process under /usr/bin/time (its peak RSS); writes $work/runs/LABEL/{result.json,rss.*}
run() {
  local label="$1" capture="$work/$2" np="$3" dir="$work/runs/$1"
  shift 3
  rm -rf "$dir" && mkdir -p "$dir"
  mpirun -np "$np" sh -c "exec /usr/bin/time -f '%M' -o '$dir/rss.'\$OMPI_COMM_WORLD_RANK '$exe' analyze '$capture' -o '$dir/out' --progress none --skip-html $*" \
    > "$dir/result.json"
  # input bytes of the capture and of its largest rank, HDF5 bytes written (for the table)
  /usr/bin/python3 - "$capture" "$dir" <<'PY'
import glob, json, os, sys
cap, d = sys.argv[1], sys.argv[2]
ranks = {}
for f in glob.glob(os.path.join(cap, "**", "*"), recursive=True):
    if os.path.isfile(f):
        parts = os.path.relpath(f, cap).split(os.sep)
        ranks[parts[0]] = ranks.get(parts[0], 0) + os.path.getsize(f)
h5 = sum(os.path.getsize(f) for f in glob.glob(os.path.join(d, "out", "**", "*.h5"), recursive=True))
json.dump({"input_bytes": sum(v for k, v in ranks.items() if k.endswith("_ascend_pt")),
           "largest_rank_bytes": max([v for k, v in ranks.items() if k.endswith("_ascend_pt")] or [0]),
           "hdf5_bytes": h5}, open(os.path.join(d, "sizes.json"), "w"))
PY
  if [ "$keep" = 0 ]; then rm -rf "$dir/out"; fi
}

drop() { if [ "$keep" = 0 ]; then rm -rf "$work/$1"; fi; }

if want huge_rank; then
  gen huge_rank 1 "$(scaled 3600)"
  run huge_rank huge_rank 1
  drop huge_rank
fi
if want root8 || want linear; then
  s3=$(scaled 290)
  gen root8 8 "$s3"
  # the same root with the ranks' HDF5 files stored uncompressed (--h5-deflate 0: speed for disk)
  want root8 && run root8_np1 root8 1 && run root8_np2 root8 2 && run root8_np2_h5plain root8 2 --h5-deflate 0
  if want linear; then
    run linear_290 root8 2
    for s in 29 92; do
      gen "root8_s$s" 8 "$(scaled $s)"
      run "linear_$s" "root8_s$s" 2
      drop "root8_s$s"
    done
  fi
  drop root8
fi
if want root64; then
  gen root64 64 "$(scaled 40)"
  run root64 root64 2
  drop root64
fi
if want report_threads; then
  # The workbook's sheet threads: the report stage alone (--only-stage report) of an 8-rank 1.3 GB
  # root, one process, under mpirun's default binding (one core, so one thread) and --bind-to none.
  gen root8_s92 8 "$(scaled 92)"
  dir="$work/runs/report_threads"
  rm -rf "$dir" && mkdir -p "$dir"
  "$exe" analyze "$work/root8_s92" -o "$dir/out" --progress none --skip-html --to-stage diagnostics > /dev/null
  for bind in core none core none; do
    mpirun -np 1 --bind-to "$bind" "$exe" analyze "$work/root8_s92" -o "$dir/out" --progress none --skip-html \
      --only-stage report >> "$dir/bind_$bind.jsonl"
  done
  rm -rf "$dir/out"
  drop root8_s92
fi
if want sweep24; then
  bash benchmarks/run_sweep.sh 24 2 "$work/sweep24" > "$work/sweep24.txt"
  if [ "$keep" = 0 ]; then rm -rf "$work/sweep24/captures" "$work/sweep24/out"; fi
fi
if want micro; then
  mkdir -p "$work/micro"
  for b in "$build"/benchmarks/*_benchmark; do
    min_time=$([ "$quick" = 1 ] && echo 0.05 || echo 0.5)
    "$b" --benchmark_format=json --benchmark_min_time="$min_time" > "$work/micro/$(basename "$b").json" 2>/dev/null
  done
fi

/usr/bin/python3 benchmarks/suite_report.py "$work" "$quick"

#!/usr/bin/env bash
# Coordinator benchmark by simulation (issue 22): what process 0 costs at 1,024, 4,096 and 10,000
# ranks on analyze_run's path (the outcomes' gather, the operator buckets' reduction tree, then
# write_root_outputs),
# without generating thousands of captures. Builds nothing.
#   benchmarks/run_coordinator.sh BUILD_DIR [WORKDIR=/tmp/ascprof-bench-coord] [SIZES="1024 4096 10000"]
# Environment:
#   STEPS (228) LAYERS (61) TEMPLATE_RANKS (8) SLOW_RANK (3) SLOW_MAG (1.4): the template capture,
#     `ascprof-mpi synth --scenario moe_mla_decode` with the slow_rank fault: 215,232 kernel rows per rank
#   CALIBRATE ("128 256"): smaller sizes run first, every part timed on its own (--detail 2)
#   every size has its parts timed on their own (--detail 2; step alignment, O(W log W), and the
#     finish of the merged operator buckets are cheap to time twice)
#   MEM_LIMIT_GB (75 % of MemAvailable) TIME_LIMIT_S (420): a size whose predicted peak RSS (both
#     processes) or wall time passes them is not run: the table extrapolates it and says so. With the
#     defaults on a 24 GB machine all three sizes run (2026-12-03: ~10 min, 13 GB at 10,000 ranks).
#   PLANTED: planted slow ranks of every size (default: 3, at 13/52/91 % of N)
#   CHECK_RANKS (128) CHECK_PLANTED (2 ranks): one more run, the findings check with another planted set
#   FULL_TABLES_RANKS (16): one run with the real per-entity root tables (--tables full), scaled per rank
#   NP (2), EXTRA (more coordinator_bench run options)
# Once (kept in WORKDIR): the capture and the real rank jobs on its ranks (coordinator_bench prepare,
# checkpoints). Results: WORKDIR/result_<N>.json; the table on stdout.
set -euo pipefail
build="$(cd "${1:?usage: run_coordinator.sh BUILD_DIR [WORKDIR] [SIZES]}" && pwd)"
work="${2:-/tmp/ascprof-bench-coord}"
sizes="${3:-1024 4096 10000}"
steps="${STEPS:-228}"
layers="${LAYERS:-61}"
tranks="${TEMPLATE_RANKS:-8}"
slow="${SLOW_RANK:-3}"
mag="${SLOW_MAG:-1.4}"
np="${NP:-2}"
calibrate="${CALIBRATE:-128 256}"
avail_kb=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
mem_limit=$(( ${MEM_LIMIT_GB:-$(( avail_kb * 3 / 4 / 1024 / 1024 ))} * 1024 * 1024 * 1024 ))
time_limit="${TIME_LIMIT_S:-420}"
exe="$build/ascprof-mpi"
bench="$build/benchmarks/coordinator_bench"
here="$(cd "$(dirname "$0")" && pwd)"
for f in "$exe" "$bench"; do [ -x "$f" ] || { echo "run_coordinator.sh: $f not built" >&2; exit 2; }; done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$work"
rm -f "$work"/result_*.json
capture="$work/capture_${tranks}x${steps}x${layers}_slow${slow}x${mag}"
tdir="$work/templates_${tranks}x${steps}x${layers}_slow${slow}x${mag}"
t0=$(date +%s)
if [ ! -f "$capture/ground_truth.json" ]; then
  echo "generating the template capture ($tranks ranks, $steps steps, $layers layers, slow_rank:$slow:$mag) ..." >&2
  "$exe" synth --scenario moe_mla_decode --ranks "$tranks" --steps "$steps" --layers "$layers" --seed 1 \
    --fault "slow_rank:$slow:$mag" --force -o "$capture" > /dev/null
fi
echo "real rank jobs on the template ranks (kept as checkpoints) ..." >&2
mpiexec -n "$np" --bind-to none "$bench" prepare --capture "$capture" --work "$tdir" >&2
echo "template preparation: $(( $(date +%s) - t0 )) s" >&2

run() {  # run NAME RANKS [options...]: WORKDIR/result_NAME.json
  local name="$1" n="$2"
  shift 2
  local result="$work/result_${name}.json" ts
  rm -f "$result"
  ts=$(date +%s)
  if mpiexec -n "$np" --bind-to none "$bench" run --capture "$capture" --work "$tdir" --ranks "$n" \
       --slow-template "$slow" ${PLANTED:+--planted "$PLANTED"} ${EXTRA:-} "$@" > "$result.tmp"; then
    mv "$result.tmp" "$result"
  else
    echo "ranks $n: FAILED (see stderr above)" >&2
    rm -f "$result.tmp"
  fi
  echo "ranks $n ($name): $(( $(date +%s) - ts )) s wall" >&2
}

# predicted "peak_rss_bytes_both wall_seconds" at N from the two largest sizes measured so far
predict() {
  python3 - "$work" "$1" <<'PY'
import glob, json, math, os, sys
work, n = sys.argv[1], int(sys.argv[2])
pts = []
for f in glob.glob(os.path.join(work, "result_*.json")):
    b = os.path.basename(f)[7:-5]
    if not b.isdigit(): continue
    r = json.load(open(f))
    wall = sum(p["seconds"] for p in r["processes_detail"][0]["phases"] if not p["name"].startswith(("write_root_outputs:", "detail:", "  of which")))
    pts.append((r["ranks"], sum(p["peak_rss_bytes"] for p in r["processes_detail"]), wall))
pts.sort()
if not pts: print(0, 0); sys.exit()
(n2, m2, w2) = pts[-1]
b = 1.0
if len(pts) > 1 and pts[-2][2] > 0 and n2 > pts[-2][0]:
    b = max(1.0, math.log(w2 / pts[-2][2]) / math.log(n2 / pts[-2][0]))
print(int(m2 * n / n2), int(w2 * (n / n2) ** b))
PY
}

for n in $calibrate; do
  echo "calibration: ranks $n ..." >&2
  run "$n" "$n" --detail 2
done
for n in $sizes; do
  read -r mem wall < <(predict "$n")
  if [ "$mem" -gt "$mem_limit" ] || [ "$wall" -gt "$time_limit" ]; then
    echo "ranks $n: predicted peak RSS $(( mem >> 20 )) MiB (both processes; limit $(( mem_limit >> 20 ))) and ~$wall s" \
         "(limit $time_limit): not run, extrapolated" >&2
    rm -f "$work/result_${n}.json"
    continue
  fi
  echo "ranks $n (predicted ~$(( mem >> 20 )) MiB, ~$wall s) ..." >&2
  run "$n" "$n" --detail 2
done
echo "findings check with planted ${CHECK_PLANTED:-20,90} at ${CHECK_RANKS:-128} ranks ..." >&2
PLANTED="${CHECK_PLANTED:-20,90}" run check "${CHECK_RANKS:-128}" --detail 1
echo "the real per-entity root tables on ${FULL_TABLES_RANKS:-16} ranks ..." >&2
run tables_full "${FULL_TABLES_RANKS:-16}" --tables full --detail 0
echo "total: $(( $(date +%s) - t0 )) s" >&2
python3 "$here/coordinator_table.py" "$work" $calibrate $sizes

#!/usr/bin/env bash
# Sweep benchmark: ROOTS generated capture roots of uneven size (1-8 ranks, 2-6 steps, scale 1-12,
# four scenarios) swept with NP processes; prints per-process busy time (inside rank jobs) as a share
# of the rank phase, which the dynamic work queue should keep high. Inputs are generated first.
#   benchmarks/run_sweep.sh [ROOTS=24] [NP=2] [WORKDIR=/tmp/ascprof-bench-sweep]
set -euo pipefail
cd "$(dirname "$0")/.."
roots="${1:-24}"
np="${2:-2}"
work="${3:-/tmp/ascprof-bench-sweep}"
exe="$(pwd)/${BUILD_DIR:-build}/ascprof-mpi"
scenarios=(moe_mla_decode dense_gqa training glm5_mtp)
if [ ! -f "$work/captures/.done_$roots" ]; then
  rm -rf "$work/captures"
  for ((i = 0; i < roots; i++)); do
    sc=${scenarios[$((i % 4))]}
    ranks=$((1 + (i * 5) % 8))
    steps=$((2 + (i * 3) % 5))
    scale=$((1 + (i * 7) % 12))
    "$exe" synth --scenario "$sc" --ranks "$ranks" --steps "$steps" --scale "$scale" -o "$work/captures/root_$i" >/dev/null
  done
  touch "$work/captures/.done_$roots"
fi
rm -rf "$work/out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpirun -np "$np" "$exe" sweep --search-root "$work/captures" -o "$work/out" --progress none > "$work/sweep_result.json" || true
/usr/bin/python3 - "$work" <<'PY'
import json, sys, os
r = json.load(open(os.path.join(sys.argv[1], "sweep_result.json")))
a = r["analysis"]
t = a["stage_timings"]
print(f"sweep: {r['root_count']} roots, {a['rank_count']} ranks, {a['event_count']/1e6:.2f} M kernel rows, "
      f"{r['processes']} processes, scheduling {a['scheduling']}, status {r['status']}, {r['seconds']:.1f} s")
print(f"rank phase (slowest process): {t['rank_jobs']:.2f} s; root outputs {t['root_outputs']:.2f} s; report {t['report']:.2f} s")
for p in a["process_busy"]:
    print(f"process {p['process']}: busy {p['busy_s']:.2f} s = {100*p['busy_share']:.1f} % of the rank phase; "
          f"reports {p['report_busy_s']:.2f} s = {100*p['report_busy_share']:.1f} % of the report phase")
json.dump({"roots": r["root_count"], "ranks": a["rank_count"], "process_busy": a["process_busy"], "stage_timings": t},
          open(os.path.join(sys.argv[1], "sweep_bench.json"), "w"), indent=1)
PY

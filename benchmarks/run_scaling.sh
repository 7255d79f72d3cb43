#!/usr/bin/env bash
# Scaling with processes and the serial tail (issue 17), on the issue's two roots:
#   r4     synth --scenario glm5_mtp --ranks 4 --scale 6           (~385 MB, ~163k kernel rows)
#   r1024  synth --scenario moe_mla_decode --ranks 1024 --steps 2  (~913 MB, 1,024 ranks of ~0.9 MB)
# each analysed (default options; --skip-html with SKIP_HTML=1) with 1 process and with
# `mpirun -np 2`, inputs generated outside the timed runs. Prints per root and process count: wall,
# the stage timings, the serial share (wall outside the rank-job phase / wall, from the run's own
# stage_timings), 2-process / 1-process wall, end-to-end MB/s per process, the output folder and the
# largest ranks/<id>.h5 against the largest rank's input, write CPU / ingest CPU, and the peak RSS
# of the largest process (GNU time's maximum over the process tree).
#   benchmarks/run_scaling.sh [--only r4|r1024] [WORKDIR=/tmp/ascprof-scaling]
set -euo pipefail
cd "$(dirname "$0")/.."
only=""
if [ "${1:-}" = "--only" ]; then only="$2"; shift 2; fi
work="${1:-/tmp/ascprof-scaling}"
exe="$(pwd)/${BUILD_DIR:-build}/ascprof-mpi"
mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
extra=()
[ "${SKIP_HTML:-0}" = 1 ] && extra+=(--skip-html)

gen() {  # NAME SYNTH-ARGS...
  local name="$1"; shift
  [ -f "$work/$name/ground_truth.json" ] || "$exe" synth "$@" --force -o "$work/$name" >/dev/null
}

run() {  # NAME NP
  local name="$1" np="$2" out="$work/out_$1_np$2"
  rm -rf "$out"
  local launch=("$exe")
  [ "$np" -gt 1 ] && launch=(mpirun -np "$np" "$exe")
  /usr/bin/time -f "%e %M" -o "$work/time_$1_np$2" "${launch[@]}" analyze "$work/$name" -o "$out" "${extra[@]}" \
    > "$work/result_$1_np$2.json" 2>/dev/null || true
}

names=()
[ -z "$only" ] || [ "$only" = r4 ] && names+=(r4)
[ -z "$only" ] || [ "$only" = r1024 ] && names+=(r1024)
for n in "${names[@]}"; do
  case "$n" in
    r4) gen r4 --scenario glm5_mtp --ranks 4 --scale 6 ;;
    r1024) gen r1024 --scenario moe_mla_decode --ranks 1024 --steps 2 ;;
  esac
  cat "$work/$n"/*/ASCEND_PROFILER_OUTPUT/* > /dev/null  # warm page cache: parsing, not the disk
  run "$n" 1
  run "$n" 2
done

python3 - "$work" "${names[@]}" <<'PY'
import json, os, pathlib, sys
work = pathlib.Path(sys.argv[1])

def tree_bytes(p):
    return sum(f.stat().st_size for f in pathlib.Path(p).rglob("*") if f.is_file())

rows = []
for name in sys.argv[2:]:
    cap = work / name
    inputs = {d.name: tree_bytes(d) for d in cap.iterdir() if d.is_dir()}
    total_in = sum(inputs.values())
    walls = {}
    for np_ in (1, 2):
        res = json.loads((work / f"result_{name}_np{np_}.json").read_text())
        t = res["stage_timings"]
        wall, rss_kb = (work / f"time_{name}_np{np_}").read_text().split()[-2:]
        walls[np_] = float(wall)
        out = pathlib.Path(res["roots"][0]["out_dir"])
        ranks_dir = out / "ranks"
        h5_sizes = sorted((f.stat().st_size, f.stem) for f in ranks_dir.glob("*.h5"))
        biggest_in = max(inputs.values())
        worst = max(s / biggest_in for s, _ in h5_sizes) if h5_sizes else 0.0
        serial = (t["total"] - t["rank_jobs"]) / t["total"]
        rows.append({
            "root": name, "processes": np_, "input_mb": total_in / 1e6, "wall_s": float(wall),
            "tool_total_s": t["total"], "rank_jobs_s": t["rank_jobs"], "gather_s": t.get("gather", 0),
            "root_outputs_s": t.get("root_outputs", 0), "report_s": t.get("report", 0),
            "serial_share": serial, "mb_per_s_per_process": total_in / 1e6 / float(wall) / np_,
            "output_over_input": tree_bytes(out) / total_in, "largest_h5_over_largest_rank": worst,
            "write_over_ingest_cpu": t.get("write_cpu", 0) / max(t.get("ingest_cpu", 1e-9), 1e-9),
            "peak_rss_mb": int(rss_kb) / 1024,
        })
    rows[-1]["np2_over_np1"] = walls[2] / walls[1]
(work / "scaling_results.json").write_text(json.dumps(rows, indent=1))
cols = [("root", "%s"), ("processes", "%d"), ("input_mb", "%.0f"), ("wall_s", "%.2f"), ("rank_jobs_s", "%.2f"),
        ("root_outputs_s", "%.2f"), ("report_s", "%.2f"), ("serial_share", "%.2f"), ("mb_per_s_per_process", "%.0f"),
        ("output_over_input", "%.2f"), ("largest_h5_over_largest_rank", "%.2f"), ("write_over_ingest_cpu", "%.1f"),
        ("peak_rss_mb", "%.0f")]
print(" | ".join(c for c, _ in cols) + " | np2/np1")
for r in rows:
    print(" | ".join(f % r[c] for c, f in cols) + (" | %.2f" % r["np2_over_np1"] if "np2_over_np1" in r else " |"))
PY

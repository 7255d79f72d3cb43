#!/usr/bin/env bash
# Whole-root benchmark: a generated R-rank root through every stage with MPI, reporting where the
# time goes (ingest vs summarize vs the coordinator's cross-rank and diagnostics work), the gathered
# bytes per rank and the peak RSS of each process. The capture is generated outside the timed run.
#   benchmarks/run_cross_rank.sh [RANKS=64] [SCALE=212] [NP=2] [WORKDIR=/tmp/ascprof-bench-xr]
# SCALE 212 gives ~157k kernel rows and ~2.5M trace events per rank (~370 MB): 64 ranks hold
# ~10M kernel rows and ~160M trace events (~23 GB). Results: WORKDIR/cross_rank_results.json.
set -euo pipefail
cd "$(dirname "$0")/.."
ranks="${1:-64}"
scale="${2:-212}"
np="${3:-2}"
work="${4:-/tmp/ascprof-bench-xr}"
build="${BUILD_DIR:-build}"
exe="$(pwd)/$build/ascprof-mpi"
capture="$work/capture_${ranks}x${scale}"
mkdir -p "$work"
if [ ! -f "$capture/ground_truth.json" ]; then
  "$exe" synth --scenario moe_mla_decode --ranks "$ranks" --scale "$scale" --force -o "$capture" >/dev/null
fi
rm -rf "$work/out" "$work"/rss.*
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# each process under /usr/bin/time: its own peak RSS
mpirun -np "$np" sh -c "exec /usr/bin/time -f '%M' -o '$work/rss.'\$OMPI_COMM_WORLD_RANK '$exe' analyze '$capture' -o '$work/out' --progress none" \
  > "$work/result.json"
# the report stage alone, from the tables just written: its own time and peak RSS
/usr/bin/time -f '%M' -o "$work/rss.report" "$exe" analyze "$capture" -o "$work/out" --from-stage report \
  > "$work/report_result.json"
python3 - "$work" "$capture" "$np" <<'PY'
import glob, json, os, sys
work, capture, np_ = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = json.load(open(os.path.join(work, "result.json")))
t = r["stage_timings"]
input_bytes = sum(os.path.getsize(f) for f in glob.glob(os.path.join(capture, "**", "*"), recursive=True) if os.path.isfile(f))
rss = [int(open(f).read().split()[-1]) * 1024 for f in sorted(glob.glob(os.path.join(work, "rss.[0-9]*")))]
rep = json.load(open(os.path.join(work, "report_result.json")))
report_rss = int(open(os.path.join(work, "rss.report")).read().split()[-1]) * 1024
root = r["roots"][0]
res = {
    "ranks": r["rank_count"], "processes": r["processes"], "kernel_rows": r["event_count"],
    "trace_events": r["trace_event_count"], "input_bytes": input_bytes, "stage_timings": t,
    "gathered_bytes_per_rank": r["gathered_bytes"]["per_rank"],
    "operator_bucket_bytes_per_rank": r["gathered_bytes"]["operator_buckets_per_rank"], "peak_rss_bytes": rss,
    "step_alignments": root["step_alignment_count"], "operator_alignments": root["operator_alignment_count"],
    "findings": root["finding_count"], "status": r["status"],
    "report_only_seconds": rep["stage_timings"]["report"], "report_only_peak_rss_bytes": report_rss,
    "html_status": rep.get("html_status"),
}
json.dump(res, open(os.path.join(work, "cross_rank_results.json"), "w"), indent=1)
print(f"root: {res['ranks']} ranks, {res['kernel_rows']/1e6:.2f} M kernel rows + {res['trace_events']/1e6:.1f} M trace events, "
      f"{input_bytes/1e9:.2f} GB, {np_} processes, status {res['status']}")
rows = [("rank jobs (slowest process, wall)", t["rank_jobs"]),
        ("  ingest (cpu, summed over ranks)", t["ingest_cpu"]), ("  normalize (cpu)", t["normalize_cpu"]),
        ("  segment (cpu)", t["segment_cpu"]), ("  classify (cpu)", t["classify_cpu"]),
        ("  summarize (cpu)", t["summarize_cpu"]), ("  HDF5/CSV writes (cpu)", t["write_cpu"]),
        ("gather (2 rounds, wall)", t["gather"]), ("coordinator: structure files", t["root_structure"]),
        ("coordinator: summary tables", t["root_summary"]), ("coordinator: cross_rank", t["root_cross_rank"]),
        ("coordinator: diagnostics", t["root_diagnostics"]), ("coordinator: report", t.get("report", 0.0)),
        ("total (wall)", t["total"]), ("report stage alone (--from-stage report)", res["report_only_seconds"])]
for name, v in rows: print(f"{name:40} {v:9.2f} s")
print(f"{'gathered bytes per rank':40} {res['gathered_bytes_per_rank']/1e3:9.1f} KB"
      f" (operator buckets {res['operator_bucket_bytes_per_rank']/1e3:.1f} KB)")
print(f"{'alignments (step / operator)':40} {res['step_alignments']} / {res['operator_alignments']}")
print(f"{'peak RSS per process':40} " + ", ".join(f"{b/1e6:.0f} MB" for b in rss))
print(f"{'peak RSS, report stage alone':40} {report_rss/1e6:.0f} MB (html {res['html_status']})")
PY

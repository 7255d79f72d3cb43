#!/usr/bin/env bash
# Ingest benchmark on one generated rank of >= 1 GB (input made outside the timed region).
#   benchmarks/run_ingest.sh [SCALE] [WORKDIR]
# Prints a table: per file kind MB/s, rows/s, peak RSS and RSS / input bytes; also writes
# WORKDIR/ingest_results.json so runs can be compared.
set -euo pipefail
cd "$(dirname "$0")/.."
scale="${1:-400}"
work="${2:-/tmp/ascprof-bench}"
build="${BUILD_DIR:-build}"
mkdir -p "$work"
if [ ! -f "$work/capture_$scale/ground_truth.json" ]; then
  "$build/ascprof-mpi" synth --scenario moe_mla_decode --ranks 1 --scale "$scale" --force -o "$work/capture_$scale" >/dev/null
fi
rank_dir=$(find "$work/capture_$scale" -maxdepth 1 -name '*_ascend_pt' | head -1)
csv="$rank_dir/ASCEND_PROFILER_OUTPUT/kernel_details.csv"
json="$rank_dir/ASCEND_PROFILER_OUTPUT/trace_view.json"
# Drop nothing from the page cache on purpose: figures are for warm-cache parsing (CPU cost).
cat "$csv" "$json" > /dev/null
{
  "$build/benchmarks/ingest_driver" csv "$csv"
  "$build/benchmarks/ingest_driver" json "$json"
  rm -rf "$work/out"
  "$build/benchmarks/ingest_driver" rank "$rank_dir" "$work/out"
} | tee "$work/ingest_results.json"
python3 - "$work/ingest_results.json" <<'PY' 2>/dev/null || true
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"{'what':28} {'MB':>9} {'MB/s':>8} {'Mrows/s':>8} {'peak RSS MB':>12} {'RSS/input':>9}")
for r in rows:
    print(f"{r['what']:28} {r['bytes']/1e6:9.1f} {r['mb_per_s']:8.1f} {r['rows_per_s']/1e6:8.2f} {r['peak_rss_bytes']/1e6:12.1f} {r['peak_rss_over_input']:9.3f}")
PY

#!/usr/bin/env bash
# Database vs text ingest on one generated rank (issue 19 targets): the same rank written as both
# exports (`synth --export both`, outside the timed region), then
#   - kernel_details.csv and trace_view.json importers (text path),
#   - the database importer: trace tables, then kernel rows (rows/s; target >= 2 M/s per process),
#   - the whole rank through every rank-local stage from each export (target: database >= 3x faster),
# each in its own process so peak RSS belongs to it (target for the database: <= 0.5 x its size).
#   benchmarks/run_db_ingest.sh [SCALE] [WORKDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
scale="${1:-300}"
work="${2:-/tmp/ascprof-bench-db}"
build="${BUILD_DIR:-build}"
mkdir -p "$work"
cap="$work/capture_both_$scale"
if [ ! -f "$cap/ground_truth.json" ]; then
  "$build/ascprof-mpi" synth --scenario moe_mla_decode --ranks 1 --scale "$scale" --export both --force -o "$cap" >/dev/null
fi
rank_dir=$(find "$cap" -maxdepth 1 -name '*_ascend_pt' | head -1)
apo="$rank_dir/ASCEND_PROFILER_OUTPUT"
db=$(find "$apo" -name 'ascend_pytorch_profiler*.db' | head -1)
cat "$apo"/* > /dev/null  # warm page cache: figures are for parsing (CPU), not the disk
{
  "$build/benchmarks/ingest_driver" csv "$apo/kernel_details.csv"
  "$build/benchmarks/ingest_driver" json "$apo/trace_view.json"
  "$build/benchmarks/ingest_driver" db "$db"
  # the same database without TASK_PMU_INFO (a capture without aic_metrics): the kernel join alone
  cp "$db" "$work/no_pmu.db" && sqlite3 "$work/no_pmu.db" "DROP TABLE TASK_PMU_INFO;"
  "$build/benchmarks/ingest_driver" db "$work/no_pmu.db" | sed 's/"profiler_db_/"no_pmu_db_/'
  rm -f "$work/no_pmu.db"
  rm -rf "$work/out_text" "$work/out_db"
  "$build/benchmarks/ingest_driver" rank "$rank_dir" "$work/out_text" text
  "$build/benchmarks/ingest_driver" rank "$rank_dir" "$work/out_db" db
} | tee "$work/db_ingest_results.json"
python3 - "$work/db_ingest_results.json" "$db" <<'PY' 2>/dev/null || true
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"{'what':24} {'MB':>9} {'s':>7} {'Mrows/s':>8} {'peak RSS MB':>12} {'RSS/input':>9}")
for r in rows:
    print(f"{r['what']:24} {r['bytes']/1e6:9.1f} {r['seconds']:7.2f} {r['rows_per_s']/1e6:8.2f} {r['peak_rss_bytes']/1e6:12.1f} {r['peak_rss_over_input']:9.3f}")
by = {r['what']: r for r in rows}
if 'rank_end_to_end' in by and 'rank_end_to_end_db' in by:
    t, d = by['rank_end_to_end'], by['rank_end_to_end_db']
    print(f"whole rank: text {t['seconds']:.2f} s, database {d['seconds']:.2f} s: {t['seconds']/d['seconds']:.2f}x; "
          f"ingest {t['ingest_seconds']:.2f} s vs {d['ingest_seconds']:.2f} s: {t['ingest_seconds']/d['ingest_seconds']:.2f}x")
    print(f"database rank peak RSS / database size: {d['peak_rss_bytes']/os.path.getsize(sys.argv[2]):.3f}")
PY

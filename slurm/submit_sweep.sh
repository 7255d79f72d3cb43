#!/bin/bash
# Submit a sharded sweep: a job array (one task per shard) and the rollup chained with afterok.
#   slurm/submit_sweep.sh [--shards K] [--max-parallel M] [--ntasks N] [--out DIR] [--log-dir DIR]
#                         [--sbatch-args "ARGS"] CONFIG.ini [-- extra sweep options]
# Prints `array_job_id=<id>` and `rollup_job_id=<id>` on stdout (progress text goes to stderr).
#   --shards K        array tasks 0..K-1, each a fixed 1/K of the roots (default 4)
#   --max-parallel M  at most M tasks run at once (`--array=0-(K-1)%M`; default K)
#   --ntasks N        MPI processes per task (default 1)
#   --out DIR         output folder; default: `out` from CONFIG
#   --log-dir DIR     where the Slurm logs go (default: the current folder)
#   --sbatch-args     extra sbatch options for both jobs, e.g. "--partition=cpu --account=prof"
# ASCPROF_MPI (the binary) is resolved here and exported to both jobs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shards=4 max_parallel="" ntasks=1 out="" log_dir="$PWD" sbatch_args=""
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit "${1:-2}"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --shards) shards="${2:?}"; shift 2 ;;
    --max-parallel) max_parallel="${2:?}"; shift 2 ;;
    --ntasks) ntasks="${2:?}"; shift 2 ;;
    --out) out="${2:?}"; shift 2 ;;
    --log-dir) log_dir="${2:?}"; shift 2 ;;
    --sbatch-args) sbatch_args="${2?}"; shift 2 ;;
    -h|--help) usage 0 ;;
    --) shift; break ;;
    -*) echo "submit_sweep: unknown option $1" >&2; usage ;;
    *) if [[ -z "${config:-}" ]]; then config="$1"; shift; else break; fi ;;
  esac
done
[[ -n "${config:-}" && -f "$config" ]] || { echo "submit_sweep: CONFIG.ini not given or not a file" >&2; usage; }
[[ "$shards" =~ ^[1-9][0-9]*$ && "$ntasks" =~ ^[1-9][0-9]*$ ]] || { echo "submit_sweep: --shards/--ntasks must be positive" >&2; exit 2; }
config=$(cd "$(dirname "$config")" && pwd)/$(basename "$config")

# The rollup needs OUT on its command line; take the last `out = ...` of the config unless given.
if [[ -z "$out" ]]; then
  out=$(sed -n -E 's/^[[:space:]]*out[[:space:]]*=[[:space:]]*(.*[^[:space:]])[[:space:]]*$/\1/p' "$config" | tail -n 1)
  [[ -n "$out" ]] || { echo "submit_sweep: no 'out = DIR' in $config; pass --out" >&2; exit 2; }
else
  set -- -o "$out" "$@"  # the command line wins over the config in the array tasks too
fi

# The jobs run a spooled copy of the sbatch scripts; resolve the binary now and hand it over.
if [[ -z "${ASCPROF_MPI:-}" ]]; then
  for c in "$here/../build/ascprof-mpi" "$here/../../../bin/ascprof-mpi"; do
    [[ -x "$c" ]] && { ASCPROF_MPI=$(cd "$(dirname "$c")" && pwd)/ascprof-mpi; break; }
  done
  ASCPROF_MPI="${ASCPROF_MPI:-$(command -v ascprof-mpi || true)}"
  [[ -n "$ASCPROF_MPI" ]] || { echo "submit_sweep: set ASCPROF_MPI to the ascprof-mpi binary" >&2; exit 2; }
fi
export ASCPROF_MPI
mkdir -p "$log_dir"

array_spec="0-$((shards - 1))${max_parallel:+%$max_parallel}"
# --parsable prints "jobid[;cluster]".
# shellcheck disable=SC2086  # sbatch_args is a list of options on purpose
array_id=$(sbatch --parsable $sbatch_args --array="$array_spec" --ntasks="$ntasks" \
  --output="$log_dir/ascprof-sweep-%A_%a.log" \
  "$here/sweep_array.sbatch" "$config" "$shards" "$@")
array_id=${array_id%%;*}
echo "submit_sweep: array job $array_id (--array=$array_spec, $ntasks process(es) per shard)" >&2
# afterok: merge only when every shard task succeeded (a task with some failed roots still succeeds).
# shellcheck disable=SC2086
rollup_id=$(sbatch --parsable $sbatch_args --dependency="afterok:$array_id" \
  --output="$log_dir/ascprof-rollup-%j.log" \
  "$here/sweep_rollup.sbatch" "$out")
rollup_id=${rollup_id%%;*}
echo "submit_sweep: rollup job $rollup_id after $array_id -> $out/sweep_summary.json" >&2
echo "array_job_id=$array_id"
echo "rollup_job_id=$rollup_id"

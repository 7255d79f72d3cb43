#!/usr/bin/env bash
# Proves slurm/*.sbatch on a real one-node Slurm cluster that this test starts and stops itself.
#   tests/slurm/slurm_sweep_test.sh BINARY WORKDIR
# Needs root (slurmd), Debian's slurm-wlm and munge; exits 77 (skip) when they are absent.
# Steps: start munged, slurmctld, slurmd on free ports with everything under WORKDIR; run
# slurm/analyze_root.sbatch on one root (2 MPI processes under srun); submit the sharded sweep (2-task
# array, 2 MPI processes per task, + chained rollup) with slurm/submit_sweep.sh over 4 generated roots; check the merged outputs; rerun a shard the way a
# requeued task would and check it reuses every root; requeue a finished array task through Slurm and
# check the same; stop analyze_root.sbatch jobs while ranks are in flight (scancel under srun, the
# time-limit warning of --signal=B:USR1 under srun, scancel under mpirun) and check each stops
# cleanly (status "interrupted", exit 5, no temporary file) and that the job submitted again reuses
# the finished ranks and writes what an uninterrupted run writes.
# Exit 0 pass, 1 fail, 77 skip. Daemons are stopped by PID on every exit.
# ASCPROF_SLURM_TEST_TIMEOUT (seconds, default 300) bounds all waits for jobs together, so the test
# ends (and stops its daemons) well inside a CTest TIMEOUT of 600.
# ASCPROF_SLURM_TEST_ANALYZE_ONLY=1 stops after the analyze job (for binaries without `sweep --shard`).
# shellcheck disable=SC2317  # cleanup and the polled predicates are called indirectly
set -uo pipefail

bin="${1:?usage: slurm_sweep_test.sh BINARY WORKDIR}"
work="${2:?usage: slurm_sweep_test.sh BINARY WORKDIR}"
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
job_budget="${ASCPROF_SLURM_TEST_TIMEOUT:-300}"
py=/usr/bin/python3

skip() { echo "SKIP: $*" >&2; exit 77; }
say() { echo "slurm_sweep_test: $*" >&2; }

for c in slurmctld slurmd munged mungekey sbatch squeue sinfo scontrol scancel srun; do
  command -v "$c" >/dev/null 2>&1 || skip "$c not installed (Debian: slurm-wlm munge)"
done
[[ "$(id -u)" -eq 0 ]] || skip "slurmd must run as root"
[[ -x "$py" ]] || skip "$py not found"
[[ -x "$bin" ]] || { echo "FAIL: $bin is not executable" >&2; exit 1; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

mkdir -p "$work"
work=$(cd "$work" && pwd)
# A fresh cluster every run: only our own subfolders of WORKDIR are removed.
rm -rf "${work:?}"/{etc,state,log,run,munge,spool,tmp,captures,out,analyze_out,jobs,joblogs} \
  "${work:?}"/{analyze_out,rerun}.result.json "${work:?}"/out.shard-*.result.json \
  "${work:?}"/{bigcap,interrupt_ref,interrupt_out} "${work:?}"/{interrupt_ref,interrupt_out}.result.json
mkdir -p "$work"/{etc,state,log,run,munge,tmp,captures,jobs,joblogs}
chmod 711 "$work/munge"  # munged wants its socket folder searchable by all

# Unix socket paths are limited to 107 bytes: with a deep WORKDIR the sockets (munge's, and slurmd's
# per-step sockets in SlurmdSpoolDir) go to a short private folder that the cleanup removes.
sock_dir="$work/munge"
spool_dir="$work/spool"
short_dir=""
if (( ${#work} > 60 )); then
  short_dir=$(mktemp -d /tmp/ascslurm.XXXXXX)
  sock_dir="$short_dir"
  spool_dir="$short_dir/spool"
fi
mkdir -p "$spool_dir"
munge_sock="$sock_dir/munge.socket"

pids=()            # daemons we started, in start order
slurm_up=0
export SLURM_CONF="$work/etc/slurm.conf"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

dump_logs() {
  for f in "$work"/log/*.log "$work"/joblogs/*.log "$work"/*.result.json; do
    [[ -f "$f" ]] || continue
    echo "----- $f (last 40 lines)" >&2
    tail -n 40 "$f" | cut -c1-300 >&2
  done
}

fail() {
  echo "FAIL: $*" >&2
  dump_logs
  exit 1
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if (( slurm_up )); then
    # Cancel leftovers first so slurmd can stop their steps before it goes away.
    local ids
    ids=$(timeout 10 squeue -h -o %A 2>/dev/null | tr '\n' ' ')
    if [[ -n "${ids// /}" ]]; then
      # shellcheck disable=SC2086
      timeout 10 scancel $ids 2>/dev/null
      for _ in $(seq 1 15); do
        [[ -z "$(timeout 5 squeue -h -o %A 2>/dev/null)" ]] && break
        sleep 1
      done
    fi
  fi
  # Stop in reverse start order: slurmd, slurmctld, munged.
  local i pid
  for (( i = ${#pids[@]} - 1; i >= 0; i-- )); do
    pid=${pids[i]}
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  [[ -n "$short_dir" ]] && rm -rf "$short_dir"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# wait_for SECONDS WHAT COMMAND...: poll COMMAND once a second until it succeeds.
wait_for() {
  local limit=$1 what=$2 t=0
  shift 2
  until "$@" >/dev/null 2>&1; do
    (( t++ >= limit )) && fail "timed out after ${limit}s waiting for $what"
    sleep 1
  done
}

# ---- configuration -------------------------------------------------------------------------------
host=$(hostname -s)
cpus=$(nproc)
mem_mb=$(awk '/^MemTotal:/ { print int($2 / 1024 * 0.9) }' /proc/meminfo)
read -r ctld_port slurmd_port < <("$py" - <<'EOF'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))
EOF
)
[[ -n "$slurmd_port" ]] || fail "could not pick free ports"
# Open MPI under srun needs Slurm's PMIx plugin; fall back to none where it is missing.
mpi_default=none
for f in /usr/lib/*/slurm-wlm/mpi_pmix.so /usr/lib/slurm/mpi_pmix.so /usr/lib64/slurm/mpi_pmix.so; do
  [[ -f "$f" ]] && mpi_default=pmix
done

cat > "$SLURM_CONF" <<EOF
# One-node test cluster written by tests/slurm/slurm_sweep_test.sh; everything lives under $work.
ClusterName=ascproftest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire also delays the restart of a requeued job; keep the requeue step short.
AuthInfo=socket=$munge_sock,cred_expire=10
StateSaveLocation=$work/state
SlurmdSpoolDir=$spool_dir
SlurmctldPidFile=$work/run/slurmctld.pid
SlurmdPidFile=$work/run/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
TmpFS=$work/tmp
# No cgroups in a container: track processes by parentage, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=$mpi_default
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# The host may report other sizes than the ones written here; trust this file.
SlurmdParameters=config_overrides
ReturnToService=2
# A rollup whose array failed is cancelled instead of pending forever.
DependencyParameters=kill_invalid_depend
# Finished jobs stay visible to scontrol for the checks.
MinJobAge=600
KillWait=5
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=60
MailProg=/bin/true
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

# ---- daemons ---------------------------------------------------------------------------------------
mungekey --create --keyfile="$work/munge/munge.key" --force >/dev/null 2>&1 \
  || dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
# --force: munged refuses root-owned folders it considers unsafe; they are private test folders here.
munged --foreground --force --key-file="$work/munge/munge.key" --socket="$munge_sock" \
  --pid-file="$work/run/munged.pid" --log-file="$work/log/munged.log" \
  --seed-file="$work/munge/munged.seed" > "$work/log/munged.out.log" 2>&1 &
pids+=($!)
wait_for 15 "munged socket" test -S "$munge_sock"
if command -v munge >/dev/null && command -v unmunge >/dev/null; then
  munge -n -S "$munge_sock" | unmunge -S "$munge_sock" >/dev/null || fail "munge credential round trip failed"
fi

slurmctld -D -c -f "$SLURM_CONF" > "$work/log/slurmctld.out.log" 2>&1 &
pids+=($!)
slurm_up=1
wait_for 30 "slurmctld to answer" scontrol ping
slurmd -D -f "$SLURM_CONF" > "$work/log/slurmd.out.log" 2>&1 &
pids+=($!)
node_idle() { [[ "$(sinfo -h -n "$host" -o %t 2>/dev/null)" == idle ]]; }
wait_for 60 "node $host to be idle" node_idle
say "cluster up: $host, $cpus CPUs, ${mem_mb} MB, ports $ctld_port/$slurmd_port, MpiDefault=$mpi_default"

# job_state ID: the state of a job (all array tasks' states for an array job id, one per line).
job_state() { scontrol show job -o "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
job_done() {
  local s
  s=$(job_state "$1")
  [[ -n "$s" ]] && ! grep -qvE '^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED)$' <<< "$s"
}
# wait_job ID WHAT: wait until every task of job ID ended, then require COMPLETED.
wait_job() {
  local bad
  until job_done "$1"; do
    if (( SECONDS >= job_deadline )); then
      scontrol show job "$1" >&2
      fail "timed out (${job_budget}s for all jobs) waiting for $2 (job $1; states: $(job_state "$1" | sort | uniq -c | xargs))"
    fi
    sleep 1
  done
  bad=$(job_state "$1" | grep -v '^COMPLETED$')
  [[ -z "$bad" ]] || { scontrol show job "$1" >&2; fail "$2 (job $1) ended $bad"; }
}

job_deadline=$((SECONDS + job_budget))

# ---- captures ----------------------------------------------------------------------------------------
# Four roots of uneven size, one nested deeper so discovery has to recurse.
roots=("$work/captures/case_a" "$work/captures/case_b" "$work/captures/case_c" "$work/captures/group/case_d")
ranks=(2 1 3 2)
steps=(2 3 2 4)
for i in "${!roots[@]}"; do
  "$bin" synth --scenario moe_mla_decode --ranks "${ranks[i]}" --steps "${steps[i]}" --seed "$((i + 1))" \
    -o "${roots[i]}" > /dev/null 2> "$work/log/synth.log" || fail "synth of ${roots[i]} failed"
done

# ---- 1. slurm/analyze_root.sbatch: one root, two MPI processes started by srun -------------------
# Submitted without ASCPROF_MPI, the script must find the binary itself (../build/ascprof-mpi next
# to the submitted script). A copy beside a build/ link to the binary under test checks that
# without touching the source tree, and runs this build's binary (the sanitizer one under
# scripts/test.sh) rather than whatever build/ holds.
mkdir -p "$work/tree/slurm" "$work/tree/build" || fail "cannot create $work/tree"
cp "$repo/slurm/analyze_root.sbatch" "$work/tree/slurm/" || fail "cannot copy analyze_root.sbatch"
ln -sfn "$bin" "$work/tree/build/ascprof-mpi" || fail "cannot link the binary"
cd "$work" || fail "cannot enter $work"
aid=$(env -u ASCPROF_MPI sbatch --parsable --ntasks=2 --output="$work/joblogs/analyze-%j.log" \
  "$work/tree/slurm/analyze_root.sbatch" "${roots[0]}" "$work/analyze_out" \
  --config "$repo/jobs/analyze_example.ini" --progress none) || fail "sbatch analyze_root.sbatch failed"
aid=${aid%%;*}
wait_job "$aid" "analyze_root.sbatch"
"$py" - "$work/analyze_out.result.json" <<'EOF' || fail "analyze_root.sbatch result is not ok"
import json, os, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "ok", r.get("status")
assert r["processes"] == 2, f"srun started {r['processes']} MPI process(es), not 2"
assert len(r["roots"]) == 1 and r["roots"][0]["status"] == "ok", r["roots"]
assert os.path.isfile(os.path.join(r["roots"][0]["out_dir"], "analysis.h5"))
EOF
say "analyze_root.sbatch: job $aid ok"

if [[ "${ASCPROF_SLURM_TEST_ANALYZE_ONLY:-0}" == 1 ]]; then
  say "PASS (analyze only, ASCPROF_SLURM_TEST_ANALYZE_ONLY=1)"
  exit 0
fi
[[ "$("$bin" --help 2>&1)" == *--shard* ]] || fail "$bin has no 'sweep --shard' (set ASCPROF_SLURM_TEST_ANALYZE_ONLY=1 to test only analyze)"

# ---- 2. sharded sweep: 2-task array (2 MPI processes each) + rollup chained with afterok ---------
cat > "$work/jobs/sweep.ini" <<EOF
search-root = $work/captures
out = $work/out
limit = 0
report-mode = summary
progress = none
EOF
submit_out=$(ASCPROF_MPI="$bin" "$repo/slurm/submit_sweep.sh" --shards 2 --max-parallel 2 --ntasks 2 \
  --log-dir "$work/joblogs" "$work/jobs/sweep.ini" 2> "$work/log/submit.log") \
  || { cat "$work/log/submit.log" >&2; fail "submit_sweep.sh failed"; }
array_id=$(sed -n 's/^array_job_id=//p' <<< "$submit_out")
rollup_id=$(sed -n 's/^rollup_job_id=//p' <<< "$submit_out")
[[ "$array_id" =~ ^[0-9]+$ && "$rollup_id" =~ ^[0-9]+$ ]] || fail "submit_sweep.sh printed: $submit_out"
[[ "$(scontrol show job -o "$rollup_id")" == *"Dependency=afterok:${array_id}"* ]] \
  || fail "rollup $rollup_id is not chained with afterok:$array_id"
say "submitted array $array_id and rollup $rollup_id"
wait_job "$array_id" "sweep array"
wait_job "$rollup_id" "sweep rollup"
[[ -f "$work/out/sweep_shards/shard-0-of-2.json" && -f "$work/out/sweep_shards/shard-1-of-2.json" ]] \
  || fail "missing shard files: $(ls "$work/out/sweep_shards" 2>&1)"
grep -q '"processes":2' "$work/joblogs/ascprof-sweep-${array_id}_0.log" \
  || fail "array task 0 did not run the sweep as 2 MPI processes under srun"

# check_sweep: every generated root is in sweep_summary.json with status ok and its outputs, and has
# exactly one row in sweep_class_rollup.csv.
check_sweep() {
  "$py" - "$work/out" "${roots[@]}" <<'EOF'
import csv, json, os, sys
out, roots = sys.argv[1], [os.path.realpath(r) for r in sys.argv[2:]]
summary = json.load(open(os.path.join(out, "sweep_summary.json")))
results = summary.get("results", summary.get("roots"))
assert isinstance(results, list), "sweep_summary.json has no results list"
by_root = {os.path.realpath(r["root"]): r for r in results}
assert sorted(by_root) == sorted(roots), f"roots in summary {sorted(by_root)} != generated {sorted(roots)}"
for root, r in by_root.items():
    assert r["status"] == "ok", f"{root}: status {r['status']} {r.get('error', '')}"
    rdir = r.get("output_dir", r.get("out_dir"))
    if not os.path.isabs(rdir):
        rdir = os.path.join(out, rdir) if os.path.isdir(os.path.join(out, rdir)) else os.path.abspath(rdir)
    for f in ("analysis.h5", "segment_manifest.json", "diagnosis_findings.json", "step_summary.csv",
              "report/report.md"):
        assert os.path.isfile(os.path.join(rdir, f)), f"{root}: missing {rdir}/{f}"
with open(os.path.join(out, "sweep_class_rollup.csv"), newline="") as fh:
    rows = list(csv.DictReader(fh))
assert len(rows) == len(roots), f"{len(rows)} rollup rows for {len(roots)} roots"
assert sorted(os.path.realpath(r["root"]) for r in rows) == sorted(roots), "rollup rows do not match roots"
assert all(r["status"] == "ok" for r in rows), [r["status"] for r in rows]
EOF
}
check_sweep || fail "merged sweep outputs are wrong"
say "sweep: array $array_id + rollup $rollup_id ok, ${#roots[@]} roots"

# snapshot: mtime and size of every per-root output file (OUT/<root>/...); a reused root must not
# change any. OUT's own files (the sweep's, the output marker and the locks every run takes) may.
snapshot() { find "$work/out" -mindepth 2 -path "$work/out/sweep_*" -prune -o -type f -printf '%p %T@ %s\n' | sort; }
snapshot > "$work/log/outputs.before"
[[ -s "$work/log/outputs.before" ]] || fail "no per-root outputs found"

# ---- 3. a requeued task reruns its shard: everything is reused ---------------------------------------
"$bin" sweep --config "$work/jobs/sweep.ini" --shard 0/2 --reuse-existing \
  > "$work/rerun.result.json" 2> "$work/log/rerun.log" || fail "rerun of shard 0/2 exited $?"
"$py" - "$work/rerun.result.json" <<'EOF' || fail "rerun of shard 0/2 did not report its roots as reused"
import json, sys
r = json.load(open(sys.argv[1]))
results = r.get("results", r.get("roots"))
assert results, "no results in the rerun's JSON"
for x in results:
    assert x.get("reused") is True or x.get("status") == "reused", x
EOF
snapshot > "$work/log/outputs.after-rerun"
diff "$work/log/outputs.before" "$work/log/outputs.after-rerun" >&2 || fail "the rerun rewrote finished outputs"
say "direct rerun of shard 0/2 reused every root"

# ---- 4. the same through Slurm: requeue a finished array task --------------------------------------
scontrol requeue "${array_id}_1" || fail "scontrol requeue ${array_id}_1 failed"
requeued() { [[ "$(scontrol show job -o "${array_id}_1")" == *Restarts=1* ]]; }
wait_for 30 "task ${array_id}_1 to be requeued" requeued
wait_job "${array_id}_1" "requeued task ${array_id}_1"
grep -q "restart 1" "$work/joblogs/ascprof-sweep-${array_id}_1.log" \
  || fail "the requeued task's log has no second attempt"
snapshot > "$work/log/outputs.after-requeue"
diff "$work/log/outputs.before" "$work/log/outputs.after-requeue" >&2 \
  || fail "the requeued task rewrote finished outputs"
check_sweep || fail "outputs wrong after the requeue"
say "requeued task ${array_id}_1 reused every root"

# ---- 5. a stopped analyze job resumes -----------------------------------------------------------------
# One root large enough that ranks are still in flight a moment after the first one finished
# (18 ranks). The stopped jobs run with ASCPROF_DEBUG_RANK_DELAY_MS=1000, a wait after each rank:
# a job keeps finishing ranks until its stop lands (scancel to the step takes up to seconds), and
# with ranks at full speed (~0.1 s each) the third job finished every rank before its stop. An uninterrupted run is
# the reference; then jobs into one OUT are stopped as soon as a further rank finished:
#   a. scancel (SIGCONT + SIGTERM to every process of the job, SIGKILL after KillWait) under srun;
#   b. the time-limit warning: `scancel --batch --signal=USR1` sends what --signal=B:USR1 sends, to the
#      batch shell only, which passes one SIGTERM to the tool's step;
#   c. scancel under mpirun, where process 0 writes the result file itself.
# Each must end with "status": "interrupted" (SIGTERM) in OUT.result.json, the finished ranks kept and
# no temporary file left; a and b with exit code 5 (c's shell is still waiting for mpirun, which
# sleeps through its odls_base_sigkill_timeout, when KillWait ends the job). Finally the same job
# runs to the end, reuses every finished rank and writes what the reference wrote.
big="$work/bigcap/cap"
big_ranks=18
"$bin" synth --scenario moe_mla_decode --ranks "$big_ranks" --steps 3 --scale 14 --seed 5 -o "$big" \
  > /dev/null 2>> "$work/log/synth.log" || fail "synth of $big failed"
# submit_big OUT NAME [VAR=VALUE...]: analyze_root.sbatch on $big with 2 processes; prints the job id.
submit_big() {
  local out=$1 name=$2 id
  shift 2
  id=$(env ASCPROF_MPI="$bin" "$@" sbatch --parsable --ntasks=2 --output="$work/joblogs/$name-%j.log" \
    "$repo/slurm/analyze_root.sbatch" "$big" "$out" --config "$repo/jobs/analyze_example.ini") || return 1
  echo "${id%%;*}"
}
# wait_end ID WHAT: wait until job ID ended, whatever its state.
wait_end() {
  until job_done "$1"; do
    (( SECONDS < job_deadline )) || fail "timed out (${job_budget}s for all jobs) waiting for $2 (job $1)"
    sleep 0.2
  done
}
ref_id=$(submit_big "$work/interrupt_ref" reference) || fail "sbatch of the reference run failed"
wait_job "$ref_id" "the uninterrupted reference run"
grep -q '"status":"ok"' "$work/interrupt_ref.result.json" || fail "the reference run is not ok"

iout="$work/interrupt_out"
finished() { find "$iout" -path '*/ranks/*.parts' 2> /dev/null | wc -l; }  # a rank's last write: its checkpoint
# stop_round NAME HOW [VAR=VALUE...]: submit into $iout, wait until one more rank finished than
# before, stop the job (HOW = cancel | warn), check what the stop left.
stop_round() {
  local name=$1 how=$2 id before t0=$SECONDS state tmps
  shift 2
  before=$(finished)
  id=$(submit_big "$iout" "$name" "$@") || fail "sbatch of $name failed"
  until (( $(finished) > before )); do
    job_done "$id" && fail "$name (job $id) ended before it could be stopped: $(job_state "$id")"
    (( SECONDS < job_deadline )) || fail "timed out waiting for a rank of $name (job $id) to finish"
    sleep 0.2
  done
  stopped_at=$(finished)
  case "$how" in
    cancel) scancel "$id" ;;
    warn) scancel --batch --signal=USR1 "$id" ;;
  esac || fail "could not signal $name (job $id)"
  wait_end "$id" "$name"
  state=$(scontrol show job -o "$id" | grep -o -E 'JobState=[A-Z_]+|ExitCode=[0-9:]+' | xargs)
  say "$name: job $id stopped ($how) with $stopped_at rank(s) finished, $((SECONDS - t0)) s; $state"
  if [[ "$how" == cancel ]]; then
    [[ "$state" == JobState=CANCELLED* ]] || fail "$name (job $id) ended $state"
  else
    [[ "$state" == JobState=FAILED* ]] || fail "$name (job $id) ended $state"
  fi
  [[ "$*" == *ASCPROF_LAUNCHER=mpirun* || "$state" == *ExitCode=5:0 ]] \
    || fail "$name (job $id): the batch script did not exit 5 ($state)"
  "$py" - "$iout.result.json" "$stopped_at" "$big_ranks" <<'PYEOF' || fail "$name (job $id) did not stop cleanly"
import json, sys
r = json.load(open(sys.argv[1]))
at, total = int(sys.argv[2]), int(sys.argv[3])
assert r["status"] == "interrupted" and r["signal"] == "SIGTERM", (r.get("status"), r.get("signal"), r.get("error"))
done, not_done = r["ranks_done_count"], r["ranks_not_done_count"]
assert r.get("ranks_failed_count", 0) == 0, r.get("ranks_failed")
assert done + not_done == total, f"{done} done + {not_done} not done != {total} ranks"
assert done >= at, f"{at} ranks had finished before the stop, the result lists {done} done"
print(f"  stage {r.get('stage')}: {done} ranks done, {not_done} not done", file=sys.stderr)
PYEOF
  tmps=$(find "$iout" -name '*.tmp.*')
  [[ -z "$tmps" ]] || fail "$name (job $id) left temporary files: $tmps"
}
stop_round stopped_scancel cancel ASCPROF_DEBUG_RANK_DELAY_MS=1000
stop_round stopped_warning warn ASCPROF_DEBUG_RANK_DELAY_MS=1000
if command -v mpirun > /dev/null; then
  stop_round stopped_mpirun cancel ASCPROF_DEBUG_RANK_DELAY_MS=1000 ASCPROF_LAUNCHER=mpirun
fi
res_id=$(submit_big "$iout" resumed) || fail "sbatch of the resumed run failed"
wait_job "$res_id" "the resumed run"
"$py" - "$work/interrupt_ref.result.json" "$iout.result.json" "$stopped_at" "$work/interrupt_ref" "$iout" <<'PYEOF' \
  || fail "the resumed run differs from the uninterrupted one"
import json, os, pathlib, sys
ref, res = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
at = int(sys.argv[3])
assert res["status"] == "ok", res.get("status")
assert res["ranks_reused"] >= at, f"{at} ranks were finished, the resumed run reused {res['ranks_reused']}"
def root_dir(r, out):
    d = r["roots"][0]["out_dir"]
    return pathlib.Path(d if os.path.isabs(d) else os.path.join(out, d))
a, b = root_dir(ref, sys.argv[4]), root_dir(res, sys.argv[5])
def tables(d):  # what a user reads; report/manifest.json holds its own folder's path
    return sorted(str(f.relative_to(d)) for f in d.rglob("*") if f.is_file()
                  and f.suffix in (".csv", ".json", ".jsonl", ".md") and ".tmp." not in f.name)
assert tables(a) == tables(b), f"other files than the reference: {sorted(set(tables(a)) ^ set(tables(b)))}"
import re
def own(d, f):  # the file with its run's folder written as the resumed run's (manifests hold output_dir) and
    # the report_id (a hash of the folder, quoted by manifest.json from the report's) blanked
    text = (d / f).read_bytes().replace(bytes(a), bytes(b))
    return re.sub(rb'"report_id": "[^"]*"', b'"report_id": ""', text)
differ = [f for f in tables(a) if f != "report/manifest.json" and own(a, f) != own(b, f)]
assert not differ, f"differ from the uninterrupted run: {differ}"
print(f"  resumed: {res['ranks_reused']} ranks reused, {len(tables(a))} files equal the reference", file=sys.stderr)
PYEOF
say "stopped analyze jobs resumed: outputs equal the uninterrupted run's"
rm -rf "${work:?}"/{bigcap,interrupt_ref,interrupt_out}  # ~1 GB

say "PASS"
exit 0

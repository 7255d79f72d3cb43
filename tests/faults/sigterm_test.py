#!/usr/bin/env python3
"""SIGTERM and SIGINT stop a run cleanly (issue 24): Slurm sends SIGTERM at the time limit and on
scancel, a user presses Ctrl-C. At several points, with 1 process and under `mpirun -np 2`, the run
must end within seconds with stdout status "interrupted" and exit code 5, list the ranks done and
not done, leave no temporary file, and a rerun into the same OUT must reuse every finished rank and
give outputs equal to an uninterrupted run's.

Cases:
  one process, SIGTERM after the first finished rank          (rank phase)
  one process, SIGINT as the last rank finishes               (root outputs or report: whichever the
                                                               signal finds; a run already over is
                                                               reported, not counted as a pass)
  mpirun -np 2, SIGTERM to every process of the job and mpirun (as Slurm signals a job step)
  mpirun -np 2, SIGTERM to one process only                   (the other learns it in-band)

usage: sigterm_test.py ASCPROF_MPI WORK_DIR      (exit 0 pass, 1 fail; mpirun cases skipped without mpirun)
Python standard library only.
"""
import json
import os
import re
import pathlib
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "resume"))
from kill_resume_test import compared_files  # noqa: E402  the files a user reads, compared the same way

RANKS = 8
STOP_WITHIN_S = 30  # generous for the sanitizer build; the Release build stops in about 1 s


def alive(pid):
    """The process exists and is not a zombie. (It may end between any two looks: reading its
    /proc/<pid>/stat then fails with ProcessLookupError or FileNotFoundError, which means gone.)"""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return not f.read().split(") ")[-1].startswith("Z")
    except OSError:
        return False


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def own_folder(run_root, as_root, f):
    """A file's bytes with the run's output folder written as another's, and the report_id (a hash of
    the folder, quoted in manifest.json from the report's manifest) blanked."""
    text = (run_root / f).read_bytes().replace(bytes(run_root), bytes(as_root))
    return re.sub(rb'"report_id": "[^"]*"', b'"report_id": ""', text)


def temp_files(out):
    return sorted(str(f) for f in pathlib.Path(out).rglob("*") if ".tmp." in f.name)


def command(exe, cap, out, np_):
    base = [exe, "analyze", str(cap), "-o", str(out), "--progress", "json"]
    return (["mpirun", "-np", str(np_)] + base) if np_ > 1 else base


def job_pids(launcher_pid, exe):
    """The ascprof-mpi processes started by this test's job (children of mpirun or the process itself)."""
    out = subprocess.run(["pgrep", "-f", "-s", str(os.getpgid(launcher_pid)), os.path.basename(exe) + " analyze"],
                         capture_output=True, text=True).stdout.split()
    return [int(p) for p in out if int(p) != launcher_pid]


def run_and_signal(exe, cap, out, env, np_, after_ranks, sig, targets):
    """Starts the run, waits for `after_ranks` finished ranks, sends `sig` to `targets` ("all", "one",
    "self"), and returns (returncode, stdout JSON or None, seconds from signal to exit)."""
    p = subprocess.Popen(command(exe, cap, out, np_), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    # the job's processes are looked up before the ranks are counted, so the signal follows the
    # counted rank at once: a pgrep after it took long enough on a loaded CI machine for every
    # rank to finish first (the signal then found the run past its rank phase)
    procs = []
    if targets != "self":
        deadline = time.time() + 60
        while len(procs) < np_ and time.time() < deadline and p.poll() is None:
            procs = job_pids(p.pid, exe)
            time.sleep(0.01)
        if len(procs) < np_:
            p.kill()
            fail("found %d of %d ascprof-mpi processes under mpirun %d" % (len(procs), np_, p.pid))
    done = 0
    deadline = time.time() + 300
    while done < after_ranks and time.time() < deadline:
        line = p.stderr.readline()
        if not line:
            break
        if '"phase":"rank_done"' in line:
            done += 1
    if done < after_ranks:
        p.kill()
        fail("the run ended or stalled after %d of %d ranks before the signal" % (done, after_ranks))
    if targets == "self":
        victims = procs = [p.pid]
    else:
        victims = procs + [p.pid] if targets == "all" else [sorted(procs)[-1]]
    t0 = time.time()
    for v in victims:
        try:
            os.kill(v, sig)
        except ProcessLookupError:
            pass
    # the time that counts is until the tool's processes are gone; mpirun itself lingers for its
    # odls_base_sigkill_timeout after a SIGTERM of its own, whatever its processes do
    while any(alive(q) for q in procs if q != p.pid or targets == "self"):
        if time.time() - t0 > STOP_WITHIN_S:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            fail("the run did not stop within %d s of the signal" % STOP_WITHIN_S)
        time.sleep(0.05)
    took = time.time() - t0
    try:
        stdout, _ = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        fail("mpirun did not end within 60 s after its processes had")
    try:
        result = json.loads(stdout)
    except ValueError:
        result = None
    return p.returncode, result, took


def rerun_equals(exe, cap, out, env, ref_root, expect_reused, label):
    p = subprocess.run(command(exe, cap, out, 1), env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        fail("%s: rerun exited %d: %s" % (label, p.returncode, p.stderr[-2000:]))
    result = json.loads(p.stdout)
    if result["ranks_reused"] != expect_reused:
        fail("%s: rerun reused %d ranks, the interrupted run had finished %d" % (label, result["ranks_reused"], expect_reused))
    root = pathlib.Path(result["roots"][0]["out_dir"])
    files = compared_files(ref_root)
    if compared_files(root) != files:
        fail("%s: other files than the uninterrupted run: %s" % (label, sorted(set(compared_files(root)) ^ set(files))))
    for f in files:
        if f == "report/manifest.json":
            continue  # holds its own folder's path in report_id
        # the same bytes, apart from each run's own output folder (the manifests' output_dir)
        if own_folder(ref_root, root, f) != own_folder(root, root, f):
            fail("%s: %s differs from the uninterrupted run" % (label, f))
    if temp_files(out):
        fail("%s: temporary files after the rerun: %s" % (label, temp_files(out)[:5]))


def check_interrupted(label, rc, result, took, out, np_, sig_name, expect_rc=True):
    if expect_rc and rc != 5:
        fail("%s: exit code %d, expected 5 (interrupted)" % (label, rc))
    if result is None:
        fail("%s: no JSON object on stdout" % label)
    if result.get("status") != "interrupted" or result.get("signal") != sig_name:
        fail("%s: status %s signal %s, expected interrupted by %s" % (label, result.get("status"), result.get("signal"), sig_name))
    total = result["ranks_done_count"] + result["ranks_not_done_count"] + result["ranks_failed_count"]
    if total != RANKS or result["ranks_failed_count"] != 0:
        fail("%s: ranks done/not done/failed %d/%d/%d of %d" % (label, result["ranks_done_count"],
             result["ranks_not_done_count"], result["ranks_failed_count"], RANKS))
    if len(result["ranks_done"]) != result["ranks_done_count"]:
        fail("%s: ranks_done lists %d, counts %d" % (label, len(result["ranks_done"]), result["ranks_done_count"]))
    outcomes = list(pathlib.Path(out).rglob("ranks/*.parts"))  # a rank's last write, holding its checkpoint
    if len(outcomes) != result["ranks_done_count"]:
        fail("%s: %d checkpoints on disk, %d ranks said done" % (label, len(outcomes), result["ranks_done_count"]))
    leftovers = temp_files(out)
    if leftovers:
        fail("%s: temporary files left: %s" % (label, leftovers[:5]))
    print("%s: stopped in %.1f s at stage %s, %d of %d ranks done, exit %d" %
          (label, took, result["stage"], result["ranks_done_count"], RANKS, rc), file=sys.stderr)
    return result["ranks_done_count"]


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    exe, work = os.path.abspath(sys.argv[1]), pathlib.Path(sys.argv[2]).resolve()
    # mpirun relays a SIGTERM it receives to its processes and SIGKILLs them after
    # odls_base_sigkill_timeout seconds (default 1): the Slurm scripts raise it, so does this test
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_odls_base_sigkill_timeout="5")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cap = work / "cap"
    subprocess.run([exe, "synth", "--scenario", "moe_mla_decode", "--ranks", str(RANKS), "--steps", "3", "--scale", "4",
                    "-o", str(cap)], env=env, check=True, capture_output=True)
    ref = subprocess.run(command(exe, cap, work / "reference", 1), env=env, capture_output=True, text=True, timeout=600)
    if ref.returncode != 0:
        fail("uninterrupted run exited %d: %s" % (ref.returncode, ref.stderr[-2000:]))
    ref_root = pathlib.Path(json.loads(ref.stdout)["roots"][0]["out_dir"])

    # 1. one process, SIGTERM in the rank phase
    out = work / "one_term"
    rc, result, took = run_and_signal(exe, cap, out, env, 1, 1, signal.SIGTERM, "self")
    done = check_interrupted("one process, SIGTERM after 1 rank", rc, result, took, out, 1, "SIGTERM")
    if result["stage"] != "rank_jobs" or done == RANKS:
        fail("one process, SIGTERM after 1 rank: stopped at %s with %d ranks done" % (result["stage"], done))
    rerun_equals(exe, cap, out, env, ref_root, done, "one process, SIGTERM")

    # 2. one process, SIGINT as the last rank finishes: the root-level stages
    out = work / "one_int_late"
    rc, result, took = run_and_signal(exe, cap, out, env, 1, RANKS, signal.SIGINT, "self")
    if result is not None and result.get("status") == "ok" and rc == 0:
        print("one process, SIGINT after the last rank: the run was over before the signal (not counted)", file=sys.stderr)
    else:
        done = check_interrupted("one process, SIGINT after the last rank", rc, result, took, out, 1, "SIGINT")
        if result["stage"] not in ("rank_jobs", "root_outputs", "report"):
            fail("unexpected stage %s" % result["stage"])
        if list(pathlib.Path(out).rglob("report/manifest.json")):
            fail("an interrupted report stage wrote a manifest (a sweep would take the root as finished)")
        rerun_equals(exe, cap, out, env, ref_root, done, "one process, SIGINT late")

    if not shutil.which("mpirun"):
        print("SKIP (mpirun cases): no mpirun", file=sys.stderr)
        return 0
    # 3. as Slurm does: every process of the step and mpirun get SIGTERM
    out = work / "mpi_all"
    rc, result, took = run_and_signal(exe, cap, out, env, 2, 2, signal.SIGTERM, "all")
    done = check_interrupted("mpirun -np 2, SIGTERM to the job", rc, result, took, out, 2, "SIGTERM", expect_rc=False)
    rerun_equals(exe, cap, out, env, ref_root, done, "mpirun, SIGTERM to the job")

    # 4. one process of two is signalled: the other stops too
    out = work / "mpi_one"
    rc, result, took = run_and_signal(exe, cap, out, env, 2, 1, signal.SIGTERM, "one")
    done = check_interrupted("mpirun -np 2, SIGTERM to one process", rc, result, took, out, 2, "SIGTERM")
    if done == RANKS:
        fail("mpirun -np 2, SIGTERM to one process: every rank finished, the other process did not stop")
    rerun_equals(exe, cap, out, env, ref_root, done, "mpirun, SIGTERM to one process")
    return 0


if __name__ == "__main__":
    sys.exit(main())

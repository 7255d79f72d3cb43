#!/usr/bin/env python3
"""Crash safety of rank checkpoints: kill -9 a running `mpirun -np 2 ascprof-mpi analyze` (the whole
job at several points, and one of its processes once), rerun it, and check that the final outputs equal those of an uninterrupted run and that ranks
finished before the kill were taken from their checkpoints instead of being redone.

usage: kill_resume_test.py ASCPROF_MPI WORK_DIR      (exit 0 pass, 1 fail, 77 skip: no mpirun)
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

RANKS = 10


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def analyze_cmd(exe, cap, out, np_=2):
    return ["mpirun", "-np", str(np_), exe, "analyze", str(cap), "-o", str(out), "--progress", "json"]


def run_to_end(exe, cap, out, env):
    p = subprocess.run(analyze_cmd(exe, cap, out), env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        fail("analyze exited %d: %s" % (p.returncode, p.stderr[-2000:]))
    return json.loads(p.stdout)


def run_and_kill(exe, cap, out, env, after_ranks):
    """Starts the job, kills the whole process group with SIGKILL once `after_ranks` ranks are done."""
    p = subprocess.Popen(analyze_cmd(exe, cap, out), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    done = 0
    deadline = time.time() + 300
    while done < after_ranks and time.time() < deadline:
        line = p.stderr.readline()
        if not line:
            break
        if '"phase":"rank_done"' in line:
            done += 1
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    return done


def run_and_kill_one(exe, cap, out, env, after_ranks):
    """Kills one ascprof-mpi process (not mpirun) with SIGKILL once `after_ranks` ranks are done;
    mpirun then aborts the job. Returns the ranks done before the kill."""
    p = subprocess.Popen(analyze_cmd(exe, cap, out), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    done = 0
    deadline = time.time() + 300
    while done < after_ranks and time.time() < deadline:
        line = p.stderr.readline()
        if not line:
            break
        if '"phase":"rank_done"' in line:
            done += 1
    victims = subprocess.run(["pgrep", "-f", "-g", str(p.pid), "ascprof-mpi analyze"], capture_output=True, text=True)
    pids = [int(x) for x in victims.stdout.split() if int(x) != p.pid]
    if not pids:
        os.killpg(p.pid, signal.SIGKILL)
    else:
        os.kill(pids[-1], signal.SIGKILL)
    try:
        p.wait(timeout=60)  # mpirun notices the dead process and ends the job
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        fail("mpirun did not end the job within 60 s after one process was killed")
    return done


def compared_files(root):
    """The root's tables and manifests (the files a user reads); HDF5 files are compared by h5diff elsewhere."""
    return sorted(str(f.relative_to(root)) for f in root.rglob("*")
                  if f.is_file() and f.suffix in (".csv", ".json", ".jsonl", ".md") and ".tmp." not in f.name)


def same_but_folder(ref_root, root, f):
    """The file is the same in both runs, apart from each run's own output folder: the manifests'
    output_dir, and the report_id (a hash of the folder) that manifest.json quotes from the report's."""
    def own(text):
        return re.sub(rb'"report_id": "[^"]*"', b'"report_id": ""', text)
    return own((ref_root / f).read_bytes().replace(bytes(ref_root), bytes(root))) == own((root / f).read_bytes())


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    exe, work = sys.argv[1], pathlib.Path(sys.argv[2]).resolve()
    if not shutil.which("mpirun"):
        print("SKIP: no mpirun", file=sys.stderr)
        return 77
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cap = work / "cap"
    subprocess.run([exe, "synth", "--scenario", "moe_mla_decode", "--ranks", str(RANKS), "--steps", "3", "--scale", "3",
                    "-o", str(cap)], env=env, check=True, capture_output=True)
    ref = run_to_end(exe, cap, work / "reference", env)
    ref_root = pathlib.Path(ref["roots"][0]["out_dir"])
    for after, one in ((0, False), (3, False), (7, False), (5, True)):
        out = work / ("killed_after_%d%s" % (after, "_one_process" if one else ""))
        done = (run_and_kill_one if one else run_and_kill)(exe, cap, out, env, after)
        # nothing half-written is ever taken: temporary files may remain, finished files are whole
        result = run_to_end(exe, cap, out, env)
        if result["status"] != "ok":
            fail("rerun after a kill at %d ranks: status %s" % (after, result["status"]))
        reused = result["ranks_reused"]
        if reused < done:
            fail("kill after %d finished ranks: only %d were reused on the rerun" % (done, reused))
        root = pathlib.Path(result["roots"][0]["out_dir"])
        files = compared_files(ref_root)
        if compared_files(root) != files:
            fail("kill at %d: other files than the uninterrupted run: %s" %
                 (after, sorted(set(compared_files(root)) ^ set(files))))
        for f in files:
            if f == "report/manifest.json":
                continue  # holds its own folder's path in report_id
            if not same_but_folder(ref_root, root, f):
                fail("kill at %d: %s differs from the uninterrupted run" % (after, f))
        print("killed %s after %d finished ranks; rerun reused %d of %d; outputs identical" %
              ("one process" if one else "the job", done, reused, RANKS), file=sys.stderr)
    # a changed input redoes exactly that rank
    first_rank = sorted(cap.glob("*_ascend_pt"))[0] / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    os.utime(first_rank, None)
    again = run_to_end(exe, cap, work / "killed_after_7", env)
    if again["ranks_reused"] != RANKS - 1:
        fail("after touching one rank's kernel_details.csv: %d reused, expected %d" % (again["ranks_reused"], RANKS - 1))
    print("touched input: %d of %d ranks reused" % (again["ranks_reused"], RANKS), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

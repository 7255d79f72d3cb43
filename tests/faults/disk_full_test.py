#!/usr/bin/python3
"""Write failures end to end: a full disk, an unwritable checkpoint or rollup, stale temporary files
and the OUT lock, through the real CLI.

Cases (one summary line each on stdout, details on stderr):
  1  disk full (ENOSPC) on a real small tmpfs the test mounts, sized from a reference run's bytes so
     that it fills (a) while the rank files are written (ranks/<id>.h5, ranks/<id>.parts), (b) while
     the root-level tables are written after every rank finished, (c) while report/ is written; each
     with 1 process, (a) also under `mpirun -np 2`. Each run: no signal death, exit 1 or 3, one valid
     JSON object on stdout, an error naming a file at the intended place and "No space left on
     device", no *.tmp.* file left under OUT, finished ranks keep ranks/<id>.parts (which holds the
     checkpoint) + ranks/<id>.h5.
     Then the tmpfs is grown and the run repeated: status ok, ranks_reused == the checkpoints left,
     every CSV/JSON/JSONL/MD output equal to the uninterrupted reference run's.
     Without mount rights (not root, no CAP_SYS_ADMIN) the same points are made with a per-file size
     limit (RLIMIT_FSIZE, "File too large") chosen from the reference's file sizes: (a) below the rank
     HDF5 size, (b) and (c) on an OUT whose ranks finished in an earlier run (root tables / report
     removed; (c) with --from-stage report). The summary line says which mode ran.
     ASCPROF_DISK_FULL_MODE=fsize forces the fallback.
  2  a rank whose part pack (its root-table rows and checkpoint) cannot be put in place (a non-empty
     directory planted at ranks/<id>.parts): that rank fails naming the file, every other rank is
     analysed, no HDF5 file is left without its pack; with the directory gone the rerun reuses the
     other ranks, redoes that one and equals the reference.
  3  the sweep rollup failing (a non-empty directory planted at OUT/sweep_class_rollup.csv), in a
     sweep and in `sweep --rollup`: no crash, non-zero exit, status not ok, an error naming the file,
     no temporary file; with the directory gone both succeed.
  4  stale temporary files NAME.tmp.HOST.PID in OUT/<slug>/ and OUT/<slug>/ranks/: the ones of a dead
     pid are removed, the ones of a live pid kept, stderr names both; once that pid is gone they go too.
  5  the OUT lock: a second analyze into an OUT a live (stopped) run holds exits 2 / out_locked naming
     the holder's pid; after SIGKILL of the holder the next run proceeds. Sweep shards 0/2 and 1/2 run
     concurrently into one OUT (both exit 0), a second copy of a live shard is refused (out_locked),
     and `sweep --rollup` merges them.

usage: disk_full_test.py ASCPROF_MPI WORK_DIR     (exit 0 pass, 1 fail, 77 skip: nothing could run)
Python standard library only; every input is generated with `ascprof-mpi synth`.
"""
import json
import os
import pathlib
import queue
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback

RANKS = 4                    # the disk-full capture: small, so every run takes well under a second
LOCK_RANKS = 12              # the lock capture: enough ranks that a stopped run is still in its rank phase
TIMEOUT_S = 240              # one CLI run (a hang fails the case); ASan builds run ~5x slower
ENOSPC = "No space left on device"
EFBIG = "File too large"


class SkipCase(Exception):
    pass


class Case:
    def __init__(self, key, title):
        self.key, self.title, self.failures, self.notes = key, title, [], []

    def check(self, cond, msg):
        if not cond:
            self.failures.append(msg)
        return cond

    def note(self, msg):
        self.notes.append(msg)


RESULTS = []


def run_case(key, title, fn, *args):
    c = Case(key, title)
    t0 = time.time()
    status = "PASS"
    try:
        fn(c, *args)
    except SkipCase as s:
        status = "SKIP"
        c.note(str(s))
    except Exception:  # a bug in the test or an unexpected output shape: the case fails, the rest runs
        c.failures.append("unexpected exception:\n" + traceback.format_exc())
    if c.failures:
        status = "FAIL"
    seconds = time.time() - t0
    RESULTS.append((key, status, seconds))
    line = "%-4s %-3s %s (%.1f s)" % (status, key, title, seconds)
    if c.notes:
        line += ": " + "; ".join(c.notes)
    print(line, flush=True)
    for f in c.failures:
        print("FAIL: %s %s: %s" % (key, title, f), file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------
# running the CLI

class Run:
    def __init__(self, cmd, rc, out, err, seconds, timed_out):
        self.cmd, self.rc, self.out, self.err, self.seconds, self.timed_out = cmd, rc, out, err, seconds, timed_out

    def json(self):
        try:
            j = json.loads(self.out)
        except ValueError:
            return None
        return j if isinstance(j, dict) else None

    def crashed(self):
        """Signal death of the process, or (under mpirun) of one of its processes."""
        return (self.timed_out or self.rc < 0 or self.rc >= 128 or "exited on signal" in self.err
                or "received signal" in self.err or "Segmentation fault" in self.err)

    def describe(self):
        crash = [l.strip() for l in self.err.splitlines()
                 if re.search(r"Signal:|exited on signal|libhdf5|Segmentation fault", l)][:8]
        return "`%s` exited %d%s; stdout: %s; %sstderr tail: %s" % (
            " ".join(str(x) for x in self.cmd), self.rc, " (timed out)" if self.timed_out else "",
            self.out[:600].strip(), ("crash: %s; " % " | ".join(crash)) if crash else "", self.err[-1200:].strip())


def killpg_quiet(pgid, sig=signal.SIGKILL):
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run(cmd, env, timeout=TIMEOUT_S, preexec_fn=None):
    """Runs cmd in its own process group; returns Run (rc negative = signal)."""
    t0 = time.time()
    p = subprocess.Popen([str(x) for x in cmd], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, errors="replace", start_new_session=True, preexec_fn=preexec_fn)
    timed_out = False
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        killpg_quiet(p.pid)
        out, err = p.communicate()
    killpg_quiet(p.pid)  # leave no stray process of the group behind (mpirun's children after an abort)
    return Run(cmd, p.returncode, out, err, time.time() - t0, timed_out)


class Background:
    """A CLI run in its own process group whose stderr lines are read by a thread (so waiting for a
    line has a deadline and the pipe never fills)."""

    def __init__(self, cmd, env):
        self.cmd = [str(x) for x in cmd]
        self.p = subprocess.Popen(self.cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  errors="replace", start_new_session=True)
        self.lines = queue.Queue()
        self.err_lines = []
        self.out = []
        threading.Thread(target=self._read_err, daemon=True).start()
        threading.Thread(target=lambda: self.out.append(self.p.stdout.read()), daemon=True).start()

    def _read_err(self):
        for line in self.p.stderr:
            self.err_lines.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, needle, timeout=TIMEOUT_S):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                line = self.lines.get(timeout=max(0.05, deadline - time.time()))
            except queue.Empty:
                break
            if line is None:
                return False
            if needle in line:
                return True
        return False

    def signal(self, sig):
        killpg_quiet(self.p.pid, sig)

    def finish(self, timeout=TIMEOUT_S):
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.signal(signal.SIGKILL)
            self.p.wait()
        time.sleep(0.05)
        killpg_quiet(self.p.pid)
        return self.p.returncode

    def stdout(self):
        for _ in range(100):
            if self.out:
                return self.out[0]
            time.sleep(0.02)
        return ""


# ---------------------------------------------------------------------------------------------------
# outputs

def compared_files(root):
    """The root's tables and manifests (the files a user reads), as kill_resume_test.py compares them."""
    return sorted(str(f.relative_to(root)) for f in root.rglob("*")
                  if f.is_file() and f.suffix in (".csv", ".json", ".jsonl", ".md") and ".tmp." not in f.name)


def differences(root, ref_root):
    files = compared_files(ref_root)
    got = compared_files(root)
    if got != files:
        return ["other files than the uninterrupted run: %s" % sorted(set(got) ^ set(files))]
    out = []
    for f in files:
        if f == "report/manifest.json":
            continue  # holds its own folder's path in report_id
        # the same bytes, apart from each run's own output folder (the manifests' output_dir)
        if own_folder(ref_root, root, f) != own_folder(root, root, f):
            out.append("%s differs from the uninterrupted run" % f)
    return out


def own_folder(run_root, as_root, f):
    """A file's bytes with the run's output folder written as another's, and the report_id (a hash of
    the folder, quoted in manifest.json from the report's manifest) blanked."""
    text = (run_root / f).read_bytes().replace(bytes(run_root), bytes(as_root))
    return re.sub(rb'"report_id": "[^"]*"', b'"report_id": ""', text)


def temp_files(out):
    return sorted(str(f) for f in pathlib.Path(out).rglob("*") if ".tmp." in f.name)


def outcome_ids(root):
    """The ranks with a checkpoint: a part pack (its last write, holding the record) in ranks/."""
    d = root / "ranks"
    return sorted(f.name[:-len(".parts")] for f in d.glob("*.parts") if f.is_file()) if d.is_dir() else []


def error_texts(j):
    """Every error string of a stdout JSON object: top-level error, roots[].error, roots[].failed_ranks."""
    texts = []
    if not j:
        return texts
    if isinstance(j.get("error"), str):
        texts.append(j["error"])
    for r in j.get("roots") or []:
        if isinstance(r.get("error"), str) and r["error"]:
            texts.append(r["error"])
        texts.extend(x for x in r.get("failed_ranks") or [] if isinstance(x, str))
    return texts


def place_of(text, slug):
    """Where in OUT/<slug>/ the file a message names lies: 'ranks', 'report' or 'root' (None: no path)."""
    m = re.search(re.escape(slug) + r"/([^\s:'\"]+)", text)
    if not m:
        return None, None
    rel = re.sub(r"\.tmp\.[^/]*$", "", m.group(1))
    if rel.startswith("ranks/"):
        return "ranks", rel
    if rel.startswith("report/"):
        return "report", rel
    return "root", rel


# ---------------------------------------------------------------------------------------------------
# environment

class Env:
    pass


E = Env()


def analyze_cmd(out, np_=1, cap=None, extra=(), fsize=None):
    base = [E.exe, "analyze", cap or E.cap, "-o", out, "--progress", "none"] + list(extra)
    if np_ == 1:
        return base
    if fsize is not None:
        # the limit applies to the analysing processes only: mpirun under it dies writing its own files
        wrap = [sys.executable, "-c",
                "import os,resource,signal,sys; n=int(sys.argv[1]); "
                "resource.setrlimit(resource.RLIMIT_FSIZE,(n,n)); signal.signal(signal.SIGXFSZ,signal.SIG_DFL); "
                "os.execv(sys.argv[2],sys.argv[2:])", str(fsize)]
        base = wrap + base
    return ["mpirun", "-np", str(np_)] + base


def analyze(out, np_=1, cap=None, extra=(), fsize=None):
    pre = None
    env = E.env
    if fsize is not None:
        # Open MPI's own files would exceed the limit before the tool runs: a singleton's PMIx server
        # (inheriting it) sizes a shared-memory store, and each process of a job its shared-memory
        # transport segment (SIGXFSZ in MPI_Init). Both are switched to ones without such files.
        env = dict(E.env, PMIX_MCA_gds="hash", OMPI_MCA_btl="self,tcp")
        if np_ == 1:
            def pre():
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    return run(analyze_cmd(out, np_, cap, extra, fsize), env, preexec_fn=pre)


def page_bytes(f):
    return -(-f.stat().st_size // E.page) * E.page


def mount_tmpfs(d, size):
    d.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dk" % (-(-size // 1024)), "tmpfs", str(d)],
                       capture_output=True, text=True)
    return p.returncode == 0, p.stderr.strip()


def remount_tmpfs(d, size):
    p = subprocess.run(["mount", "-o", "remount,size=%dk" % (-(-size // 1024)), str(d)], capture_output=True, text=True)
    return p.returncode == 0, p.stderr.strip()


def umount(d):
    if os.path.ismount(str(d)):
        if subprocess.run(["umount", str(d)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(d)], capture_output=True)


def synth(out, ranks, scale=1, steps=2, seed=None):
    cmd = [E.exe, "synth", "--scenario", "moe_mla_decode", "--ranks", str(ranks), "--steps", str(steps),
           "--scale", str(scale), "-o", out]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    r = run(cmd, E.env)
    if r.rc != 0:
        raise RuntimeError("synth failed: " + r.describe())


# ---------------------------------------------------------------------------------------------------
# case 1: disk full

def check_failed_run(c, r, out, where, reason):
    """The run that hit the full disk (or the size limit): no crash, exit 1/3, valid JSON, an error at
    `where` naming the file and the reason, no temporary file. Returns the ids of finished ranks."""
    if c.check(not r.crashed(), "the process was killed by a signal or hung: " + r.describe()):
        c.check(r.rc in (1, 3), "exit code %d, expected 1 or 3: %s" % (r.rc, r.describe()))
    j = r.json()
    c.check(j is not None, "stdout is not one JSON object: %r" % r.out[:400])
    texts = error_texts(j)
    located = [(t, place_of(t, E.slug)) for t in texts]
    # (a) is sized so that a rank's own files no longer fit: a failed rank naming ranks/<id>.h5 or
    # its part pack ranks/<id>.parts (since the HDF5 tables became compound datasets the parts are
    # the larger share; the fsize case (b) still fails the HDF5 file itself)
    hits = [t for t, (pl, rel) in located if pl == where and reason in t
            and (where != "ranks" or re.fullmatch(r"ranks/[^/]+\.(h5|parts)", rel))]
    if j is None:
        pass  # no JSON: nothing to locate (reported above)
    elif not hits:
        at_place = [t for t, (pl, _) in located if pl == where]
        if at_place:
            c.check(False, "no %s write failure that names %s and says '%s': %s"
                    % (where, "a rank's file" if where == "ranks" else "the file", reason, at_place[:3]))
        else:
            c.check(False, "no error names a %s file with '%s' (the failure was not where intended?); "
                           "errors: %s" % (where, reason, texts[:4]))
    else:
        c.note("failed at %s" % place_of(hits[0], E.slug)[1])
    if j and where != "ranks":
        failed = [x for root in j.get("roots") or [] for x in root.get("failed_ranks") or []]
        c.check(not failed, "ranks failed although the %s phase was meant to fail after all ranks finished: %s"
                % (where, failed[:3]))
    if j:
        c.check(j.get("status") in ("partial", "failed"), "status %r after a write failure" % j.get("status"))
    left = temp_files(out)
    c.check(not left, "temporary files left under OUT: %s" % left[:5])
    root = out / E.slug
    done = outcome_ids(root)
    for rid in done:
        c.check((root / "ranks" / (rid + ".h5")).is_file(), "rank %s has a checkpoint but no ranks/%s.h5" % (rid, rid))
    if where == "ranks":
        c.check(len(done) < RANKS, "every rank finished: the disk did not fill during the rank phase")
    else:
        c.check(len(done) == RANKS, "only %d of %d ranks have checkpoints, but the %s phase was meant to fail"
                % (len(done), RANKS, where))
    return done


def check_rerun(c, r, out, done):
    c.check(r.rc == 0 and not r.crashed(), "rerun with space: " + r.describe())
    j = r.json() or {}
    c.check(j.get("status") == "ok", "rerun with space: status %r" % j.get("status"))
    c.check(j.get("ranks_reused") == len(done), "rerun reused %r ranks, but %d had finished (%s)"
            % (j.get("ranks_reused"), len(done), ",".join(done)))
    if j.get("status") == "ok":
        for d in differences(out / E.slug, E.ref_root):
            c.check(False, "rerun: " + d)
    left = temp_files(out)
    c.check(not left, "temporary files left after the rerun: %s" % left[:5])
    c.note("%d of %d ranks finished before, reused on the rerun" % (len(done), RANKS))


def disk_full_tmpfs(c, where, np_):
    if np_ > 1 and not E.mpirun:
        raise SkipCase("no mpirun")
    s = E.sizes
    half_rank = s["rank_max"] // 2
    size = {"ranks": s["overhead"] + (np_ * s["rank_max"]) + half_rank,
            "root": s["overhead"] + s["ranks"] + s["root"] // 2,
            "report": s["overhead"] + s["ranks"] + s["root"] + s["report"] // 2}[where]
    mnt = E.work / ("tmpfs_%s_np%d" % (where, np_))
    mounted = False
    try:
        mounted, msg = mount_tmpfs(mnt, size)
        if not mounted:
            c.check(False, "mount of a %d KiB tmpfs failed: %s" % (size // 1024, msg))
            return
        out = mnt / "out"
        r = analyze(out, np_)
        done = check_failed_run(c, r, out, where, ENOSPC)
        ok, msg = remount_tmpfs(mnt, s["total"] * 2 + (16 << 20))
        if not c.check(ok, "remount to grow the tmpfs failed: " + msg):
            return
        check_rerun(c, analyze(out, np_), out, done)
        c.note("tmpfs %d KiB" % (size // 1024))
    finally:
        if mounted:
            umount(mnt)


def disk_full_fsize(c, where, np_):
    if np_ > 1 and not E.mpirun:
        raise SkipCase("no mpirun")
    f = E.file_sizes
    out = E.work / ("fsize_%s_np%d" % (where, np_))
    extra = ()
    if where == "ranks":
        # every rank HDF5 file exceeds the limit, every other file of the rank phase stays below it
        if f["ranks_other_max"] >= f["rank_h5_min"]:
            raise SkipCase("no file-size limit separates the rank HDF5 files from the other rank files")
        limit = (f["ranks_other_max"] + f["rank_h5_min"]) // 2
    else:
        # the ranks finish first (an earlier run); the root tables (b) or the report (c) are then
        # written under the limit. A single per-file limit cannot let 1.3 MB rank files pass and stop
        # a 300 KB table in the same run.
        prior = analyze(out, np_)
        if not c.check(prior.rc == 0, "run before the limited one: " + prior.describe()):
            return
        root = out / E.slug
        if where == "root":
            for p in root.iterdir():
                if p.name != "ranks":
                    shutil.rmtree(p) if p.is_dir() else p.unlink()
            limit = f["root_max"] // 2
        else:
            shutil.rmtree(root / "report")
            limit = f["report_max"] // 2
            extra = ("--from-stage", "report")
    r = analyze(out, np_, extra=extra, fsize=limit)
    done = check_failed_run(c, r, out, where, EFBIG)
    check_rerun(c, analyze(out, np_), out, done)
    c.note("RLIMIT_FSIZE %d bytes" % limit)


# ---------------------------------------------------------------------------------------------------
# case 2: a rank's part pack that cannot be put in place

def checkpoint_unwritable(c):
    victim = E.ref_ids[len(E.ref_ids) // 2]
    out = E.work / "checkpoint_unwritable"
    planted = out / E.slug / "ranks" / (victim + ".parts")
    (planted / "keep").mkdir(parents=True)
    (planted / "keep" / "f").write_text("x")
    # OUT holds a foreign entry, so it must be forced
    r = analyze(out, extra=("--force",))
    c.check(r.rc == 1 and not r.crashed(), "run with an unwritable part pack: " + r.describe())
    j = r.json() or {}
    c.check(j.get("status") == "partial", "status %r (one rank failed, the others analysed)" % j.get("status"))
    root = (j.get("roots") or [{}])[0]
    failed = root.get("failed_ranks") or []
    c.check(root.get("ranks_ok") == RANKS - 1 and len(failed) == 1, "ranks_ok %r, failed %r" % (root.get("ranks_ok"), failed))
    c.check(any((victim + ".parts") in x for x in failed), "the failed rank does not name ranks/%s.parts: %r" % (victim, failed))
    c.check(planted.is_dir(), "the planted directory was replaced")
    c.check(not (out / E.slug / "ranks" / (victim + ".h5")).exists(), "ranks/%s.h5 left without its pack" % victim)
    c.check(len(outcome_ids(out / E.slug)) == RANKS - 1, "checkpoints: %s" % outcome_ids(out / E.slug))
    c.check(not temp_files(out), "temporary files left: %s" % temp_files(out)[:5])
    shutil.rmtree(planted)
    r = analyze(out)
    j = r.json() or {}
    c.check(r.rc == 0 and j.get("status") == "ok", "rerun after removing the directory: " + r.describe())
    c.check(j.get("ranks_reused") == RANKS - 1, "rerun reused %r ranks, expected %d" % (j.get("ranks_reused"), RANKS - 1))
    for d in differences(out / E.slug, E.ref_root):
        c.check(False, "rerun: " + d)
    c.check((out / E.slug / "ranks" / (victim + ".parts")).is_file(), "the rerun did not write the part pack")
    c.check(not temp_files(out), "temporary files left: %s" % temp_files(out)[:5])
    if failed:
        c.note("failed: " + failed[0].strip()[:120])


# ---------------------------------------------------------------------------------------------------
# case 3: the sweep rollup failing

def plant_dir(path):
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
    (path / "keep").mkdir(parents=True)
    (path / "keep" / "f").write_text("x")


def check_rollup_failure(c, r, out, what):
    c.check(not r.crashed(), "%s: killed by a signal or hung: %s" % (what, r.describe()))
    # observed: a sweep exits 1 (its roots were written, the rollup not), `sweep --rollup` exits 3
    # (nothing written); either way not 0 and not a usage error
    c.check(r.rc in (1, 3), "%s with an unwritable sweep_class_rollup.csv exited %d, expected 1 or 3: %s"
            % (what, r.rc, r.describe()))
    j = r.json()
    if c.check(j is not None, "%s: stdout is not one JSON object: %r" % (what, r.out[:400])):
        c.check(j.get("status") != "ok", "%s: status 'ok' although the rollup was not written: %s" % (what, r.out[:400]))
        c.check(any("sweep_class_rollup.csv" in t for t in error_texts(j)),
                "%s: no error names sweep_class_rollup.csv: %s" % (what, error_texts(j)[:3]))
        if what == "sweep":  # the roots were analysed: the result still says which, and how they ended
            c.check(len(j.get("roots") or []) == len(E.sweep_roots),
                    "%s: the result lists %d roots, %d were analysed" % (what, len(j.get("roots") or []), len(E.sweep_roots)))
    c.check(not temp_files(out), "%s: temporary files left: %s" % (what, temp_files(out)[:5]))
    return "%s exit %d (%s)" % (what, r.rc, (j or {}).get("status"))


def check_rollup_csv(c, out, what):
    csv = out / "sweep_class_rollup.csv"
    if not c.check(csv.is_file(), "%s: sweep_class_rollup.csv is not a file" % what):
        return
    rows = csv.read_text().splitlines()
    c.check(len(rows) == 1 + len(E.sweep_roots), "%s: rollup has %d lines, expected header + %d roots"
            % (what, len(rows), len(E.sweep_roots)))


def sweep_rollup_fails(c):
    notes = []
    # (1) the rollup a sweep writes at its end
    out = E.work / "rollup_sweep"
    sweep = [E.exe, "sweep", "--search-root", E.sweep_parent, "-o", out, "--progress", "none"]
    r = run(sweep, E.env)
    if not c.check(r.rc == 0, "first sweep: " + r.describe()):
        return
    plant_dir(out / "sweep_class_rollup.csv")
    notes.append(check_rollup_failure(c, run(sweep, E.env), out, "sweep"))
    for root in E.sweep_roots:  # only the rollup failed: every root's own outputs are there
        outs = [d for d in out.iterdir() if d.is_dir()
                and d.name.rsplit("-", 1)[0].endswith("%s_%s" % (E.sweep_parent.name, root.name))]
        c.check(len(outs) == 1 and (outs[0] / "report" / "report.md").is_file(),
                "sweep: root %s has no report beside the failed rollup (%s)" % (root.name, [d.name for d in out.iterdir()]))
    shutil.rmtree(out / "sweep_class_rollup.csv")
    r = run(sweep, E.env)
    c.check(r.rc == 0 and (r.json() or {}).get("status") == "ok", "sweep after removing the directory: " + r.describe())
    check_rollup_csv(c, out, "sweep")
    # (2) the merge of shard results
    out = E.work / "rollup_merge"
    for shard in ("0/2", "1/2"):
        r = run([E.exe, "sweep", "--search-root", E.sweep_parent, "-o", out, "--shard", shard, "--progress", "none"], E.env)
        if not c.check(r.rc == 0, "shard %s: %s" % (shard, r.describe())):
            return
    plant_dir(out / "sweep_class_rollup.csv")
    rollup = [E.exe, "sweep", "--rollup", "-o", out, "--progress", "none"]
    notes.append(check_rollup_failure(c, run(rollup, E.env), out, "sweep --rollup"))
    shutil.rmtree(out / "sweep_class_rollup.csv")
    r = run(rollup, E.env)
    c.check(r.rc == 0 and (r.json() or {}).get("status") == "ok", "rollup after removing the directory: " + r.describe())
    check_rollup_csv(c, out, "sweep --rollup")
    c.note(", ".join(notes))


# ---------------------------------------------------------------------------------------------------
# case 4: stale temporary files

def stale_temp_files(c):
    out = E.work / "stale_temps"
    shutil.copytree(E.ref_out, out)
    root = out / E.slug
    host = re.sub(r"[^A-Za-z0-9-]", "_", socket.gethostname().split(".")[0])
    dead = subprocess.Popen(["true"])
    dead.wait()
    live = subprocess.Popen(["sleep", "60"])
    try:
        dead_files = [d / ("stale_x.csv.tmp.%s.%d" % (host, dead.pid)) for d in (root, root / "ranks")]
        live_files = [d / ("live_y.h5.tmp.%s.%d" % (host, live.pid)) for d in (root, root / "ranks")]
        for f in dead_files + live_files:
            f.write_text("partial")
        r = analyze(out)
        j = r.json() or {}
        c.check(r.rc == 0 and j.get("status") == "ok", "run into an OUT with temporary files: " + r.describe())
        c.check(j.get("ranks_reused") == RANKS, "ranks_reused %r, expected %d" % (j.get("ranks_reused"), RANKS))
        for f in dead_files:
            c.check(not f.exists(), "%s (pid %d, dead) was not removed" % (f, dead.pid))
        for f in live_files:
            c.check(f.exists(), "%s (pid %d, alive) was removed" % (f, live.pid))
        removed = [l for l in r.err.splitlines() if "removed" in l and "no longer exist" in l]
        kept = [l for l in r.err.splitlines() if "kept" in l and "may still be live" in l]
        c.check(removed and all(f.name in removed[0] for f in dead_files),
                "stderr does not name the removed files %s: %r" % ([f.name for f in dead_files], r.err[-800:]))
        c.check(kept and all(f.name in kept[0] for f in live_files),
                "stderr does not name the kept files %s: %r" % ([f.name for f in live_files], r.err[-800:]))
    finally:
        live.kill()
        live.wait()
    # the writer is gone now: the next run removes them
    r = analyze(out)
    c.check(r.rc == 0, "run after the live writer ended: " + r.describe())
    c.check(not temp_files(out), "temporary files of an ended writer kept: %s" % temp_files(out))
    c.note("dead pid %d removed, live pid %d kept, removed once it ended" % (dead.pid, live.pid))


# ---------------------------------------------------------------------------------------------------
# case 5: the OUT lock

def out_lock(c):
    out = E.work / "locked"
    done_at_stop = 0
    first = Background([E.exe, "analyze", E.lock_cap, "-o", out, "--progress", "json"], E.env)
    try:
        started = first.wait_for('"phase":"rank_done"')
        first.signal(signal.SIGSTOP)  # held still: a live run that owns the lock, mid rank phase
        if not c.check(started, "the first run never reported a finished rank: %s" % "".join(first.err_lines)[-800:]):
            return
        c.check((out / ".ascprof-mpi.lock").exists(), "no OUT/.ascprof-mpi.lock while a run writes OUT")
        roots = [d for d in out.iterdir() if d.is_dir()]
        done_at_stop = len(outcome_ids(roots[0])) if len(roots) == 1 else 0
        c.check(done_at_stop < LOCK_RANKS, "the first run was past its rank phase when stopped (%d of %d checkpoints)"
                % (done_at_stop, LOCK_RANKS))
        second = analyze(out, cap=E.lock_cap)
        j = second.json() or {}
        c.check(second.rc == 2 and not second.crashed(), "second run into a locked OUT: " + second.describe())
        c.check(j.get("error_class") == "out_locked", "second run: error_class %r: %s" % (j.get("error_class"), second.out[:400]))
        c.check(str(first.p.pid) in (j.get("error") or ""), "the refusal does not name the holder (pid %d): %r"
                % (first.p.pid, j.get("error")))
    finally:
        first.signal(signal.SIGKILL)
        first.finish()
    third = analyze(out, cap=E.lock_cap)
    j = third.json() or {}
    c.check(third.rc == 0 and j.get("status") == "ok", "run after the holder was killed: " + third.describe())
    c.check((j.get("ranks_reused") or 0) >= done_at_stop, "ranks_reused %r < %d checkpoints left by the killed run"
            % (j.get("ranks_reused"), done_at_stop))
    c.check(not temp_files(out), "temporary files left: %s" % temp_files(out)[:5])
    c.note("holder stopped after %d of %d ranks; 2nd run exit %d out_locked; after SIGKILL 3rd run ok, reused %s"
           % (done_at_stop, LOCK_RANKS, second.rc, j.get("ranks_reused")))


def sweep_shards(c):
    def shard_cmd(out, shard, progress="none"):
        return [E.exe, "sweep", "--search-root", E.sweep_parent, "-o", out, "--shard", shard, "--progress", progress]

    # (1) both shards started together
    out = E.work / "shards_together"
    a, b = Background(shard_cmd(out, "0/2"), E.env), Background(shard_cmd(out, "1/2"), E.env)
    for name, p in (("0/2", a), ("1/2", b)):
        rc = p.finish()
        c.check(rc == 0, "shard %s run concurrently exited %d: %s %s" % (name, rc, p.stdout()[:300], "".join(p.err_lines)[-800:]))
    r = run([E.exe, "sweep", "--rollup", "-o", out, "--progress", "none"], E.env)
    c.check(r.rc == 0, "rollup of the concurrent shards: " + r.describe())
    check_rollup_csv(c, out, "rollup of concurrent shards")
    # (2) shard 0/2 held live (stopped mid-run): a copy of it is refused, shard 1/2 runs to the end
    out = E.work / "shards_overlap"
    a = Background(shard_cmd(out, "0/2", "json"), E.env)
    try:
        started = a.wait_for('"phase":"rank_done"')
        a.signal(signal.SIGSTOP)
        if not c.check(started, "shard 0/2 never reported a finished rank: %s" % "".join(a.err_lines)[-800:]):
            return
        dup = run(shard_cmd(out, "0/2"), E.env)
        c.check(dup.rc == 2 and (dup.json() or {}).get("error_class") == "out_locked",
                "a second copy of live shard 0/2: " + dup.describe())
        other = run(shard_cmd(out, "1/2"), E.env)
        c.check(other.rc == 0, "shard 1/2 beside a live shard 0/2: " + other.describe())
    finally:
        a.signal(signal.SIGCONT)
    rc = a.finish()
    c.check(rc == 0, "shard 0/2 after being resumed exited %d: %s" % (rc, "".join(a.err_lines)[-800:]))
    r = run([E.exe, "sweep", "--rollup", "-o", out, "--progress", "none"], E.env)
    c.check(r.rc == 0, "rollup of the overlapping shards: " + r.describe())
    check_rollup_csv(c, out, "rollup of overlapping shards")
    c.check(not temp_files(out), "temporary files left: %s" % temp_files(out)[:5])
    c.note("shards together: exit 0/0; copy of a live shard refused (exit %d); rollup exit %d" % (dup.rc, r.rc))


# ---------------------------------------------------------------------------------------------------

def reference_sizes():
    """Bytes a run puts on a tmpfs (whole pages), and the largest/smallest files, per part of OUT."""
    ref, root = E.ref_out, E.ref_root
    ranks = [f for f in (root / "ranks").rglob("*") if f.is_file()]
    report = [f for f in (root / "report").rglob("*") if f.is_file()]
    # manifest.json is written last, after report/: the "report" budget must not include it
    level = [f for f in root.rglob("*") if f.is_file() and f not in set(ranks) and f not in set(report)
             and f != root / "manifest.json"]
    per_rank = {}
    for f in ranks:
        rid = f.relative_to(root / "ranks").parts[0].split(".")[0]
        per_rank[rid] = per_rank.get(rid, 0) + page_bytes(f)
    top = sum(page_bytes(f) for f in ref.iterdir() if f.is_file())
    sizes = {"overhead": top + E.page, "ranks": sum(per_rank.values()), "rank_max": max(per_rank.values()),
             "root": sum(page_bytes(f) for f in level), "report": sum(page_bytes(f) for f in report)}
    sizes["total"] = sizes["overhead"] + sizes["ranks"] + sizes["root"] + sizes["report"] + page_bytes(root / "manifest.json")
    h5 = [f.stat().st_size for f in ranks if f.suffix == ".h5"]
    files = {"rank_h5_min": min(h5), "ranks_other_max": max(f.stat().st_size for f in ranks if f.suffix != ".h5"),
             "root_max": max(f.stat().st_size for f in level), "report_max": max(f.stat().st_size for f in report)}
    return sizes, files


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    E.exe, E.work = str(pathlib.Path(sys.argv[1]).resolve()), pathlib.Path(sys.argv[2]).resolve()
    E.env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                 OMPI_MCA_rmaps_base_oversubscribe="1")
    E.mpirun = shutil.which("mpirun") is not None
    E.page = os.sysconf("SC_PAGE_SIZE")
    t_start = time.time()
    # a killed earlier run may have left its tmpfs mounted
    if E.work.is_dir():
        for d in E.work.iterdir():
            umount(d)
    shutil.rmtree(E.work, ignore_errors=True)
    E.work.mkdir(parents=True)

    E.cap = E.work / "cap"
    synth(E.cap, RANKS)
    E.lock_cap = E.work / "lock_cap"
    synth(E.lock_cap, LOCK_RANKS)
    E.sweep_parent = E.work / "sweep_roots"
    E.sweep_roots = [E.sweep_parent / "a", E.sweep_parent / "b"]
    for i, d in enumerate(E.sweep_roots):
        synth(d, 2, seed=11 + i)

    E.ref_out = E.work / "reference"
    ref = analyze(E.ref_out)
    if ref.rc != 0 or (ref.json() or {}).get("status") != "ok":
        print("FAIL: the uninterrupted reference run: " + ref.describe(), file=sys.stderr)
        return 1
    E.ref_root = pathlib.Path(ref.json()["roots"][0]["out_dir"])
    if not E.ref_root.is_absolute():
        E.ref_root = (pathlib.Path.cwd() / E.ref_root).resolve()
    E.slug = E.ref_root.name
    E.ref_ids = outcome_ids(E.ref_root)
    E.sizes, E.file_sizes = reference_sizes()
    print("reference: %d ranks, ranks/ %d KiB, root-level %d KiB, report/ %d KiB (tmpfs pages)"
          % (RANKS, E.sizes["ranks"] // 1024, E.sizes["root"] // 1024, E.sizes["report"] // 1024), file=sys.stderr)

    mode = os.environ.get("ASCPROF_DISK_FULL_MODE", "tmpfs")
    if mode == "tmpfs":
        probe = E.work / "tmpfs_probe"
        ok, msg = mount_tmpfs(probe, 64 << 10)
        umount(probe)
        if not ok:
            print("tmpfs mount not possible (%s): falling back to a file-size limit" % msg, file=sys.stderr)
            mode = "fsize"
    fn, label = (disk_full_tmpfs, "tmpfs") if mode == "tmpfs" else (disk_full_fsize, "RLIMIT_FSIZE")
    print("disk-full mode: %s" % ("real tmpfs (ENOSPC)" if mode == "tmpfs" else "file-size limit (EFBIG)"), flush=True)
    try:
        run_case("1a", "disk full while writing rank files [%s, 1 process]" % label, fn, "ranks", 1)
        run_case("1b", "disk full while writing root-level tables [%s, 1 process]" % label, fn, "root", 1)
        run_case("1c", "disk full while writing report/ [%s, 1 process]" % label, fn, "report", 1)
        run_case("1d", "disk full while writing rank files [%s, mpirun -np 2]" % label, fn, "ranks", 2)
        run_case("2", "a rank part pack cannot be put in place", checkpoint_unwritable)
        run_case("3", "sweep rollup cannot be written", sweep_rollup_fails)
        run_case("4", "stale temporary files (dead pid removed, live pid kept)", stale_temp_files)
        run_case("5a", "OUT lock: second run refused, SIGKILLed holder leaves no stuck lock", out_lock)
        run_case("5b", "sweep shards 0/2 and 1/2 concurrently into one OUT, duplicate shard refused", sweep_shards)
    finally:
        for d in E.work.iterdir():
            umount(d)
    failed = [k for k, s, _ in RESULTS if s == "FAIL"]
    passed = [k for k, s, _ in RESULTS if s == "PASS"]
    print("%d passed, %d failed (%s), %d skipped; %.1f s" % (len(passed), len(failed), ",".join(failed) or "-",
          len(RESULTS) - len(passed) - len(failed), time.time() - t_start), flush=True)
    if failed:
        return 1
    return 0 if passed else 77


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Corpus of broken captures run end to end through the real CLI (issue 8, hardening).

The test generates a small clean capture with `ascprof-mpi synth`, copies it once per case, damages
the copy (a truncated, malformed or unreadable file in one or more rank folders), then runs
`mpirun -np 2 ascprof-mpi analyze ROOT... -o OUT --force --progress none` over all damaged roots at
once (and single-process / separately for the cases that decide the whole run's exit code). For each
case it checks the precise outcome: the rank's error class (normalize_manifest.json) and message
(stdout JSON `failed_ranks`, naming the file and the place), or for a rank that survives its damage
the kept event counts and the data-quality counter that records the damage; that the other ranks of
the root were analysed exactly like the clean capture; the exit code of the README contract
(0 ok, 1 partial, 2 usage/config, 3 nothing analysed, 4 hard segmentation errors); and that nothing
crashed (signal death), hung (timeout), left a temporary file behind or wrote JSON that is not
valid UTF-8.

usage: broken_corpus_test.py ASCPROF_MPI WORK_DIR      (exit 0 pass, 1 fail, 77 skip: no mpirun)
Python standard library only. No committed binaries: every input is generated here.
"""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import threading
import time

RANKS = 4
TIMEOUT_S = 180          # one analyze run; a hang fails the case
FAILURES = []


def check(cond, case, msg):
    if not cond:
        FAILURES.append("%s: %s" % (case, msg))
    return cond


# ---------------------------------------------------------------------------------------------------
# running the CLI

class Run:
    def __init__(self, rc, out, err, maxrss_kb, seconds, timed_out):
        self.rc, self.out, self.err, self.maxrss_kb, self.seconds, self.timed_out = rc, out, err, maxrss_kb, seconds, timed_out

    def json(self):
        try:
            return json.loads(self.out)
        except ValueError:
            return None


def run(cmd, env, timeout=TIMEOUT_S):
    """Runs cmd in its own process group; returns Run with the exit code (negative = signal), stdout,
    stderr, the peak RSS of the process tree (wait4's rusage) and whether it was killed at the timeout."""
    t0 = time.time()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    timed_out = []

    def kill():
        timed_out.append(True)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout, kill)
    timer.start()
    out_chunks, err_chunks = [], []
    t_out = threading.Thread(target=lambda: out_chunks.append(p.stdout.read()))
    t_err = threading.Thread(target=lambda: err_chunks.append(p.stderr.read()))
    t_out.start()
    t_err.start()
    _, status, rusage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    timer.cancel()
    t_out.join()
    t_err.join()
    # leave no stray process of the group behind (mpirun's children after an abort)
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return Run(p.returncode, out_chunks[0].decode("utf-8", "replace"), err_chunks[0].decode("utf-8", "replace"),
               rusage.ru_maxrss, time.time() - t0, bool(timed_out))


def no_crash(r, case):
    """A signal death, a timeout or an MPI abort report fails the case."""
    ok = check(not r.timed_out, case, "timed out after %d s" % TIMEOUT_S)
    ok &= check(r.rc >= 0, case, "killed by signal %d" % -r.rc)
    for marker in ("Segmentation fault", "exited on signal", "Aborted", "MPI_ABORT", "terminate called", "AddressSanitizer",
                   "runtime error:", "core dumped"):
        ok &= check(marker not in r.err, case, "stderr reports a crash (%s): %s" % (marker, r.err[-1500:]))
    return ok


# ---------------------------------------------------------------------------------------------------
# capture helpers

def apo(rank_dir):
    return rank_dir / "ASCEND_PROFILER_OUTPUT"


def rank_folders(root):
    """rank id -> folder, from the profiler_info_<N>.json names the generator writes."""
    out = {}
    for d in sorted(root.iterdir()):
        if d.is_dir() and d.name.endswith("_ascend_pt"):
            for f in d.glob("profiler_info_*.json"):
                out[int(f.stem.rsplit("_", 1)[1])] = d
    return out


def lines_of(path):
    return path.read_bytes().split(b"\n")


def cut_at(path, offset):
    with open(path, "r+b") as f:
        f.truncate(offset)


def line_start(data, index):
    """Byte offset of 0-based line `index`."""
    pos = 0
    for _ in range(index):
        pos = data.index(b"\n", pos) + 1
    return pos


def load_tv(path):
    return json.loads(path.read_text())


def dump_tv(path, events):
    path.write_text(json.dumps(events))


def kd_rows(path):
    """Data rows of a clean kernel_details.csv (lines after the header that are not empty)."""
    return sum(1 for ln in lines_of(path)[1:] if ln.strip())


# ---------------------------------------------------------------------------------------------------
# reading the results of one root

class RootResult:
    def __init__(self, case, entry):
        self.case = case
        self.entry = entry or {}
        self.out_dir = pathlib.Path(self.entry.get("out_dir", "/nonexistent"))
        mpath = self.out_dir / "normalize_manifest.json"
        self.manifest = json.loads(mpath.read_text(encoding="utf-8")) if mpath.is_file() else {}
        self.ok = {r["rank_dir"]: r for r in self.manifest.get("rank_summaries", [])}
        self.failed = {r["rank_dir"]: r for r in self.manifest.get("failed_ranks", [])}
        # stdout: "rank_dir: message"
        self.stdout_failed = {}
        self.stdout_class = {}
        classes = self.entry.get("failed_rank_classes", [])
        for i, s in enumerate(self.entry.get("failed_ranks", [])):
            d, _, m = s.partition(": ")
            self.stdout_failed[d] = m
            self.stdout_class[d] = classes[i] if i < len(classes) else None

    def dq(self, rank_dir):
        r = self.ok.get(rank_dir) or self.failed.get(rank_dir) or {}
        return r.get("data_quality", {})

    def dq_count(self, rank_dir, name):
        return self.dq(rank_dir).get(name, {}).get("count", 0)

    def dq_samples(self, rank_dir, name):
        return " | ".join(self.dq(rank_dir).get(name, {}).get("samples", []))


CLEAN = {}   # rank_dir name -> clean rank summary (from the clean root of the same run)


def expect_ok(res, folder, events=None, trace_events=None, dq=None, samples=None):
    """The rank was analysed; its kernel rows (and trace events) and the counters that record its damage."""
    case, name = res.case, folder.name
    r = res.ok.get(name)
    if not check(r is not None, case, "rank %s not analysed: %s" % (name, res.failed.get(name))):
        return
    clean = CLEAN.get(name, {})
    want = clean.get("event_count") if events is None else events
    check(r["event_count"] == want, case, "rank %s kept %s kernel rows, want %s" % (name, r["event_count"], want))
    if trace_events is not None:
        got = r["trace_view"]["events_total"]
        check(got == trace_events, case, "rank %s kept %s trace events, want %s" % (name, got, trace_events))
    for stat, count in (dq or {}).items():
        got = res.dq_count(name, stat)
        if count is None:
            check(got > 0, case, "rank %s: counter %s not raised; data_quality=%s" % (name, stat, res.dq(name)))
        else:
            check(got == count, case, "rank %s: counter %s = %s, want %s; data_quality=%s" % (name, stat, got, count, res.dq(name)))
    for stat, fragment in (samples or {}).items():
        s = res.dq_samples(name, stat)
        check(fragment in s, case, "rank %s: %s samples lack %r: %s" % (name, stat, fragment, s[:600]))


def expect_failed(res, folder, cls, fragments):
    """The rank failed with error class `cls`; the stdout message and the manifest name the file and place."""
    case, name = res.case, folder.name
    f = res.failed.get(name)
    if not check(f is not None, case, "rank %s did not fail (ok=%s)" % (name, name in res.ok)):
        return
    check(f["error_class"] == cls, case, "rank %s error class %r, want %r (%s)" % (name, f["error_class"], cls, f["error"]))
    check(res.stdout_class.get(name) == cls, case, "rank %s stdout error class %r, want %r" % (name, res.stdout_class.get(name), cls))
    msg = res.stdout_failed.get(name)
    if check(msg is not None, case, "rank %s missing from stdout failed_ranks %s" % (name, res.entry.get("failed_ranks"))):
        for frag in fragments:
            check(frag in msg, case, "rank %s stdout message lacks %r: %s" % (name, frag, msg))


def expect_others_ok(res, folders, damaged):
    """Every undamaged rank analysed exactly as in the clean capture."""
    for f in folders.values():
        if f.name not in {d.name for d in damaged}:
            expect_ok(res, f)


def expect_root(res, status, ranks_ok, ranks_failed):
    e = res.entry
    check(e.get("status") == status, res.case, "root status %r, want %r (failed_ranks=%s)" % (e.get("status"), status, e.get("failed_ranks")))
    check(e.get("ranks_ok") == ranks_ok, res.case, "ranks_ok %s, want %s" % (e.get("ranks_ok"), ranks_ok))
    check(e.get("ranks_failed") == ranks_failed, res.case, "ranks_failed %s, want %s" % (e.get("ranks_failed"), ranks_failed))


def check_outputs_sane(case, out_dir):
    """No temporary file left; every JSON output parses as strict UTF-8 JSON."""
    if not out_dir.is_dir():
        return
    for p in out_dir.rglob("*"):
        if ".tmp" in p.name:
            check(False, case, "temporary file left behind: %s" % p)
        if p.is_file() and p.suffix == ".json":
            try:
                json.loads(p.read_bytes().decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as e:
                check(False, case, "%s is not valid UTF-8 JSON: %s" % (p, e))
        if p.is_file() and p.suffix == ".jsonl":
            for n, ln in enumerate(p.read_bytes().splitlines(), 1):
                try:
                    json.loads(ln.decode("utf-8"))
                except (UnicodeDecodeError, ValueError) as e:
                    check(False, case, "%s:%d is not valid UTF-8 JSON: %s" % (p, n, e))
                    break


def dq_mentions(res, folder, fragment):
    """True when some data-quality sample of the rank mentions `fragment`."""
    return any(fragment in s for v in res.dq(folder.name).values() for s in v.get("samples", []))


# ---------------------------------------------------------------------------------------------------
# the cases that share one analyze run: (name, damage(root, folders) -> ctx, verify(res, folders, ctx))

CASES = []


def case(fn_damage):
    name = fn_damage.__name__[len("damage_"):]
    def register(fn_verify):
        CASES.append((name, fn_damage, fn_verify))
        return fn_verify
    return register


# -- kernel_details.csv --------------------------------------------------------------------------

def damage_kd_trunc_mid_row(root, f):
    kd = apo(f[1]) / "kernel_details.csv"
    data = kd.read_bytes()
    cut_at(kd, line_start(data, 50) + 20)  # inside line 51, before its Start Time field
    return {}


@case(damage_kd_trunc_mid_row)
def verify_kd_trunc_mid_row(res, f, ctx):
    # a killed writer: the 49 complete rows before the cut are kept, the cut row is dropped and counted
    expect_ok(res, f[1], events=49, dq={"kd_bad_start_time": 1}, samples={"kd_bad_start_time": "kernel_details.csv:line 51"})
    expect_others_ok(res, f, [f[1]])


def damage_kd_trunc_in_quote(root, f):
    kd = apo(f[1]) / "kernel_details.csv"
    data = kd.read_bytes()
    start = line_start(data, 40)
    q = data.index(b'"""', start)
    line = data.count(b"\n", 0, q)  # 0-based line of the quote
    cut_at(kd, q + 5)                # inside the quoted Input Shapes field
    return {"line": line}


@case(damage_kd_trunc_in_quote)
def verify_kd_trunc_in_quote(res, f, ctx):
    # the rows before the open quote are kept; the partial row is dropped and counted as data loss
    expect_ok(res, f[1], events=ctx["line"] - 1, dq={"csv_unterminated_quote": 1},
              samples={"csv_unterminated_quote": "kernel_details.csv:line %d" % (ctx["line"] + 1)})
    expect_others_ok(res, f, [f[1]])


def damage_kd_columns(root, f):
    kd = apo(f[1]) / "kernel_details.csv"
    ls = lines_of(kd)
    ls[10] = ls[10].rstrip(b"\r") + b",EXTRA\r"                   # line 11: one field too many
    body = ls[20].rstrip(b"\r")
    ls[20] = body[:body.rindex(b",")] + b"\r"                     # line 21: last field missing
    kd.write_bytes(b"\n".join(ls))
    return {}


@case(damage_kd_columns)
def verify_kd_columns(res, f, ctx):
    expect_ok(res, f[1], dq={"csv_row_too_many_fields": 1, "csv_row_too_few_fields": 1},
              samples={"csv_row_too_many_fields": "kernel_details.csv:line 11",
                       "csv_row_too_few_fields": "kernel_details.csv:line 21"})
    expect_others_ok(res, f, [f[1]])


def damage_kd_nul(root, f):
    kd = apo(f[1]) / "kernel_details.csv"
    ls = lines_of(kd)
    fields = ls[5].split(b",")
    fields[5] = fields[5][:5] + b"\0\0" + fields[5][5:]          # NULs inside the Name of line 6
    ls[5] = b",".join(fields)
    kd.write_bytes(b"\n".join(ls))
    return {}


@case(damage_kd_nul)
def verify_kd_nul(res, f, ctx):
    expect_ok(res, f[1], dq={"csv_embedded_nul": 1}, samples={"csv_embedded_nul": "kernel_details.csv:line 6"})
    expect_others_ok(res, f, [f[1]])


def damage_kd_non_utf8(root, f):
    kd = apo(f[1]) / "kernel_details.csv"
    ls = lines_of(kd)
    fields = ls[6].split(b",")
    fields[5] = fields[5] + b"\xff\xfe\xc3"                       # invalid UTF-8 at the end of a Name
    ls[6] = b",".join(fields)
    kd.write_bytes(b"\n".join(ls))
    return {}


@case(damage_kd_non_utf8)
def verify_kd_non_utf8(res, f, ctx):
    # the row is kept; every JSON output must still be valid UTF-8 (checked for all roots)
    expect_ok(res, f[1])
    expect_others_ok(res, f, [f[1]])


def damage_kd_big_field(root, f):
    kd = apo(f[1]) / "kernel_details.csv"
    ls = lines_of(kd)
    i = next(i for i in range(1, len(ls)) if b'"' not in ls[i] and ls[i].strip())  # a row without quotes
    fields = ls[i].split(b",")
    # a 10 MB quoted Input Shapes field (commas, semicolons and newlines inside the quotes)
    fields[15] = b'"' + (b"1,2;3\n4," * (10 * 1024 * 1024 // 8)) + b'"'
    ls[i] = b",".join(fields)
    kd.write_bytes(b"\n".join(ls))
    return {}


@case(damage_kd_big_field)
def verify_kd_big_field(res, f, ctx):
    # below the 16 MiB field bound: the row is kept as it is
    expect_ok(res, f[1])
    expect_others_ok(res, f, [f[1]])


def damage_kd_oversized_field(root, f):
    kd = apo(f[1]) / "kernel_details.csv"
    ls = lines_of(kd)
    i = next(i for i in range(1, len(ls)) if b'"' not in ls[i] and ls[i].strip())
    fields = ls[i].split(b",")
    fields[15] = b'"' + b"7" * (17 * 1024 * 1024) + b'"'  # above the 16 MiB field bound
    ls[i] = b",".join(fields)
    kd.write_bytes(b"\n".join(ls))
    return {"line": i + 1}


@case(damage_kd_oversized_field)
def verify_kd_oversized_field(res, f, ctx):
    # above the bound: a clear limit error with file, line and bound (no unbounded buffering)
    expect_failed(res, f[1], "limit", [str(apo(f[1]) / "kernel_details.csv") + ":line %d: quoted field of" % ctx["line"],
                                       "exceeds the limit of 16777216 bytes"])
    expect_others_ok(res, f, [f[1]])


def damage_kd_header_only(root, f):
    kd = apo(f[1]) / "kernel_details.csv"
    kd.write_bytes(lines_of(kd)[0] + b"\n")
    return {}


@case(damage_kd_header_only)
def verify_kd_header_only(res, f, ctx):
    # nothing to analyse in that rank: it fails (schema), the message names the file (was: "ok", 0 events)
    expect_failed(res, f[1], "schema", [str(apo(f[1]) / "kernel_details.csv") + ": no kernel rows below the header"])
    expect_others_ok(res, f, [f[1]])


def damage_kd_semicolons(root, f):
    kd = apo(f[1]) / "kernel_details.csv"
    kd.write_bytes(kd.read_bytes().replace(b",", b";"))
    return {}


@case(damage_kd_semicolons)
def verify_kd_semicolons(res, f, ctx):
    # the whole header is one field: the required columns are missing, the header is quoted back
    expect_failed(res, f[1], "schema", [str(apo(f[1]) / "kernel_details.csv") + ":line 1: missing required column 'Name'",
                                        "Step Id;Device_id;"])
    expect_others_ok(res, f, [f[1]])


def damage_kd_tabs(root, f):
    kd = apo(f[1]) / "kernel_details.csv"
    kd.write_bytes(kd.read_bytes().replace(b"\t", b"").replace(b",", b"\t"))
    return {}


@case(damage_kd_tabs)
def verify_kd_tabs(res, f, ctx):
    expect_failed(res, f[1], "schema", [str(apo(f[1]) / "kernel_details.csv") + ":line 1: missing required column 'Name'",
                                        "Step Id\tDevice_id\t"])
    expect_others_ok(res, f, [f[1]])


# -- trace_view.json -----------------------------------------------------------------------------

def events_before(text, cut):
    """Top-level events of a clean trace_view.json text that end at or before byte `cut`."""
    dec, n, i = json.JSONDecoder(), 0, text.index("[") + 1
    while True:
        i = text.index("{", i)
        _, end = dec.raw_decode(text, i)
        if end > cut:
            return n
        n, i = n + 1, end


def damage_tv_truncated(root, f):
    tv = apo(f[1]) / "trace_view.json"
    text = tv.read_text()  # ASCII: byte offsets are character offsets
    cut = len(text) // 2
    cut_at(tv, cut)
    return {"kept": events_before(text, cut)}


@case(damage_tv_truncated)
def verify_tv_truncated(res, f, ctx):
    # a killed writer: every event that ends before the cut is kept, the cut one is counted
    expect_ok(res, f[1], trace_events=ctx["kept"], dq={"tv_truncated": 1},
              samples={"tv_truncated": "trace_view.json:byte"})
    expect_others_ok(res, f, [f[1]])


def damage_tv_concat(root, f):
    tv = apo(f[1]) / "trace_view.json"
    s = tv.read_text()
    mid = s.index("}, {", len(s) // 2)
    tv.write_text(s[:mid] + "}]\n[{" + s[mid + 4:])
    return {}


@case(damage_tv_concat)
def verify_tv_concat(res, f, ctx):
    name = f[1].name
    expect_ok(res, f[1], trace_events=CLEAN[name]["trace_view"]["events_total"], dq={"tv_damaged_span": 1},
              samples={"tv_damaged_span": "trace_view.json:byte"})
    check(res.ok.get(name, {}).get("trace_view", {}).get("damaged_spans") == 1, res.case, "damaged_spans != 1")
    expect_others_ok(res, f, [f[1]])


def damage_tv_object(root, f):
    (apo(f[1]) / "trace_view.json").write_text("{}")
    return {}


@case(damage_tv_object)
def verify_tv_object(res, f, ctx):
    # a trace_view.json that is not a JSON array cannot be read: the rank fails (schema), file named
    expect_failed(res, f[1], "schema", [str(apo(f[1]) / "trace_view.json") + ":byte 1: no traceEvents array"])
    expect_others_ok(res, f, [f[1]])


def damage_tv_deep_nesting(root, f):
    tv = apo(f[1]) / "trace_view.json"
    s = tv.read_text()
    deep = '{"ph": "X", "name": "deep", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"a": ' + \
        "[" * 100000 + "]" * 100000 + "}}, "
    tv.write_text("[" + deep + s[1:])
    return {}


@case(damage_tv_deep_nesting)
def verify_tv_deep_nesting(res, f, ctx):
    # valid JSON however deep: the event is read without recursion (its args are not used) and kept,
    # on a pid without process_name metadata; every other event is kept too
    name = f[1].name
    expect_ok(res, f[1], trace_events=CLEAN[name]["trace_view"]["events_total"] + 1, dq={"tv_unnamed_process": 1},
              samples={"tv_unnamed_process": "trace_view.json:byte 1: pid 1"})
    expect_others_ok(res, f, [f[1]])


def damage_tv_deep_unclosed(root, f):
    tv = apo(f[1]) / "trace_view.json"
    s = tv.read_text().rstrip()
    assert s.endswith("]")
    # the last event opens 100000 arrays and never closes them, then the file's closing ']' follows
    deep = ', {"ph": "X", "name": "deep", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"a": ' + "[" * 100000
    tv.write_text(s[:-1] + deep + "]")
    return {"offset": len(s) - 1 + 2}


@case(damage_tv_deep_unclosed)
def verify_tv_deep_unclosed(res, f, ctx):
    # every complete event is kept; the unclosed one is counted as the truncation it is, at its byte
    name = f[1].name
    expect_ok(res, f[1], trace_events=CLEAN[name]["trace_view"]["events_total"], dq={"tv_truncated": 1},
              samples={"tv_truncated": "trace_view.json:byte %d" % ctx["offset"]})
    expect_others_ok(res, f, [f[1]])


def damage_tv_numeric_strings(root, f):
    tv = apo(f[1]) / "trace_view.json"
    ev = load_tv(tv)
    for e in ev:  # numbers written as strings, as torch_npu does for ts
        for k in ("ts", "dur", "pid", "tid"):
            if k in e and isinstance(e[k], (int, float)):
                e[k] = repr(e[k]) if isinstance(e[k], float) else str(e[k])
    dump_tv(tv, ev)
    return {}


@case(damage_tv_numeric_strings)
def verify_tv_numeric_strings(res, f, ctx):
    name = f[1].name
    expect_ok(res, f[1], trace_events=CLEAN[name]["trace_view"]["events_total"])
    got, want = res.ok.get(name, {}).get("trace_view", {}), CLEAN[name]["trace_view"]
    for k in ("device_tasks", "host_ops", "comm_ops", "flows", "profiler_steps"):
        check(got.get(k) == want.get(k), res.case, "numeric strings: %s %s, clean %s" % (k, got.get(k), want.get(k)))
    expect_others_ok(res, f, [f[1]])


def damage_tv_wrong_types(root, f):
    tv = apo(f[1]) / "trace_view.json"
    ev = load_tv(tv)
    xs = [e for e in ev if e.get("ph") == "X"]
    xs[10]["dur"] = "abc"        # strings where numbers belong
    xs[20]["ts"] = "12:34"
    xs[30]["name"] = 12345       # a number where a string belongs
    xs[40]["pid"] = {"x": 1}     # an object where a number belongs
    dump_tv(tv, ev)
    return {}


@case(damage_tv_wrong_types)
def verify_tv_wrong_types(res, f, ctx):
    expect_ok(res, f[1], dq={"tv_bad_ts": 2}, samples={"tv_bad_ts": "dur is not a number", "tv_event_missing_field": "X event without name"})
    check(res.dq_count(f[1].name, "tv_event_missing_field") == 2, res.case,
          "wrong types: tv_event_missing_field %s, want 2 (name, pid); %s" % (res.dq_count(f[1].name, "tv_event_missing_field"), res.dq(f[1].name)))
    expect_others_ok(res, f, [f[1]])


def damage_tv_out_of_order(root, f):
    tv = apo(f[1]) / "trace_view.json"
    ev = load_tv(tv)
    meta = [e for e in ev if e.get("ph") == "M"]
    rest = [e for e in ev if e.get("ph") != "M"]
    dump_tv(tv, meta + rest[::-1])
    return {}


@case(damage_tv_out_of_order)
def verify_tv_out_of_order(res, f, ctx):
    name = f[1].name
    expect_ok(res, f[1], trace_events=CLEAN[name]["trace_view"]["events_total"], dq={"tv_events_out_of_order": None})
    got, want = res.ok.get(name, {}).get("trace_view", {}), CLEAN[name]["trace_view"]
    for k in ("device_tasks", "host_ops", "comm_ops", "flows", "overlap_intervals"):
        check(got.get(k) == want.get(k), res.case, "out of order: %s %s, clean %s" % (k, got.get(k), want.get(k)))
    expect_others_ok(res, f, [f[1]])


def damage_tv_unknown_ph(root, f):
    tv = apo(f[1]) / "trace_view.json"
    ev = load_tv(tv)
    for i, ph in enumerate(("Z", "?", "XX")):
        ev.insert(100 + i, {"ph": ph, "name": "odd", "pid": ev[100]["pid"], "tid": 1, "ts": ev[100].get("ts", 1)})
    dump_tv(tv, ev)
    return {}


@case(damage_tv_unknown_ph)
def verify_tv_unknown_ph(res, f, ctx):
    name = f[1].name
    expect_ok(res, f[1], trace_events=CLEAN[name]["trace_view"]["events_total"] + 3, dq={"tv_unknown_ph": 3},
              samples={"tv_unknown_ph": 'ph "Z"'})
    got, want = res.ok.get(name, {}).get("trace_view", {}), CLEAN[name]["trace_view"]
    for k in ("device_tasks", "host_ops", "comm_ops", "flows"):
        check(got.get(k) == want.get(k), res.case, "unknown ph: %s %s, clean %s" % (k, got.get(k), want.get(k)))
    expect_others_ok(res, f, [f[1]])


# -- communication.json --------------------------------------------------------------------------

def damage_comm_missing_keys(root, f):
    cj = apo(f[1]) / "communication.json"
    d = json.loads(cj.read_text())
    ops = [op for step in d.values() for op in step.get("collective", {}).values()]
    del ops[0]["Communication Time Info"]["Elapse Time(ms)"]
    del ops[0]["Communication Bandwidth Info"]
    cj.write_text(json.dumps(d))
    return {}


@case(damage_comm_missing_keys)
def verify_comm_missing_keys(res, f, ctx):
    name = f[1].name
    expect_ok(res, f[1], dq={"comm_missing_key": 2}, samples={"comm_missing_key": "communication.json:key step1.collective."})
    check(res.ok.get(name, {}).get("communication_rows") == CLEAN[name]["communication_rows"], res.case,
          "communication rows %s, clean %s" % (res.ok.get(name, {}).get("communication_rows"), CLEAN[name]["communication_rows"]))
    expect_others_ok(res, f, [f[1]])


# -- profiler_info and discovery -----------------------------------------------------------------

def damage_info_rank_types(root, f):
    for rank, value in ((1, "1"), (2, 2), (3, None)):
        src = f[rank] / ("profiler_info_%d.json" % rank)
        d = json.loads(src.read_text())
        if value is None:
            del d["rank_id"]
        else:
            d["rank_id"] = value
        src.unlink()
        (f[rank] / "profiler_info.json").write_text(json.dumps(d))
    return {}


@case(damage_info_rank_types)
def verify_info_rank_types(res, f, ctx):
    expect_root(res, "ok", 4, 0)
    ids = {n: r["rank_id"] for n, r in res.ok.items()}
    check(ids.get(f[1].name) == "rank1", res.case, "rank_id \"1\" (string) read as %r" % ids.get(f[1].name))
    check(ids.get(f[2].name) == "rank2", res.case, "rank_id 2 (int) read as %r" % ids.get(f[2].name))
    src = {n: r["rank_id_source"] for n, r in res.ok.items()}
    check(src.get(f[1].name) == "profiler_info_body", res.case, "rank 1 id source %r" % src.get(f[1].name))
    check(src.get(f[2].name) == "profiler_info_body", res.case, "rank 2 id source %r" % src.get(f[2].name))
    # no rank anywhere (not in the name, body or folder name): an id made from the folder's position
    check(src.get(f[3].name) == "ordinal", res.case, "rank 3 id source %r (id %r)" % (src.get(f[3].name), ids.get(f[3].name)))
    for r in f.values():
        expect_ok(res, r)


def damage_duplicate_rank(root, f):
    older = f[1]
    newer = root / older.name.replace("_2025", "_2026")
    shutil.copytree(older, newer, symlinks=True)
    os.utime(newer, (time.time() + 60, time.time() + 60))
    return {"newer": newer}


@case(damage_duplicate_rank)
def verify_duplicate_rank(res, f, ctx):
    expect_root(res, "ok", 4, 0)
    dups = res.manifest.get("duplicate_ranks", [])
    if check(len(dups) == 1, res.case, "duplicate_ranks %s" % dups):
        d = dups[0]
        check(d.get("rank_id") == "rank1", res.case, "duplicate rank id %r" % d.get("rank_id"))
        check(ctx["newer"].name in d.get("kept", ""), res.case, "kept %r, want the newer folder" % d.get("kept"))
        check(f[1].name in d.get("dropped", ""), res.case, "dropped %r" % d.get("dropped"))
    check(ctx["newer"].name in res.ok and f[1].name not in res.ok, res.case, "analysed %s" % sorted(res.ok))


def damage_rank_gap(root, f):
    shutil.rmtree(f[2])
    return {}


@case(damage_rank_gap)
def verify_rank_gap(res, f, ctx):
    # ranks 0,1,3: all analysed; the gap is reported but loses nothing that exists
    expect_root(res, "ok", 3, 0)
    for r in (0, 1, 3):
        expect_ok(res, f[r])
    text = json.dumps(res.manifest)
    check("disc_missing_rank" in text, res.case, "the gap (rank 2) is not reported in normalize_manifest.json")


# -- unreadable files ----------------------------------------------------------------------------

def make_unreadable(path, how):
    """chmod 000 stops nobody when the tests run as root (they do under scripts/test.sh), so as root the
    file is replaced by something that cannot be read as a file: a directory or a dangling symlink."""
    if os.geteuid() != 0:
        os.chmod(path, 0)
        return
    path.unlink()
    if how == "dir":
        path.mkdir()
    else:
        path.symlink_to(path.parent / "does-not-exist")


def damage_unreadable_files(root, f):
    make_unreadable(apo(f[1]) / "kernel_details.csv", "dir")
    make_unreadable(apo(f[2]) / "trace_view.json", "dangling")
    make_unreadable(apo(f[3]) / "communication.json", "dir")
    return {}


@case(damage_unreadable_files)
def verify_unreadable_files(res, f, ctx):
    expect_root(res, "partial", 1, 3)
    # each was silently treated as absent before (trace_view, communication: rank "ok" without them;
    # kernel_details: "no kernel_details.csv in this rank folder", class schema)
    root = os.geteuid() == 0
    expect_failed(res, f[1], "io", [str(apo(f[1]) / "kernel_details.csv"), "not a regular file" if root else "Permission denied"])
    expect_failed(res, f[2], "io", [str(apo(f[2]) / "trace_view.json"), "No such file or directory" if root else "Permission denied"])
    expect_failed(res, f[3], "io", [str(apo(f[3]) / "communication.json"), "not a regular file" if root else "Permission denied"])
    expect_ok(res, f[0])


def damage_dangling_rank_dir(root, f):
    link = root / "synth-node09_1_20251222122302000_ascend_pt"
    link.symlink_to(root / "gone")
    return {"link": link}


@case(damage_dangling_rank_dir)
def verify_dangling_rank_dir(res, f, ctx):
    expect_root(res, "partial", 4, 1)
    msg = res.stdout_failed.get(ctx["link"].name)  # "<folder>: <reason>"
    check(msg is not None and "dangling symlink" in msg, res.case,
          "dangling rank folder not reported: %s" % res.entry.get("failed_ranks"))
    f_entry = res.failed.get(ctx["link"].name, {})
    check(f_entry.get("error_class") == "io" and f_entry.get("path") == str(ctx["link"]), res.case,
          "manifest entry for the dangling folder: %s" % f_entry)
    for r in f.values():
        expect_ok(res, r)


# ---------------------------------------------------------------------------------------------------
# cases with a run of their own (they decide the whole run's exit code, or need a single process)

def analyze_cmd(exe, roots, out, np_=2, extra=()):
    cmd = [exe, "analyze"] + [str(r) for r in roots] + ["-o", str(out), "--force", "--progress", "none"] + list(extra)
    return (["mpirun", "-np", str(np_)] + cmd) if np_ > 1 else cmd


def case_sparse_4g(exe, base, work, env):
    """trace_view.json of 4 GiB + 1 MiB: the clean events without the closing bracket, then a hole of
    zeros (sparse: no disk space, no write time). The events before the hole are kept and the damage is
    counted; the file is streamed, so peak RSS stays far below the file size."""
    name = "tv_sparse_4g"
    root = work / name
    shutil.copytree(base, root, symlinks=True)
    f = rank_folders(root)
    tv = apo(f[1]) / "trace_view.json"
    s = tv.read_bytes().rstrip()
    tv.write_bytes(s[:-1].rstrip() + b", ")  # no closing bracket: the zeros follow the last event
    os.truncate(tv, 4 * 1024 ** 3 + 1024 ** 2)
    out = work / ("out-" + name)
    r = run(analyze_cmd(exe, [root], out, np_=1), env)
    if not no_crash(r, name):
        return
    j = r.json()
    check(r.rc == 0, name, "exit %d, want 0 (the rank survives its damage): %s" % (r.rc, r.err[-800:]))
    if not check(j is not None, name, "stdout is not one JSON object: %r" % r.out[:300]):
        return
    res = RootResult(name, (j.get("roots") or [None])[0])
    rank = f[1].name
    expect_ok(res, f[1], trace_events=CLEAN[rank]["trace_view"]["events_total"])
    dq = res.dq(rank)
    check("tv_truncated" in dq or "tv_damaged_span" in dq, name, "the zero tail is not counted as damage: %s" % dq)
    expect_others_ok(res, f, [f[1]])
    check_outputs_sane(name, out)
    check(r.maxrss_kb < 1024 * 1024, name, "peak RSS %.0f MB for a 4 GiB sparse trace_view.json" % (r.maxrss_kb / 1024))
    print("  %s: exit %d in %.1f s, peak RSS %.0f MB, data_quality %s" %
          (name, r.rc, r.seconds, r.maxrss_kb / 1024, {k: v["count"] for k, v in dq.items()}))
    shutil.rmtree(root)  # the 4 GiB (sparse) file


def case_nothing_analysed(exe, base, work, env):
    """Every rank's kernel_details.csv empty: nothing could be analysed -> exit 3, status failed."""
    name = "all_ranks_failed"
    root = work / name
    shutil.copytree(base, root, symlinks=True)
    for d in rank_folders(root).values():
        (apo(d) / "kernel_details.csv").write_bytes(b"")
    out = work / ("out-" + name)
    r = run(analyze_cmd(exe, [root], out, np_=1), env)
    if not no_crash(r, name):
        return
    j = r.json() or {}
    check(r.rc == 3, name, "exit %d, want 3" % r.rc)
    check(j.get("status") == "failed", name, "status %r, want failed" % j.get("status"))
    check(j.get("failed_roots") == [str(root)], name, "failed_roots %s" % j.get("failed_roots"))
    roots = j.get("roots") or [{}]
    check(len(roots[0].get("failed_ranks", [])) == RANKS, name, "failed_ranks %s" % roots[0].get("failed_ranks"))
    for m in roots[0].get("failed_ranks", []):
        check("kernel_details.csv: empty file" in m, name, "message %r" % m)
    check_outputs_sane(name, out)
    print("  %s: exit %d in %.1f s" % (name, r.rc, r.seconds))


def case_usage_errors(exe, base, work, env):
    """Usage/config errors -> exit 2 with one JSON error object, and nothing written."""
    name = "usage_errors"
    foreign = work / "foreign-out"
    foreign.mkdir()
    (foreign / "precious.txt").write_text("not ours")
    r = run([exe, "analyze", str(base), "-o", str(foreign), "--progress", "none"], env)  # no --force
    if no_crash(r, name):
        j = r.json() or {}
        check(r.rc == 2, name, "foreign OUT: exit %d, want 2" % r.rc)
        check(j.get("status") == "error", name, "foreign OUT: status %r" % j.get("status"))
        check(j.get("error_class") == "invalid_argument", name, "foreign OUT: error_class %r" % j.get("error_class"))
        check(str(foreign) in j.get("error", ""), name, "foreign OUT: message lacks the path: %r" % j.get("error"))
        check(sorted(p.name for p in foreign.iterdir()) == ["precious.txt"], name,
              "foreign OUT was written into: %s" % sorted(p.name for p in foreign.iterdir()))
    r = run([exe, "analyze", str(base), "-o", str(work / "out-usage"), "--no-such-option"], env)
    if no_crash(r, name):
        check(r.rc == 2, name, "unknown option: exit %d, want 2" % r.rc)
        check((r.json() or {}).get("status") == "error", name, "unknown option: stdout %r" % r.out[:300])
    print("  %s: checked" % name)


def case_hard_errors(exe, work, env):
    """A capture whose segmentation has a hard error (synth interior_island): everything analysed and
    written, exit 4, status structure_errors."""
    name = "hard_segmentation_error"
    cap = work / "cap-island"
    r = run([exe, "synth", "--scenario", "dense_gqa", "--ranks", "3", "--steps", "3", "--fault", "interior_island:2",
             "--force", "-o", str(cap)], env)
    if not check(r.rc == 0, name, "synth failed: %s" % r.err[-800:]):
        return
    out = work / "out-island"
    r = run(analyze_cmd(exe, [cap], out), env)
    if not no_crash(r, name):
        return
    j = r.json() or {}
    check(r.rc == 4, name, "exit %d, want 4: %s" % (r.rc, r.out[:400]))
    check(j.get("status") == "structure_errors", name, "status %r" % j.get("status"))
    check(j.get("hard_error_count", 0) > 0, name, "hard_error_count %r" % j.get("hard_error_count"))
    check(j.get("ranks_failed") == 0, name, "ranks_failed %r" % j.get("ranks_failed"))
    check_outputs_sane(name, out)
    print("  %s: exit %d in %.1f s" % (name, r.rc, r.seconds))


def case_sweep_symlink_loop(exe, base, work, env):
    """A search root with a symlink loop and an alias: the sweep ends, finds the capture root once."""
    name = "sweep_symlink_loop"
    search = work / "search"
    (search / "a").mkdir(parents=True)
    shutil.copytree(base, search / "a" / "cap", symlinks=True)
    (search / "a" / "loop").symlink_to("..")          # a/loop -> search (a cycle)
    (search / "a" / "cap" / "self").symlink_to(".")   # inside the capture root too
    (search / "b").symlink_to("a")                    # an alias of a
    out = work / "out-sweep"
    r = run(["mpirun", "-np", "2", exe, "sweep", "--search-root", str(search), "-o", str(out), "--force",
             "--progress", "none"], env)
    if not no_crash(r, name):
        return
    j = r.json() or {}
    check(r.rc == 0, name, "exit %d, want 0: %s %s" % (r.rc, r.out[:600], r.err[-600:]))
    roots = j.get("roots", [])
    check(len(roots) == 1, name, "found %d roots, want 1: %s" % (len(roots), [x.get("root") for x in roots]))
    a = j.get("analysis", {})
    check(a.get("rank_count") == RANKS and a.get("ranks_failed") == 0, name,
          "rank_count %r ranks_failed %r, want %d and 0 (the self link must not add ranks)" % (a.get("rank_count"), a.get("ranks_failed"), RANKS))
    check_outputs_sane(name, out)
    print("  %s: exit %d in %.1f s" % (name, r.rc, r.seconds))


# ---------------------------------------------------------------------------------------------------

def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    exe = os.path.abspath(sys.argv[1])
    work = pathlib.Path(sys.argv[2]).resolve()
    if shutil.which("mpirun") is None:
        print("SKIP: mpirun not found", file=sys.stderr)
        return 77
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    only = set(os.environ.get("BROKEN_CORPUS_ONLY", "").split(",")) - {""}
    t0 = time.time()
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    base = work / "clean"
    r = run([exe, "synth", "--scenario", "moe_mla_decode", "--ranks", str(RANKS), "--steps", "1", "-o", str(base)], env)
    if r.rc != 0:
        print("FAIL: synth exited %d: %s" % (r.rc, r.err[-2000:]), file=sys.stderr)
        return 1

    # one analyze run over the clean root and one damaged copy per case
    roots, folders, ctxs = [base], {}, {}
    for name, damage, _ in CASES:
        if only and name not in only:
            continue
        root = work / name
        shutil.copytree(base, root, symlinks=True)
        folders[name] = rank_folders(root)
        ctxs[name] = damage(root, folders[name])
        roots.append(root)
    out = work / "out-batch"
    r = run(analyze_cmd(exe, roots, out), env)
    print("batch: %d roots, exit %d in %.1f s, peak RSS %.0f MB" % (len(roots), r.rc, r.seconds, r.maxrss_kb / 1024))
    if no_crash(r, "batch"):
        j = r.json()
        if check(j is not None, "batch", "stdout is not one JSON object: %r / %s" % (r.out[:300], r.err[-1500:])):
            if not only:  # a subset (BROKEN_CORPUS_ONLY=case,...) may hold no failing rank
                check(r.rc == 1, "batch", "exit %d, want 1 (some ranks failed, partial results)" % r.rc)
                check(j.get("status") == "partial", "batch", "status %r, want partial" % j.get("status"))
            by_root = {e["root"]: e for e in j.get("roots", [])}
            clean = RootResult("clean", by_root.get(str(base)))
            expect_root(clean, "ok", RANKS, 0)
            CLEAN.update(clean.ok)
            check_outputs_sane("clean", clean.out_dir)
            for name, _, verify in CASES:
                if name not in folders:
                    continue
                res = RootResult(name, by_root.get(str(work / name)))
                if check(res.entry, name, "root missing from the JSON result"):
                    verify(res, folders[name], ctxs[name])
                    check_outputs_sane(name, res.out_dir)
                st = res.entry.get("status")
                print("  %-22s %-8s ok=%s failed=%s %s" % (name, st, res.entry.get("ranks_ok"), res.entry.get("ranks_failed"),
                                                           "; ".join(m[:160] for m in res.entry.get("failed_ranks", []))))
    if not CLEAN:
        print("FAIL: the clean root was not analysed; cannot check the other cases", file=sys.stderr)
    else:
        for fn in (case_sparse_4g, case_nothing_analysed, case_usage_errors, case_sweep_symlink_loop):
            if not only or fn.__name__[5:] in only:
                fn(exe, base, work, env)
        if not only or "hard_errors" in only:
            case_hard_errors(exe, work, env)
    print("broken corpus: %d checks failed, %.1f s" % (len(FAILURES), time.time() - t0))
    for msg in FAILURES:
        print("FAIL: " + msg, file=sys.stderr)
    if not FAILURES and not os.environ.get("BROKEN_CORPUS_KEEP"):
        shutil.rmtree(work, ignore_errors=True)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""The database path equals the text path (issue 19). For each scenario `synth --export both` writes
every rank as both exports with one ground truth; `analyze --source text` and `analyze --source db`
(2 processes) then must give:
1. the same root tables: every CSV and JSON file under OUT/<root>/ and report/report.md byte for
   byte, except what records the source itself: normalize_manifest.json and source_index.json
   (file kinds, sizes, header era, trace counts), the source_id column of raw_kernel_index.csv and
   normalized_event_index.csv (the id of the file each row came from), compared with that column
   removed, and the file a finding's limitation names for its rows ("rows 5-9 of kernel_details.csv" / "... of the kernel rows of
   ascend_pytorch_profiler_0.db (in start order)") and which links bound tasks to their launches (the
   text by flow ends and connection ids, the database by its launch table; how many tasks were linked
   must agree): diagnosis_findings.json is otherwise byte-equal,
   the same findings with the same evidence;
2. the same rank HDF5 tables: every dataset of ranks/<id>.h5 value for value (string ids resolved
   through /strings), except /trace (trace_view.json's events against the database's tables: other
   pids, counter and overlap events only in the text), /stats (data-quality counters of each
   importer), /kernels/source_line and source_table and /modules/calls/source_offset (keys into the
   source), and /communication's
   "Total Op Info" rows (communication.json has them, analysis.db does not); /communication/start_ns
   agrees to 250 ns: analysis.db stores the µs start as a REAL, whose resolution at today's epoch
   (~1.7e15 µs) is 1/4 µs, where communication.json writes 0.1 µs.

usage: db_equality_test.py ASCPROF_MPI WORK_DIR     (exit 0 pass, 1 fail)
Debian's python3 with python3-h5py.
"""
import csv
import io
import json
import pathlib
import re
import shutil
import subprocess
import sys

import h5py
import numpy as np

SCENARIOS = [
    ("moe_mla_decode", ["--ranks", "4", "--fault", "slow_rank:1", "--fault", "ep_imbalance:2",
                        "--fault", "cube_underused:3", "--fault", "interior_island:0"]),
    ("dense_gqa", ["--ranks", "4", "--fault", "vector_scalar_heavy:1", "--fault", "aicpu_fallback:2",
                   "--fault", "slow_collective:3"]),
    ("glm5_mtp", ["--ranks", "2", "--layers", "8", "--fault", "host_bound:1", "--fault", "throttled_cores:0"]),
    # pp 3 with 3 microbatches: the first stages run F0 F1 F2 B0 B1 B2, whose microbatches only the
    # point-to-point rows (COMMUNICATION_OP in the database) tell apart; with nn.Module ranges
    # (PYTORCH_API trace rows in the database): the same module tables from both
    ("training", ["--ranks", "6", "--pp", "3", "--microbatches", "3", "--fault", "idle_bubble:1", "--with-modules"]),
]
SOURCE_RECORDS = {"normalize_manifest.json", "source_index.json", "manifest.json"}  # manifest.json embeds the first


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def analyze(exe, cap, out, source):
    p = subprocess.run(["mpirun", "-np", "2", exe, "analyze", str(cap), "-o", str(out), "--source", source,
                        "--progress", "none", "--skip-html"], capture_output=True, text=True, timeout=900)
    if p.returncode not in (0, 4):  # 4: the injected island is a structure hard error, in both
        fail("%s: analyze --source %s exited %d\n%s" % (cap.name, source, p.returncode, p.stderr[-2000:]))
    roots = [d for d in out.iterdir() if d.is_dir()]
    return roots[0], p.returncode


def without_source_id(path):
    rows = list(csv.reader(io.StringIO(path.read_text())))
    if not rows:
        return rows
    col = rows[0].index("source_id")
    return [r[:col] + r[col + 1:] for r in rows]


def compare_root_files(case, t, d):
    files = sorted(p.relative_to(t) for p in t.rglob("*") if p.is_file() and
                   (p.suffix in (".csv", ".json") and p.parent == t or p.name == "report.md"))
    if len(files) < 20:
        fail("%s: only %d root files to compare" % (case, len(files)))
    for rel in files:
        a, b = t / rel, d / rel
        if not b.is_file():
            fail("%s: %s missing from the database run" % (case, rel))
        if rel.name in SOURCE_RECORDS:
            continue
        if rel.name in ("raw_kernel_index.csv", "normalized_event_index.csv"):
            if without_source_id(a) != without_source_id(b):
                ra, rb_ = without_source_id(a), without_source_id(b)
                diff = next((i for i, (x, y) in enumerate(zip(ra, rb_)) if x != y), None)
                fail("%s: %s differs beyond its source_id column (row %s: %s vs %s)" %
                     (case, rel.name, diff, ra[diff] if diff is not None else "", rb_[diff] if diff is not None else ""))
            continue
        if rel.name == "diagnosis_findings.json":
            db_rows = re.compile(rb"of the kernel rows of ascend_pytorch_profiler_\d+\.db \(in start order\)")
            # "<source> linked N of M device tasks to their launch (<by which link kind>)": N and M must agree
            links = re.compile(rb"(trace_view\.json|the database's [^\"]*?) linked (\d+) of (\d+) device tasks to their "
                               rb"launch \([^)\"]*\)")
            norm_a = links.sub(rb"linked \2 of \3", a.read_bytes())
            norm_b = links.sub(rb"linked \2 of \3", db_rows.sub(b"of kernel_details.csv", b.read_bytes()))
            if norm_a != norm_b:
                fail("%s: diagnosis_findings.json differs beyond the file its rows are cited from" % case)
            continue
        # the same bytes, apart from each run's own output folder (the manifests' output_dir)
        if a.read_bytes().replace(bytes(t), bytes(d)) != b.read_bytes():
            fail("%s: %s differs between --source text and --source db" % (case, rel))
    return len(files)


def as_str(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def columns(h5):
    """Every column of the file as name -> values: a table (one compound dataset) gives one entry
    per member, `<table>/<column>`, with string-id columns resolved through their string table; a
    standalone dataset is itself."""
    out = {}

    def resolve(ids, table_name):
        table = h5[table_name][()]
        return [table[int(i)] for i in ids]

    def visit(name, obj):
        if not isinstance(obj, h5py.Dataset):
            return
        if obj.dtype.names:
            records = obj[()]
            id_tables = dict(zip((as_str(c) for c in obj.attrs.get("id_columns", [])),
                                 (as_str(t) for t in obj.attrs.get("id_tables", []))))
            for c in obj.dtype.names:
                v = records[c]
                out[name + "/" + c] = resolve(v, id_tables[c]) if c in id_tables else v
        else:
            v = obj[()]
            out[name] = resolve(v, obj.attrs["strings"]) if obj.attrs.get("strings") is not None else v
    h5.visititems(visit)
    return out


def skipped(name):
    return (name.startswith("trace/") or name.startswith("stats/") or name == "strings" or
            name in ("kernels/source_line", "kernels/source_table", "modules/calls/source_offset"))


def equal(a, b):
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype.kind == "f":
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and np.array_equal(a, b)
    return list(a) == list(b)


def compare_rank(case, rank, t, d):
    compared = 0
    with h5py.File(t, "r") as ht, h5py.File(d, "r") as hd:
        if hd.attrs["source"] != "db" or ht.attrs["source"] != "text":
            fail("%s rank %s: sources %r / %r" % (case, rank, ht.attrs["source"], hd.attrs["source"]))
        dt, dd = columns(ht), columns(hd)
        names = sorted(n for n in dt if not skipped(n))
        missing = [n for n in names if n not in dd]
        if missing:
            fail("%s rank %s: datasets missing from the database run: %r" % (case, rank, missing[:10]))
        extra = sorted(n for n in dd if not skipped(n) and n not in dt)
        if extra:
            fail("%s rank %s: datasets only in the database run: %r" % (case, rank, extra[:10]))
        keep_t = keep_d = None
        if "communication/is_total" in dt:
            keep_t = np.asarray(dt["communication/is_total"]) == 0
            keep_d = np.asarray(dd["communication/is_total"]) == 0
        for n in names:
            a, b = dt[n], dd[n]
            if n.startswith("communication/") and keep_t is not None:
                a = np.asarray(a)[keep_t] if len(a) == len(keep_t) else a
                b = np.asarray(b)[keep_d] if len(b) == len(keep_d) else b
            if n == "communication/start_ns":
                a, b = np.asarray(a), np.asarray(b)
                if a.shape != b.shape or np.abs(a - b).max(initial=0) > 250:
                    fail("%s rank %s: %s differs by more than 250 ns" % (case, rank, n))
                compared += 1
                continue
            if not equal(np.asarray(a), np.asarray(b)):
                fail("%s rank %s: %s differs (text %r..., db %r...)" % (case, rank, n, list(a)[:5], list(b)[:5]))
            compared += 1
    return compared


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    exe, work = sys.argv[1], pathlib.Path(sys.argv[2]).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for scenario, args in SCENARIOS:
        case = scenario
        cap = work / (scenario + "_cap")
        subprocess.run([exe, "synth", "--scenario", scenario, "--export", "both", "-o", str(cap)] + args, check=True,
                       capture_output=True)
        t, rc_t = analyze(exe, cap, work / (scenario + "_text"), "text")
        d, rc_d = analyze(exe, cap, work / (scenario + "_db"), "db")
        if rc_t != rc_d:
            fail("%s: exit %d from text, %d from the database" % (case, rc_t, rc_d))
        files = compare_root_files(case, t, d)
        if "throttled_cores:0" in args:  # the database's AICORE_FREQ must show the throttled rank too
            found = json.loads((d / "diagnosis_findings.json").read_text())["diagnosis_findings"]
            if not any(f["finding_type"] == "aicore_frequency_reduced" and f["suspected_ranks"] == ["rank0"] for f in found):
                fail("%s: no aicore_frequency_reduced finding for rank 0 from the database" % case)
        if "--microbatches" in args:  # equal is not enough: both must have the generator's count
            want = int(args[args.index("--microbatches") + 1])
            segments = json.loads((d / "step_segments.json").read_text())["step_segments"]
            steps = [g for g in segments if g["segment_type"] == "step"]
            got = sorted({(g["rank_id"], g["microbatch_count"]) for g in steps})
            if not steps or any(c != want for _, c in got):
                fail("%s: microbatch counts per rank %r from the database, expected %d" % (case, got, want))
        sets = 0
        ranks = sorted(p.name for p in (t / "ranks").glob("*.h5"))
        if not ranks:
            fail("%s: no rank files" % case)
        for r in ranks:
            sets += compare_rank(case, r, t / "ranks" / r, d / "ranks" / r)
        print("%s: %d root files and %d rank datasets equal over %d ranks" % (case, files, sets, len(ranks)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

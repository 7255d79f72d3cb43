#!/usr/bin/python3
"""Every text output stays valid UTF-8 whatever bytes the input held (issue 21):
1. the error path: a kernel_details.csv header with a byte that is not UTF-8 (every rank fails with
   a schema error that quotes the header) and a rank folder whose name holds such a byte, through
   `analyze` and `sweep`. Before, the raw bytes were copied into the error, so
   sweep_class_rollup.csv's error column was not UTF-8 and CSV readers failed on it. Exit 3;
2. the data path: kernel names with such a byte in an otherwise good capture, and one in a
   profiler_info value. Before, the operator tables, raw_kernel_index.csv, operator_deep_dive.csv and
   report.md carried the raw byte. Exit 0, or 1 when the profiler_info byte fails its rank.
Each: every CSV/JSON/JSONL/MD/HTML file under OUT, every XML part of report.xlsx, stdout and stderr
decode as UTF-8, and the bad byte shows as the escape \\x80.

usage: utf8_outputs_test.py ASCPROF_MPI WORK_DIR     (exit 0 pass, 1 fail)
Python standard library only.
"""
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def undecodable(paths):
    bad = []
    for p in paths:
        try:
            p.read_bytes().decode("utf-8")
        except UnicodeDecodeError as e:
            bad.append("%r: %s" % (bytes(p), e))
    return bad


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    exe, work = sys.argv[1], pathlib.Path(sys.argv[2]).resolve()
    shutil.rmtree(work, ignore_errors=True)
    cap = work / "search" / "cap"
    subprocess.run([exe, "synth", "--scenario", "moe_mla_decode", "--ranks", "2", "-o", str(cap)], check=True,
                   capture_output=True)
    for kd in cap.rglob("kernel_details.csv"):
        head, rest = kd.read_bytes().split(b"\n", 1)
        kd.write_bytes(head.replace(b"Name", b"Na\x80me", 1) + b"\n" + rest)
    folder = sorted(p for p in cap.iterdir() if p.name.endswith("_ascend_pt"))[-1]
    os.rename(bytes(folder), bytes(folder).replace(b"synth", b"syn\xfeth", 1))

    for name, args in (("analyze", ["analyze", str(cap), "-o", str(work / "out_analyze")]),
                       ("sweep", ["sweep", "--search-root", str(work / "search"), "-o", str(work / "out_sweep")])):
        p = subprocess.run([exe] + args + ["--progress", "lines"], capture_output=True)
        if p.returncode != 3:
            fail("%s exited %d, expected 3 (no rank usable): %r" % (name, p.returncode, p.stderr[-1500:]))
        out = work / ("out_" + name)
        files = [f for f in out.rglob("*") if f.is_file() and f.suffix in (".csv", ".json", ".jsonl", ".md", ".html")]
        (work / (name + ".stdout")).write_bytes(p.stdout)
        (work / (name + ".stderr")).write_bytes(p.stderr)
        bad = undecodable(files + [work / (name + ".stdout"), work / (name + ".stderr")])
        if bad:
            fail("%s: outputs that are not UTF-8: %s" % (name, bad[:5]))
        if b"Na\\\\x80me" not in p.stdout or b"Na\\x80me" not in p.stderr:  # JSON doubles the backslash
            fail("%s: the bad byte is not shown as \\x80 in the error: %r" % (name, p.stdout[:600]))
        if name == "sweep":
            rollup = (out / "sweep_class_rollup.csv").read_bytes()
            if b"Na\\x80me" not in rollup:
                fail("sweep_class_rollup.csv's error column does not name the escaped header: %r" % rollup[:800])
        print("%s: exit 3, %d output files and stdout/stderr valid UTF-8, \\x80 shown" % (name, len(files)),
              file=sys.stderr)

    # 2. kernel names with a byte that is not UTF-8 in a capture that is otherwise fine
    good = work / "names"
    subprocess.run([exe, "synth", "--scenario", "moe_mla_decode", "--ranks", "2", "-o", str(good)], check=True,
                   capture_output=True)
    for kd in good.rglob("kernel_details.csv"):
        lines = kd.read_bytes().split(b"\n")
        kd.write_bytes(b"\n".join([lines[0]] + [l.replace(b"MatMul", b"Mat\x80Mul", 1) for l in lines[1:]]))
    # and a profiler_info value: simdjson refuses the file (not UTF-8), so that rank fails with a parse error
    info = sorted(good.rglob("profiler_info_*.json"))[0]
    info.write_bytes(info.read_bytes().replace(b"ProfilerActivity.CPU", b"ProfilerActivity.C\xffPU", 1))
    p = subprocess.run([exe, "analyze", str(good), "-o", str(work / "out_names"), "--progress", "lines"], capture_output=True)
    if p.returncode not in (0, 1):
        fail("analyze of the capture with odd kernel names exited %d: %r" % (p.returncode, p.stderr[-1500:]))
    out = work / "out_names"
    files = [f for f in out.rglob("*") if f.is_file() and f.suffix in (".csv", ".json", ".jsonl", ".md", ".html")]
    (work / "names.stdout").write_bytes(p.stdout)
    (work / "names.stderr").write_bytes(p.stderr)
    bad = undecodable(files + [work / "names.stdout", work / "names.stderr"])
    for book in out.rglob("report.xlsx"):
        with zipfile.ZipFile(book) as z:
            for part in z.namelist():
                try:
                    z.read(part).decode("utf-8")
                except UnicodeDecodeError as e:
                    bad.append("%s:%s: %s" % (book, part, e))
    if bad:
        fail("odd kernel names: outputs that are not UTF-8: %s" % bad[:5])
    summary = next(out.rglob("operator_summary.csv")).read_bytes()
    if b"Mat\\x80Mul" not in summary:
        fail("operator_summary.csv does not show the odd name as Mat\\x80Mul")
    print("kernel names and a profiler_info value: exit %d, %d output files, report.xlsx, stdout/stderr valid UTF-8, "
          "\\x80 shown" % (p.returncode, len(files)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

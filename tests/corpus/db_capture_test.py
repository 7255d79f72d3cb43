#!/usr/bin/python3
"""Database captures end to end (issue 19), through the real CLI:
1. the real SQLite-only captures db-cnn-level{0,1,2} (no CSV or JSON exports) with 1, 2 and 3
   processes: both ranks analysed from their databases (191 kernel rows each), every stage and the
   report run, the manifests and each rank's HDF5 say source "db", and every kernel row a finding
   cites resolves, through ranks/<id>.h5 /kernels source_table + source_line, to a database row with
   the same kernel name;
2. a mixed root (rank 0 as text export, rank 1 as database): both analysed, each from its own source;
3. a sweep over a search root holding database-only roots finds and analyses them;
4. --source text on a database-only capture and --source db on a text-only one: every rank fails
   with a message saying which file is missing (exit 3);
5. a damaged database (cut in half) fails its rank with file and reason; the other rank completes
   (exit 1);
6. nothing is ever written beside a database (the fixture folders' listings are unchanged);
7. trimmed ranks (communication data, no kernel table) are partial, not failed: a synthetic training
   capture whose rank 5 (with a slow link) kept only communication.json still names rank 5 in the
   slow-link finding; its HDF5 holds the communication and step-trace rows; the manifests, the
   result and report.md mark it partial; a rerun reuses it. A database rank with only analysis.db
   is partial the same way (source db).

usage: db_capture_test.py ASCPROF_MPI WORK_DIR     (exit 0 pass, 1 fail, 77 real fixtures absent)
Debian's python3 with its sqlite3 module and python3-h5py.
"""
import json
import os
import pathlib
import re
import shutil
import sqlite3
import subprocess
import sys

import h5py

FIXTURES = pathlib.Path(os.environ.get("ASCPROF_REAL_FIXTURES", ""))


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def run(exe, args, procs=1):
    cmd = ([exe] if procs == 1 else ["mpirun", "-np", str(procs), exe]) + args + ["--progress", "none"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    last = [l for l in p.stdout.splitlines() if l.startswith("{")]
    return p.returncode, (json.loads(last[-1]) if last else {}), p.stderr


def root_out(out):
    dirs = [d for d in out.iterdir() if d.is_dir() and (d / "normalize_manifest.json").exists()]
    if len(dirs) != 1:
        fail("expected one root folder under %s, found %r" % (out, dirs))
    return dirs[0]


def listing(folder):
    return sorted((str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*"))


def rank_sources(rout):
    m = json.loads((rout / "normalize_manifest.json").read_text())
    return {r["rank_id"]: r for r in m["rank_summaries"]}


def check_evidence_resolves(rout, capture):
    """Every evt_<ordinal>_<row> a finding cites names a database row holding the same kernel."""
    ranks = rank_sources(rout)
    by_ordinal = {r["rank_index"]: r for r in ranks.values()}
    findings = json.loads((rout / "diagnosis_findings.json").read_text())["diagnosis_findings"]
    cited = 0
    for f in findings:
        for ev in f["evidence_ids"]:
            m = re.fullmatch(r"evt_(\d+)_(\d+)", ev)
            if not m:
                continue
            r = by_ordinal[int(m.group(1))]
            row = int(m.group(2))
            with h5py.File(rout / r["h5_file"], "r") as h5:
                k = h5["kernels"]
                table = int(k["source_table"][row])
                key = int(k["source_line"][row])
                name = h5["strings"][int(k["name"][row])].decode()
            dbs = list((capture / r["rank_dir"]).rglob("ascend_pytorch_profiler*.db"))
            con = sqlite3.connect("file:%s?immutable=1" % dbs[0], uri=True)
            if table == 1:
                q = "SELECT s.value FROM COMPUTE_TASK_INFO c JOIN STRING_IDS s ON s.id = c.name WHERE c.globalTaskId = ?"
            elif table == 2:
                q = "SELECT s.value FROM COMMUNICATION_OP c JOIN STRING_IDS s ON s.id = c.opName WHERE c.opId = ?"
            else:
                fail("%s: row %d of rank %s has source_table %d" % (ev, row, r["rank_id"], table))
            got = con.execute(q, (key,)).fetchone()
            con.close()
            if got is None or got[0] != name:
                fail("%s: database row %d of table %d holds %r, the kernel row %r" % (ev, key, table, got, name))
            cited += 1
    return cited


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    exe, work = sys.argv[1], pathlib.Path(sys.argv[2]).resolve()
    if not (FIXTURES / "db-cnn-level2").is_dir():
        print("SKIP: real fixtures not found ($ASCPROF_REAL_FIXTURES)", file=sys.stderr)
        return 77
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    before = {lvl: listing(FIXTURES / ("db-cnn-" + lvl)) for lvl in ("level0", "level1", "level2")}

    # 1. the real database captures, 1/2/3 processes
    total_cited = 0
    for lvl, procs in (("level0", 1), ("level1", 2), ("level2", 3)):
        cap = FIXTURES / ("db-cnn-" + lvl)
        out = work / ("out_" + lvl)
        rc, res, err = run(exe, ["analyze", str(cap), "-o", str(out)], procs)
        if rc != 0 or res.get("status") != "ok":
            fail("%s with %d processes: exit %d, %r\n%s" % (lvl, procs, rc, res.get("status"), err[-2000:]))
        if res["rank_count"] != 2 or res["ranks_failed"] != 0 or res["event_count"] != 382:
            fail("%s: ranks %r failed %r events %r (expected 2, 0, 382)" % (lvl, res["rank_count"], res["ranks_failed"],
                                                                            res["event_count"]))
        for stage in ("normalize", "segment", "classify", "summarize", "cross_rank", "diagnostics", "report"):
            if stage not in res["stages_executed"]:
                fail("%s: stage %s did not run" % (lvl, stage))
        rout = root_out(out)
        for rid, r in rank_sources(rout).items():
            if r["source"] != "db" or r["event_count"] != 191 or not r["header_era"].startswith("DB-"):
                fail("%s rank %s: source %r, %r rows, era %r" % (lvl, rid, r["source"], r["event_count"], r["header_era"]))
            with h5py.File(rout / r["h5_file"], "r") as h5:
                if h5.attrs["source"] != "db":
                    fail("%s rank %s: HDF5 source attribute %r" % (lvl, rid, h5.attrs["source"]))
        for f in ("report/report.md", "report/report.xlsx", "step_summary.csv", "hccl_op_summary.csv",
                  "operator_summary.csv", "diagnosis_findings.json"):
            if not (rout / f).is_file() or (rout / f).stat().st_size == 0:
                fail("%s: %s missing or empty" % (lvl, f))
        sources = json.loads((rout / "source_index.json").read_text())
        kinds = {s["kind"] for s in sources["sources"]}
        if "profiler_db" not in kinds or "kernel_details_csv" in kinds:
            fail("%s: source_index.json kinds %r lack profiler_db" % (lvl, kinds))
        total_cited += check_evidence_resolves(rout, cap)
    if total_cited == 0:
        fail("no finding cited a kernel row: the evidence check checked nothing")

    # 2. a mixed root: rank 0 text, rank 1 database
    mixed = work / "mixed"
    shutil.copytree(FIXTURES / "e2-cnn-level2" / "rank0_ascend_pt", mixed / "rank0_ascend_pt")
    shutil.copytree(FIXTURES / "db-cnn-level2" / "rank1_ascend_pt", mixed / "rank1_ascend_pt")
    rc, res, err = run(exe, ["analyze", str(mixed), "-o", str(work / "out_mixed")], 2)
    if rc != 0:
        fail("mixed root: exit %d\n%s" % (rc, err[-2000:]))
    got = {rid: r["source"] for rid, r in rank_sources(root_out(work / "out_mixed")).items()}
    if got != {"rank0": "text", "rank1": "db"}:
        fail("mixed root: sources %r" % got)

    # 3. a sweep that discovers database-only roots
    search = work / "search"
    for lvl in ("level0", "level1"):
        shutil.copytree(FIXTURES / ("db-cnn-" + lvl), search / ("job-" + lvl))
    rc, res, err = run(exe, ["sweep", "--search-root", str(search), "-o", str(work / "out_sweep")], 2)
    if rc != 0:
        fail("sweep: exit %d\n%s" % (rc, err[-2000:]))
    summary = json.loads((work / "out_sweep" / "sweep_summary.json").read_text())
    roots = summary["results"]
    if len(roots) != 2 or any(r.get("status") != "ok" for r in roots):
        fail("sweep: roots %r" % [(r.get("root"), r.get("status")) for r in roots])

    # 4. --source forcing the export a capture does not have
    rc, res, err = run(exe, ["analyze", str(FIXTURES / "db-cnn-level0"), "-o", str(work / "out_force_text"),
                             "--source", "text"])
    if rc != 3 or "--source text" not in json.dumps(res):
        fail("--source text on a database capture: exit %d, %s" % (rc, json.dumps(res)[:1500]))
    rc, res, err = run(exe, ["analyze", str(FIXTURES / "e2-cnn-level0"), "-o", str(work / "out_force_db"),
                             "--source", "db"])
    if rc != 3 or "no ascend_pytorch_profiler_N.db" not in json.dumps(res):
        fail("--source db on a text capture: exit %d, %s" % (rc, json.dumps(res)[:1500]))
    rc, res, err = run(exe, ["analyze", str(mixed), "-o", str(work / "out_bad_source"), "--source", "csv"])
    if rc != 2:
        fail("--source csv: exit %d (expected 2, a usage error)" % rc)

    # 5. a damaged database fails only its rank
    broken = work / "broken"
    shutil.copytree(FIXTURES / "db-cnn-level2", broken)
    victim = next((broken / "rank1_ascend_pt").rglob("ascend_pytorch_profiler_1.db"))
    data = victim.read_bytes()
    victim.write_bytes(data[: len(data) // 2])
    rc, res, err = run(exe, ["analyze", str(broken), "-o", str(work / "out_broken")], 2)
    if rc != 1:
        fail("damaged database: exit %d (expected 1, partial)\n%s" % (rc, err[-1500:]))
    text = json.dumps(res)
    if "ascend_pytorch_profiler_1.db" not in text or res.get("ranks_failed") != 1:
        fail("damaged database: the error does not name the file or the wrong count failed: %s" % text[:2000])
    leftovers = sorted(p.name for p in victim.parent.iterdir())
    if leftovers != sorted(["analysis.db", "ascend_pytorch_profiler_1.db"]):
        fail("files appeared beside the damaged database: %r" % leftovers)

    # 7. trimmed ranks: communication data only
    trimmed = work / "trimmed"
    subprocess.run([exe, "synth", "--scenario", "training", "--ranks", "8", "--steps", "6", "--fault", "slow_collective:5",
                    "-o", str(trimmed)], check=True, capture_output=True)
    rank5 = next(p for p in trimmed.iterdir() if (p / "profiler_info_5.json").exists())
    for f in ("kernel_details.csv", "trace_view.json"):
        (rank5 / "ASCEND_PROFILER_OUTPUT" / f).unlink()
    for attempt in ("first", "rerun"):
        rc, res, err = run(exe, ["analyze", str(trimmed), "-o", str(work / "out_trimmed")], 2)
        if rc != 1 or res.get("status") != "partial" or res.get("ranks_partial") != 1 or res.get("ranks_failed") != 0:
            fail("trimmed (%s): exit %d, %s" % (attempt, rc, json.dumps(res)[:1500]))
        if attempt == "rerun" and res.get("ranks_reused") != 8:
            fail("trimmed rerun reused %r of 8 ranks" % res.get("ranks_reused"))
    rout = root_out(work / "out_trimmed")
    r5 = rank_sources(rout)["rank5"]
    if r5["status"] != "partial" or r5["event_count"] != 0:
        fail("trimmed: rank 5 in normalize_manifest: %r" % r5)
    with h5py.File(rout / r5["h5_file"], "r") as h5:
        if h5["communication"].attrs["row_count"] == 0 or h5["step_trace"].attrs["row_count"] == 0:
            fail("trimmed: rank 5's HDF5 lacks communication or step-trace rows")
    findings = json.loads((rout / "diagnosis_findings.json").read_text())["diagnosis_findings"]
    if not any(f["finding_type"] == "slow_link_suspected" and f["suspected_ranks"] == ["rank5"] for f in findings):
        fail("trimmed: the slow link of the communication-only rank 5 was not found: %r" %
             [(f["finding_type"], f["suspected_ranks"]) for f in findings])
    if "Partial ranks" not in (rout / "report" / "report.md").read_text():
        fail("trimmed: report.md does not mark the partial rank")
    db_trim = work / "db_trimmed"
    shutil.copytree(FIXTURES / "db-cnn-level2", db_trim)
    next((db_trim / "rank1_ascend_pt").rglob("ascend_pytorch_profiler_1.db")).unlink()
    rc, res, err = run(exe, ["analyze", str(db_trim), "-o", str(work / "out_db_trimmed")])
    r1 = rank_sources(root_out(work / "out_db_trimmed")).get("rank1", {})
    if rc != 1 or res.get("ranks_partial") != 1 or r1.get("status") != "partial" or r1.get("source") != "db":
        fail("analysis.db-only rank: exit %d, rank 1 %r, %s" % (rc, r1, json.dumps(res)[:800]))

    # 6. nothing written beside the fixtures' databases
    for lvl, b in before.items():
        if listing(FIXTURES / ("db-cnn-" + lvl)) != b:
            fail("the fixture folder db-cnn-%s changed" % lvl)
    print("db_capture: ok (%d cited kernel rows resolved to database rows)" % total_cited)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Root tables kept as an index of the ranks' rows (knowledge/summarize.rules [root_tables], issue 22).
A generated 4-rank root with a slow rank is analysed twice: with the shipped knowledge (every table
copied into the root) and with a copy whose max_concatenated_mib is 0 (every table with rows kept as
<table>.parts.json). Checked:
1. each such table is absent from the second root, its index is there, and `ascprof-mpi table` writes
   exactly the bytes of the first root's copy, as does the README's Python recipe (the packs' parts
   are zlib streams, at least one inflated); tables without rows stay empty files in both;
2. the findings, report.md, report.html, timeline.json and every sheet of report.xlsx are the same
   (the output folder's own name aside): the report reads the index as it reads the copy;
3. the root folder moved elsewhere still reads (the index names the ranks' packs relative to it);
4. a rerun into the same OUT with the shipped knowledge puts the copies back and removes the indexes;
5. `ascprof-mpi table` on a table that is neither a file nor an index exits 3 naming it.

usage: indexed_tables_test.py ASCPROF_MPI WORK_DIR     (exit 0 pass, 1 fail)
Python standard library only.
"""
import json
import pathlib
import shutil
import subprocess
import sys
import zipfile
import zlib


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def run(args, expect=0):
    p = subprocess.run(args, capture_output=True)
    if p.returncode != expect:
        fail("%s exited %d (expected %d): %s" % (" ".join(map(str, args)), p.returncode, expect, p.stderr[-2000:]))
    return p


def only_root(out):
    roots = [d for d in out.iterdir() if d.is_dir()]
    if len(roots) != 1:
        fail("expected one root folder in %s, found %s" % (out, roots))
    return roots[0]


def report_texts(root):
    """The report's files with the output folder's path taken out (the two OUT names are of one length:
    the path sets xlsx column widths)."""
    texts = {}
    for rel in ("diagnosis_findings.json", "report/report.md", "report/report.html", "report/timeline.json"):
        p = root / rel
        if p.exists():
            texts[rel] = p.read_text(encoding="utf-8").replace(str(root.parent.name), "OUT")
    with zipfile.ZipFile(root / "report" / "report.xlsx") as z:
        for name in z.namelist():
            if name.startswith("xl/"):
                texts["xlsx:" + name] = z.read(name).decode("utf-8").replace(str(root.parent.name), "OUT")
    return texts


def readme_recipe(root, table):
    """The README's Python recipe for a table kept as an index (section "Root tables kept as an index")."""
    idx = json.load(open(str(root) + "/" + table + ".parts.json"))
    text = idx["header"].encode()
    for p in idx["parts"]:
        with open(str(root) + "/" + p["file"], "rb") as f:
            f.seek(p["offset"]); data = f.read(p["length"])
        text += zlib.decompress(data) if p["encoding"] == "zlib" else data
    return text, sum(1 for p in idx["parts"] if p["encoding"] == "zlib")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    exe, work = sys.argv[1], pathlib.Path(sys.argv[2]).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cap = work / "cap"
    run([exe, "synth", "--scenario", "moe_mla_decode", "--ranks", "4", "--fault", "slow_rank", "-o", str(cap)])
    shipped = pathlib.Path(__file__).resolve().parents[2] / "knowledge"
    small = work / "knowledge_small"
    shutil.copytree(shipped, small)
    rules = small / "summarize.rules"
    text = rules.read_text()
    if "\nmax_concatenated_mib = " not in text:
        fail("summarize.rules has no [root_tables] max_concatenated_mib line")
    rules.write_text(text.replace("\nmax_concatenated_mib = ", "\nmax_concatenated_mib = 0\n# was ", 1))

    run([exe, "analyze", str(cap), "-o", str(work / "out_copied")])
    run([exe, "analyze", str(cap), "-o", str(work / "out_parted"), "--knowledge", str(small)])
    a, b = only_root(work / "out_copied"), only_root(work / "out_parted")

    indexed = inflated_parts = 0
    for table in sorted(p.name for p in a.glob("*.csv")):
        index = b / (table + ".parts.json")
        if (a / table).stat().st_size == 0 or not index.exists():
            continue
        indexed += 1
        if (b / table).exists():
            fail("%s: both the table and its index are in the root" % table)
        got = run([exe, "table", str(b / table)]).stdout
        if got != (a / table).read_bytes():
            fail("%s: `ascprof-mpi table` differs from the copied table (%d vs %d bytes)"
                 % (table, len(got), (a / table).stat().st_size))
        recipe, deflated = readme_recipe(b, table)
        if recipe != got:
            fail("%s: the README's Python recipe differs from the copied table" % table)
        inflated_parts += deflated
    if inflated_parts == 0:
        fail("no indexed part was a zlib stream: the packs' compression went untested")
    for must in ("raw_kernel_index.csv", "evidence_index.csv", "operator_summary.csv", "step_summary.csv"):
        if not (b / (must + ".parts.json")).exists():
            fail("%s was not kept as an index with max_concatenated_mib = 0" % must)
    ta, tb = report_texts(a), report_texts(b)
    if set(ta) != set(tb):
        fail("report files differ: %s" % sorted(set(ta) ^ set(tb)))
    for k in ta:
        if ta[k] != tb[k]:
            fail("%s differs between the copied and the indexed root" % k)
    if '"finding_count":0' in ta["diagnosis_findings.json"].replace(" ", ""):
        fail("the slow rank gave no finding: the comparison would prove little")

    moved = work / "moved" / b.name
    shutil.copytree(b, moved)
    (b / "ranks").rename(work / "ranks_away")  # only the moved copy's packs can be read now
    got = run([exe, "table", str(moved / "raw_kernel_index.csv")]).stdout
    if got != (a / "raw_kernel_index.csv").read_bytes():
        fail("the moved root's raw_kernel_index.csv differs")
    (work / "ranks_away").rename(b / "ranks")

    run([exe, "analyze", str(cap), "-o", str(work / "out_parted")])
    leftovers = sorted(p.name for p in b.glob("*.parts.json")) + sorted(p.name for p in b.glob("*.bubbles"))
    if leftovers:
        fail("a rerun under the budget left %s" % leftovers)
    for table in sorted(p.name for p in a.glob("*.csv")):
        if (b / table).read_bytes() != (a / table).read_bytes():
            fail("%s after the rerun differs from the copied run" % table)

    p = run([exe, "table", str(b / "no_such_table.csv")], expect=3)
    if b"no_such_table.csv" not in p.stderr:
        fail("`table` on a missing table does not name it: %r" % p.stderr)
    print("ok: %d tables read through their index as the copies, report identical" % indexed)
    return 0


if __name__ == "__main__":
    sys.exit(main())

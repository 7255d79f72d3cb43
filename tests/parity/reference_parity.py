#!/usr/bin/python3
"""Compare our outputs with the reference tool's own outputs, file by file (issue 23).

For every file the reference wrote on a fixture (../shared/fixtures/reference-outputs/<fixture>) this
checks that we write a file of the same name, and then:
  - JSON (and JSON lines): the same shape: the same type at every path, and every key the reference
    has (our extra keys are allowed);
  - CSV: the reference's header as the first columns of ours, in the same order (our extra columns may
    follow), the same row count, and every value of every reference column: equal as text, or, when
    both parse as numbers, equal within 1e-9 relative.
Every difference found is matched against docs/reference-differences.md, the one list of differences we
keep on purpose or have not removed yet. A difference not listed fails the test; so does a listed
difference that no longer occurs (the list never claims more than is true).

Usage: reference_parity.py --binary B --fixtures REAL --reference REFOUT --differences FILE
                           --work DIR [--fixture NAME ...] [--list]
--list prints every difference found (beyond the file's tolerances) as a table row, and passes.
Exit 0 on parity (up to the list), 1 on a difference, 77 when fixtures are absent (CTest skip).
"""
import argparse
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys

FIXTURES = ["e2-cnn-level0", "e2-cnn-level1", "e2-cnn-level2", "e1-2023-two-rank"]
SKIPPED_EXIT = 77
csv.field_size_limit(1 << 30)


class Difference:
    """One difference: (fixture, file, item, kind) and a human example. item is a column, a JSON path,
    or "-" for the file as a whole."""

    def __init__(self, fixture, file, item, kind, example=""):
        self.fixture, self.file, self.item, self.kind, self.example = fixture, file, item, kind, example

    def key(self):
        return (self.fixture, self.file, self.item, self.kind)


def run_ours(binary, fixture_dir, out_dir):
    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    proc = subprocess.run([binary, "analyze", fixture_dir, "-o", out_dir, "--progress", "none"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"analyze {fixture_dir} exited {proc.returncode}: {proc.stderr[-2000:]}")
    roots = [d for d in os.listdir(out_dir) if os.path.isdir(os.path.join(out_dir, d)) and not d.startswith(".")]
    if len(roots) != 1:
        raise RuntimeError(f"expected one root folder in {out_dir}, found {roots}")
    return os.path.join(out_dir, roots[0])


def reference_files(ref_dir):
    for base, _, names in os.walk(ref_dir):
        for name in sorted(names):
            path = os.path.join(base, name)
            yield os.path.relpath(path, ref_dir)


def type_name(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "list"
    return "object"


# Lists of records of several kinds (findings, evidence, alignments) are compared kind by kind: the
# records of one kind in the reference against ours of that kind.
DISCRIMINATORS = ("finding_type", "kind", "segment_type", "alignment_type", "scope_type")


def first_value(records, key):
    for r in records:
        if r.get(key) is not None:
            return r[key]
    return None


def compare_records(ref, ours, path, emit):
    """Every key of any reference record is a key of some record of ours; values compared by shape."""
    for key in dict.fromkeys(k for r in ref for k in r):
        if not any(key in o for o in ours):
            emit(f"{path}.{key}", "missing", "")
        else:
            compare_json(first_value(ref, key), first_value(ours, key), f"{path}.{key}", emit)


HASHED_ID = re.compile(r"^[a-z]+(_[a-z]+)*_[0-9a-f]{12,}$")


def compare_json(ref, ours, path, emit):
    """Shape and keys: a null in either is compatible with any type (optional values)."""
    rt, ot = type_name(ref), type_name(ours)
    if rt == "null" or ot == "null":
        return
    if rt != ot:
        emit(path, "type", f"reference {rt}, ours {ot}")
        return
    if rt == "object" and path.rsplit(".", 1)[-1].endswith("_counts"):
        # a counter keyed by data (task types, roles, categories): its keys are the window's, so
        # records of different windows are compared by the shape of a value
        if ref and ours:
            compare_json(next(iter(ref.values())), next(iter(ours.values())), f"{path}.<key>", emit)
        return
    if rt == "object" and ref and all(HASHED_ID.match(k) for k in ref):
        # a map keyed by hashed ids (class_by_id, classes): the ids differ by design; compare a value's shape
        if ours:
            compare_json(next(iter(ref.values())), next(iter(ours.values())), f"{path}.<id>", emit)
        return
    if rt == "object":
        for k, v in ref.items():
            if k not in ours:
                emit(f"{path}.{k}", "missing", "")
            else:
                compare_json(v, ours[k], f"{path}.{k}", emit)
    elif rt == "list" and ref and ours and all(isinstance(x, dict) for x in ref) and all(isinstance(x, dict) for x in ours):
        disc = next((d for d in DISCRIMINATORS if all(d in x for x in ref)), None)
        if disc is None:
            compare_records(ref, ours, f"{path}[]", emit)
            return
        for kind in dict.fromkeys(x[disc] for x in ref):
            mine = [x for x in ours if x.get(disc) == kind]
            if not mine:
                emit(f"{path}[{disc}={kind}]", "missing", "")
                continue
            compare_records([x for x in ref if x[disc] == kind], mine, f"{path}[{disc}={kind}]", emit)
    elif rt == "list":
        for i in range(min(len(ref), len(ours))):
            compare_json(ref[i], ours[i], f"{path}[]", emit)


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def same_number(x, y):
    if math.isnan(x) and math.isnan(y):
        return True
    return abs(x - y) <= 1e-9 * max(abs(x), abs(y), 1e-300)


def same_json(a, b):
    """JSON values equal up to number formatting (1.0 and 1, 0.500000 and 0.5)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return same_number(float(a), float(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return a == b


def same_value(a, b):
    """Two CSV cells: equal as text, as numbers, or (JSON cells) as JSON values."""
    if a == b:
        return True
    x, y = number(a), number(b)
    if x is not None and y is not None:
        return same_number(x, y)
    if a[:1] in ("[", "{") and b[:1] in ("[", "{"):
        try:
            return same_json(json.loads(a), json.loads(b))
        except json.JSONDecodeError:
            return False
    return False


def within(a, b, tolerance):
    """Two cells equal up to an absolute tolerance: numbers, or JSON values holding numbers."""
    x, y = number(a), number(b)
    if x is not None and y is not None:
        return abs(x - y) <= tolerance
    if a[:1] in ("[", "{") and b[:1] in ("[", "{"):
        try:
            return close_json(json.loads(a), json.loads(b), tolerance)
        except json.JSONDecodeError:
            return False
    return False


def close_json(a, b, tolerance):
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= tolerance
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close_json(a[k], b[k], tolerance) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close_json(x, y, tolerance) for x, y in zip(a, b))
    return a == b


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        return [], []
    return rows[0], rows[1:]


def compare_csv(ref_path, our_path, emit, tolerance_of=lambda column: None):
    """tolerance_of(column): the entry of the differences file that lets the column's numbers differ by
    up to entry["tolerance"] (absolute), or None."""
    ref_header, ref_rows = read_csv(ref_path)
    our_header, our_rows = read_csv(our_path)
    position = {name: i for i, name in enumerate(our_header)}
    missing = [c for c in ref_header if c not in position]
    for c in missing:
        emit(c, "missing-column", "")
    present = [c for c in ref_header if c in position]
    order = [c for c in our_header if c in set(present)]
    if our_header[:len(ref_header)] != ref_header and not missing:
        emit("-", "header-order", f"reference {ref_header[:8]}..., ours {our_header[:8]}...")
    elif order != present:
        emit("-", "header-order", "reference columns in another order")
    if len(ref_rows) != len(our_rows):
        emit("-", "row-count", f"reference {len(ref_rows)}, ours {len(our_rows)}")
    for c in present:
        ri, oi = ref_header.index(c), position[c]
        bad, example = 0, ""
        tol = tolerance_of(c)
        for r, o in zip(ref_rows, our_rows):
            a = r[ri] if ri < len(r) else ""
            b = o[oi] if oi < len(o) else ""
            if same_value(a, b):
                continue
            if tol is not None and within(a, b, tol["tolerance"]):
                tol["used"] = True
            else:
                bad += 1
                if not example:
                    example = f"reference {a[:60]!r}, ours {b[:60]!r}"
        if bad:
            emit(c, "values", f"{bad} of {min(len(ref_rows), len(our_rows))} rows; first: {example}")


def compare_fixture(fixture, ref_dir, our_dir, tolerances=()):
    found = []
    for rel in reference_files(ref_dir):
        def emit(item, kind, example, rel=rel):
            found.append(Difference(fixture, rel, item, kind, example))
        ours = os.path.join(our_dir, rel)
        if not os.path.exists(ours):
            emit("-", "missing-file", "")
            continue
        ref_path = os.path.join(ref_dir, rel)
        if rel.endswith(".csv"):
            def tolerance_of(column, rel=rel):
                return next((t for t in tolerances if (t["fixtures"] == "*" or fixture in t["fixtures"].split(","))
                             and matches(t["file"], rel) and matches(t["item"], column)), None)
            compare_csv(ref_path, ours, emit, tolerance_of)
        elif rel.endswith(".jsonl"):
            with open(ref_path, encoding="utf-8") as f:
                ref_lines = [json.loads(line) for line in f if line.strip()]
            with open(ours, encoding="utf-8") as f:
                our_lines = [json.loads(line) for line in f if line.strip()]
            if len(ref_lines) != len(our_lines):
                emit("-", "row-count", f"reference {len(ref_lines)}, ours {len(our_lines)}")
            for a, b in zip(ref_lines, our_lines):
                compare_json(a, b, "$", emit)
        elif rel.endswith(".json"):
            with open(ref_path, encoding="utf-8") as f:
                ref = json.load(f)
            with open(ours, encoding="utf-8") as f:
                try:
                    our = json.load(f)
                except json.JSONDecodeError as e:
                    emit("-", "invalid-json", str(e))
                    continue
            compare_json(ref, our, "$", emit)
    # one entry per (file, item, kind): a JSON path repeated over list elements counts once
    unique = {}
    for d in found:
        unique.setdefault(d.key(), d)
    return list(unique.values())


def load_differences(path):
    """Rows of the markdown tables in the differences file: | fixtures | file | item | kind | reason |.
    fixtures is `*` or a comma list; in file and item `*` matches any text. A kind `within <number>`
    is a tolerance: the column's numbers may differ from the reference's by up to that much."""
    entries = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 5 or not line.lstrip().startswith("|"):
                continue
            if cells[0] in ("fixtures", "") or set(cells[0]) <= set("-: "):
                continue
            fixtures, file, item, kind, reason = (c.strip("`") for c in cells)
            if not reason:
                raise ValueError(f"{path}: entry without a reason: {line.strip()}")
            entry = {"fixtures": fixtures.replace(" ", ""), "file": file, "item": item, "kind": kind, "used": False}
            if kind.startswith("within "):
                entry["tolerance"] = float(kind.split()[1])
            entries.append(entry)
    return entries


def matches(pattern, value):
    """`*` matches any text; everything else literally (JSON paths hold [ ] that are not classes)."""
    return re.fullmatch(".*".join(re.escape(part) for part in pattern.split("*")), value) is not None


def listed(entry, d):
    fixtures_ok = entry["fixtures"] == "*" or d.fixture in entry["fixtures"].split(",")
    return fixtures_ok and matches(entry["file"], d.file) and matches(entry["item"], d.item) and entry["kind"] == d.kind


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--reference", required=True)
    ap.add_argument("--differences", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--fixture", action="append")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()

    names = args.fixture or FIXTURES
    absent = [n for n in names if not os.path.isdir(os.path.join(args.fixtures, n))
              or not os.path.isdir(os.path.join(args.reference, n))]
    if absent:
        print(f"SKIPPED: fixtures or reference outputs absent for {absent} "
              f"(looked in {args.fixtures} and {args.reference})")
        return SKIPPED_EXIT

    entries = load_differences(args.differences) if os.path.exists(args.differences) else []
    tolerances = [e for e in entries if "tolerance" in e]
    entries = [e for e in entries if "tolerance" not in e]
    found = []
    for name in names:
        our_dir = run_ours(args.binary, os.path.join(args.fixtures, name), os.path.join(args.work, name))
        found += compare_fixture(name, os.path.join(args.reference, name), our_dir, tolerances)

    if args.list:
        for d in sorted(found, key=lambda d: (d.file, d.item, d.kind, d.fixture)):
            print(f"| {d.fixture} | {d.file} | {d.item} | {d.kind} | {d.example} |")
        return 0

    unlisted = []
    for d in found:
        hit = [e for e in entries if listed(e, d)]
        for e in hit:
            e["used"] = True
        if not hit:
            unlisted.append(d)
    # an entry for a fixture that was not run this time cannot be judged stale
    stale = [e for e in entries + tolerances if not e["used"] and (e["fixtures"] == "*" or
             any(f in names for f in e["fixtures"].split(",")))]
    for d in unlisted:
        print(f"DIFFERENCE not in {os.path.basename(args.differences)}: {d.fixture} {d.file} "
              f"[{d.item}] {d.kind}: {d.example}")
    for e in stale:
        print(f"STALE entry in {os.path.basename(args.differences)} (no longer occurs; remove it): "
              f"{e['fixtures']} {e['file']} [{e['item']}] {e['kind']}")
    print(f"{len(found)} differences found on {len(names)} fixtures, {len(unlisted)} not listed, "
          f"{len(stale)} stale entries")
    return 1 if unlisted or stale else 0


if __name__ == "__main__":
    sys.exit(main())

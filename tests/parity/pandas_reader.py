#!/usr/bin/python3
"""A user's script, run unchanged on the reference's outputs and on ours (issue 23).

It reads every file the reference writes the way its users' scripts do, with pandas: every column of
every CSV by name, with the dtype pandas gives the reference's file (a numeric column must load as
numbers from ours too, a True/False column as booleans, a JSON cell must parse), the JSON files' lists
as DataFrames with the reference's columns, the manifests' keys, and one join users rely on: every
kernel row of raw_kernel_index.csv finds its operator_summary.csv row by (rank_id, name, task_type).

Usage: pandas_reader.py --pair REF_DIR OUR_DIR [--pair ...]
       pandas_reader.py --reference REFOUT --work WORK   (the folders reference_parity.py analysed into:
                                                          WORK/<fixture>/<root slug>/ against REFOUT/<fixture>)
Exit 0 when the script ran on every pair, 1 on a failure, 77 without pandas or without outputs to read.
"""
import argparse
import json
import os
import sys

try:
    import pandas as pd
except ImportError:  # CTest skip
    print("SKIPPED: pandas is not installed (Debian: python3-pandas)")
    sys.exit(77)

# the JSON files whose top-level lists users load as tables, and where the list is
LISTS = {
    "step_segments.json": "step_segments",
    "layer_segments.json": "layer_segments",
    "block_segments.json": "block_segments",
    "cross_rank_alignment.json": "cross_rank_alignments",
    "diagnosis_findings.json": "diagnosis_findings",
}


def kind_of(series):
    """What a user's script may do with a reference column: 'number', 'bool', 'json' or 'text'."""
    if pd.api.types.is_bool_dtype(series):
        return "bool"
    if pd.api.types.is_numeric_dtype(series):
        return "number"
    values = series.dropna().astype(str)
    if len(values) and values.str.match(r"^[\[{]").all():
        return "json"
    return "text"


def read_table(path):
    """The CSV as a DataFrame; None for a file without a header (the reference writes a table
    without rows as an empty file)."""
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return None


def check_csv(ref_path, our_path, fail):
    ref = read_table(ref_path)
    if ref is None:
        return
    ours = read_table(our_path)
    if ours is None:
        fail("empty, where the reference has a header")
        return
    for column in ref.columns:
        if column not in ours.columns:
            fail(f"column {column!r} is missing")
            continue
        kind, series = kind_of(ref[column]), ours[column]
        if len(series.dropna()) == 0:
            continue  # an all-empty column loads as float NaN either way
        if kind == "number" and not pd.api.types.is_numeric_dtype(series):
            fail(f"column {column!r} is numeric in the reference, {series.dtype} in ours (e.g. {series.dropna().iloc[0]!r})")
        elif kind == "bool" and not pd.api.types.is_bool_dtype(series):
            fail(f"column {column!r} holds True/False in the reference, {series.dtype} in ours")
        elif kind == "json":
            for cell in series.dropna().astype(str):
                try:
                    json.loads(cell)
                except ValueError:
                    fail(f"column {column!r}: a JSON cell in the reference, not JSON in ours: {cell[:60]!r}")
                    break


def check_json(name, ref_path, our_path, fail):
    with open(ref_path, encoding="utf-8") as f:
        ref = json.load(f)
    with open(our_path, encoding="utf-8") as f:
        ours = json.load(f)
    if name in LISTS:
        key = LISTS[name]
        table = pd.DataFrame(ours[key])
        for column in pd.DataFrame(ref[key]).columns:
            if len(table) and column not in table.columns:
                fail(f"{key}[] has no {column!r}")
    if isinstance(ref, dict):
        for key in ref:
            if key not in ours and key not in ("created_at", "generated_at", "stage_timings"):
                fail(f"key {key!r} is missing")


def run_pair(ref_dir, our_dir):
    failures = []
    for base, _, names in os.walk(ref_dir):
        for n in sorted(names):
            rel = os.path.relpath(os.path.join(base, n), ref_dir)
            ours = os.path.join(our_dir, rel)

            def fail(why, rel=rel):
                failures.append(f"{our_dir}: {rel}: {why}")

            if not os.path.exists(ours):
                fail("file is missing")
            elif rel.endswith(".csv"):
                check_csv(os.path.join(ref_dir, rel), ours, fail)
            elif rel.endswith(".json"):
                check_json(n, os.path.join(ref_dir, rel), ours, fail)
            elif rel.endswith(".jsonl"):
                pd.read_json(ours, lines=True)  # loads as a table, as the reference's does
    # the join of kernel rows to their operator rows (task_type spelt alike in both files)
    kernels = pd.read_csv(os.path.join(our_dir, "raw_kernel_index.csv"))
    operators = pd.read_csv(os.path.join(our_dir, "operator_summary.csv"))
    keys = ["rank_id", "name", "task_type"]
    joined = kernels[keys].merge(operators[keys].drop_duplicates(), on=keys, how="left", indicator=True)
    orphans = joined[joined["_merge"] == "left_only"]
    if len(orphans):
        failures.append(f"{our_dir}: {len(orphans)} raw_kernel_index rows find no operator_summary row by {keys}, "
                        f"e.g. {orphans.iloc[0][keys].tolist()}")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pair", nargs=2, action="append", default=[], metavar=("REF_DIR", "OUR_DIR"))
    ap.add_argument("--reference")
    ap.add_argument("--work")
    args = ap.parse_args()
    if args.reference and args.work:
        for fixture in sorted(os.listdir(args.reference)):
            out = os.path.join(args.work, fixture)
            roots = [d for d in os.listdir(out) if os.path.isdir(os.path.join(out, d))] if os.path.isdir(out) else []
            if len(roots) == 1:
                args.pair.append((os.path.join(args.reference, fixture), os.path.join(out, roots[0])))
    if not args.pair:
        print("SKIPPED: no output folders to read (run reference_parity.py first)")
        return 77
    failures = []
    for ref_dir, our_dir in args.pair:
        failures += run_pair(ref_dir, our_dir)
    for f in failures:
        print("FAIL: " + f)
    print(f"pandas reader: {len(args.pair)} output folders, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

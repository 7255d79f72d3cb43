#!/usr/bin/env python3
"""The table of run_coordinator.sh: coordinator_bench results per rank count, measured or extrapolated.

  coordinator_table.py WORKDIR N [N ...]

Reads WORKDIR/result_<N>.json (measured sizes, incl. the calibration sizes), WORKDIR/result_tables_full.json
(a few ranks with the real per-entity root tables) and WORKDIR/result_check.json (the findings check
with another planted set). A size without a result is extrapolated: each phase's wall seconds as a power
law a * N^b fitted (least squares, log-log) over every measured size, memory and bytes linearly per rank
from the largest measured size; such cells start with "~".
"""
import glob
import json
import math
import os
import sys

work = sys.argv[1]
sizes = [int(x) for x in sys.argv[2:]]

# (label, phase names summed); the coordinator total is the sum of the rows marked True
ROWS = [
    ("round 1 gather (outcomes)", ["round1: packed_size (analyze_run counts the payload)", "round1: gather outcomes"], True),
    ("clock offsets + broadcast", ["clock offsets (process 0) + broadcast"], True),
    ("candidates -> buckets [rank side]", ["  of which candidates -> buckets [rank side]"], False),
    ("buckets -> process merge [each process]", ["  of which buckets -> the process's merge"], False),
    ("classes + deep dive -> process merge [each process]", ["fold class partials (each process, its own ranks)", "fold class partials + deep dive (each process, its own ranks)"], False),
    ("round 2 reduce (buckets + classes)", ["round2: reduce buckets (binomial tree)", "round2: reduce root merges (binomial tree)"], True),
    ("class wall quantiles [all processes]", ["class wall quantiles (all processes)"], True),
    ("root: manifests + analysis.h5", ["write_root_outputs: manifests + analysis.h5"], True),
    ("root: summary/class/deep dive", ["write_root_outputs: summary + class + deep dive"], True),
    ("root: cross_rank", ["write_root_outputs: cross_rank"], True),
    ("root: diagnostics", ["write_root_outputs: diagnostics"], True),
    ("  of which align_steps", ["detail: align_steps"], False),
    ("  of which finish_alignments", ["detail: finish_alignments"], False),
    ("  of which critical paths", ["detail: walk_critical_paths"], False),
    ("  of which run_detectors", ["detail: run_detectors"], False),
]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def phase(r, names, process=0):
    ph = r["processes_detail"][process]["phases"]
    got = [p["seconds"] for p in ph if p["name"] in names]
    return sum(got) if got else None


def contention(r):
    """CPU / wall of process 0 in write_root_outputs (1.0 when it had a core to itself)."""
    for p in r["processes_detail"][0]["phases"]:
        if p["name"] == "write_root_outputs (total)" and p.get("cpu_seconds") and p["seconds"] > 0:
            return min(1.0, p["cpu_seconds"] / p["seconds"])
    return 1.0


def phase_cpu(r, names):
    """CPU seconds of the phase on process 0; for write_root_outputs' parts (wall only) their wall times the
    CPU/wall ratio of the whole call. What the phase costs without the other jobs of a shared machine."""
    ph = [p for p in r["processes_detail"][0]["phases"] if p["name"] in names]
    if not ph:
        return None
    return sum(p["cpu_seconds"] if p.get("cpu_seconds", -1) >= 0 else p["seconds"] * contention(r) for p in ph)


measured = {}
for f in glob.glob(os.path.join(work, "result_*.json")):
    base = os.path.basename(f)[len("result_"):-len(".json")]
    if base.isdigit():
        r = load(f)
        if r is not None and r.get("processes_detail"):
            measured[int(base)] = r
full = load(os.path.join(work, "result_tables_full.json"))
check = load(os.path.join(work, "result_check.json"))
if not measured:
    sys.exit("coordinator_table.py: no results in " + work)

ref = measured[max(measured)]
tpl = ref["template"]
print(f"\ncoordinator benchmark by simulation: template {tpl['ranks']} real ranks of moe_mla_decode, "
      f"{tpl['kernel_rows_per_rank']:,} kernel rows and {tpl['alignment_candidates_per_rank']:,} alignment candidates "
      f"per rank (slow rank {tpl['slow_rank']}); {ref['processes']} MPI processes; tables {ref.get('tables')}")


def fit_params(values):
    """Least squares of log(seconds) on log(N) over every measured size: (a, b) with seconds = a * N^b."""
    pts = sorted((n, v) for n, v in values.items() if v is not None and v > 0)
    if not pts:
        return None
    if len(pts) == 1:
        n0, v0 = pts[0]
        return v0 / n0, 1.0
    xs = [math.log(n) for n, _ in pts]
    ys = [math.log(v) for _, v in pts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    b = max(0.0, b)
    return math.exp(my - b * mx), b


def fit(values):
    p = fit_params(values)
    if p is None:
        return lambda n: None
    a, b = p
    return lambda n: a * n ** b


def exponent(values):
    p = fit_params(values)
    return None if p is None or len([v for v in values.values() if v]) < 2 else p[1]


cols = sorted(set(sizes) | set(measured))
table = {}
for label, names, _ in ROWS:
    vals = {n: phase(r, names) for n, r in measured.items()}
    cpu = {n: phase_cpu(r, names) for n, r in measured.items()}
    b = exponent(cpu)
    known = [n for n in sorted(cpu) if cpu[n]]
    def extra(n, known=known, cpu=cpu, b=b):  # from the largest size that has the phase, uncontended
        if not known:
            return None
        top = known[-1]
        return cpu[top] * (n / top) ** (b if b is not None else 1.0)
    table[label] = {n: (vals[n], False) if n in measured and vals[n] is not None else (extra(n), True) for n in cols}
    table[label]["exp"] = b

# Step alignment is quadratic in ranks and sits inside write_root_outputs' cross_rank: where it was not
# timed on its own (--detail 1), it is cross_rank minus the rest of cross_rank (alignment files, operator
# alignment, critical paths: fitted on the sizes where both were timed), and cross_rank is extrapolated
# as step alignment + that rest, each with its own growth.
def cpu_series(names):
    return {n: phase_cpu(r, names) for n, r in measured.items()}

cr_names = ["write_root_outputs: cross_rank"]
st_names = ["detail: align_steps"]
cr_cpu, st_cpu = cpu_series(cr_names), cpu_series(st_names)
rest = {n: cr_cpu[n] - st_cpu[n] for n in measured if cr_cpu[n] is not None and st_cpu[n] is not None and cr_cpu[n] > st_cpu[n]}
rest_f = fit(rest)
derived = set()
if rest:
    for n in measured:
        if st_cpu[n] is None and cr_cpu[n] is not None and rest_f(n) is not None:
            st_cpu[n] = max(0.0, cr_cpu[n] - rest_f(n))
            derived.add(n)
    b_st = exponent(st_cpu)
    top = max(n for n in st_cpu if st_cpu[n])
    st_x = lambda n: st_cpu[top] * (n / top) ** (b_st if b_st is not None else 2.0)
    rest_top = max(rest)
    b_rest = exponent(rest)
    rest_x = lambda n: rest[rest_top] * (n / rest_top) ** (b_rest if b_rest is not None else 1.0)
    for n in cols:
        if n in derived:
            table["  of which align_steps"][n] = (st_cpu[n], True)
        elif n not in measured:
            table["  of which align_steps"][n] = (st_x(n), True)
            table["root: cross_rank"][n] = (st_x(n) + rest_x(n), True)
    table["  of which align_steps"]["exp"] = b_st
    table["root: cross_rank"]["exp"] = None

# per-entity root tables (block/layer/step/kernel rows, segment/classify files): per rank from the full run
per_rank_tables_s = per_rank_tables_bytes = None
if full is not None:
    m = full["ranks"]
    light_s = phase(full, ["write_root_outputs: summary + class + deep dive"])  # measured with full fragments
    st = phase(full, ["write_root_outputs: structure files"]) or 0.0
    per_rank_tables_s = ((light_s or 0.0) + st) * contention(full) / m
    per_rank_tables_bytes = full["outputs"]["bytes"] / m

w = 30
largest = max(measured)
hdr = (f"{'phase (process 0, wall s)':{w}}" + "".join(f"{('~' if n not in measured else '') + format(n, ','):>12}" for n in cols)
       + f"   N^b   cpu s@{largest}")
print("\nCPU/wall of process 0 in write_root_outputs (other jobs on the machine): " +
      ", ".join(f"{n:,}: {contention(r):.2f}" for n, r in sorted(measured.items())))
print("\n" + hdr)
print("-" * len(hdr))
totals = {n: 0.0 for n in cols}
for label, _, in_total in ROWS:
    cells = ""
    for n in cols:
        v, extra = table[label][n]
        if v is not None and in_total:
            totals[n] += v
        cells += f"{'' if v is None else ('~' if extra else '') + format(v, '.1f'):>12}"
    e = table[label]["exp"]
    cpu = [p.get("cpu_seconds") for p in measured[largest]["processes_detail"][0]["phases"] if p["name"] in dict((l, n) for l, n, _ in ROWS)[label]]
    cpu = sum(c for c in cpu if c is not None) if any(c is not None for c in cpu) else None
    print(f"{label:{w}}{cells}   {'' if e is None else format(e, '.2f'):>4}   {'' if cpu is None else format(cpu, '.1f'):>8}")
print("-" * len(hdr))
print(f"{'coordinator total (light)':{w}}" + "".join(f"{('~' if n not in measured else '') + format(totals[n], '.1f'):>12}" for n in cols))
if per_rank_tables_s is not None:
    print(f"{'+ per-entity tables if copied':{w}}" + "".join(f"{'~' + format(per_rank_tables_s * n, '.0f'):>12}" for n in cols)
          + f"   (~{per_rank_tables_s:.2f} s and ~{per_rank_tables_bytes / 1e6:.0f} MB per rank, measured on {full['ranks']} ranks;")
    print(" " * w + "   the segment/classify JSON files are always copied; a CSV table over knowledge's [root_tables]")
    print(" " * w + "   budget, 1 GiB, is kept as an index of the ranks' rows instead: the light runs above write those)")

print()
def mem_row(label, get, unit=1 << 20, fmt="{:.0f}"):
    vals = {n: get(r) for n, r in measured.items()}
    largest = max(measured)
    cells = ""
    for n in cols:
        if n in measured:
            cells += f"{fmt.format(vals[n] / unit):>12}"
        else:
            cells += f"{'~' + fmt.format(vals[largest] / largest * n / unit):>12}"
    print(f"{label:{w}}{cells}")

mem_row("peak RSS process 0 (MiB)", lambda r: r["processes_detail"][0]["peak_rss_bytes"])
mem_row("peak RSS process 1 (MiB)", lambda r: r["processes_detail"][1]["peak_rss_bytes"])
mem_row("gathered MB total", lambda r: r["gathered_bytes"]["round1_total"] + r["gathered_bytes"]["round2_total"], 1e6)
print(f"{'gathered per rank (KB)':{w}}" + "".join(
    f"{format(measured[n]['gathered_bytes']['per_rank'] / 1e3, '.0f') if n in measured else '~' + format(ref['gathered_bytes']['per_rank'] / 1e3, '.0f'):>12}" for n in cols))
print(f"{'  round 1 / round 2 (KB)':{w}}" + "".join(
    f"{(format(measured[n]['gathered_bytes']['round1_per_rank'] / 1e3, '.0f') + '/' + format(measured[n]['gathered_bytes']['round2_per_rank'] / 1e3, '.0f')) if n in measured else '':>12}" for n in cols))
print(f"{'root output files (MB)':{w}}" + "".join(
    f"{format(measured[n]['outputs']['bytes'] / 1e6, '.0f') if n in measured else '':>12}" for n in cols))
print(f"{'findings check':{w}}" + "".join(
    f"{measured[n]['findings']['check'] if n in measured else '':>12}" for n in cols))

print("\nprocess 0 memory at the largest measured size (" + format(max(measured), ",") + " ranks), estimated from capacities:")
mem = ref["process0_memory_estimate"]
for k, v in sorted(mem.items(), key=lambda kv: -kv[1]):
    if k.endswith("count"):
        continue
    print(f"  {k:36} {v / (1 << 20):10.0f} MiB")
print(f"  operator bucket partials: {mem['operator_bucket_count']:,} ({mem['operator_bucket_count'] / max(measured):,.0f} per rank)")
cr = ref["cross_rank"]
step_members = f"{cr['step_alignment_members']:,} members" if cr['step_alignment_members'] else "members not counted at --detail 1"
print(f"  alignments: {cr['root_step_alignment_count']:,} step ({step_members}), "
      f"{cr['root_operator_alignment_count']:,} operator ({cr['operator_alignment_members']:,} members)")

print("\nfindings (planted slow ranks: copies of the capture's slow rank):")
for n in sorted(measured):
    fd = measured[n]["findings"]
    named = fd.get("planted_named_by", {})
    print(f"  {n:>6,} ranks: {fd['check']}  named {sum(1 for v in named.values() if v)}/{len(named)} {named}; "
          f"findings {fd.get('by_type')}; other suspects {fd.get('other_suspects')}")
    for s in fd.get("standing_out", [])[:4]:
        print(f"           stands out: rank {s['rank_id']:>6} {s['role']} {s['pattern']}: last in {s['hits']} of "
              f"{s['alignments_of_rank']} alignments (share {s['share']:.3f}, needs 0.3), {s['excess_ms']:.1f} ms")
if check is not None:
    fd = check["findings"]
    print(f"  check variant, {check['ranks']:,} ranks, planted {check['planted_slow_ranks']}: {fd['check']}  named {fd['planted_named_by']}; "
          f"findings {fd.get('by_type')}; other suspects {fd.get('other_suspects')}")
if derived:
    print("\nalign_steps at " + ", ".join(f"{n:,}" for n in sorted(derived)) + " ranks: not timed on its own (--detail 1); derived as "
          "cross_rank minus the rest of cross_rank fitted on the smaller sizes.")
print("\n~ = extrapolated (not run): a phase from the largest size where it was measured, by N^b with b fitted (least"
      "\nsquares, log-log) on its CPU seconds over the measured sizes (write_root_outputs' parts: wall x the call's CPU/wall),"
      "\nso the estimate is for a machine without other jobs; memory and bytes linearly per rank from the largest size."
      "\ncpu s: CPU seconds of process 0 at the largest measured size (MPI waits spin, so gathers count their waiting;"
      "\nblank: write_root_outputs reports wall only).")

#!/usr/bin/python3
"""The parity test can fail (issue 23): with the rank_id row taken out of the differences file it must
report the rank_id differences as unlisted, and with an entry for a difference that does not occur it
must report that entry as stale; both runs exit 1.

Usage: parity_detects_test.py PARITY_SCRIPT DIFFERENCES_FILE WORK -- <the parity script's other args>
Exit 0 when both failures are detected, 1 otherwise, 77 when the parity script skips (no fixtures).
"""
import os
import subprocess
import sys


def run(script, differences, args):
    p = subprocess.run([sys.executable, script, "--differences", differences] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def main():
    if len(sys.argv) < 5 or sys.argv[4] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    script, differences, work, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[5:]
    os.makedirs(work, exist_ok=True)
    with open(differences, encoding="utf-8") as f:
        lines = f.readlines()
    without = os.path.join(work, "without-rank-id.md")
    with open(without, "w", encoding="utf-8") as f:
        f.writelines(line for line in lines if not line.startswith("| e1-2023-two-rank | * | rank_id |"))
    rc, out = run(script, without, args)
    if rc == 77:
        print(out)
        return 77
    if rc != 1 or "DIFFERENCE not in without-rank-id.md" not in out or "[rank_id] values" not in out:
        print("FAIL: an unlisted rank_id difference was not reported (exit %d):\n%s" % (rc, out[-2000:]))
        return 1
    extra = os.path.join(work, "with-stale-entry.md")
    with open(extra, "w", encoding="utf-8") as f:
        f.writelines(lines)
        f.write("| * | operator_summary.csv | call_count | values | a difference that does not occur |\n")
    rc, out = run(script, extra, args)
    if rc != 1 or "STALE entry" not in out or "call_count" not in out:
        print("FAIL: a stale entry was not reported (exit %d):\n%s" % (rc, out[-2000:]))
        return 1
    print("the parity test reports an unlisted difference and a stale entry")
    return 0


if __name__ == "__main__":
    sys.exit(main())

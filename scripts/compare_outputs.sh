#!/bin/bash
# Refactoring check: do two builds write the same outputs? Runs OLD and NEW ascprof-mpi on the real
# fixtures and on generated captures, each into the same OUT path (paths inside outputs match), and
# lists every file that differs: HDF5 files by their full h5dump (data, types, attributes), report.xlsx
# by its sheets (the zip carries a creation time), everything else byte by byte.
# Rank part packs (ranks/*.parts) are skipped: their checkpoint record carries stage timings, and
# their rows are compared in the root tables they are copied into. (Older builds' ranks/*.outcome too.)
#   scripts/compare_outputs.sh OLD_BINARY NEW_BINARY [WORKDIR]     exit 0 when nothing differs
set -euo pipefail
old=$(realpath "$1"); new=$(realpath "$2"); work=${3:-/tmp/ascprof-compare}
repo=$(cd "$(dirname "$0")/.." && pwd)
fixtures=${ASCPROF_REAL_FIXTURES:-$repo/../shared/fixtures/real}
knowledge="--knowledge $repo/knowledge"
mkdir -p "$work"
[ -d "$work/synth-moe" ] || "$new" synth --scenario moe_mla_decode --ranks 4 --force -o "$work/synth-moe" >/dev/null
[ -d "$work/synth-mtp" ] || "$new" synth --scenario glm5_mtp --ranks 2 --force -o "$work/synth-mtp" >/dev/null
roots=("$work/synth-moe" "$work/synth-mtp")
for r in e2-cnn-level0 e2-cnn-level1 e2-cnn-level2 e1-2023-two-rank db-cnn-level2; do
  [ -d "$fixtures/$r" ] && roots+=("$fixtures/$r")
done

run() {  # run BINARY DEST
  rm -rf "$work/out" "$2"
  mkdir -p "$work/out"
  for root in "${roots[@]}"; do
    "$1" analyze "$root" -o "$work/out/$(basename "$root")" --force $knowledge >/dev/null 2>&1 || true
  done
  mv "$work/out" "$2"
}
run "$old" "$work/old"
run "$new" "$work/new"

files=0; differ=0
while IFS= read -r f; do
  files=$((files + 1))
  a="$work/old/$f"; b="$work/new/$f"
  if [ ! -f "$b" ]; then echo "only in old: $f"; differ=$((differ + 1)); continue; fi
  case "$f" in
    *.outcome|*.parts) same=1 ;;
    *.h5) cmp -s <(h5dump "$a" 2>&1 | tail -n +2) <(h5dump "$b" 2>&1 | tail -n +2) && same=1 || same=0 ;;
    *.xlsx) cmp -s <(unzip -p "$a" 'xl/worksheets/*.xml' 2>/dev/null) \
                   <(unzip -p "$b" 'xl/worksheets/*.xml' 2>/dev/null) && same=1 || same=0 ;;
    *) cmp -s "$a" "$b" && same=1 || same=0 ;;
  esac
  [ $same = 1 ] || { echo "differs: $f"; differ=$((differ + 1)); }
done < <(cd "$work/old" && find . -type f | sort)
while IFS= read -r f; do
  [ -f "$work/old/$f" ] || { echo "only in new: $f"; differ=$((differ + 1)); }
done < <(cd "$work/new" && find . -type f | sort)
echo "$files files compared over ${#roots[@]} roots, $differ differ"
[ $differ = 0 ]

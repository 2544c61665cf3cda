#!/usr/bin/env bash
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s16
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
EGSOLVE_LOG=egsolve=debug timeout 200 "$c/gc-new" warm --runs 4 "$t/random_p10.mpg" > "$out/warm-dbg.log" 2> "$out/dbg.log"
sed 's/\x1b\[[0-9;]*m//g' "$out/dbg.log" | cut -c29-330 > "$out/dbg-clean.log"
grep -E " run [0-9]" "$out/warm-dbg.log" | cut -c1-240
grep -v "scc\|cycles" "$out/dbg-clean.log" | tail -24 | cut -c1-250

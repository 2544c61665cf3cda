#!/usr/bin/env bash
# Session 21 call 8: the finer debug parts of random p50's `gpu` evaluation (42ea2ba plus
# debug lines: the engine's components completed and numbered, the cycle test phase's and
# the second decomposition's and Bellman–Ford's parts), warm process, three runs.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s21
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
gunzip -f "$c/egsolve.gz"; chmod +x "$c/egsolve" "$c/gc-new"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
EGSOLVE_LOG=egsolve=debug timeout 100 "$c/gc-new" warm --runs 3 "$t/random_p50.mpg" > "$out/warm.log" 2> "$out/dbg.log"
sed 's/\x1b\[[0-9;]*m//g' "$out/dbg.log" | cut -c29-400 | awk '/gpu: engine ready/{on=1} on' | grep -vE "accel: (threads|bound|starting|topping)" | tail -28

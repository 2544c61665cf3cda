#!/usr/bin/env bash
# Session 14: player 1's strategy from the lifts' record (accel::topping, lifted_strategy).
# Carried folder: `egsolve` (new), `gc-new` / `gc-old` (gpu_check at the new commit and at
# 653a32d, the solver before this change), `libtests` (the new lib test binary), this
# script, phases-session.sh, data/{energy,parity} (a subset of ../shared/data).
# 1) lib tests on the device (TESTS: the device's record and components, the record tests);
# 2) warm process, old then new twice (gpu_check warm: auto and gpu, solve and strategies);
# 3) phases-session.sh with the new binary (BACKENDS, GAMES, NO_RANDOM pass through):
#    every answer against the independent one and auto's, certified by `egsolve check`.
# WARM_VERSIONS (default "old new old new"), NO_TESTS, NO_WARM, NO_PHASES select parts.
#   run(command="bash .carry/s14a/s14.sh > $OUT/session.log 2>&1", carry=[".carry/s14a"])
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s14
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/machine.log"; nproc >> "$out/machine.log"
if [ -z "${NO_TESTS:-}" ]; then
  timeout 300 "$c/libtests" ${TESTS:-device_ lifted_strategy} --nocapture > "$out/libtest-full.log" 2>&1
  tail -12 "$out/libtest-full.log" > "$out/libtest.log"
fi
if [ -z "${NO_WARM:-}" ]; then
  "$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
  "$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
  warm=$(ls "$c"/data/parity/*.gm.* | grep -v '\.sol\.' | grep -E "${WARM_GAMES:-Hesselink|BRP}")
  for v in ${WARM_VERSIONS:-old new old new}; do
    echo "== $v"; timeout 150 "$c/gc-$v" warm --runs 4 $warm "$t/random_p50.mpg" "$t/random_p10.mpg"
  done > "$out/warm.log" 2>&1
  for g in $warm; do
    EGSOLVE_LOG=egsolve::solve::accel=debug "$c/egsolve" solve "$g" --backend gpu -o /dev/null 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | cut -c28-300
  done > "$out/debug-gpu.log"
fi
[ -n "${NO_PHASES:-}" ] || bash "$c/phases-session.sh" > "$out/phases-stdout.log" 2>&1
touch "$out/phases.log"; echo "== DIFFER $(grep -c DIFFER $out/phases.log) FAIL $(grep -c FAIL $out/phases.log $out/warm.log 2>/dev/null | tr '\n' ' ') rc!=0 $(grep -c 'rc=[1-9]' $out/phases.log)"

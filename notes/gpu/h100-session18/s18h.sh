#!/usr/bin/env bash
# Session 18 call 10 (final read, b739aaf): the lib's device tests (all seven) and one warm
# block of every game (credits and player 0's moves against auto's; p10 and p50 take
# player 0's moves and σ1 from the device through the refactored word_per_vertex).
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s18
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } | tee "$out/machine.log"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
timeout 150 "$c/gc-new" warm --runs 4 $(ls "$c"/data/parity/*.gm.*) "$t/random_p50.mpg" "$t/random_p10.mpg" > "$out/warm.log" 2>&1
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
timeout 400 "$c/libtests" --test-threads 1 --nocapture device_ freed_device_memory > "$out/libtests.log" 2>&1
grep -E "^test |test result|fresh seed|checked|panicked" "$out/libtests.log" | cut -c1-200
cd "$out" && tar czf logs.tgz *.log && rm -f *.log

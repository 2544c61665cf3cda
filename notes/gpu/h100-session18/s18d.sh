#!/usr/bin/env bash
# Session 18 call 5: (a) the table: prev = de11ae6 (session 17's timed build) against new =
# 5af135b + gpu_check's --lift-percent, three alternating blocks, BRP, Hesselink, Onebit, SWP,
# random p50 and p10; (b) an experiment: the gpu's lifting phases at 5, 2 and 1 % of an
# evaluation (10 % is the default) now that its evaluations are cheaper, two blocks each.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s18
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } | tee "$out/machine.log"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
warm="$(ls "$c"/data/parity/*.gm.*) $t/random_p50.mpg $t/random_p10.mpg"
for v in prev new prev new prev new; do
  echo "== $v"
  timeout 150 "$c/gc-$v" warm --runs 4 $warm
done > "$out/warm.log" 2>&1
for p in 5 2 1 10 5 2 1 10; do
  echo "== p$p"
  timeout 150 "$c/gc-new" warm --runs 4 --lift-percent $p $warm
done > "$out/percent.log" 2>&1
cat "$out/warm.log" "$out/percent.log" | grep -c "same p0 moves same" | sed 's/^/runs with credits and moves same: /'
cat "$out/warm.log" "$out/percent.log" | grep -E "DIFFER|FAIL|panic|rror" | head -5
cd "$out" && tar czf logs.tgz *.log && rm -f *.log

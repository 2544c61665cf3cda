#!/usr/bin/env bash
# Session 21 call 4: how long the gpu backend's lifting phases should be (item 5). Warm
# process (gpu_check warm, 0157235), `--lift-percent P` for P in 2, 4, 10 (the default) and
# 25 — every lifting phase lasts P % of an estimate of the evaluation's cost (the first) or
# of the last evaluation's time — on every game that evaluates on the gpu backend and on
# BRP, Hesselink and both random games; three alternating blocks.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s21
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
gunzip -f "$c/egsolve.gz"; chmod +x "$c/egsolve" "$c/gc-new"
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader; nproc; } | tee "$out/machine.log"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
games="$(ls "$c"/data/parity/{BRP,Hesselink,Onebit,Hanoi_ndisks=10,Lift_\(Incorrect\)_nlifts=3,ABP_CABP,SWP}*.gm.* "$c"/data/energy/*.mpg.gz | grep -v '\.sol\.') $t/random_p50.mpg $t/random_p10.mpg"
for block in 1 2 3; do
  for p in 2 4 10 25; do
    echo "== p$p"
    timeout 100 "$c/gc-new" warm --runs 3 --lift-percent $p $games
  done
done > "$out/warm.log" 2>&1
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
python3 "$c/medians.py" "$out/warm.log" | grep "Gpu .* solve" | tee "$out/medians.txt"
cd "$out" && tar czf logs.tgz *.log *.txt && rm -f *.log *.txt

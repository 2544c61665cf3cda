#!/usr/bin/env bash
# Session 18 call 2: where a warm gpu solve's evaluation goes now (1281ff8 + the evaluation's
# parts printed by gpu_check warm), every game of call 1, three blocks.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s18
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } | tee "$out/machine.log"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
warm="$(ls "$c"/data/parity/BRP* "$c"/data/parity/Hesselink*) $t/random_p50.mpg $t/random_p10.mpg"
for v in new new new; do
  echo "== $v"
  timeout 150 "$c/gc-$v" warm --runs 4 $warm
done > "$out/warm.log" 2>&1
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
grep -E "Gpu run [234]:" "$out/warm.log" | sed 's/_datasize=2_[a-z0-9]*.gm.zst//' | awk '{printf "%s wall %s", $1, $6; for(i=1;i<=NF;i++) if ($i ~ /^(lifting|evaluation|upload|strategy1|graph|components|cycle_test|attractor|bellman_ford)$/) printf " %s %s", $i, $(i+1); print ""}'
EGSOLVE_LOG=egsolve=debug timeout 100 "$c/gc-new" warm --runs 2 "$t/random_p50.mpg" > /dev/null 2> "$out/dbg-new.log"
sed 's/\x1b\[[0-9;]*m//g' "$out/dbg-new.log" | cut -c29-330 | grep -v "accel: threads" | tail -40 | cut -c1-230
cd "$out" && tar czf logs.tgz *.log && rm -f *.log

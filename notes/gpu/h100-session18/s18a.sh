#!/usr/bin/env bash
# Session 18 call 1: the device tests of the evaluation kernels (reachability, Bellman–Ford)
# and the components; then A/B warm: prev = de11ae6 (session 17's timed build), new = the
# evaluations' reachability and Bellman–Ford on the device. Then p50 traces for both.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s18
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } | tee "$out/machine.log"
timeout 240 "$c/libtests" --test-threads 1 --nocapture device_reachability device_components > "$out/libtests.log" 2>&1
grep -E "^test |test result|fresh seed|checked" "$out/libtests.log"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
warm="$(ls "$c"/data/parity/BRP* "$c"/data/parity/Hesselink*) $t/random_p50.mpg $t/random_p10.mpg"
for v in ${VERSIONS:-prev new prev new prev new}; do
  echo "== $v"
  timeout 150 "$c/gc-$v" warm --runs 4 $warm
done > "$out/warm.log" 2>&1
awk '/^== /{v=$2; next} / run [0-9]+:/{ if ($3=="run" && $4=="1:") next;
  k=$1" "v" "$2; w[k]=w[k]" "$6; s[k]=s[k]" "$8; st[k]=st[k]" "$10; s0[k]=s0[k]" "$25 }
  END { for (k in w) print k, "| wall" w[k], "| solve" s[k], "| strat" st[k], "| s0" s0[k] }' "$out/warm.log" | sort | sed 's/_datasize=2_[a-z0-9]*.gm.zst//'
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
echo "== traces"
for v in prev new; do
  EGSOLVE_LOG=egsolve=debug timeout 100 "$c/gc-$v" warm --runs 2 "$t/random_p50.mpg" > /dev/null 2> "$out/dbg-$v.log"
  echo "-- $v"
  sed 's/\x1b\[[0-9;]*m//g' "$out/dbg-$v.log" | cut -c29-330 | grep "gpu: \|accel evaluation\|solve phases" | tail -12 | cut -c1-230
done
cd "$out" && tar czf logs.tgz *.log && rm -f *.log

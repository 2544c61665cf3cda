#!/usr/bin/env bash
# Session 16 A/B (call h): prev = 3be9400, new = staging in a ring of 8 slots of 8 MiB
# (was two 32 MiB buffers used whole). Then a p10 trace.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s16
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } | tee "$out/machine.log"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
warm=$(ls "$c"/data/parity/*.gm.* | grep -v '\.sol\.' | grep -E "Hesselink|BRP")
for v in ${VERSIONS:-prev new prev new prev new}; do
  echo "== $v"
  case $v in
    newmm) EGSOLVE_EXPERIMENT_MMAP=1 timeout 200 "$c/gc-new" warm --runs 4 $warm "$t/random_p50.mpg" "$t/random_p10.mpg" ;;
    *) timeout 200 "$c/gc-$v" warm --runs 4 $warm "$t/random_p50.mpg" "$t/random_p10.mpg" ;;
  esac
done > "$out/warm.log" 2>&1
awk '/^== /{v=$2; next} / run [0-9]+:/{ if ($3=="run" && $4=="1:") next;
  k=$1" "v" "$2; w[k]=w[k]" "$6; s[k]=s[k]" "$8; st[k]=st[k]" "$10; s0[k]=s0[k]" "$25 }
  END { for (k in w) print k, "| wall" w[k], "| solve" s[k], "| strat" st[k], "| s0" s0[k] }' "$out/warm.log" | sort | sed 's/_datasize=2_[a-z0-9]*.gm.zst//'
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
echo "== trace"
EGSOLVE_LOG=egsolve=debug timeout 100 "$c/gc-new" warm --runs 3 "$t/random_p10.mpg" > "$out/warm-dbg.log" 2> "$out/dbg.log"
sed 's/\x1b\[[0-9;]*m//g' "$out/dbg.log" | cut -c29-330 | grep -v "scc\|cycles" | tail -16 | cut -c1-220

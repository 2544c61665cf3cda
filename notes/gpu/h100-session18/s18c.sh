#!/usr/bin/env bash
# Session 18 call 3: the lib's device tests (all six) with the final code; then A/B warm:
# prev = 1281ff8 (reachability and Bellman–Ford on the device), new = + the cycle test's
# member counts on all cores. BRP, Hesselink, random p50 and p10, three alternating blocks.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s18
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } | tee "$out/machine.log"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
warm="$(ls "$c"/data/parity/BRP* "$c"/data/parity/Hesselink*) $t/random_p50.mpg $t/random_p10.mpg"
for v in ${VERSIONS:-prev new prev new prev new}; do
  echo "== $v"
  timeout 150 "$c/gc-$v" warm --runs 4 $warm
done > "$out/warm.log" 2>&1
awk '/^== /{v=$2; next} / run [0-9]+:/{ if ($3=="run" && $4=="1:") next;
  k=$1" "v" "$2; w[k]=w[k]" "$6; s[k]=s[k]" "$8; st[k]=st[k]" "$10; s0[k]=s0[k]" "$25 }
  END { for (k in w) print k, "| wall" w[k], "| solve" s[k], "| strat" st[k] }' "$out/warm.log" | sort | sed 's/_datasize=2_[a-z0-9]*.gm.zst//'
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
awk '/^== /{v=$2; next} /random_p50.*Gpu run [234]:/{printf "%s", v; for(i=1;i<=NF;i++) if ($i ~ /^(evaluation|graph|components|cycle_test|attractor|bellman_ford)$/) printf " %s %s", $i, $(i+1); print ""}' "$out/warm.log" | sort
EGSOLVE_LOG=egsolve=debug timeout 100 "$c/gc-new" warm --runs 2 "$t/random_p50.mpg" > /dev/null 2> "$out/dbg-new.log"
sed 's/\x1b\[[0-9;]*m//g' "$out/dbg-new.log" | cut -c29-330 | grep "cycle test\|gpu: reach\|gpu: Bell" | tail -6 | cut -c1-200
timeout 330 "$c/libtests" --test-threads 1 --nocapture device_ freed_device_memory > "$out/libtests.log" 2>&1
grep -E "^test |test result|fresh seed|checked" "$out/libtests.log" | cut -c1-200
cd "$out" && tar czf logs.tgz *.log && rm -f *.log

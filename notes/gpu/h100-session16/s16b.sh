#!/usr/bin/env bash
# Session 16: allocator threshold fixed, predecessors listed on the device.
# prefetched credits, the worklist's record from the lift's own reads.
# Carried folder: `egsolve` (new), `gc-new` / `gc-old` (gpu_check at the new commit and at
# session 14's 5cfa296), this script, data/parity (BRP and Hesselink with their solutions).
# Warm process, old then new twice (gpu_check warm: auto and gpu on 16 cores, wall / solve /
# strategies, credits and player 0's moves against auto's first run), then fresh processes
# of the new binary on the random games with the debug log. Key lines go to stdout.
#   run(command="bash .carry/s15a/s15.sh", carry=[".carry/s15a"])
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s16
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } | tee "$out/machine.log"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
warm=$(ls "$c"/data/parity/*.gm.* | grep -v '\.sol\.' | grep -E "${WARM_GAMES:-Hesselink|BRP}")
for v in ${WARM_VERSIONS:-old new old new}; do
  echo "== $v"; timeout 200 "$c/gc-$v" warm --runs ${RUNS:-4} $warm "$t/random_p50.mpg" "$t/random_p10.mpg"
done > "$out/warm.log" 2>&1
# Per game, version and backend (runs 2.. of each block): wall, solve, strategies, strategy0.
awk '/^== /{v=$2; next} / run [0-9]+:/{ if ($3=="run" && $4=="1:") next;
  k=$1" "v" "$2; w[k]=w[k]" "$6; s[k]=s[k]" "$8; st[k]=st[k]" "$10; s0[k]=s0[k]" "$25 }
  END { for (k in w) print k, "| wall" w[k], "| solve" s[k], "| strat" st[k], "| s0" s0[k] }' "$out/warm.log" | sort
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL" "$out/warm.log" | head -5
for b in gpu; do for g in p10; do
  s=$(date +%s%N)
  EGSOLVE_LOG=debug "$c/egsolve" solve "$t/random_$g.mpg" --backend $b -o "$t/$g-$b.json" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | cut -c12-260 > "$out/debug-$g-$b.log"
  echo "fresh $g $b wall_ms $(( ($(date +%s%N)-s)/1000000 ))"; grep -E "parsed|ready|fixpoint|solved|written" "$out/debug-$g-$b.log" | cut -c1-200
done; done
echo "== device lib tests"
"$c/libtests" --test-threads 1 device_ predecessors 2>&1 | tail -8

#!/usr/bin/env bash
# Session 18 call 6: the device test of reachability and Bellman–Ford with its new part (a
# path past the sweeps: left to the host); then where random p50's graph and attractor
# phases go (the debug log's parts), three warm runs.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s18
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } | tee "$out/machine.log"
timeout 200 "$c/libtests" --test-threads 1 --nocapture device_reachability > "$out/libtests.log" 2>&1
grep -E "^test |test result|fresh seed|checked" "$out/libtests.log"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
EGSOLVE_LOG=egsolve=debug timeout 100 "$c/gc-new" warm --runs 4 "$t/random_p50.mpg" > "$out/warm.log" 2> "$out/dbg.log"
grep -E "Gpu run [234]:" "$out/warm.log" | awk '{printf "%s wall %s", $1, $6; for(i=1;i<=NF;i++) if ($i ~ /^(lifting|evaluation|graph|components|cycle_test|attractor|bellman_ford)$/) printf " %s %s", $i, $(i+1); print ""}'
sed 's/\x1b\[[0-9;]*m//g' "$out/dbg.log" | cut -c29-400 | grep -E "phase's seconds|gpu: |cycle test" | tail -36 | cut -c1-260
cd "$out" && tar czf logs.tgz *.log && rm -f *.log

#!/usr/bin/env bash
# Session 20 call 2: the lib's device tests (the new second-pivot test among them) with the
# kernel's retries (HEAD); A/B warm prev (call 1's new: host components, cycle-test walk) /
# new (+ the device's second pivot) with the debug log of the gpu components; then
# phases-session.sh with auto, gpu and gpu0 on every game.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s20
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
gunzip -f "$c/egsolve.gz" "$c/libtests.gz"; chmod +x "$c/egsolve" "$c/libtests"
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader; nproc; } | tee "$out/machine.log"
timeout 330 "$c/libtests" --test-threads 1 --nocapture device_ freed_device_memory > "$out/libtests.log" 2>&1
grep -E "^test |test result|fresh seed|giants|panicked" "$out/libtests.log" | cut -c1-220
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
warm="$(ls "$c"/data/parity/BRP*.gm.zst "$c"/data/parity/Hesselink*.gm.zst) $t/random_p50.mpg $t/random_p10.mpg"
for v in prev new prev new prev new; do
  echo "== $v"
  EGSOLVE_LOG=egsolve::solve::gpu=debug timeout 150 "$c/gc-$v" warm --runs 4 $warm 2> "$out/dbg-$v.log"
done > "$out/warm.log" 2>&1
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
for v in prev new; do echo "$v: $(sed 's/\x1b\[[0-9;]*m//g' "$out/dbg-$v.log" | grep -o "gpu: components seconds=[0-9.]* sweeps=[0-9]*" | awk '{print $3, $4}' | sort -t= -k3 -n | tail -4 | tr '\n' ' ')"; done
mkdir -p "$out/phases"
BACKENDS="auto gpu gpu0" OUT="$out/phases" timeout 300 bash "$c/phases-session.sh" > "$out/phases/session.log" 2>&1
tail -2 "$out/phases/session.log"
cd "$out" && tar czf logs.tgz *.log phases && rm -rf *.log phases

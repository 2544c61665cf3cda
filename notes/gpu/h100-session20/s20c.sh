#!/usr/bin/env bash
# Session 20 call 3: the session's A/B in one lease, warm: prev = 079d4ac (session 19's
# solver; 94280c4 differs only by the CLI's NVRTC warm-up thread, which warm runs never start)
# / new = HEAD (host components, cycle-test walk, the device's second pivot, the evaluation's
# scans on all threads), four alternating blocks; the debug parts of random p50 (both
# backends) with the new binary.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s20
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
gunzip -f "$c/egsolve.gz"; chmod +x "$c/egsolve"
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader; nproc; } | tee "$out/machine.log"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
warm="$(ls "$c"/data/parity/BRP*.gm.zst "$c"/data/parity/Hesselink*.gm.zst) $t/random_p50.mpg $t/random_p10.mpg"
for v in prev new prev new prev new prev new; do
  echo "== $v"
  timeout 150 "$c/gc-$v" warm --runs 4 $warm
done > "$out/warm.log" 2>&1
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
EGSOLVE_LOG=egsolve=debug timeout 100 "$c/gc-new" warm --runs 3 "$t/random_p50.mpg" > /dev/null 2> "$out/dbg-new.log"
sed 's/\x1b\[[0-9;]*m//g' "$out/dbg-new.log" | grep -cE "gpu: components.*tries=2" | sed 's/^/gpu components runs with a second pivot: /'
cd "$out" && tar czf logs.tgz *.log && rm -f *.log

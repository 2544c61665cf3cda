#!/usr/bin/env bash
# Session 21 call 2: A/B warm, one lease: prev = 998a02b (session 20's solver) / new = the
# attractor to ⊤ on the device, four alternating blocks; then the debug parts of random p50
# (`gpu`) with the new binary (the device attractor's lines and the evaluation's phases).
# First the device attractor's test again: call 1 found its layers equal everywhere but no
# round in which nothing moved; round 2 now has every value finite and below half the bound.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s21
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
gunzip -f "$c/egsolve.gz" "$c/libtests.gz"; chmod +x "$c/egsolve" "$c/libtests" "$c"/gc-*
timeout 150 "$c/libtests" --test-threads 1 --nocapture device_attractor > "$out/device-tests.log" 2>&1
echo "device attractor test rc=$?"; grep -E "attracted|test result" "$out/device-tests.log"
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
python3 "$c/medians.py" "$out/warm.log" | tee "$out/medians.txt"
awk '/^== /{v=$2; next} /random_p50.*(Auto|Gpu) run [234]:/{printf "%s %s wall %s", v, $2, $6; for(i=1;i<=NF;i++) if ($i ~ /^(lifting|evaluation|graph|components|cycle_test|attractor|bellman_ford)$/) printf " %s %s", $i, $(i+1); print ""}' "$out/warm.log" | sort > "$out/p50parts.txt"
EGSOLVE_LOG=egsolve=debug timeout 100 "$c/gc-new" warm --runs 3 "$t/random_p50.mpg" > /dev/null 2> "$out/dbg-new.log"
sed 's/\x1b\[[0-9;]*m//g' "$out/dbg-new.log" | grep -E "attractor" | head -12 | cut -c29-300
cd "$out" && tar czf logs.tgz *.log *.txt && rm -f *.log *.txt

#!/usr/bin/env bash
# Session 21 call 9: 334e957 (Z' and the second decomposition's words in one pass; finer
# debug parts) through phases-session.sh with auto, gpu and gpu0 on every game, then A/B
# warm on random p50 and p10: prev = 0157235 (the attractor on the device) / new = 334e957,
# four alternating blocks, and the new binary's debug parts of p50.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s21
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
gunzip -f "$c/egsolve.gz"; chmod +x "$c/egsolve" "$c"/gc-*
mkdir -p "$out/phases"
BACKENDS="auto gpu gpu0" OUT="$out/phases" timeout 250 bash "$c/phases-session.sh" > "$out/phases/session.log" 2>&1
tail -1 "$out/phases/session.log"
cp /tmp/phases/random_2500000_p50_s5.mpg "$t/random_p50.mpg"; cp /tmp/phases/random_2500000_p10_s3.mpg "$t/random_p10.mpg"
for v in prev new prev new prev new prev new; do
  echo "== $v"
  timeout 100 "$c/gc-$v" warm --runs 4 "$t/random_p50.mpg" "$t/random_p10.mpg"
done > "$out/warm.log" 2>&1
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
python3 "$c/medians.py" "$out/warm.log" | grep Gpu | tee "$out/medians.txt"
EGSOLVE_LOG=egsolve=debug timeout 100 "$c/gc-new" warm --runs 3 "$t/random_p50.mpg" > /dev/null 2> "$out/dbg-new.log"
sed 's/\x1b\[[0-9;]*m//g' "$out/dbg-new.log" | cut -c29-300 | grep -E "second decomposition|cycle test phase|Bellman–Ford phase" | tail -3
cd "$out" && tar czf logs.tgz *.log *.txt phases && rm -rf *.log *.txt phases

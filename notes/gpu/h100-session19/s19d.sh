#!/usr/bin/env bash
# Session 19 call 5 (final code, b7a25a8): phases-session.sh with auto, gpu and gpu0 on every
# shared game and both random games; then A/B warm prev (8f81ee6, session 18's HEAD) / new.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s19
mkdir -p "$t" "$out/phases"; gunzip -c "$c/egsolve.gz" > "$c/egsolve"; chmod +x "$c/egsolve"
OUT="$out/phases" BACKENDS="auto gpu gpu0" bash "$c/phases-session.sh" > "$out/phases/session.log" 2>&1
tail -1 "$out/phases/session.log"
export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
warm="$(ls "$c"/data/parity/BRP*.gm.zst "$c"/data/parity/Hesselink*.gm.zst) /tmp/phases/random_2500000_p50_s5.mpg /tmp/phases/random_2500000_p10_s3.mpg"
for v in prev new prev new prev new; do
  echo "== $v"
  timeout 150 "$c/gc-$v" warm --runs 4 $warm
done > "$out/warm.log" 2>&1
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
cd "$out" && tar czf logs.tgz warm.log phases/*.log && rm -rf phases/*.jsonl

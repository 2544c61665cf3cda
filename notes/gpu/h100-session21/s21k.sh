#!/usr/bin/env bash
# Session 21 call 12: b1a6c04 (player 1's strategy from the lifts' record: its per-vertex
# pass into two vectors in chunks, the kind scans and the moves' write in chunks) through
# phases-session.sh with auto and gpu on every game (every JSON, player 1's moves included,
# certified by `egsolve check`), then A/B warm: prev = bcad9e8 / new = b1a6c04 on BRP,
# Hesselink and both random games, four alternating blocks; player 1's strategy's medians.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s21
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
gunzip -f "$c/egsolve.gz"; chmod +x "$c/egsolve" "$c"/gc-*
mkdir -p "$out/phases"
BACKENDS="auto gpu" OUT="$out/phases" timeout 200 bash "$c/phases-session.sh" > "$out/phases/session.log" 2>&1
tail -1 "$out/phases/session.log"
cp /tmp/phases/random_2500000_p50_s5.mpg "$t/random_p50.mpg"; cp /tmp/phases/random_2500000_p10_s3.mpg "$t/random_p10.mpg"
warm="$(ls "$c"/data/parity/BRP*.gm.zst "$c"/data/parity/Hesselink*.gm.zst) $t/random_p50.mpg $t/random_p10.mpg"
for v in prev new prev new prev new prev new; do
  echo "== $v"
  timeout 100 "$c/gc-$v" warm --runs 4 $warm
done > "$out/warm.log" 2>&1
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
python3 "$c/medians.py" "$out/warm.log" | tee "$out/medians.txt" | grep -E "wall"
python3 - "$out/warm.log" <<'PY' | tee "$out/strategy1.txt"
import re,sys,statistics,collections
d=collections.defaultdict(list); v=None
for line in open(sys.argv[1]):
    m=re.match(r'^== (\S+)',line)
    if m: v=m.group(1); continue
    m=re.match(r'^(\S+) (Auto|Gpu) run (\d+):.*strategy1 (\S+)',line)
    if m and m.group(3)!='1': d[(m.group(1)[:20],m.group(2),v)].append(float(m.group(4)))
for k in sorted(d): print(*k, f"strategy1 med {statistics.median(d[k]):.4f} min {min(d[k]):.4f} max {max(d[k]):.4f}")
PY
cd "$out" && tar czf logs.tgz *.log *.txt phases && rm -rf *.log *.txt phases

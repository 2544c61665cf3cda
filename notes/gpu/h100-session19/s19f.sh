#!/usr/bin/env bash
# Session 19 call 7: A/B warm prev (8f81ee6) / new (HEAD: + positions_where; b7a25a8's peeled numbering; earlier: components left to the host and
# gathered on all threads, alone marks, the attractor's bits), the debug parts of random p50;
# (no device tests: call 6 ran them after the final read).
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s19
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader; nproc; } | tee "$out/machine.log"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
warm="$(ls "$c"/data/parity/BRP* "$c"/data/parity/Hesselink*) $t/random_p50.mpg $t/random_p10.mpg"
for v in prev new prev new prev new; do
  echo "== $v"
  timeout 150 "$c/gc-$v" warm --runs 4 $warm
done > "$out/warm.log" 2>&1
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
awk '/^== /{v=$2; next} /random_p50.*Gpu run [234]:/{printf "%s wall %s", v, $6; for(i=1;i<=NF;i++) if ($i ~ /^(lifting|evaluation|graph|components|cycle_test|attractor|bellman_ford)$/) printf " %s %s", $i, $(i+1); print ""}' "$out/warm.log" | sort
EGSOLVE_LOG=egsolve=debug timeout 100 "$c/gc-new" warm --runs 3 "$t/random_p50.mpg" > /dev/null 2> "$out/dbg-new.log"
sed 's/\x1b\[[0-9;]*m//g' "$out/dbg-new.log" | cut -c29-400 | grep -E "gpu: components|grouped|tested|engine left|attractor to|attractor phase" | tail -10 | cut -c1-230
cd "$out" && tar czf logs.tgz *.log && rm -f *.log

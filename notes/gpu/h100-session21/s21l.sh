#!/usr/bin/env bash
# Session 21 call 13: call 12 saw the evaluation of random p50 slower in nearly every run of
# b1a6c04 (which changed only player 1's strategy code) than in bcad9e8's: the same A/B on
# p50 alone, six alternating blocks, new first this time.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s21
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
gunzip -f "$c/egsolve.gz"; chmod +x "$c/egsolve" "$c"/gc-*
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
for v in new prev new prev new prev new prev new prev new prev; do
  echo "== $v"
  timeout 60 "$c/gc-$v" warm --runs 4 "$t/random_p50.mpg"
done > "$out/warm.log" 2>&1
awk '/^== /{v=$2; blk++; next} /random_p50.*Gpu run [234]:/{printf "%d %s", blk, v; for(i=1;i<=NF;i++) if ($i ~ /^(wall|evaluation|graph|components|cycle_test|strategy1)$/) printf " %s %s", $i, $(i+1); print ""}' "$out/warm.log" | tee "$out/p50.txt"

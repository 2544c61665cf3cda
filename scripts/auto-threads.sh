#!/usr/bin/env bash
# auto with its lifting on the worklist (--threads 1) against all cores (--threads 0), same
# machine, interleaved, best of 3 wall-clock runs of `egsolve solve` (parse included).
# Carried like scripts/gpu-session.sh (egsolve and data/ beside it).
c="$(cd "$(dirname "$0")" && pwd)"; d="$c/data"; e="$c/egsolve"
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o /tmp/big10.mpg
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o /tmp/big50.mpg
best() { sort -n | head -1; }
for f in "$d"/energy/*.mpg.gz "$d"/parity/*.gm.gz /tmp/big10.mpg /tmp/big50.mpg; do
  n=$(basename "$f" | cut -c1-40); r1=""; r0=""
  for i in 1 2 3; do
    for t in 1 0; do
      s=$(date +%s%N); "$e" solve "$f" --credits --threads $t --output text -o /tmp/t$t.txt 2>/dev/null; ms=$(( ($(date +%s%N)-s)/1000000 ))
      if [ $t = 1 ]; then r1="$r1 $ms"; else r0="$r0 $ms"; fi
    done
  done
  same=$(cmp -s /tmp/t1.txt /tmp/t0.txt && echo same || echo DIFFER)
  b1=$(echo $r1 | tr ' ' '\n' | best); b0=$(echo $r0 | tr ' ' '\n' | best)
  echo "$n | threads 1: $b1 ms | all cores: $b0 ms | $(python3 -c "print(f'{$b1/$b0:.2f}x')") | $same"
done

#!/bin/bash
# Player 1's strategy parts on Hesselink, and the strategies of BRP / random p10 / p50, per thread count.
# Carried: stripped egsolve (at 3aa56bb: the graph reads one word per vertex, its columns still zeroed by one thread), the two .gm.zst games.
c="$(cd "$(dirname "$0")" && pwd)"; e=$c/egsolve; t=/tmp/q; mkdir -p $t
nproc; nvidia-smi -L
$e gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o $t/p10.mpg
$e gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o $t/p50.mpg
for g in $c/Hesselink_datasize=2_property1.gm.zst $c/BRP_datasize=2_counting.gm.zst $t/p10.mpg $t/p50.mpg; do
  for th in 16 8 4 2 16; do
    EGSOLVE_LOG=egsolve=debug $e solve $g --threads $th -o $t/o.json 2>$t/err
    echo "$(basename $g) threads=$th $(head -1 $t/o.json | cut -c1-1200)"
    grep -a "per part\|components: trimmed" $t/err | sed 's/\x1b\[[0-9;]*m//g' | cut -c 28-400
  done
  $e check $g $t/o.json | cut -c1-60
done

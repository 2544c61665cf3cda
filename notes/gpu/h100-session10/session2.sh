#!/usr/bin/env bash
# Session 10, second call: the warp-per-vertex player-0 kernel and the gpu path's debug
# timeline. warm2.log: `gpu_check warm`; debug.log: `egsolve solve --backend gpu` with
# EGSOLVE_LOG=egsolve=debug on the random p10 game and BRP; phases2/: phases-session.sh
# with auto and gpu only (answers, player 0's moves against auto's, certificates).
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; e="$c/egsolve"
mkdir -p /tmp/phases "$out/phases2"
export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o /tmp/phases/random_2500000_p50_s5.mpg
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o /tmp/phases/random_2500000_p10_s3.mpg
timeout 120 "$c/gpu_check" warm --runs 3 "$c/data/parity/BRP_datasize=2_counting.gm.zst" \
  "$c/data/parity/Hesselink_datasize=2_property1.gm.zst" \
  /tmp/phases/random_2500000_p50_s5.mpg /tmp/phases/random_2500000_p10_s3.mpg > "$out/warm2.log" 2>&1
for g in /tmp/phases/random_2500000_p10_s3.mpg "$c/data/parity/BRP_datasize=2_counting.gm.zst"; do
  for r in 1 2; do
    echo "== $(basename "$g") run $r" >> "$out/debug.log"
    EGSOLVE_LOG=egsolve=debug "$e" solve "$g" --backend gpu -o /tmp/d.json 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-400 >> "$out/debug.log"
  done
done
BACKENDS="auto gpu" NO_RANDOM=1 SOLVE_TIMEOUT=20 OUT="$out/phases2" timeout 200 bash "$c/phases-session.sh" > "$out/phases2/session.log" 2>&1
echo "done $(date)" >> "$out/warm2.log"

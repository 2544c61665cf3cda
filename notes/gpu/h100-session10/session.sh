#!/usr/bin/env bash
# Session 10, one device call (carried .carry/: stripped egsolve and gpu_check, this script,
# e2e.sh, scripts/phases-session.sh, data/ as phases-session.sh says):
#   run(command="bash .carry/session.sh", carry=[".carry"])
# 1. warm.log: `gpu_check warm` (gpu and auto solving each game 4 times in one process);
# 2. debug.log: the gpu path's debug timeline on random p10 and BRP; e2e.log: whole
#    processes (e2e.sh);
# 3. phases/: scripts/phases-session.sh, every backend on every game, checked.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; e="$c/egsolve"
mkdir -p /tmp/phases "$out/phases"
export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o /tmp/phases/random_2500000_p50_s5.mpg
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o /tmp/phases/random_2500000_p10_s3.mpg
timeout 150 "$c/gpu_check" warm --runs 4 "$c/data/parity/BRP_datasize=2_counting.gm.zst" \
  "$c/data/parity/Hesselink_datasize=2_property1.gm.zst" "$c/data/energy/IEEE1394nparties=2_datasize=2_headersize=2_acksize=2_property4.mpg.gz" \
  /tmp/phases/random_2500000_p50_s5.mpg /tmp/phases/random_2500000_p10_s3.mpg > "$out/warm.log" 2>&1
for g in /tmp/phases/random_2500000_p10_s3.mpg "$c/data/parity/BRP_datasize=2_counting.gm.zst"; do
  echo "== $(basename "$g")" >> "$out/debug.log"
  EGSOLVE_LOG=egsolve=debug "$e" solve "$g" --backend gpu -o /tmp/d.json 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-400 >> "$out/debug.log"
done
timeout 90 bash "$c/e2e.sh" > "$out/e2e.log" 2>&1
NO_RANDOM=1 SOLVE_TIMEOUT=20 OUT="$out/phases" timeout 300 bash "$c/phases-session.sh" > "$out/phases/session.log" 2>&1
echo "done $(date)" >> "$out/warm.log"

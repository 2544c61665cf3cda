#!/usr/bin/env bash
# The feature it measured (commit 3333d45) was reverted after this run: no gain (BENCHMARKS §9).
# Session 70's device run: the 10^9-edge CLI solve (--backend gpu, binary answer into a new
# file on /dev/shm) with the credits written while the strategies are derived (default)
# and after the solve (EGSOLVE_EARLY_CREDITS=0), alternated; whole process, the CLI's
# phases, answers compared byte for byte.
# Carry a folder holding `egsolve.gz` and this script:
#   run(command="bash .carry/session70-early-credits.sh > $OUT/run.log 2>&1", carry=[".carry"])
set -u
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"
gunzip -c "$c/egsolve.gz" > "$e" && chmod +x "$e"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime
w=/dev/shm/egs; rm -rf "$w"; mkdir -p "$w/logs"
s=$(date +%s%N); "$e" gen random --vertices ${VERTICES:-250000000} --degree 4..4 --weights=-10..10 --player1 10 --seed 3 --to egb -o "$w/big.egb"; echo "gen $(( ($(date +%s%N) - s) / 1000000 )) ms"
for r in $(seq 1 ${RUNS:-4}); do
  for v in ${ORDER:-0 1}; do
    sleep 1
    s=$(date +%s%N); EGSOLVE_EARLY_CREDITS=$v EGSOLVE_LOG=info,egsolve::cli::prepared_output=debug "$e" solve "$w/big.egb" --backend gpu --output binary -o "$w/out.bin" 2> "$w/log"; rc=$?; end=$(date +%s%N)
    clean=$(sed 's/\x1b\[[0-9;]*m//g' "$w/log")
    echo "early=$v run $r: rc $rc whole $(( (end - s) / 1000000 )) ms; $(echo "$clean" | grep -o 'solve=[0-9.]* strategies=[0-9.]*'); $(echo "$clean" | grep -o 'beside the strategies seconds=[0-9.]*' | sed 's/beside the strategies //;s/seconds/early_credits/'); $(echo "$clean" | grep -o 'written seconds=[0-9.]*')"
    echo "$clean" > "$w/logs/$r-$v.log"
    [ -f "$w/first.bin" ] || mv "$w/out.bin" "$w/first.bin"
    [ -f "$w/out.bin" ] && { cmp -s "$w/out.bin" "$w/first.bin" && echo "  same answer" || echo "  DIFFERS"; rm -f "$w/out.bin"; }
  done
done
[ -d "${OUT:-}" ] && tar czf "$OUT/logs.tgz" -C "$w" logs
rm -rf "$w"

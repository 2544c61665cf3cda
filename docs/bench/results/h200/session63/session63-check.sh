#!/usr/bin/env bash
# Session 63's device check of the final build: the GPU crate's device tests; a 10^7-edge
# egb game solved with --backend gpu (the early upload, then the new transpose scan)
# certified, and its binary answer into a prepared file equal to the streamed one; the
# shared parity games BRP and Hesselink solved by default and with --backend gpu, certified;
# the 10^9-edge CLI answer written into a prepared file or a new one, compared; then
# Hesselink's default service job, 16 jobs on a server given SETTLE seconds to warm up.
# Carry a folder holding `egsolve.gz`, `gpu-tests.gz`, games/*.gm.gz, certify-shared-games.sh and service-race.sh:
#   run(command="bash .carry/session63-check.sh > $OUT/check.log 2>&1", carry=[".carry"])
set -u
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"
for z in egsolve gpu-tests; do gunzip -c "$c/$z.gz" > "$c/$z" && chmod +x "$c/$z"; done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
timeout 200 "$c/gpu-tests" --skip compile --skip knobs 2>&1 | grep -E '^test |test result|panicked|fresh seed'
w=/dev/shm/egs; rm -rf "$w"; mkdir -p "$w"
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 5 --to egb -o "$w/small.egb"
"$e" solve "$w/small.egb" --backend gpu -o "$w/small.json" && "$e" check "$w/small.egb" "$w/small.json" | tail -1
EGSOLVE_LOG=debug "$e" solve "$w/small.egb" --backend gpu --output binary -o "$w/new.bin" 2>&1 | grep -E 'prepared|written' | cut -c28-200
"$e" solve "$w/small.egb" --backend gpu --output binary -o /dev/stdout > "$w/streamed.bin"
cmp "$w/new.bin" "$w/streamed.bin" && echo "10^7 binary: prepared file = streamed answer"
"$c/certify-shared-games.sh" "$e" "$c/games" "$w"
# 10^9 edges: the answer into a prepared (unnamed, then linked) file, or as a new file.
"$e" gen random --vertices 250000000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 --to egb -o "$w/big.egb"
for r in 1 2 3; do
  for v in plain prepared; do
    env=""; [ $v = plain ] && env="EGSOLVE_PREPARE=0"
    s=$(date +%s%N); env $env EGSOLVE_LOG=info "$e" solve "$w/big.egb" --backend gpu --output binary -o "$w/out.bin" 2> "$w/log"
    echo "10^9 $v run $r: rc $? whole $(( ($(date +%s%N) - s) / 1000000 )) ms, $(sed 's/\x1b\[[0-9;]*m//g' "$w/log" | grep -o 'written seconds=[0-9.]*')"
    [ -f "$w/first.bin" ] || mv "$w/out.bin" "$w/first.bin"
    [ -f "$w/out.bin" ] && { cmp -s "$w/out.bin" "$w/first.bin" && echo "  same answer" || echo "  DIFFERS"; rm -f "$w/out.bin"; }
  done
done
rm -rf "$w"
mkdir -p "$OUT/logs"
cd "$c" && SETTLE=${SETTLE:-4} GAMES=Hesselink_datasize=2_property1 RUNS=${RUNS:-16} ./service-race.sh final

#!/usr/bin/env bash
# A device check of a build: the GPU crate's device tests (not the NVRTC compile ones, which
# CI runs) and a 10^7-edge egb game solved with --backend gpu (the early upload) and
# certified. Carry a folder holding the stripped `egsolve` and `gpu-tests.gz` (the GPU
# crate's test binary, gzipped) beside this script:
#   run(command="bash .carry/final-check-session.sh > $OUT/final.log 2>&1", carry=[".carry"])
set -u
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"
gunzip -c "$c/gpu-tests.gz" > "$c/gpu-tests" && chmod +x "$c/gpu-tests"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
timeout 170 "$c/gpu-tests" --skip compile --skip knobs 2>&1 | grep -E '^test |test result|panicked|fresh seed'
w=/dev/shm/egs; rm -rf "$w"; mkdir -p "$w"
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 5 --to egb -o "$w/small.egb"
EGSOLVE_LOG=debug "$e" solve "$w/small.egb" --backend gpu -o "$w/small.json" 2>&1 | grep -E 'uploaded' | cut -c1-160
"$e" check "$w/small.egb" "$w/small.json" | tail -1
rm -rf "$w"

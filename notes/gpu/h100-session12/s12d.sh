#!/usr/bin/env bash
# Session 12, call 4 (final binary): device tests, every shared game and both 10^7-edge random
# games with auto and gpu (phases-session.sh: answers vs the independent ones and auto's,
# every JSON certified), then gpu_check warm on the goal games.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"
mkdir -p "$out/phases"
{ timeout 300 "$c/gpubackendtests" 2>&1 | tail -12; } > "$out/tests.log"
OUT="$out/phases" BACKENDS="auto gpu" timeout 420 bash "$c/phases-session.sh" > "$out/phases/session.log" 2>&1
mkdir -p /tmp/w; "$c/egsolve" gen random --vertices 1000000 --degree 1..4 --weights=-10..10 --player1 50 --seed 3 -o /tmp/w/random_1M_s3.mpg
timeout 150 "$c/gpu_check" warm --runs 4 /tmp/phases/random_2500000_p50_s5.mpg /tmp/phases/random_2500000_p10_s3.mpg /tmp/w/random_1M_s3.mpg \
  "$c"/data/energy/IEEE*.mpg.gz "$c/data/parity/BRP_datasize=2_counting.gm.zst" "$c/data/parity/Hesselink_datasize=2_property1.gm.zst" > "$out/warm.log" 2>&1
tail -3 "$out/phases/session.log"

#!/usr/bin/env bash
# Whole `egsolve solve FILE --output text -o FILE` processes on BRP, Hesselink and the random
# p50 game, auto and gpu (kernel cache warmed by one untimed gpu run), 3 runs each, with the
# CLI's parse/solve/write log lines (EGSOLVE_LOG=info). Random games from /tmp/phases.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
"$c/egsolve" solve "$c/data/parity/Hanoi_ndisks=8_eventually_done.gm.gz" --backend gpu -o /tmp/w.txt --output text 2>/dev/null
for g in "$c/data/parity/BRP_datasize=2_counting.gm.zst" "$c/data/parity/Hesselink_datasize=2_property1.gm.zst" /tmp/phases/random_2500000_p50_s5.mpg; do
  for b in auto gpu; do for r in 1 2 3; do
    s=$(date +%s%N)
    EGSOLVE_LOG=info "$c/egsolve" solve "$g" --backend $b --output text -o /tmp/e2e.txt 2>/tmp/e2e.err; rc=$?
    echo "$(basename "$g") $b run $r rc=$rc wall_ms=$(( ($(date +%s%N)-s)/1000000 ))"
    sed 's/\x1b\[[0-9;]*m//g' /tmp/e2e.err | grep -E "parsed|solved|written" | sed 's/^.*egsolve::cli::solve: /  /'
  done; done
done

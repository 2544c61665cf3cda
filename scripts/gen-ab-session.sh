#!/usr/bin/env bash
# One device call: `gen random --to egb` at 10^9 edges, the build before (egsolve-old) against
# this one (egsolve), twice each, the outputs compared byte for byte; each build's debug log
# (phase times). Carry both stripped builds and measure.sh:
#   run(command="bash .carry/gen-ab-session.sh > $OUT/gen.log 2>&1", carry=[".carry"])
set -u
c="$(cd "$(dirname "$0")" && pwd)"; . "$c/measure.sh"
w=/dev/shm/gen-ab; rm -rf "$w"; mkdir -p "$w"
nproc; echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in 1 2; do
  for b in egsolve-old egsolve; do
    rm -f "$w/$b.egb"
    EGSOLVE_LOG=egsolve_core=debug measure "$b gen 10^9 run $r" "$c/$b" gen random --vertices 250000000 --degree 4..4 \
      --weights=-10..10 --player1 10 --seed 3 --to egb -o "$w/$b.egb" 2> "$w/log-$b" 
    sed 's/\x1b\[[0-9;]*m//g' "$w/log-$b" | grep -o 'DEBUG.*' | cut -c1-160
  done
  cmp -s "$w/egsolve-old.egb" "$w/egsolve.egb" && echo "  files equal" || echo "  FILES DIFFER"
done
rm -rf "$w"

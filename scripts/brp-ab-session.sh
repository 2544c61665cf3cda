#!/bin/bash
# BRP, warm servers (issue 42, session 53): an older build (egsolve-old, carried beside)
# against HEAD (egsolve), alternating, kernels cached (a restart on one data directory).
set -u
cd "$(dirname "$0")"
mkdir -p $OUT/logs
export DATA_DIR=/tmp/ab-data; mkdir -p $DATA_DIR
G="BRP_datasize=2_counting"
EGSOLVE_BIN=./egsolve GAMES="$G" RUNS=2 ./service-race.sh fill > /dev/null 2>&1
o=100
for round in 1 2; do
  for b in egsolve-old egsolve; do
    o=$((o + 20))
    EGSOLVE_BIN=./$b GAMES="$G" RUNS=7 SETTLE=1 RUN_OFFSET=$o ./service-race.sh "$b-r$round" >> $OUT/logs/ab.log 2>&1
  done
done
cat $OUT/logs/ab.log

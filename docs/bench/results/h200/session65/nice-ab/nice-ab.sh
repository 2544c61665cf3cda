#!/usr/bin/env bash
# The race's CPU side at nice 0 (EGSOLVE_RACE_CPU_NICE=0) and at the default (10), one
# build, alternated fresh warm servers: job solve per game.
set -u
c="$(cd "$(dirname "$0")" && pwd)"
gunzip -c "$c/egsolve-v4.gz" > "$c/egsolve" && chmod +x "$c/egsolve"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT/logs"; cd "$c"; uptime
G="Hesselink_datasize=2_property1 BRP_datasize=2_counting Onebit_datasize=2_messages_read_are_inevitably_sent SWP_datasize=2_windowsize=3_nodeadlock Lift_(Incorrect)_nlifts=3_liveness_1_1 ABP_CABP_(datasize=2)eq=branching-bisim"
for round in $(seq ${ROUNDS:-3}); do
  for v in 0 10; do
    EGSOLVE_RACE_CPU_NICE=$v EGSOLVE_LOG=info,egsolve_core::solve::race=debug,egsolve_gpu=debug SETTLE=3 GAMES="$G" RUNS=${RUNS:-6} RUN_OFFSET=$((round * 10)) ./service-race.sh "nice$v-r$round"
  done
done > $OUT/jobs.txt
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs

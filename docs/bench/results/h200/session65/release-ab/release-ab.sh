#!/usr/bin/env bash
# Freed memory handed back after every job (EGSOLVE_RELEASE_IDLE_MS=0, as before) or after
# 2 s without one (the default), one build, alternated warm servers: job solve per game.
set -u
c="$(cd "$(dirname "$0")" && pwd)"
gunzip -c "$c/egsolve-v6.gz" > "$c/egsolve" && chmod +x "$c/egsolve"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT/logs"; cd "$c"; uptime
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag
G="Hesselink_datasize=2_property1 BRP_datasize=2_counting Onebit_datasize=2_messages_read_are_inevitably_sent SWP_datasize=2_windowsize=3_nodeadlock"
for round in $(seq ${ROUNDS:-3}); do
  for v in 0 2000; do
    EGSOLVE_RELEASE_IDLE_MS=$v EGSOLVE_LOG=info,egsolve_core::solve::race=debug,egsolve_gpu=debug SETTLE=3 GAMES="$G" RUNS=${RUNS:-7} RUN_OFFSET=$((round * 10)) ./service-race.sh "release$v-r$round"
  done
done > $OUT/jobs.txt
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs

#!/usr/bin/env bash
# Session 65's last build: warm service jobs (default options) on fresh servers, three
# rounds; the submit path's phases from the servers' logs.
set -u
c="$(cd "$(dirname "$0")" && pwd)"
gunzip -c "$c/egsolve-final.gz" > "$c/egsolve" && chmod +x "$c/egsolve"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT/logs"; cd "$c"; uptime
G="Hesselink_datasize=2_property1 BRP_datasize=2_counting Onebit_datasize=2_messages_read_are_inevitably_sent SWP_datasize=2_windowsize=3_nodeadlock"
for round in $(seq ${ROUNDS:-3}); do
  EGSOLVE_LOG=info,egsolve_core::solve::race=debug,egsolve_gpu=debug SETTLE=3 GAMES="$G" RUNS=${RUNS:-8} RUN_OFFSET=$((round * 10)) ./service-race.sh "final-r$round"
done > $OUT/jobs.txt
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs

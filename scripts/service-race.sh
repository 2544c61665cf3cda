#!/bin/bash
# Service jobs, default options, warm server: solve ms, device, backend per job, one job at
# a time; each run's arena differs by trailing blank lines, so no result is reused.
# usage: service-race.sh LABEL [serve flags...]   (env: RUNS, GAMES; from race-session.sh)
# Games are games/NAME.gm.gz or games/NAME.mpg.gz; SUBMIT_FLAGS are added to each submit.
set -u
cd "$(dirname "$0")"
label=$1; shift
port=18$((RANDOM % 900 + 100))
d=${DATA_DIR:-$(mktemp -d /tmp/svc.XXXX)}  # DATA_DIR: a server restarted on its data
EGSOLVE_LOG=${EGSOLVE_LOG:-info,egsolve_core::solve::race=debug} ${EGSOLVE_BIN:-./egsolve} serve --bind 127.0.0.1:$port --data-dir $d "$@" > $OUT/logs/serve-$label.log 2>&1 &
pid=$!
for i in $(seq 100); do curl -sf http://127.0.0.1:$port/healthz >/dev/null 2>&1 && break; sleep 0.1; done
sleep ${SETTLE:-0}  # seconds between start-up and the first job
G=games
for g in ${GAMES:-BRP_datasize=2_counting Hesselink_datasize=2_property1 Onebit_datasize=2_messages_read_are_inevitably_sent SWP_datasize=2_windowsize=3_nodeadlock}; do
  for r in $(seq ${RUNS:-6}); do
    # Trailing blank lines (run + RUN_OFFSET) make each arena new (the service reuses results).
    ext=gm; [ -f "$G/$g.gm.gz" ] || ext=mpg
    (zcat "$G/$g.$ext.gz"; for i in $(seq $((r + ${RUN_OFFSET:-0}))); do echo; done) | gzip -1 > /tmp/run.$ext.gz
    id=$(./egsolve submit --server http://127.0.0.1:$port --wait ${SUBMIT_FLAGS:-} /tmp/run.$ext.gz -o /dev/null 2>&1 | awk '{print $1}' | tail -1)
    j=$(curl -s http://127.0.0.1:$port/v1/jobs/$id)
    solve=$(echo "$j" | grep -o '"solve":[0-9.]*' | head -1 | cut -d: -f2)
    dev=$(echo "$j" | grep -o '"device":"[^"]*"' | head -1)
    be=$(echo "$j" | grep -o '"backend":"[^"]*"' | head -1)
    printf '%s %s run %d: solve %.2f ms %s %s\n' "$label" "${g%%_*}" $r "$solve" "$dev" "$be"
  done
done
kill $pid; wait $pid 2>/dev/null; [ -n "${DATA_DIR:-}" ] || rm -rf $d

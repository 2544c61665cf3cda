#!/usr/bin/env bash
# v0 (HEAD), v1 (no recorded moves where player 1 wins nowhere), v2 (v1 + player 0's moves
# on the device at every degree): answers compared, then warm service jobs alternated.
set -u
c="$(cd "$(dirname "$0")" && pwd)"
for v in 0 1 2; do gunzip -c "$c/egsolve-v$v.gz" > "$c/egsolve-v$v" && chmod +x "$c/egsolve-v$v"; done
cp "$c/egsolve-v0" "$c/egsolve"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT/logs"; cd "$c"; uptime
for g in BRP_datasize=2_counting Hesselink_datasize=2_property1 SWP_datasize=2_windowsize=3_nodeadlock; do
  zcat games/$g.gm.gz > /tmp/g.gm
  for v in 0 1 2; do ./egsolve-v$v solve /tmp/g.gm --backend gpu --output binary -o /tmp/$v.bin 2>/dev/null; done
  for v in 1 2; do cmp -s /tmp/0.bin /tmp/$v.bin && echo "$g v$v: answer equal to v0" || echo "$g v$v: ANSWER DIFFERS"; done
  ./egsolve-v2 solve /tmp/g.gm --backend gpu --output json -o /tmp/2.json 2>/dev/null && ./egsolve-v2 check /tmp/g.gm /tmp/2.json 2>&1 | tail -1
done
GAMES="Hesselink_datasize=2_property1 BRP_datasize=2_counting Onebit_datasize=2_messages_read_are_inevitably_sent SWP_datasize=2_windowsize=3_nodeadlock"
for round in 1 2; do
  for v in 0 1 2; do
    EGSOLVE_BIN=./egsolve-v$v EGSOLVE_LOG=info,egsolve_core::solve::race=debug,egsolve_gpu=debug SETTLE=3 GAMES="$GAMES" RUNS=${RUNS:-6} RUN_OFFSET=$((round * 10)) ./service-race.sh "v$v-r$round"
  done
done | tee $OUT/jobs.txt
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs

#!/usr/bin/env bash
# Player 0's host moves beside the device's record (v5) against ea59256 (final): GPU tests
# and certified shared games for v5, then warm service jobs on alternated servers.
set -u
c="$(cd "$(dirname "$0")" && pwd)"
gunzip -c "$c/egsolve-final.gz" > "$c/egsolve-base" && gunzip -c "$c/egsolve-v5.gz" > "$c/egsolve-v5" && chmod +x "$c"/egsolve-base "$c"/egsolve-v5
cp "$c/egsolve-v5" "$c/egsolve"
gunzip -c "$c/gpu-tests.gz" > "$c/gpu-tests" && chmod +x "$c/gpu-tests"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT/logs"; cd "$c"; uptime
./gpu-tests --skip compile --skip knobs > $OUT/gpu-tests.log 2>&1; echo "gpu tests rc=$?"; grep -E 'test result|FAILED|panicked' $OUT/gpu-tests.log | head
./certify-shared-games.sh ./egsolve-v5 games /tmp > $OUT/certify.log 2>&1
echo "certified: $(grep -c ': ok' $OUT/certify.log) of $(wc -l < $OUT/certify.log)"
G="Hesselink_datasize=2_property1 BRP_datasize=2_counting Onebit_datasize=2_messages_read_are_inevitably_sent SWP_datasize=2_windowsize=3_nodeadlock"
for round in $(seq ${ROUNDS:-3}); do
  for v in base v5; do
    EGSOLVE_BIN=./egsolve-$v EGSOLVE_LOG=info,egsolve_core::solve::race=debug,egsolve_gpu=debug SETTLE=3 GAMES="$G" RUNS=${RUNS:-7} RUN_OFFSET=$((round * 10)) ./service-race.sh "$v-r$round"
  done
done > $OUT/jobs.txt
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs

#!/usr/bin/env bash
# Session 65: the GPU crate's tests, the shared games certified by the new build, then warm
# service jobs of the build before (v1) and the new one (v3) on alternated servers.
set -u
c="$(cd "$(dirname "$0")" && pwd)"
for v in 1 3; do gunzip -c "$c/egsolve-v$v.gz" > "$c/egsolve-v$v" && chmod +x "$c/egsolve-v$v"; done
cp "$c/egsolve-v3" "$c/egsolve"
gunzip -c "$c/gpu-tests.gz" > "$c/gpu-tests" && chmod +x "$c/gpu-tests"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT/logs"; cd "$c"; uptime
if [ "${TESTS:-1}" = 1 ]; then
  ./gpu-tests --skip compile --skip knobs > $OUT/gpu-tests.log 2>&1; echo "gpu tests rc=$?"; grep -E 'test result|FAILED|panicked' $OUT/gpu-tests.log | head
fi
if [ "${GAMES:-1}" = 1 ]; then
  ./certify-shared-games.sh ./egsolve-v3 games /tmp > $OUT/certify.log 2>&1
  echo "certified: $(grep -c ': ok' $OUT/certify.log) of $(wc -l < $OUT/certify.log)"; grep -v ': ok' $OUT/certify.log | head
fi
G="Hesselink_datasize=2_property1 BRP_datasize=2_counting Onebit_datasize=2_messages_read_are_inevitably_sent SWP_datasize=2_windowsize=3_nodeadlock"
for round in $(seq ${ROUNDS:-3}); do
  for v in 1 3; do
    EGSOLVE_BIN=./egsolve-v$v EGSOLVE_LOG=info,egsolve_core::solve::race=debug,egsolve_gpu=debug SETTLE=3 GAMES="$G" RUNS=${RUNS:-6} RUN_OFFSET=$((round * 10)) ./service-race.sh "v$v-r$round"
  done
done > $OUT/jobs.txt
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs

#!/usr/bin/env bash
# Warm service jobs (default options) of several builds or settings on fresh servers,
# alternated round by round, as session 65 measured them on the H200 host (the script was
# `session65-ab.sh` until session 73): the job's solve per game in $OUT/jobs.txt, the
# servers' logs (race and GPU debug events) in $OUT/logs.tgz. Carried beside
# service-race.sh, egsolve builds (gzipped) and games/.
# Optionally first (TESTS=1) the GPU crate's tests (gpu-tests.gz) and every shared game
# certified by the first variant's build.
# usage: service-ab-session.sh LABEL=BUILD[,VAR=VALUE...] ...
#   e.g. service-ab-session.sh base=egsolve-v1 new=egsolve-v3        (two builds)
#        service-ab-session.sh release0=egsolve,EGSOLVE_RELEASE_IDLE_MS=0 release2000=egsolve
# env: ROUNDS (3), RUNS (jobs per game and server, 7), GAMES (Hesselink BRP Onebit SWP),
#      LOG (the servers' EGSOLVE_LOG)
set -u
c="$(cd "$(dirname "$0")" && pwd)"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT/logs"; cd "$c"; uptime
for spec in "$@"; do
  build=${spec#*=}; build=${build%%,*}
  [ -x "$build" ] || { gunzip -c "$build.gz" > "$build" && chmod +x "$build"; }
done
first=${1#*=}; first=${first%%,*}; cp "$first" egsolve  # service-race.sh's client
if [ "${TESTS:-0}" = 1 ]; then
  gunzip -c gpu-tests.gz > gpu-tests && chmod +x gpu-tests
  ./gpu-tests --skip compile --skip knobs > $OUT/gpu-tests.log 2>&1; echo "gpu tests rc=$?"
  grep -E 'test result|FAILED|panicked' $OUT/gpu-tests.log | head
  ./certify-shared-games.sh "./$first" games /tmp > $OUT/certify.log 2>&1
  echo "certified: $(grep -c ': ok' $OUT/certify.log) of $(wc -l < $OUT/certify.log)"
fi
G=${GAMES:-Hesselink_datasize=2_property1 BRP_datasize=2_counting Onebit_datasize=2_messages_read_are_inevitably_sent SWP_datasize=2_windowsize=3_nodeadlock}
for round in $(seq ${ROUNDS:-3}); do
  for spec in "$@"; do
    label=${spec%%=*}; rest=${spec#*=}; build=${rest%%,*}; vars=${rest#"$build"}
    env ${vars//,/ } EGSOLVE_BIN="./$build" EGSOLVE_LOG=${LOG:-info,egsolve_core::solve::race=debug,egsolve_gpu=debug} \
      SETTLE=3 GAMES="$G" RUNS=${RUNS:-7} RUN_OFFSET=$((round * 10)) ./service-race.sh "$label-r$round"
  done
done > $OUT/jobs.txt
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs

#!/bin/bash
# Two builds' raced parity jobs side by side (session 62): the new build's GPU device tests,
# then for BRP and Hesselink `gpu_check race` (the GPU route alone, the CPU portfolio alone,
# the race, in one warm process) and the service's default job (service-race.sh), old and
# new build alternating in one call. Carry a folder holding the new build's gzipped stripped
# `egsolve.gz`, `gpu_check.gz`, `gpu-tests.gz`, the old build's in old/, these scripts and
# games/*.gm.gz:
#   run(command="bash .carry/race-ab-session.sh", carry=[".carry"])   # logs in $OUT
set -u
cd "$(dirname "$0")"
for d in . old; do for b in egsolve gpu_check; do [ -f $d/$b.gz ] && gunzip -c $d/$b.gz > $d/$b && chmod +x $d/$b; done; done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD:${LD_LIBRARY_PATH:-}
mkdir -p $OUT/logs
if [ "${TESTS:-1}" = 1 ]; then
  gunzip -c gpu-tests.gz > gpu-tests && chmod +x gpu-tests
  timeout 200 ./gpu-tests --skip compile --skip knobs > $OUT/logs/gpu-tests.log 2>&1
  echo "gpu tests: rc $?" >> $OUT/logs/gpu-tests.log
fi
G=games
GAMES="$G/BRP_datasize=2_counting.gm.gz $G/Hesselink_datasize=2_property1.gm.gz"
rm -f $G/Onebit* $G/SWP*  # (not raced here)
for round in 1 2; do
  for build in old new; do
    bin=./gpu_check; [ $build = old ] && bin=old/gpu_check
    [ -x $bin ] || continue  # (an old build carried without its gpu_check)
    echo "== round $round build $build" >> $OUT/logs/race.log
    timeout 120 $bin race --runs ${RUNS:-4} --threads 4 $GAMES 2>&1 | grep -E 'gpu run|race t4' >> $OUT/logs/race.log
  done
done
EGSOLVE_LOG=debug timeout 60 ./gpu_check race --runs 2 --threads 4 $G/Hesselink_datasize=2_property1.gm.gz > $OUT/logs/race-debug.log 2>&1
for round in 1 2; do
  for build in old new; do
    bin=$PWD/egsolve; [ $build = old ] && bin=$PWD/old/egsolve
    GAMES="BRP_datasize=2_counting Hesselink_datasize=2_property1" RUNS=6 EGSOLVE_BIN=$bin ./service-race.sh $build-$round >> $OUT/logs/service.log 2>&1
  done
done
# The new build's answers on the CLI, certified (auto: the race; --backend gpu: the route).
for g in $G/*.gm.gz; do
  for opts in "" "--backend gpu"; do
    ./egsolve solve $g $opts -o /tmp/answer.json 2>/dev/null
    be=$(grep -o '"backend": *"[^"]*"' /tmp/answer.json | head -1)
    echo "$(basename $g) [$opts]: $be; check: $(./egsolve check $g /tmp/answer.json 2>&1 | tail -1 | cut -c1-60)" >> $OUT/logs/cli.log
  done
done
cd $OUT && tar czf logs.tgz logs

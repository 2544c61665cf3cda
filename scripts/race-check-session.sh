#!/bin/bash
# A device check of a build and where a raced parity job's time goes (session 62): the GPU
# crate's device tests and a certified 10^7-edge early-upload solve
# (final-check-session.sh), then `gpu_check race` with debug events on BRP and Hesselink,
# then the service's default job on both (service-race.sh). Carry a folder holding the
# gzipped stripped binaries (egsolve.gz, gpu_check.gz, gpu-tests.gz), these scripts and
# games/*.gm.gz:
#   run(command="bash .carry/race-check-session.sh", carry=[".carry"])   # logs in $OUT
set -u
cd "$(dirname "$0")"
for b in egsolve gpu_check; do [ -f $b.gz ] && gunzip -c $b.gz > $b && chmod +x $b; done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD:${LD_LIBRARY_PATH:-}
mkdir -p $OUT/logs
[ "${CHECK:-1}" = 1 ] && bash ./final-check-session.sh > $OUT/logs/final.log 2>&1
G=games
GAMES="$G/BRP_datasize=2_counting.gm.gz $G/Hesselink_datasize=2_property1.gm.gz"
EGSOLVE_LOG=${RACE_LOG:-egsolve_core::solve::race=debug} timeout 200 ./gpu_check race --runs ${RUNS:-4} --threads ${THREADS:-4} $GAMES > $OUT/logs/race.log 2>&1
EGSOLVE_LOG=debug timeout 100 ./gpu_check race --runs 2 --threads ${THREADS:-4} $G/Hesselink_datasize=2_property1.gm.gz > $OUT/logs/race-debug.log 2>&1
GAMES="BRP_datasize=2_counting Hesselink_datasize=2_property1" RUNS=8 ./service-race.sh svc > $OUT/logs/service.log 2>&1
cd $OUT && tar czf logs.tgz logs

#!/bin/bash
# Where a raced parity job's time goes, in one device call (issue 42, session 53): the GPU
# route alone, the CPU portfolio alone and the race in one warm process (`gpu_check race`,
# the race's debug events: when each side started and answered), then the service's default
# job on six shared games (scripts/service-race.sh). Run from a carried folder (e.g. .carry/)
# holding stripped release `egsolve` and `gpu_check`, service-race.sh, and the games as
# games/*.gm.gz:
#   run(command="bash .carry/race-session.sh", carry=[".carry"])   # logs under $OUT/logs
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD:${LD_LIBRARY_PATH:-}
mkdir -p $OUT/logs
G=games
GAMES="$G/BRP_datasize=2_counting.gm.gz $G/Hesselink_datasize=2_property1.gm.gz $G/Onebit_datasize=2_messages_read_are_inevitably_sent.gm.gz $G/SWP_datasize=2_windowsize=3_nodeadlock.gm.gz"
EGSOLVE_LOG=egsolve_core::solve::race=debug timeout 200 ./gpu_check race --runs ${RUNS:-4} --threads ${THREADS:-4} $GAMES > $OUT/logs/race.log 2>&1
GAMES="BRP_datasize=2_counting Hesselink_datasize=2_property1 Onebit_datasize=2_messages_read_are_inevitably_sent SWP_datasize=2_windowsize=3_nodeadlock Hanoi_ndisks=10_eventually_done Lift_(Incorrect)_nlifts=3_liveness_1_1" RUNS=8 ./service-race.sh svc > $OUT/logs/service.log 2>&1
cd $OUT && tar czf logs.tgz logs

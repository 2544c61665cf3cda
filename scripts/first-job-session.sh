#!/bin/bash
# A server's first parity jobs (issue 42, session 53): a new data directory (no kernels
# compiled: the start-up warm-up compiles every width), then a restart on it (the warm-up
# loads them from the disk cache). Run from a carried folder with a stripped release
# `egsolve`, service-race.sh and games/*.gm.gz:
#   run(command="bash .carry/first-job-session.sh", carry=[".carry"])   # logs under $OUT/logs
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD:${LD_LIBRARY_PATH:-}
mkdir -p $OUT/logs
G="BRP_datasize=2_counting Hesselink_datasize=2_property1 Onebit_datasize=2_messages_read_are_inevitably_sent SWP_datasize=2_windowsize=3_nodeadlock"
L=info,egsolve_gpu=debug,egsolve_core::solve::race=debug
export DATA_DIR=/tmp/svc-data; rm -rf $DATA_DIR; mkdir -p $DATA_DIR
EGSOLVE_LOG=$L GAMES="$G" RUNS=3 SETTLE=${SETTLE_NEW:-0} ./service-race.sh new > $OUT/logs/service-new.log 2>&1
EGSOLVE_LOG=$L GAMES="$G" RUNS=3 SETTLE=1 RUN_OFFSET=10 ./service-race.sh restart > $OUT/logs/service-restart.log 2>&1
ls -la $DATA_DIR/kernels > $OUT/logs/kernels-dir.txt 2>&1
cd $OUT && tar czf logs.tgz logs

#!/usr/bin/env bash
# Session 67: the final build's first and warm Hesselink/BRP service jobs on fresh servers
# (service-ab-session.sh), then fresh CLI processes with default options (whole process, wall).
set -u
c="$(cd "$(dirname "$0")" && pwd)"; cd "$c"
ROUNDS=${ROUNDS:-12} RUNS=${RUNS:-3} GAMES="Hesselink_datasize=2_property1" bash service-ab-session.sh head=egsolve-head
mv $OUT/jobs.txt $OUT/jobs-hesselink.txt; mv $OUT/logs.tgz $OUT/logs-hesselink.tgz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
for g in BRP_datasize=2_counting Hesselink_datasize=2_property1; do
  zcat games/$g.gm.gz > /tmp/$g.gm
  for r in 1 2 3 4 5 6; do
    /usr/bin/time -f "$g run $r: %e s wall, %M KB" ./egsolve-head solve /tmp/$g.gm -o /tmp/answer.json 2>> $OUT/cli.txt
    ./egsolve-head check /tmp/$g.gm /tmp/answer.json 2>&1 | tail -1 >> $OUT/cli.txt
  done
done
cat $OUT/cli.txt

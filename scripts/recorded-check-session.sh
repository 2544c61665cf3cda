#!/bin/bash
# A device check of player 1's recorded moves classified on the device (session 62): the
# GPU crate's device tests, then the shared parity games carried in games/ solved by the
# CLI with default options (the race where the game is large: which side answered is
# printed) and certified by `egsolve check`. Carry a folder holding the gzipped stripped
# `egsolve.gz` and `gpu-tests.gz`, this script and games/*.gm.gz:
#   run(command="bash .carry/recorded-check-session.sh", carry=[".carry"])   # logs in $OUT
set -u
cd "$(dirname "$0")"
gunzip -c egsolve.gz > egsolve && chmod +x egsolve
gunzip -c gpu-tests.gz > gpu-tests && chmod +x gpu-tests
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p $OUT/logs
s=$SECONDS
timeout 280 ./gpu-tests --skip compile --skip knobs > $OUT/logs/gpu-tests.log 2>&1
echo "gpu tests: rc $? in $((SECONDS - s)) s" >> $OUT/logs/gpu-tests.log
for g in games/*.gm.gz; do
  n=$(basename $g .gm.gz)
  for opts in "" "--backend gpu"; do
    s=$SECONDS
    ./egsolve solve $g $opts -o /tmp/answer.json 2> /tmp/err.log
    rc=$?
    be=$(grep -o '"backend": *"[^"]*"' /tmp/answer.json | head -1)
    echo "$n [$opts]: solve rc $rc $be ($((SECONDS - s)) s); check: $(./egsolve check $g /tmp/answer.json 2>&1 | tail -1 | cut -c1-120)" >> $OUT/logs/cli.log
    [ $rc = 0 ] || tail -3 /tmp/err.log >> $OUT/logs/cli.log
  done
done
cd $OUT && tar czf logs.tgz logs

#!/usr/bin/env bash
# Hesselink's first jobs on fresh servers, old (egsolve-old.gz) and new (egsolve.gz) builds
# alternated: the GPU side's "bound" event (the host pool's start) and the job's solve.
set -u
c="$(cd "$(dirname "$0")" && pwd)"
for z in egsolve egsolve-old; do gunzip -c "$c/$z.gz" > "$c/$z" && chmod +x "$c/$z"; done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT/logs"; cd "$c"
for round in 1 2 3; do
  for b in old new; do
    bin=./egsolve; [ $b = old ] && bin=./egsolve-old
    EGSOLVE_BIN=$bin EGSOLVE_LOG=info,egsolve_core::solve::race=debug,egsolve_gpu=debug SETTLE=4 GAMES=Hesselink_datasize=2_property1 RUNS=3 RUN_OFFSET=$((round * 10)) ./service-race.sh "$b-$round"
    echo "  $b-$round gpu bound events (s): $(sed 's/\x1b\[[0-9;]*m//g' "$OUT/logs/serve-$b-$round.log" | grep -o 'gpu: bound seconds=[0-9.e-]*' | cut -d= -f2 | tr '\n' ' ')"
  done
done
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs

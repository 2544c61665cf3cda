#!/usr/bin/env bash
# Session 67: fresh CLI processes on BRP, default options, with the phases logged: as
# built, with the race's GPU host threads at 16, and `--backend gpu`; alternated.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; cd "$c"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
[ -x egsolve-head ] || { gunzip -c egsolve-head.gz > egsolve-head && chmod +x egsolve-head; }
g=BRP_datasize=2_counting; zcat games/$g.gm.gz > /tmp/$g.gm
mkdir -p $OUT/logs
for r in 1 2 3 4 5; do
  for v in default race16 gpu; do
    case $v in
      default) env=""; opts="";;
      race16) env="EGSOLVE_GPU_RACE_THREADS=16"; opts="";;
      gpu) env=""; opts="--backend gpu";;
    esac
    s=$(date +%s%N)
    env $env EGSOLVE_LOG=debug ./egsolve-head solve /tmp/$g.gm $opts -o /tmp/answer.json 2> $OUT/logs/$v-$r.log
    e=$(date +%s%N)
    echo "$v run $r: $(( (e-s)/1000000 )) ms"
  done
done | tee $OUT/cli.txt
./egsolve-head check /tmp/$g.gm /tmp/answer.json | tail -1

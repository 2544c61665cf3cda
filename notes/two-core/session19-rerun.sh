#!/usr/bin/env bash
# Session 19 rerun, 2-core build machine: old = 8f81ee6, new = HEAD; the 10^6-vertex game on 1
# and 2 threads, eight alternating rounds, with the phases of each solve; then the shared games
# that came out above 1.02 in session19.txt, one thread, five alternating rounds.
set -u
old=${OLD:-/tmp/egsolve-prev}; new=${NEW:-target/release/egsolve}; t=/tmp/tc
secs() { python3 -c "
import json,sys; s=json.loads(open(sys.argv[1]).readline()[len('{\"summary\": '):].rstrip().rstrip(','))
p=s['phases']; print(s['solve_seconds'], s['strategy_seconds'], 'evals', s['evaluations'], ' '.join('%s %.4f'%(k,p[k]) for k in ['lifting','evaluation','graph','components','cycle_test','attractor','bellman_ford']))" "$1"; }
echo "# load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
echo "## 10^6-vertex game: binary threads solve strategies phases"
for r in 1 2 3 4 5 6 7 8; do for b in old new; do for th in 1 2; do
  bin=$old; [ $b = new ] && bin=$new
  "$bin" solve $t/r1m.mpg --threads $th -o $t/o.json 2>/dev/null && echo "$b $th $(secs $t/o.json)"
done; done; done
echo "## shared games, one thread: game binary solve strategies"
for f in /work/shared/data/parity/SWP* /work/shared/data/parity/Hanoi_ndisks=10* /work/shared/data/parity/Hesselink*.gm.zst /work/shared/data/parity/Buffer*.gm.gz; do
  n=$(basename "$f" | cut -c1-40)
  for r in 1 2 3 4 5; do for b in old new; do
    bin=$old; [ $b = new ] && bin=$new
    timeout 120 "$bin" solve "$f" --threads 1 -o $t/o.json 2>/dev/null && echo "$n $b $(secs $t/o.json | cut -d' ' -f1-2)"
  done; done
done
echo "# load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"

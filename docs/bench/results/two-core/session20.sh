#!/usr/bin/env bash
# Session 20, 2-core build machine: old = 94280c4 (session 19 end), new = HEAD. (1) The 10^6-vertex
# game of issue 14's 2-core goal, `solve --threads T`, T = 1 and 2, four alternating rounds;
# (2) every shared game on one thread, three alternating rounds. summary.solve_seconds and
# strategy_seconds of `egsolve solve FILE --threads T -o out.json`.
set -u
old=${OLD:-/tmp/headtarget/release/egsolve}; new=${NEW:-target/release/egsolve}; t=/tmp/tc
"$new" gen random --vertices 1000000 --degree 1..4 --weights=-10..10 --player1 50 --seed 3 -o $t/r1m.mpg
secs() { python3 -c "import json,sys; s=json.loads(open(sys.argv[1]).readline()[len('{\"summary\": '):].rstrip().rstrip(','));print(s['solve_seconds'], s['strategy_seconds'])" "$1"; }
echo "# load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
echo "## 10^6-vertex game: binary threads solve strategies"
for r in 1 2 3 4; do
  for b in old new; do
    for th in 1 2; do
      bin=$old; [ $b = new ] && bin=$new
      "$bin" solve $t/r1m.mpg --threads $th -o $t/o.json 2>/dev/null && echo "$b $th $(secs $t/o.json)"
    done
  done
done
echo "## shared games, one thread: game binary solve strategies"
for f in /work/shared/data/energy/*.mpg.gz $(ls /work/shared/data/parity/*.gm.* | grep -v '\.sol\.'); do
  n=$(basename "$f" | cut -c1-40)
  for r in 1 2 3; do
    for b in old new; do
      bin=$old; [ $b = new ] && bin=$new
      timeout 120 "$bin" solve "$f" --threads 1 -o $t/o.json 2>/dev/null && echo "$n $b $(secs $t/o.json)"
    done
  done
done
echo "# load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"

#!/usr/bin/env bash
# Session 12, call 3: the gpu's first lifting phase length (--gpu-lift-percent 5/10/25/50)
# with device components; "least fixpoint" seconds (solve without the CUDA context) from the
# debug log, strategy seconds from the JSON; run 1's credits compared with auto's.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; d="$c/data"; e="$c/egsolve"; out="${OUT:-/tmp}"; t=/tmp/s12
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/machine.log"; nproc >> "$out/machine.log"
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
"$e" gen random --vertices 1000000 --degree 1..4 --weights=-10..10 --player1 50 --seed 3 -o "$t/random_1M_s3.mpg"
games="$t/random_p50.mpg $t/random_p10.mpg $t/random_1M_s3.mpg $(ls $d/energy/IEEE*.mpg.gz $d/parity/BRP*.gm.zst $d/parity/Hesselink*.gm.zst $d/parity/Onebit*.gm.gz)"
for f in $games; do
  name=$(basename "$f"); name=${name%%.*}
  "$e" solve "$f" --backend auto --output text -o "$t/auto.txt" 2>/dev/null
  for r in 1 2 3; do for pct in ${PCTS:-5 10 25 50}; do
    EGSOLVE_LOG=egsolve::solve::accel=debug "$e" solve "$f" --backend gpu --gpu-lift-percent $pct -o "$t/g.json" 2>"$t/g.err"; rc=$?
    fix=$(sed 's/\x1b\[[0-9;]*m//g' "$t/g.err" | grep "least fixpoint" | sed 's/.*seconds=//')
    s=$(head -1 "$t/g.json" | python3 -c 'import sys,json; l=sys.stdin.read().strip().rstrip(","); l=l[len("{\"summary\": "):]; d=json.loads(l); p=d["phases"]; print("strat %.4f ev %d lift %.3f eval %.3f" % (d["strategy_seconds"], d["evaluations"], p.get("lifting",0), p.get("evaluation",0)))' 2>&1)
    same=""
    if [ $r = 1 ]; then "$e" solve "$f" --backend gpu --gpu-lift-percent $pct --output text -o "$t/g.txt" 2>/dev/null; same=$(cmp -s "$t/auto.txt" "$t/g.txt" && echo auto-same || echo auto-DIFFERS); fi
    echo "$name pct=$pct run$r rc=$rc fixpoint $fix $s $same"
  done; done
done 2>&1 | tee "$out/pct.log"
echo "== DIFFERS $(grep -c DIFFERS $out/pct.log) rc!=0 $(grep -c 'rc=[1-9]' $out/pct.log)"

#!/usr/bin/env bash
# Session 12: device components. 1) the lib test comparing device components with Tarjan;
# 2) gpu with device components (new) vs host components (old), interleaved, on random and
# shared games: solve seconds and phases, credits equal, new answers certified.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; d="$c/data"; e="$c/egsolve"; out="${OUT:-/tmp}"; t=/tmp/s12
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; "$e" --version; } 2>&1 | tee "$out/machine.log"
if [ -z "${NO_TEST:-}" ]; then
  timeout 300 "$c/libtests" device_components --nocapture 2>&1 | tail -20 | tee "$out/libtest.log"
fi
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
games="$t/random_p50.mpg $t/random_p10.mpg $(ls $d/parity/*.gm.* $d/energy/*.mpg.gz | grep -v '\.sol\.' | grep -E "${GAMES:-BRP|Hesselink|Onebit|IEEE|clique}")"
EGSOLVE_LOG=debug "$e" solve "$t/random_p50.mpg" --backend gpu -o /dev/null 2>&1 | grep -E "components|evaluation|least" | head -20 > "$out/debug-p50.log"
for f in $games; do
  name=$(basename "$f"); name=${name%%.*}
  "$e" solve "$f" --backend auto --output text -o "$t/auto.txt" 2>/dev/null
  for r in $(seq 1 ${RUNS:-3}); do
    for v in new old; do
      case $v in new) args="";; old) args="--gpu-components-from 18446744073709551615";; esac
      "$e" solve "$f" --backend gpu $args -o "$t/$v.json" 2>"$t/$v.err"; rc=$?
      "$e" solve "$f" --backend gpu $args --output text -o "$t/$v.txt" 2>/dev/null
      same=$(cmp -s "$t/auto.txt" "$t/$v.txt" && echo auto-same || echo auto-DIFFERS)
      chk=ok; if [ $v = new ] && [ $r = 1 ]; then chk=$(timeout 120 "$e" check "$f" "$t/$v.json" >/dev/null 2>&1 && echo check-ok || echo check-FAIL); fi
      s=$(head -1 "$t/$v.json" | python3 -c 'import sys,json; l=sys.stdin.read().strip().rstrip(","); l=l[len("{\"summary\": "):] if l.startswith("{\"summary\"") else l; d=json.loads(l); p=d["phases"]; print("solve %.3f strat %.3f ev %d graph %.3f comp %.3f cyc %.3f attr %.3f bf %.3f lift %.3f" % (d["solve_seconds"], d["strategy_seconds"], d["evaluations"], p.get("graph",0), p.get("components",0), p.get("cycle_test",0), p.get("attractor",0), p.get("bellman_ford",0), p.get("lifting",0)))' 2>&1)
      echo "$name $v run$r rc=$rc $same $chk $s"
    done
  done
done 2>&1 | tee "$out/ab.log"
echo "== summary: DIFFERS $(grep -c DIFFERS $out/ab.log), FAIL $(grep -c FAIL $out/ab.log), rc!=0 $(grep -c 'rc=[1-9]' $out/ab.log)"

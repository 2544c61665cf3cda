#!/usr/bin/env bash
# Session 13, calls 2, 4 and 5: `egsolve` (new) against `egsolve-old`, each with its `gpu_check`
# (gc-new, gc-old). Call 2: e1b38ee vs 98c5732; call 4: 653a32d vs e1b38ee; call 5: the
# unmerged singletons patch vs 653a32d, with TESTS="... accel::cycles". 1) lib tests
# (device components against Tarjan; evaluations through an engine's components);
# 2) warm process, old then new, random p50 and p10; 3) fresh processes, old
# against new, --backend gpu, interleaved: phases, credits compared, new answers certified.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s13b
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/machine.log"; nproc >> "$out/machine.log"
timeout 300 "$c/libtests" ${TESTS:-device_components accel::evaluate accel::graph} --nocapture 2>&1 | tail -8 > "$out/libtest.log"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 5 -o "$t/random_p10.mpg"
"$c/egsolve" gen random --vertices 1000000 --degree 1..4 --weights=-10..10 --player1 50 --seed 3 -o "$t/random_1M_s3.mpg"
"$c/egsolve" gen random --vertices 2500000 --degree 2..4 --weights=-100..60 --player1 70 --seed 11 -o "$t/random_p70_neg.mpg"
for v in old new old new; do
  echo "== $v" ; timeout 120 "$c/gc-$v" warm --runs 4 "$t/random_p50.mpg" "$t/random_p10.mpg" "$t/random_1M_s3.mpg"
done > "$out/warm.log" 2>&1
EGSOLVE_LOG=egsolve::solve::gpu::accel=debug,egsolve::solve::accel=debug "$c/egsolve" solve "$t/random_p50.mpg" --backend gpu -o /dev/null 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | cut -c28-300 > "$out/debug-p50.log"
for f in "$t/random_p50.mpg" "$t/random_1M_s3.mpg" "$t/random_p70_neg.mpg" "$c"/data/*; do
  name=$(basename "$f"); name=${name%%.*}
  for r in 1 2 3; do for v in old new; do
    bin="$c/egsolve"; [ $v = old ] && bin="$c/egsolve-old"
    EGSOLVE_LOG=egsolve::solve::accel=debug timeout 60 "$bin" solve "$f" --backend gpu -o "$t/$v.json" 2>"$t/$v.err"; rc=$?
    fix=$(sed 's/\x1b\[[0-9;]*m//g' "$t/$v.err" | grep "least fixpoint" | sed 's/.*seconds=//')
    s=$(head -1 "$t/$v.json" | python3 -c 'import sys,json; l=sys.stdin.read().strip().rstrip(","); d=json.loads(l[len("{\"summary\": "):]); p=d["phases"]; print("strat %.4f ev %d graph %.3f comp %.3f cyc %.3f attr %.3f bf %.3f lift %.3f" % (d["strategy_seconds"], d["evaluations"], p.get("graph",0), p.get("components",0), p.get("cycle_test",0), p.get("attractor",0), p.get("bellman_ford",0), p.get("lifting",0)))' 2>&1)
    extra=""
    if [ $v = new ]; then
      same=$(python3 -c "
import json,sys
a=[v.get('credit') for v in json.load(open(sys.argv[1]))['vertices']];b=[v.get('credit') for v in json.load(open(sys.argv[2]))['vertices']]
print('credits-same' if a==b else 'credits-DIFFER')" "$t/old.json" "$t/new.json")
      chk=$(timeout 120 "$c/egsolve" check "$f" "$t/new.json" >/dev/null 2>&1 && echo check-ok || echo check-FAIL)
      extra="$same $chk"
    fi
    echo "$name $v run$r rc=$rc fixpoint $fix $s $extra"
  done; done
done 2>&1 | tee "$out/ab.log"
echo "== DIFFER $(grep -c DIFFER $out/ab.log $out/warm.log) FAIL $(grep -c FAIL $out/ab.log $out/warm.log) rc!=0 $(grep -c 'rc=[1-9]' $out/ab.log)"

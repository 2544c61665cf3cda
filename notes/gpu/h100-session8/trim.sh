#!/usr/bin/env bash
# Session 8: components with a trim in every part (egsolve) against one trim before the
# first split (egsolve-head = 73d1a20), `auto` on all 16 cores, 3 fresh processes per game
# interleaved; credits compared, the new binary's JSON certified.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; d="$c/data"; t=/tmp/tr; mkdir -p $t
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o $t/random_2500000_p50_s5.mpg
"$c/egsolve" gen random --vertices 1000000 --degree 1..4 --weights=-10..10 --player1 50 --seed 3 -o $t/random_1000000_d1-4_p50_s3.mpg
summary() { python3 -c '
import json,sys
try: s=json.loads(open(sys.argv[1]).readline().rstrip().rstrip(",")[len("{\"summary\": "):])
except Exception as e: print("no-summary"); sys.exit()
p=s["phases"]; g=lambda k: "%.3f"%p.get(k,0)
print("solve=%.3f strat=%.3f evals=%d lifting=%s evaluation=%s components=%s cycle_test=%s graph=%s strategy1=%s" % (s["solve_seconds"], s["strategy_seconds"], s["evaluations"], g("lifting"), g("evaluation"), g("components"), g("cycle_test"), g("graph"), g("strategy1")))' "$1"; }
credits() { python3 -c '
import json,sys
d=json.load(open(sys.argv[1])); print([v.get("credit") for v in d["vertices"]] == [v.get("credit") for v in json.load(open(sys.argv[2]))["vertices"]])' "$1" "$2"; }
for f in $t/random_2500000_p50_s5.mpg $t/random_1000000_d1-4_p50_s3.mpg "$d"/IEEE*.mpg.gz "$d"/Onebit*.gm.gz "$d"/clique*.mpg.gz "$d"/Lift*.gm.gz "$d"/Hanoi_ndisks=10*.gm.gz "$d"/BRP*.gm.zst; do
  n=$(basename "$f"); n=${n:0:22}
  for r in 1 2 3 4 5; do for bin in egsolve-head egsolve; do
    rm -f $t/$bin.json
    "$c/$bin" solve "$f" -o $t/$bin.json 2>/dev/null; rc=$?
    echo "$n $bin run=$r rc=$rc $(summary $t/$bin.json)"
  done; done
  same=$(credits $t/egsolve-head.json $t/egsolve.json)
  chk=$(timeout 300 "$c/egsolve" check "$f" $t/egsolve.json >/dev/null 2>&1 && echo check-ok || echo check-FAIL)
  echo "$n credits-equal=$same $chk"
done

#!/bin/bash
# Issue 15's service goal: a 100 MB .mpg upload -> result on the GPU host, end to end, with
# `egsolve submit --wait` against `egsolve serve` on loopback (SQLite store, the GPU pool).
C=$PWD/.carry; E=$C/egsolve; cd /tmp
for s in 11 12 13 14; do
  $E gen random ${GEN:---vertices 2650000 --degree 1..4 --weights=-10..10 --player1 50} --seed $s > g$s.mpg
done
ls -la g*.mpg
$E gen random --vertices 10000 --degree 1..4 --weights=-10..10 --player1 50 --seed 1 > warm.mpg
rm -rf /tmp/egd; $E serve --data-dir /tmp/egd --bind 127.0.0.1:8080 > $OUT/serve.log 2>&1 &
for i in $(seq 100); do python3 -c "import urllib.request;urllib.request.urlopen('http://127.0.0.1:8080/readyz')" 2>/dev/null && break; sleep 0.2; done
$E submit warm.mpg --backend gpu --wait -o warm.json 2>/dev/null; echo "warm-up rc=$?"
for b in gpu auto; do for s in 11 12; do
  [ $b = auto ] && s=$((s+2))
  t0=$(date +%s%N); $E submit g$s.mpg --backend $b --wait -o r$s.json 2>/dev/null; rc=$?; t1=$(date +%s%N)
  echo "submit --wait $b seed $s rc=$rc wall_ms=$(( (t1-t0)/1000000 )) result_bytes=$(stat -c %s r$s.json)"
  t0=$(date +%s%N); $E solve g$s.mpg --backend $b -o s$s.json 2>/dev/null; t1=$(date +%s%N)
  echo "  solve (CLI, fresh process) $b seed $s wall_ms=$(( (t1-t0)/1000000 ))"
  python3 -c "
import json;a=json.load(open('r$s.json'));b=json.load(open('s$s.json'))
print('  same answer as the CLI:', [(v['winner'],v['credit']) for v in a['vertices']]==[(v['winner'],v['credit']) for v in b['vertices']])"
done; done
python3 - <<'P'
import json,urllib.request
jobs=json.load(urllib.request.urlopen('http://127.0.0.1:8080/v1/jobs'))
for j in jobs.get('jobs',jobs if isinstance(jobs,list) else []):
    v=json.load(urllib.request.urlopen('http://127.0.0.1:8080/v1/jobs/'+j['id']))
    print(v['backend'], v['device'], v['arena']['edges'], {k:round(x,1) for k,x in v['durations_ms'].items()})
P

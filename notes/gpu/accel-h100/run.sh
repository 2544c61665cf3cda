#!/usr/bin/env bash
# gpu-accel branch on the device: gpu_check check, CLI gpu/auto/cpu on every shared file and
# on two 10^7-edge games (with egsolve check of the gpu answers), then the phase-length sweep.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; d="$(cd "$c/../data" && pwd)"; e="$c/egsolve"; out="${OUT:-/tmp}"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader; nproc; "$e" devices; } 2>&1 | tee "$out/machine.log"
echo "== gpu_check check =="
timeout "${CHECK_TIMEOUT:-200}" "$c/gpu_check" check --data "$d" > "$out/check.log" 2>&1; echo "check rc=$?"
grep -E "accel|FAIL" "$out/check.log" | grep -vE " pass" | head -20; tail -2 "$out/check.log"
echo "== CLI =="
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o /tmp/big10.mpg
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o /tmp/big50.mpg
summ() { python3 -c "
import json,sys
d=json.load(open('$1')); s=d['summary']
open('$1.cr','w').write('\n'.join(str(v['credit']) for v in d['vertices']))
print('solve %.3f lifts %s rounds %s' % (s['solve_seconds'], s['lifts'], s['rounds']))"; }
for f in "$d"/energy/*.mpg.gz "$d"/parity/*.gm.gz /tmp/big10.mpg /tmp/big50.mpg; do
  n=$(basename "$f" | cut -c1-40); line="$n"
  rm -f /tmp/*.json.cr /tmp/*.json
  for b in gpu auto cpu; do
    s=$(date +%s%N); timeout "${SOLVE_TIMEOUT:-60}" "$e" solve "$f" --backend $b -o /tmp/$b.json 2>/dev/null; rc=$?
    t=$(( ($(date +%s%N)-s)/1000000 ))
    if [ $rc -ne 0 ]; then line="$line | $b rc=$rc ${t}ms"; rm -f /tmp/$b.json.cr; continue; fi
    line="$line | $b ${t}ms ($(summ /tmp/$b.json))"
  done
  same=$(cmp -s /tmp/gpu.json.cr /tmp/auto.json.cr && echo gpu=auto || echo gpu-DIFFERS)
  [ -f /tmp/cpu.json.cr ] && { cmp -s /tmp/cpu.json.cr /tmp/auto.json.cr && same="$same cpu=auto" || same="$same cpu-DIFFERS"; }
  chk=$(timeout 120 "$e" check "$f" /tmp/gpu.json >/dev/null 2>&1 && echo check-ok || echo check-FAIL)
  echo "$line | $same $chk"
done 2>&1 | tee "$out/cli.log"
echo "== CLI flags =="
h="$d/parity/Hanoi_ndisks=10_eventually_done.gm.gz"; i=$(ls "$d"/energy/IEEE*.mpg.gz)
for a in "$h --gpu-plain" "$i --gpu-lift-percent 0" "$i --gpu-lift-percent 100"; do
  s=$(date +%s%N); timeout 30 "$e" solve $a --backend gpu -o /tmp/f.json; rc=$?; t=$(( ($(date +%s%N)-s)/1000000 ))
  echo "${a##*/}: rc=$rc ${t}ms $([ $rc = 0 ] && summ /tmp/f.json)"
done 2>&1 | tee "$out/flags.log"
echo "== sweep =="
timeout "${SWEEP_TIMEOUT:-220}" "$c/gpu_check" sweep --data "$d" --edges 10000000 > "$out/sweep.log" 2>&1; echo "sweep rc=$?"
cat "$out/sweep.log" | cut -c1-150
echo "== summary =="; tail -1 "$out/check.log"; grep -c "gpu=auto" "$out/cli.log"; grep -c check-ok "$out/cli.log"

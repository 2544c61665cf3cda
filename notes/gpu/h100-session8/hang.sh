#!/usr/bin/env bash
# Session 8, third call: the gpu hang. HEAD's kernel (egsolve-head: one time-verdict word)
# against the fixed kernel (egsolve: two words by round parity), fresh processes alternating,
# IEEE1394 and Onebit at the default phase length and at 5 % (more time-limited launches);
# each answer compared with auto's; a run past 15 s counts as a hang.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; d="$c/data"; out="${OUT:-/tmp}"; t=/tmp/s8h; mkdir -p "$t"
export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
for f in "$d"/energy/IEEE*.mpg.gz "$d"/parity/Onebit*.gm.gz; do
  name=$(basename "$f"); name=${name:0:12}
  "$c/egsolve" solve "$f" --backend auto --output text -o "$t/auto.txt" 2>/dev/null
  for pct in 25 5; do
    for r in $(seq 1 ${RUNS:-12}); do
      for bin in egsolve-head egsolve; do
        rm -f "$t/x.txt"; s=$(date +%s%N)
        timeout 15 "$c/$bin" solve "$f" --backend gpu --gpu-lift-percent $pct --output text -o "$t/x.txt" 2>"$t/err"; rc=$?
        wall=$(( ($(date +%s%N)-s)/1000000 ))
        cmp -s "$t/x.txt" "$t/auto.txt" && a=same || a=DIFFERS
        echo "$name pct=$pct $bin run=$r rc=$rc wall_ms=$wall $a"
      done
    done
  done
done 2>&1 | tee "$out/hang.log"
for bin in egsolve-head egsolve; do
  echo "$bin: runs $(grep -c " $bin run" "$out/hang.log") hangs(rc=124) $(grep " $bin run" "$out/hang.log" | grep -c 'rc=124') other-rc $(grep " $bin run" "$out/hang.log" | grep -v 'rc=124' | grep -vc 'rc=0 ') differs-when-finished $(grep " $bin run" "$out/hang.log" | grep 'rc=0 ' | grep -c DIFFERS)"
done | tee -a "$out/hang.log"

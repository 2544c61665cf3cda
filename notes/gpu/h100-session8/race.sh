#!/usr/bin/env bash
# Session 8, fourth call: the hang made likely. Both binaries are the same tree except the
# kernel's time verdict: egsolve-race keeps HEAD's one word, egsolve reads word
# 9 + (round & 1). With EGSOLVE_NVRTC_EXTRA_OPTIONS=-DLIFT_SLOW_READER_NS=100000 the grid's last
# block sleeps 0.1 ms after every barrier. IEEE1394 and Onebit on --backend gpu, fresh
# processes alternating, 15 s limit (rc=124: hung), answers compared with auto's.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; d="$c/data"; out="${OUT:-/tmp}"; t=/tmp/s8r; mkdir -p "$t"
export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
for knob in "-DLIFT_SLOW_READER_NS=100000" ""; do
  export EGSOLVE_NVRTC_EXTRA_OPTIONS="$knob"
  for f in "$d"/energy/IEEE*.mpg.gz "$d"/parity/Onebit*.gm.gz "$d"/parity/Hanoi*.gm.gz; do
    name=$(basename "$f"); name=${name:0:12}
    "$c/egsolve" solve "$f" --backend auto --output text -o "$t/auto.txt" 2>/dev/null
    for r in $(seq 1 ${RUNS:-5}); do
      for bin in egsolve-race egsolve; do
        rm -f "$t/x.txt"; s=$(date +%s%N)
        EGSOLVE_LOG=debug timeout 15 "$c/$bin" solve "$f" --backend gpu --output text -o "$t/x.txt" 2>"$t/err"; rc=$?
        wall=$(( ($(date +%s%N)-s)/1000000 ))
        cmp -s "$t/x.txt" "$t/auto.txt" && a=same || a=DIFFERS
        echo "knob=${knob:-none} $name $bin run=$r rc=$rc wall_ms=$wall $a"
        [ $rc = 124 ] && sed 's/\x1b\[[0-9;]*m//g' "$t/err" | tail -2 | cut -c1-200
      done
    done
  done
done 2>&1 | tee "$out/race.log"
for k in knob=-DLIFT_SLOW_READER_NS=100000 knob=none; do for bin in egsolve-race egsolve; do
  l=$(grep "^$k " "$out/race.log" | grep " $bin run")
  echo "$k $bin: runs $(echo "$l" | grep -c run) hangs(rc=124) $(echo "$l" | grep -c 'rc=124') other-rc $(echo "$l" | grep -v 'rc=124' | grep -vc 'rc=0 ') differs-when-finished $(echo "$l" | grep 'rc=0 ' | grep -c DIFFERS)"
done; done | tee -a "$out/race.log"

#!/usr/bin/env bash
# Session 8, the launch watchdog: (1) --backend gpu with the watchdog's event polling in place
# of a blocking wait, 3 fresh processes per game, answers vs auto; (2) the one-word kernel with
# the slow-reader knob (it hangs) and EGSOLVE_GPU_WATCHDOG_SECS=5: the process must end with
# exit code 5 and the "hung" error near 5 s; (3) the fixed kernel with the knob: finishes.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; d="$c/data"; t=/tmp/wd; mkdir -p $t
export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
summary() { python3 -c '
import json,sys
try: s=json.loads(open(sys.argv[1]).readline().rstrip().rstrip(",")[len("{\"summary\": "):])
except Exception as e: print("no-summary"); sys.exit()
p=s["phases"]; g=lambda k: "%.3f"%p.get(k,0)
print("solve=%.3f lifting=%s ctx=%s kern=%s upload=%s" % (s["solve_seconds"], g("lifting"), g("gpu_context"), g("gpu_kernels"), g("gpu_upload")))' "$1"; }
for f in "$d"/BRP*.gm.zst "$d"/IEEE*.mpg.gz "$d"/Onebit*.gm.gz "$d"/Hanoi*.gm.gz; do
  n=$(basename "$f"); n=${n:0:12}
  "$c/egsolve" solve "$f" --output text -o $t/auto.txt 2>/dev/null
  "$c/egsolve" solve "$f" --backend gpu --output text -o $t/gpu.txt 2>/dev/null
  cmp -s $t/auto.txt $t/gpu.txt && a=gpu=auto || a=gpu-DIFFERS
  for r in 1 2 3; do
    rm -f $t/x.json; s=$(date +%s%N)
    "$c/egsolve" solve "$f" --backend gpu -o $t/x.json 2>$t/err; rc=$?
    echo "watchdog $n run=$r rc=$rc wall_ms=$(( ($(date +%s%N)-s)/1000000 )) $a $(summary $t/x.json)"
  done
done
export EGSOLVE_NVRTC_EXTRA_OPTIONS=-DLIFT_SLOW_READER_NS=100000 EGSOLVE_GPU_WATCHDOG_SECS=5
for bin in egsolve-race egsolve; do for r in 1 2; do
  s=$(date +%s%N)
  timeout 60 "$c/$bin" solve "$d"/IEEE*.mpg.gz --backend gpu --output text -o $t/x.txt 2>$t/err; rc=$?
  echo "knob $bin run=$r rc=$rc wall_ms=$(( ($(date +%s%N)-s)/1000000 )) $(tail -1 $t/err | cut -c1-300)"
done; done

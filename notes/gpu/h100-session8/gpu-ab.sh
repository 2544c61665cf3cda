#!/usr/bin/env bash
# Session 8, second call: --backend gpu, HEAD (egsolve-head: staging buffers allocated by
# the first upload, whatever its size) against the working tree (egsolve: staging only for
# copies of >= 8 MiB, allocated by the warm-up when the input file has >= 2 MiB), fresh
# processes interleaved, kernel cache warmed by a run 0 of each game; answers compared.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; d="$c/data"; out="${OUT:-/tmp}"; t=/tmp/s8; mkdir -p "$t"
export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_2500000_p10_s3.mpg"
summary() { python3 -c '
import json,sys
try: s=json.loads(open(sys.argv[1]).readline().rstrip().rstrip(",")[len("{\"summary\": "):])
except Exception as e: print("no-summary"); sys.exit()
p=s["phases"]; g=lambda k: "%.3f"%p.get(k,0)
print("solve=%.3f strat=%.3f lifting=%s ctx=%s kern=%s upload=%s download=%s" % (s["solve_seconds"], s["strategy_seconds"], g("lifting"), g("gpu_context"), g("gpu_kernels"), g("gpu_upload"), g("gpu_download")))' "$1"; }
for f in "$d/parity/BRP_datasize=2_counting.gm.zst" "$d/parity/Hesselink_datasize=2_property1.gm.zst" "$d"/energy/IEEE*.mpg.gz "$d"/parity/Onebit*.gm.gz "$d"/parity/Hanoi*.gm.gz "$d"/parity/Buffer*.gm.gz "$t/random_2500000_p10_s3.mpg"; do
  name=$(basename "$f"); name=${name%%.mpg*}; name=${name%%.gm*}
  "$c/egsolve" solve "$f" --backend gpu --output text -o "$t/new.txt" 2>/dev/null
  "$c/egsolve-head" solve "$f" --backend gpu --output text -o "$t/head.txt" 2>/dev/null
  "$c/egsolve" solve "$f" --backend auto --output text -o "$t/auto.txt" 2>/dev/null
  cmp -s "$t/new.txt" "$t/auto.txt" && a="new=auto" || a="new-DIFFERS"; cmp -s "$t/head.txt" "$t/auto.txt" && a="$a head=auto" || a="$a head-DIFFERS"
  echo "$name answers: $a"
  for r in 1 2 3 4; do
    for bin in egsolve-head egsolve; do
      rm -f "$t/x.json"; s=$(date +%s%N)
      timeout 60 "$c/$bin" solve "$f" --backend gpu -o "$t/x.json" 2>"$t/err"; rc=$?
      wall=$(( ($(date +%s%N)-s)/1000000 ))
      echo "$name $bin run=$r rc=$rc wall_ms=$wall $(summary "$t/x.json")"
    done
  done
done 2>&1 | tee "$out/gpu-ab.log"
for f in "$d/parity/BRP_datasize=2_counting.gm.zst" "$d/parity/Buffer_ABP_(datasize=4)eq=branching-bisim.gm.gz" "$d"/parity/Hanoi*.gm.gz; do
  EGSOLVE_LOG=debug "$c/egsolve" solve "$f" --backend gpu -o "$t/x.json" 2>&1 | grep -Ei "staging|parsed|solved|upload|context|kernel" | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-260
done 2>&1 | tee "$out/gpu-debug.log"
echo "== runs $(grep -c ' rc=' "$out/gpu-ab.log"), rc!=0 $(grep ' rc=' "$out/gpu-ab.log" | grep -vc ' rc=0 '), DIFFERS $(grep -c DIFFERS "$out/gpu-ab.log")"

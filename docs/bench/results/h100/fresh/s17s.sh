#!/usr/bin/env bash
# Session 17 call g: fresh processes (item 6). `egsolve solve FILE --backend B -o out.json`,
# kernels cached on disk after the first gpu run, three runs per game and backend,
# alternating; process wall (date) beside the log's parse/solve/write seconds.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s17s
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } | tee "$out/machine.log"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
"$c/egsolve" solve "$t/random_p10.mpg" --backend gpu -o "$t/warm-cache.json" > /dev/null 2>&1
for r in 1 2 3; do
  for g in "$t/random_p10.mpg" "$c"/data/BRP*.gm.zst "$c"/data/Hesselink*.gm.zst; do
    for b in auto gpu; do
      s=$(date +%s%N)
      EGSOLVE_LOG=egsolve=debug "$c/egsolve" solve "$g" --backend $b -o "$t/o.json" 2> "$t/log" > /dev/null
      e=$(date +%s%N)
      f="$out/log-$r-$(basename "$g" | cut -c1-10)-$b.txt"
      sed 's/\x1b\[[0-9;]*m//g' "$t/log" > "$f"
      p=$(grep -o "parsed.*seconds=[0-9.e-]*" "$f" | grep -o "seconds=[0-9.e-]*" | cut -d= -f2)
      sv=$(grep -o "solved solve=[0-9.e-]* strategies=[0-9.e-]*" "$f" | sed 's/solved //')
      ctx=$(python3 -c "import json; print(json.load(open('$t/o.json'))['summary']['phases'].get('gpu_context', 0))")
      echo "$(basename "$g" | cut -c1-12) $b run $r: wall $(( (e - s) / 1000000 )) ms parse $p $sv ctx $ctx"
    done
  done
done
cd "$out" && tar czf logs.tgz log-*.txt && rm -f log-*.txt

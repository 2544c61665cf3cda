#!/usr/bin/env bash
# Hesselink's and BRP's solve time inside the CLI: the energy route (--backend gpu) against the
# native fixpoint solver (--parity-algorithm gpu-fixpoint) and the CPU portfolio; the JSON
# summary's solve and strategy seconds.
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"
for g in hesselink brp; do
  for r in 1 2 3; do
    for mode in "--backend gpu" "--backend parity --parity-algorithm gpu-fixpoint" "--backend parity"; do
      s=$(date +%s%N)
      "$e" solve "$c/$g.gm.zst" $mode -o /dev/shm/ans.json 2>/dev/null; rc=$?
      w=$(( ($(date +%s%N) - s) / 1000000 ))
      sum=$(head -c 1500 /dev/shm/ans.json | python3 -c 'import sys,re; t=sys.stdin.read(); print(" ".join(re.findall(r"\"(?:solve_seconds|strategy_seconds|algorithm|backend|evaluations|rounds|passes|restarts)\":[^,}]*", t)))')
      echo "$g run $r [$mode]: whole ${w} ms rc=$rc | $sum"
    done
  done
done

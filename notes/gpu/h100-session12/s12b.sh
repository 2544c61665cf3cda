#!/usr/bin/env bash
# Session 12, call 2: IEEE1394 new/old with the gpu_* phases and debug lines; gpu_check warm.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; d="$c/data"; e="$c/egsolve"; out="${OUT:-/tmp}"; t=/tmp/s12
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/machine.log"; nproc >> "$out/machine.log"
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
ieee=$(ls $d/energy/IEEE*.mpg.gz)
for r in 1 2 3; do for v in new old; do
  case $v in new) args="";; old) args="--gpu-components-from 18446744073709551615";; esac
  EGSOLVE_LOG=debug "$e" solve "$ieee" --backend gpu $args -o "$t/$v.json" 2>"$t/$v.err"
  echo "== IEEE $v run$r"; head -1 "$t/$v.json" | cut -c1-900
  grep -E "gpu|components|accel" "$t/$v.err" | sed 's/\x1b\[[0-9;]*m//g' | cut -c28-250
done; done > "$out/ieee.log" 2>&1
timeout 300 "$c/gpu_check" warm --runs 4 "$t/random_p50.mpg" "$t/random_p10.mpg" "$ieee" \
  "$d/parity/BRP_datasize=2_counting.gm.zst" "$d/parity/Hesselink_datasize=2_property1.gm.zst" > "$out/warm.log" 2>&1

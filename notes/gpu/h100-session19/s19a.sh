#!/usr/bin/env bash
# Session 19 call 1: the driver's own context cost (a bare C program); the device tests of the
# components (left to the host / marked alone) and the topping record through the driver; A/B
# warm: prev = 8f81ee6 (session 18's HEAD), new = 42d8837 (components left to the host after
# forward–backward when few, trimmed vertices marked alone and not grouped).
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s19
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader; nproc; } | tee "$out/machine.log"
if gcc -O2 -I/usr/local/cuda/include -o "$t/ctx" "$c/ctx_floor.c" -L/usr/local/cuda/lib64/stubs -lcuda 2> "$out/ctx-build.log"; then
  for i in 1 2 3 4 5; do "$t/ctx"; done | tee "$out/ctx.log"
else
  tail -3 "$out/ctx-build.log"
fi
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
warm="$(ls "$c"/data/parity/BRP* "$c"/data/parity/Hesselink*) $t/random_p50.mpg $t/random_p10.mpg"
for v in prev new prev new prev new; do
  echo "== $v"
  timeout 150 "$c/gc-$v" warm --runs 4 $warm
done > "$out/warm.log" 2>&1
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
awk '/^== /{v=$2; next} /random_p50.*Gpu run [234]:/{printf "%s wall %s", v, $6; for(i=1;i<=NF;i++) if ($i ~ /^(lifting|evaluation|graph|components|cycle_test|attractor|bellman_ford)$/) printf " %s %s", $i, $(i+1); print ""}' "$out/warm.log" | sort
EGSOLVE_LOG=egsolve=debug timeout 100 "$c/gc-new" warm --runs 3 "$t/random_p50.mpg" > /dev/null 2> "$out/dbg-new.log"
sed 's/\x1b\[[0-9;]*m//g' "$out/dbg-new.log" | cut -c29-400 | grep -E "gpu: components|grouped|tested|engine left" | tail -8 | cut -c1-230
timeout 300 "$c/libtests" --test-threads 1 --nocapture device_components device_lifts > "$out/libtests.log" 2>&1
grep -E "^test |test result|fresh seed|giants|checked|panicked" "$out/libtests.log" | cut -c1-220
cd "$out" && tar czf logs.tgz *.log && rm -f *.log

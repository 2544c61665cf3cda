#!/usr/bin/env bash
# Session 19 call 2: item 6, fresh `egsolve solve --backend gpu` processes, prev (8f81ee6) and
# new (NVRTC loading beside the driver's start), kernels in the disk cache, alternating; the
# bare driver's cost again (ctx_floor.c); then A/B warm prev (8f81ee6) / new (complete_left on
# a gathered CSR, the attractor's passes) and the debug parts of random p50.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s19
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader; nproc; } | tee "$out/machine.log"
for v in prev new; do gunzip -c "$c/egsolve-$v.gz" > "$t/egsolve-$v"; chmod +x "$t/egsolve-$v"; done
gcc -O2 -I/usr/local/cuda/include -o "$t/ctx" "$c/ctx_floor.c" -L/usr/local/cuda/lib64/stubs -lcuda -ldl && for i in 1 2 3; do "$t/ctx"; done | tee "$out/ctx.log"
games="$(ls "$c"/data/parity/BRP* "$c"/data/parity/Hesselink*)"
for v in prev new; do for g in $games; do "$t/egsolve-$v" solve "$g" --backend gpu -o "$t/warmup.json" 2>/dev/null; done; done
for i in 1 2 3 4; do for v in prev new; do for g in $games; do
  s=$(date +%s%N)
  EGSOLVE_LOG=egsolve=debug "$t/egsolve-$v" solve "$g" --backend gpu -o "$t/fresh.json" 2> "$t/fresh.err"
  e=$(date +%s%N)
  r=$(sed 's/\x1b\[[0-9;]*m//g' "$t/fresh.err" | grep -oE "engine ready seconds=[0-9.e-]+ setup=GpuTimings \{ context: [0-9.e-]+, kernels: [0-9.e-]+" | sed 's/setup=GpuTimings { //')
  p=$(sed 's/\x1b\[[0-9;]*m//g' "$t/fresh.err" | grep -oE "parsed .*seconds=[0-9.e-]+" | grep -oE "seconds=[0-9.e-]+")
  sv=$(sed 's/\x1b\[[0-9;]*m//g' "$t/fresh.err" | grep -oE "solved solve=[0-9.e-]+ strategies=[0-9.e-]+")
  echo "$v $(basename "$g" | cut -c1-12) run $i: wall $(( (e - s) / 1000000 )) ms parse $p $sv $r"
done; done; done | tee "$out/fresh.log"
"$t/egsolve-new" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
"$t/egsolve-new" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
warm="$games $t/random_p50.mpg $t/random_p10.mpg"
for v in prev new prev new prev new; do
  echo "== $v"
  timeout 150 "$c/gc-$v" warm --runs 4 $warm
done > "$out/warm.log" 2>&1
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
awk '/^== /{v=$2; next} /random_p50.*Gpu run [234]:/{printf "%s wall %s", v, $6; for(i=1;i<=NF;i++) if ($i ~ /^(lifting|evaluation|graph|components|cycle_test|attractor|bellman_ford)$/) printf " %s %s", $i, $(i+1); print ""}' "$out/warm.log" | sort
EGSOLVE_LOG=egsolve=debug timeout 100 "$c/gc-new" warm --runs 3 "$t/random_p50.mpg" > /dev/null 2> "$out/dbg-new.log"
sed 's/\x1b\[[0-9;]*m//g' "$out/dbg-new.log" | cut -c29-400 | grep -E "gpu: components|grouped|tested|engine left|attractor to|attractor phase" | tail -10 | cut -c1-230
cd "$out" && tar czf logs.tgz *.log && rm -f *.log

#!/usr/bin/env bash
# Session 22 call 1: jemalloc as the binaries' allocator (dirty_decay_ms:-1) against glibc.
# Same code otherwise (HEAD dc247c4 + the allocator + gpu_check warm's fault count).
# 1. phases-session.sh with the new egsolve (auto gpu) on every game: answers and checks.
# 2. warm A/B on BRP, Hesselink, random p50, p10: old (glibc), new (jemalloc, memory kept),
#    rel (jemalloc, freed memory handed back before each run, the idle service's case),
#    three rounds of the three, 4 runs each (runs 2-4 count).
# 3. fresh processes: egsolve old/new solve BRP and p50, auto and gpu, three rounds.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s22
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
for f in egsolve-new egsolve-old gc-new gc-old; do gunzip -c "$c/$f.gz" > "$t/$f"; chmod +x "$t/$f"; done
cp "$t/egsolve-new" "$c/egsolve"
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader; nproc; cat /sys/kernel/mm/transparent_hugepage/enabled; } | tee "$out/machine.log"
mkdir -p "$out/phases"
BACKENDS="auto gpu" OUT="$out/phases" timeout 280 bash "$c/phases-session.sh" > "$out/phases/session.log" 2>&1
tail -1 "$out/phases/session.log"
cp /tmp/phases/random_2500000_p50_s5.mpg "$t/random_p50.mpg"; cp /tmp/phases/random_2500000_p10_s3.mpg "$t/random_p10.mpg"
brp=$(ls "$c"/data/parity/BRP*.gm.zst); hes=$(ls "$c"/data/parity/Hesselink*.gm.zst)
warm="$brp $hes $t/random_p50.mpg $t/random_p10.mpg"
for v in old new rel old new rel old new rel; do
  echo "== $v"
  case $v in
    rel) timeout 100 "$t/gc-new" warm --runs 4 --release $warm;;
    *) timeout 100 "$t/gc-$v" warm --runs 4 $warm;;
  esac
done > "$out/warm.log" 2>&1
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
python3 "$c/medians22.py" "$out/warm.log" > "$out/medians.txt"; grep -E "wall|faults" "$out/medians.txt"
for r in 1 2 3; do for v in old new; do for b in auto gpu; do for g in "$brp" "$t/random_p50.mpg"; do
  s=$(date +%s%N); "$t/egsolve-$v" solve "$g" --backend $b -o "$t/fresh.json" 2>/dev/null; rc=$?
  w=$(( ($(date +%s%N)-s)/1000000 ))
  echo "$v $b $(basename "$g" | cut -c1-12) rc $rc wall_ms $w $(head -c 600 "$t/fresh.json" | grep -o '"solve_seconds":[0-9.e-]*')"
done; done; done; done > "$out/fresh.log" 2>&1
sort -k1,3 "$out/fresh.log"
cd "$out" && tar czf logs.tgz *.log *.txt phases && rm -rf *.log *.txt phases

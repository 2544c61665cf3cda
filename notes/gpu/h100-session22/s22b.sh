#!/usr/bin/env bash
# Session 22 call 2: the allocator A/B again, four variants interleaved, four rounds:
# old (glibc), tun (glibc, GLIBC_TUNABLES keeping freed blocks up to 32 MiB in the heap),
# new (jemalloc, dirty_decay_ms:-1), rel (new, freed memory handed back before each run).
# BRP, Hesselink and random p50, 5 runs each (runs 2-5 count).
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s22
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
for f in egsolve-new gc-new gc-old; do gunzip -c "$c/$f.gz" > "$t/$f"; chmod +x "$t/$f"; done
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; } | tee "$out/machine.log"
"$t/egsolve-new" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
warm="$(ls "$c"/BRP*.gm.zst "$c"/Hesselink*.gm.zst) $t/random_p50.mpg"
for round in 1 2 3 4; do for v in old tun new rel; do
  echo "== $v"
  case $v in
    old) timeout 100 "$t/gc-old" warm --runs 5 $warm;;
    tun) GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967295 timeout 100 "$t/gc-old" warm --runs 5 $warm;;
    new) timeout 100 "$t/gc-new" warm --runs 5 $warm;;
    rel) timeout 100 "$t/gc-new" warm --runs 5 --release $warm;;
  esac
done; done > "$out/warm.log" 2>&1
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
python3 "$c/medians22.py" "$out/warm.log" > "$out/medians.txt"; grep -E "wall|evaluation|faults" "$out/medians.txt" | grep -v "Hess.*evaluation\|BRP.*evaluation"
uptime
cd "$out" && tar czf logs.tgz *.log *.txt && rm -rf *.log *.txt

#!/usr/bin/env bash
# Session 22 call 3: jemalloc's options on Hesselink (where call 2's jemalloc faulted more
# and ran slower than glibc) and random p50, interleaved, three rounds, 5 runs each:
# old (glibc), new (dirty_decay_ms:-1), one (+ narenas:1), big (+ oversize_threshold:0).
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s22
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
for f in egsolve-new gc-new gc-old; do gunzip -c "$c/$f.gz" > "$t/$f"; chmod +x "$t/$f"; done
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; } | tee "$out/machine.log"
"$t/egsolve-new" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
warm="$(ls "$c"/Hesselink*.gm.zst) $t/random_p50.mpg"
for round in 1 2 3; do for v in old new one big; do
  echo "== $v"
  case $v in
    old) timeout 100 "$t/gc-old" warm --runs 5 $warm;;
    new) timeout 100 "$t/gc-new" warm --runs 5 $warm;;
    one) _RJEM_MALLOC_CONF=dirty_decay_ms:-1,narenas:1 timeout 100 "$t/gc-new" warm --runs 5 $warm;;
    big) _RJEM_MALLOC_CONF=dirty_decay_ms:-1,oversize_threshold:0 timeout 100 "$t/gc-new" warm --runs 5 $warm;;
  esac
done; done > "$out/warm.log" 2>&1
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
python3 "$c/medians22.py" "$out/warm.log" > "$out/medians.txt"; grep -E "wall|evaluation|faults" "$out/medians.txt" | grep -v "Hess.*evaluation"
uptime
cd "$out" && tar czf logs.tgz *.log *.txt && rm -rf *.log *.txt

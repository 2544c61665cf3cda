#!/usr/bin/env bash
# Session 22 call 5: 64e46af (lifting on where the frontier closes in) against 21762b5 (prev),
# the final code. 1. phases-session.sh with auto, gpu and gpu0 on every game (answers, checks).
# 2. warm A/B: prev against new, four alternating blocks of
# 4 runs on BRP, Hesselink, random p50 and p10 (runs 2-4 count), as session 21's call 11.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s22
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
gunzip -f "$c/egsolve.gz"; chmod +x "$c/egsolve"
for f in gc-new gc-prev; do gunzip -c "$c/$f.gz" > "$t/$f"; chmod +x "$t/$f"; done
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; } | tee "$out/machine.log"
mkdir -p "$out/phases"
BACKENDS="auto gpu gpu0" OUT="$out/phases" timeout 280 bash "$c/phases-session.sh" > "$out/phases/session.log" 2>&1
tail -1 "$out/phases/session.log"
cp /tmp/phases/random_2500000_p50_s5.mpg "$t/random_p50.mpg"; cp /tmp/phases/random_2500000_p10_s3.mpg "$t/random_p10.mpg"
warm="$(ls "$c"/data/parity/BRP*.gm.zst "$c"/data/parity/Hesselink*.gm.zst) $t/random_p50.mpg $t/random_p10.mpg"
for v in prev new prev new prev new prev new; do
  echo "== $v"; timeout 100 "$t/gc-$v" warm --runs 4 $warm
done > "$out/warm.log" 2>&1
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
python3 "$c/medians22.py" "$out/warm.log" > "$out/medians.txt"; grep -E "wall|solve|faults" "$out/medians.txt" | grep -v "^$"
awk '/^== /{v=$2; next} /random_p50.*(Auto|Gpu) run [234]:/{printf "%s %s wall %s", v, $2, $6; for(i=1;i<=NF;i++) if ($i ~ /^(lifting|evaluation|graph|components|cycle_test|attractor|bellman_ford|strategy1|faults)$/) printf " %s %s", $i, $(i+1); print ""}' "$out/warm.log" | sort > "$out/p50parts.txt"
uptime
cd "$out" && tar czf logs.tgz *.log *.txt phases && rm -rf *.log *.txt phases

#!/usr/bin/env bash
# Session 21 call 11: bcad9e8 (the attractor on the device, Z' and the second decomposition's
# words in one pass, the singles answered in chunks, every per-vertex pass of the evaluation
# and the ranks in chunks of plain loops) through phases-session.sh with auto, gpu and gpu0
# on every game, then A/B warm: prev = 0157235 (the attractor on the device alone) / new =
# bcad9e8 on BRP, Hesselink and both random games, four alternating blocks, and the new
# binary's debug parts of p50.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s21
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
gunzip -f "$c/egsolve.gz"; chmod +x "$c/egsolve" "$c"/gc-*
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader; nproc; } | tee "$out/machine.log"
mkdir -p "$out/phases"
BACKENDS="auto gpu gpu0" OUT="$out/phases" timeout 250 bash "$c/phases-session.sh" > "$out/phases/session.log" 2>&1
tail -1 "$out/phases/session.log"
cp /tmp/phases/random_2500000_p50_s5.mpg "$t/random_p50.mpg"; cp /tmp/phases/random_2500000_p10_s3.mpg "$t/random_p10.mpg"
warm="$(ls "$c"/data/parity/BRP*.gm.zst "$c"/data/parity/Hesselink*.gm.zst) $t/random_p50.mpg $t/random_p10.mpg"
for v in prev new prev new prev new prev new; do
  echo "== $v"
  timeout 100 "$c/gc-$v" warm --runs 4 $warm
done > "$out/warm.log" 2>&1
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
python3 "$c/medians.py" "$out/warm.log" | tee "$out/medians.txt" | grep -E "wall|Gpu .* solve"
awk '/^== /{v=$2; next} /random_p50.*(Auto|Gpu) run [234]:/{printf "%s %s wall %s", v, $2, $6; for(i=1;i<=NF;i++) if ($i ~ /^(lifting|evaluation|graph|components|cycle_test|attractor|bellman_ford|strategy1)$/) printf " %s %s", $i, $(i+1); print ""}' "$out/warm.log" | sort > "$out/p50parts.txt"
EGSOLVE_LOG=egsolve=debug timeout 100 "$c/gc-new" warm --runs 3 "$t/random_p50.mpg" > /dev/null 2> "$out/dbg-new.log"
sed 's/\x1b\[[0-9;]*m//g' "$out/dbg-new.log" | cut -c29-300 | grep -E "phase's seconds|second decomposition|completed and numbered" | tail -6
cd "$out" && tar czf logs.tgz *.log *.txt phases && rm -rf *.log *.txt phases

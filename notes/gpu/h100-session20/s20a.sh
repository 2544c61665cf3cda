#!/usr/bin/env bash
# Session 20 call 1: A/B warm prev (079d4ac: the solver of 94280c4, session 19's end, but for
# the CLI's NVRTC warm-up thread, which warm runs never start) / new (HEAD: host components
# with the pivot by its degrees inside the part, B-restricted forward search, compact Tarjan;
# the cycle test's greedy walk settling forward–backward's largest component), the debug
# parts of `auto` on random p50; then phases-session.sh with auto and gpu on every game.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s20
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
gunzip -f "$c/egsolve.gz"; chmod +x "$c/egsolve"
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader; nproc; } | tee "$out/machine.log"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_p50.mpg"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
warm="$(ls "$c"/data/parity/BRP*.gm.zst "$c"/data/parity/Hesselink*.gm.zst) $t/random_p50.mpg $t/random_p10.mpg"
for v in prev new prev new prev new; do
  echo "== $v"
  timeout 150 "$c/gc-$v" warm --runs 4 $warm
done > "$out/warm.log" 2>&1
grep -c "same p0 moves same" "$out/warm.log" | sed 's/^/runs with credits and moves same: /'
grep -E "DIFFER|FAIL|panic|rror" "$out/warm.log" | head -5
awk '/^== /{v=$2; next} /random_p50.*Auto run [234]:/{printf "%s wall %s", v, $6; for(i=1;i<=NF;i++) if ($i ~ /^(lifting|evaluation|graph|components|cycle_test|attractor|bellman_ford)$/) printf " %s %s", $i, $(i+1); print ""}' "$out/warm.log" | sort
EGSOLVE_LOG=egsolve=debug timeout 100 "$c/gc-new" warm --runs 3 "$t/random_p50.mpg" > /dev/null 2> "$out/dbg-new.log"
sed 's/\x1b\[[0-9;]*m//g' "$out/dbg-new.log" | cut -c29-400 | grep -E "components: trimmed|a wave|grouped|tested" | head -16 | cut -c1-200
mkdir -p "$out/phases"
BACKENDS="auto gpu" OUT="$out/phases" timeout 300 bash "$c/phases-session.sh" > "$out/phases/session.log" 2>&1
tail -5 "$out/phases/session.log"
grep -cE "DIFFERS|check-FAIL" "$out/phases/phases.log" | sed 's/^/DIFFERS or check-FAIL lines: /'
cd "$out" && tar czf logs.tgz *.log phases && rm -rf *.log phases

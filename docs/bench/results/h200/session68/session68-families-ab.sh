#!/usr/bin/env bash
# Session 68: certify the shared answers with the new build, then Oink's families with the
# build before (a27cccc) and the new one alternated, then SYNTCOMP with the new one.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; cd "$c"
for b in new final; do gunzip -c egsolve-$b.gz > egsolve-$b && chmod +x egsolve-$b; done
export LD_LIBRARY_PATH="$c:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p /dev/shm/c68
bash certify-shared-games.sh "$c/egsolve-new" games /dev/shm/c68 > "$OUT/certify.log" 2>&1
for round in 1; do for b in final new; do
  cp egsolve-$b egsolve
  mkdir -p "$OUT/fam-$b-$round"
  OUT="$OUT/fam-$b-$round" PARTS=families RUNS=3 bash parity-families-session.sh > "$OUT/fam-$b-$round/session.log" 2>&1
done; done
cp egsolve-new egsolve; mkdir -p "$OUT/syn-new"
OUT="$OUT/syn-new" PARTS=syntcomp bash parity-families-session.sh > "$OUT/syn-new/session.log" 2>&1
echo done

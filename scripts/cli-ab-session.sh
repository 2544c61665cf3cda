#!/usr/bin/env bash
# Two builds of egsolve on the H200 host's 16 cores (first written for session 72's
# `solve::chunked`): the same games with both builds alternated (scripts/binary-ab.py:
# medians, winners and credits compared), then `egsolve check` on the new build's answers
# to the shared games.
# Carried in .carry/: egsolve-base.gz, egsolve-new.gz (stripped, gzipped), games/ (BRP,
# Hesselink and the small shared games, .gm.gz / .mpg.gz).
# usage (repo root): bash scripts/cli-ab-session.sh  (writes under $OUT; env RUNS, 5)
set -u
c="$(pwd)/.carry"
for b in base new; do gunzip -c "$c/egsolve-$b.gz" > "/tmp/egsolve-$b" && chmod +x "/tmp/egsolve-$b"; done
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
g=/dev/shm/cli-ab; mkdir -p "$g"
e=/tmp/egsolve-new
nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# Generated games (the generators are seeded: the same bytes from either build).
$e gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 --to egb -o "$g/r10.egb"
$e gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 --to egb -o "$g/r50.egb"
$e gen parity --vertices 400000 --priorities 400000 --degree 2 --seed 1 > "$g/p4e5.gm"
$e gen parity --vertices 1000000 --priorities 100 --degree 4 --seed 2 > "$g/p1m100.gm"
$e gen family counter-core --n 20000 > "$g/cc20000.gm"
$e gen family counter-rr --n 20000 > "$g/crr20000.gm"
$e gen family counter-symsi --n 1000 > "$g/symsi1000.gm"
BRP="$c/games/BRP_datasize=2_counting.gm.gz"
HES="$c/games/Hesselink_datasize=2_property1.gm.gz"
python3 scripts/binary-ab.py /tmp/egsolve-base /tmp/egsolve-new "${RUNS:-5}" \
  "BRP default=$BRP" "BRP parity=$BRP,--backend,parity" "BRP cpu=$BRP,--backend,cpu" \
  "BRP gpu=$BRP,--backend,gpu" \
  "Hesselink default=$HES" "Hesselink parity=$HES,--backend,parity" \
  "Hesselink cpu=$HES,--backend,cpu" \
  "random p10 2.5M default=$g/r10.egb" "random p10 2.5M gpu=$g/r10.egb,--backend,gpu" \
  "random p50 2.5M default=$g/r50.egb" \
  "parity 4e5 v 4e5 p=$g/p4e5.gm" "parity 1e6 v 100 p=$g/p1m100.gm" \
  "counter-core 20000=$g/cc20000.gm" "counter-rr 20000=$g/crr20000.gm" \
  "counter-symsi 1000=$g/symsi1000.gm" \
  "counter-core 20000 t2=$g/cc20000.gm,--threads,2" "counter-rr 20000 t2=$g/crr20000.gm,--threads,2" \
  2>&1 | tee "$OUT/ab.log"
# The new build's answers certified (every shared game, BRP and Hesselink included, default
# and --backend gpu).
bash scripts/certify-shared-games.sh "$e" "$c/games" "$g" 2>&1 | tee "$OUT/certify.log"

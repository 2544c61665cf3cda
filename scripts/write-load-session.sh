#!/usr/bin/env bash
# Issue 43's load and write goals in one device call: the `egb` load of 10^7 edges by two
# builds of the `egb` bench (egb-old, egb-new: `cargo bench -p egsolve-core --bench egb
# --no-run`, stripped), alternated; then the CLI at 10^9 edges (`solve big.egb --backend gpu
# --output binary -o` into /dev/shm) with the answer's file prepared ahead or not
# (EGSOLVE_PREPARE=0), every answer compared
# with the first; the 10^7 answer certified by `egsolve check`. From a carried folder:
#   run(command="bash .carry/write-load-session.sh > $OUT/session.log 2>&1", carry=[".carry"])
set -u
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"; out="${OUT:-/tmp}"
w=/dev/shm/egs; rm -rf "$w"; mkdir -p "$w"
. "$c/measure.sh"
for z in "$c"/*.gz; do [ -e "$z" ] && { gunzip -c "$z" > "${z%.gz}"; chmod +x "${z%.gz}"; }; done
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; lscpu | grep -E 'Model name|Thread|Socket'; echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; } 2>&1
for r in 1 2 3; do
  for b in ${BENCHES-old new}; do [ -x "$c/egb-$b" ] || continue
    "$c/egb-$b" --threads "1,$(nproc)" --runs 9 --dir "$w" 2>&1 | grep -E 'v2 load|pool start|of which' | sed "s/^/egb-$b run $r: /"
  done
done
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 5 --to egb -o "$w/small.egb"
"$e" solve "$w/small.egb" --backend gpu -o "$w/small.json" && "$e" check "$w/small.egb" "$w/small.json" > "$out/check.log" 2>&1 && echo "10^7: certified" || { echo "10^7: CHECK FAILED"; tail -3 "$out/check.log"; }
rm -f "$w/small.egb" "$w/small.json"
measure gen "$e" gen random --vertices "${BIG_VERTICES:-250000000}" --degree 4..4 --weights=-10..10 --player1 10 --seed 3 --to egb -o "$w/big.egb"
for r in $(seq "${RUNS:-3}"); do
  for v in ${VARIANTS:-plain prepared}; do
    case $v in plain) env="EGSOLVE_PREPARE=0";; *) env="";; esac
    measure "$v: CLI solve run $r" env $env EGSOLVE_LOG=debug "$e" solve "$w/big.egb" --backend gpu --output binary -o "$w/out.bin" 2> "$out/cli-$v-$r.log"
    sed 's/\x1b\[[0-9;]*m//g' "$out/cli-$v-$r.log" | grep -E "parsed|prepared|solved solve|written|exiting" | cut -c12-27,35-160
    [ -f "$w/first.bin" ] || mv "$w/out.bin" "$w/first.bin"
    [ -f "$w/out.bin" ] && { cmp -s "$w/out.bin" "$w/first.bin" && echo "  same answer" || echo "  DIFFERS"; rm -f "$w/out.bin"; }
  done
done
rm -rf "$w"
(cd "$out" && tar czf cli-logs.tgz cli-*.log check.log 2>/dev/null && rm -f cli-*.log check.log)

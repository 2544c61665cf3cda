#!/usr/bin/env bash
# The CLI at 10^9 edges (`solve big.egb --backend gpu --output binary -o`), its phases as its
# debug log gives them (load's checksums and passes, the upload beside them, solve,
# strategies, write), RUNS times, for issue 43's CLI goal; first a 10^7-edge game solved the
# same way and certified by `egsolve check`. A device call from a carried folder holding
# stripped builds (BUILDS, default `egsolve`; `NAME.gz` is unpacked to NAME) and measure.sh:
#   run(command="bash .carry/cli-phases-session.sh > $OUT/session.log 2>&1", carry=[".carry"])
set -u
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"; out="${OUT:-/tmp}"
w=/dev/shm/egs; rm -rf "$w"; mkdir -p "$w"
. "$c/measure.sh"  # ms, measure
for z in "$c"/*.gz; do [ -e "$z" ] && { gunzip -c "$z" > "${z%.gz}"; chmod +x "${z%.gz}"; }; done
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; } 2>&1
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 5 --to egb -o "$w/small.egb"
for b in ${BUILDS:-egsolve}; do
  measure "$b: 10^7 edges, gpu, json" "$c/$b" solve "$w/small.egb" --backend gpu -o "$w/small.json"
  "$e" check "$w/small.egb" "$w/small.json" > "$out/check-$b.log" 2>&1 && echo "  certified" || { echo "  CHECK FAILED"; tail -3 "$out/check-$b.log"; }
done
rm -f "$w/small.egb" "$w/small.json"
measure gen "$e" gen random --vertices "${BIG_VERTICES:-250000000}" --degree 4..4 --weights=-10..10 --player1 10 --seed 3 --to egb -o "$w/big.egb"
# BUILDS: builds in the carried folder, in turn each run; every answer compared with the first.
for r in $(seq "${RUNS:-3}"); do
  for b in ${BUILDS:-egsolve}; do
    measure "$b: CLI solve run $r" env EGSOLVE_LOG="${LOG:-debug}" "$c/$b" solve "$w/big.egb" --backend gpu --output binary -o "$w/out.bin" 2> "$out/cli-$b-$r.log"
    sed 's/\x1b\[[0-9;]*m//g' "$out/cli-$b-$r.log" | grep -E "parsed|gpu: bound|uploaded|engine ready|lifting phase|solved solve|written" | awk '{ $2=""; $3=""; print }' | cut -c1-200
    [ -f "$w/first.bin" ] || mv "$w/out.bin" "$w/first.bin"
    [ -f "$w/out.bin" ] && { cmp -s "$w/out.bin" "$w/first.bin" && echo "  same answer" || echo "  DIFFERS"; rm -f "$w/out.bin"; }
  done
done
rm -rf "$w"
# At most 8 files come back from a device call: the logs travel as one archive.
(cd "$out" && tar czf cli-logs.tgz cli-*.log check-*.log 2>/dev/null && rm -f cli-*.log check-*.log)

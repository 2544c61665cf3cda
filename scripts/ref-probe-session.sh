#!/usr/bin/env bash
# Device session (issue 43, the 10^7-edge goal ≤ 0.15 s): where a job by reference spends
# its time. One warm server (--import-root the work folder), then RUNS games of 10^7 edges it
# has not seen, each by `egsolve submit --by-reference --backend gpu --wait --result-format
# binary`, with the CLI's solve of the same file beside it; the server's and the client's
# debug events kept under $OUT. Run from a carried folder holding a stripped `egsolve`:
#   run(command="bash .carry/ref-probe-session.sh > $OUT/ref.log 2>&1", carry=[".carry"])
set -u
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"; out="${OUT:-/tmp}"
w=/dev/shm/egs-ref; rm -rf "$w"; mkdir -p "$w"
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
EGSOLVE_LOG="${SERVE_LOG:-egsolve_service=debug}" "$e" serve --bind 127.0.0.1:8585 \
  --data-dir "$w/store" --import-root "$w" > "$out/serve.log" 2>&1 & srv=$!
for _ in $(seq 100); do curl -sf http://127.0.0.1:8585/healthz >/dev/null 2>&1 && break; sleep 0.1; done
for r in $(seq 0 "${RUNS:-6}"); do
  "$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 \
    --seed $((40 + r)) --to egb -o "$w/r$r.egb" 2>/dev/null
  s=$(date +%s%N); "$e" solve "$w/r$r.egb" --backend gpu --output binary -o "$w/cli.bin" 2>/dev/null; cli=$(ms "$s")
  s=$(date +%s%N)
  EGSOLVE_LOG=egsolve=debug "$e" submit --by-reference "$w/r$r.egb" --server http://127.0.0.1:8585 \
    --backend gpu --wait --result-format binary -o "$w/ref.bin" > /dev/null 2> "$out/client-$r.log"
  ref=$(ms "$s")
  echo "run $r: CLI ${cli} ms, by reference ${ref} ms, $(cmp -s "$w/ref.bin" "$w/cli.bin" && echo same || echo DIFFERS)"
  rm -f "$w/r$r.egb" "$w"/*.bin
done
kill "$srv"; wait "$srv" 2>/dev/null
sed 's/\x1b\[[0-9;]*m//g' "$out/serve.log" | grep -E "phases|import|claim round free|solved|admit|by reference|copied|reflink|hashed" | grep -v healthz | tail -60
rm -rf "$w"

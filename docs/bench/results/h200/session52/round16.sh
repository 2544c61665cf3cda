#!/usr/bin/env bash
# BRP in the service: the race's GPU side under debug logs, default options x3, then gpu alone x2.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"; out="${OUT:-/tmp}"
w=/dev/shm/r16; rm -rf "$w"; mkdir -p "$w"
EGSOLVE_LOG=debug "$e" serve --bind 127.0.0.1:8383 --data-dir "$w/store" --sync-commits false > "$out/serve.log" 2>&1 & srv=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:8383/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
"$e" submit "$c/games/SWP_datasize=2_windowsize=3_nodeadlock.gm.gz" --server http://127.0.0.1:8383 --wait -o "$w/warm.json" >/dev/null 2>&1
g="$c/games/BRP_datasize=2_counting.gm.gz"
for opt in "" "" "" "--backend gpu" "--backend gpu"; do
  { zcat -f "$g"; echo "# run $RANDOM"; } > "$w/run.gm"
  echo "=== JOB ${opt:-default} $(date +%T.%N)" >> "$out/serve.log"
  id=$("$e" submit "$w/run.gm" --server http://127.0.0.1:8383 --wait $opt -o "$w/svc.json" 2>&1 | grep -oE '[0-9a-f]{8}-[0-9a-f-]{27}' | head -1)
  j=$(curl -s "http://127.0.0.1:8383/v1/jobs/$id")
  echo "${opt:-default}: $(python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print(j["durations_ms"], j["backend"])' "$j")"
done
kill "$srv"; wait "$srv" 2>/dev/null
sed 's/\x1b\[[0-9;]*m//g' "$out/serve.log" | grep -v 'http\|tower' | cut -c1-400 > "$out/serve-clean.log"
wc -l "$out/serve-clean.log"; gzip -9 "$out/serve-clean.log"; rm -f "$out/serve.log"
rm -rf "$w"

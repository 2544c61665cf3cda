#!/usr/bin/env bash
# Session 52, call 6: the race with its CPU side capped at a quarter of the cores (default
# server), energy route vs gpu-fixpoint; job solve ms, 5 runs each, answers certified once.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"; out="${OUT:-/tmp}"
w=/dev/shm/r18; rm -rf "$w"; mkdir -p "$w"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; date -u; } 2>&1 | tee "$out/machine.log"
serve() { local d=$1 p=$2; shift 2
  env "$@" "$e" serve --bind "127.0.0.1:$p" --data-dir "$d" --sync-commits false > "$out/serve-$p.log" 2>&1 & srv=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$p/healthz" >/dev/null 2>&1 && return; sleep 0.1; done; echo "no server"; }
for route in energy fixpoint; do
  serve "$w/store-$route" 8383 EGSOLVE_RACE_GPU=$route
  "$e" submit "$c/games/SWP_datasize=2_windowsize=3_nodeadlock.gm.gz" --server http://127.0.0.1:8383 --wait -o "$w/warm.json" >/dev/null 2>&1
  for g in "$c"/games/*.gm.gz; do
    name=$(basename "$g" | cut -c1-24)
    ts=""; who=""; ok=""
    for r in 1 2 3 4 5; do
      { zcat -f "$g"; echo "# run $r $route"; } > "$w/run.gm"
      ret=""; [ $r = 5 ] && ret="--return strategies"
      id=$("$e" submit "$w/run.gm" --server http://127.0.0.1:8383 --wait $ret -o "$w/svc.json" 2>&1 | grep -oE '[0-9a-f]{8}-[0-9a-f-]{27}' | head -1)
      j=$(curl -s "http://127.0.0.1:8383/v1/jobs/$id")
      ts="$ts $(python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print("%.1f" % j["durations_ms"]["solve"])' "$j")"
      who="$who $(python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print(j["device"])' "$j")"
    done
    ok=$("$e" check "$w/run.gm" "$w/svc.json" >/dev/null 2>&1 && echo certified || echo NOT-CERTIFIED)
    echo "$route | $name | $(echo $ts | tr ' ' '\n' | sort -n | tr '\n' ' ') | on:$who | last $ok"
  done
  kill "$srv"; wait "$srv" 2>/dev/null
done
rm -rf "$w"

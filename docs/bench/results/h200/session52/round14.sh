#!/usr/bin/env bash
# Session 52, call 2: (1) where a 10^7-edge egb load goes at 16 threads (CLI phases), with and
# without a parallel MADV_POPULATE_READ of the map; (2) the race's GPU side, energy vs
# gpu-fixpoint, 7 runs on the games the GPU wins, default options; backend=gpu and parity alone.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"; out="${OUT:-/tmp}"
w=/dev/shm/r14; rm -rf "$w"; mkdir -p "$w"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; date -u; } 2>&1 | tee "$out/machine.log"
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 --to egb -o "$w/g7.egb" 2>/dev/null
echo "== egb load phases, 16 threads (CLI, --backend cpu) =="
for r in 1 2 3; do for p in 0 1; do
  EGSOLVE_MAP_POPULATE=$p EGSOLVE_LOG=debug "$e" solve "$w/g7.egb" --backend cpu --output binary -o "$w/r.bin" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' \
    | grep -E 'populated|checksums checked|both sides scanned|width checked|parsed' | sed -E 's/.*(egb map populated|egb checksums checked|both sides scanned|width checked|parsed)/\1/' | cut -c1-80 | tr '\n' ';'; echo " [populate=$p]"
done; done
serve() { local d=$1 p=$2; shift 2
  env "$@" "$e" serve --bind "127.0.0.1:$p" --data-dir "$d" --sync-commits false > "$out/serve-$p.log" 2>&1 & srv=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$p/healthz" >/dev/null 2>&1 && return; sleep 0.1; done; echo "no server"; }
echo "== service, warm server: job solve ms, 7 runs (sorted) =="
for route in energy fixpoint; do
  serve "$w/store-$route" 8383 EGSOLVE_RACE_GPU=$route
  "$e" submit "$c/games/SWP_datasize=2_windowsize=3_nodeadlock.gm.gz" --server http://127.0.0.1:8383 --wait -o "$w/warm.json" >/dev/null 2>&1
  for g in "$c"/games/{BRP,Hesselink,Onebit,SWP}*.gm.gz; do
    name=$(basename "$g" | cut -c1-20)
    for opt in "" "--backend gpu" "--backend parity"; do
      [ "$route" = fixpoint ] && [ -n "$opt" ] && continue
      ts=""; who=""
      for r in 1 2 3 4 5 6 7; do
        { zcat -f "$g"; echo "# run $r$route$opt"; } > "$w/run.gm"
        id=$("$e" submit "$w/run.gm" --server http://127.0.0.1:8383 --wait $opt -o "$w/svc.json" 2>&1 | grep -oE '[0-9a-f]{8}-[0-9a-f-]{27}' | head -1)
        j=$(curl -s "http://127.0.0.1:8383/v1/jobs/$id")
        ts="$ts $(python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print("%.1f" % j["durations_ms"]["solve"])' "$j")"
        who="$who $(python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print(j["backend"][0])' "$j")"
      done
      echo "$route | $name | ${opt:-default} | $(echo $ts | tr ' ' '\n' | sort -n | tr '\n' ' ') | by:$who"
    done
  done
  kill "$srv"; wait "$srv" 2>/dev/null
done
rm -rf "$w"

#!/usr/bin/env bash
# Session 52: (1) egb load, old (separate passes) vs new (one scan) bench executables, 16 and 1
# threads; (2) the service's parity race with the energy route vs gpu-fixpoint as the GPU side,
# warm server, every shared parity game; answers certified; (3) 10^7 egb by reference.
set -u
PARTS=" ${PARTS:-egb race ref} "; part() { [[ "$PARTS" == *" $1 "* ]]; }
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"; out="${OUT:-/tmp}"
export LD_LIBRARY_PATH="$c${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
w=/dev/shm/r13; rm -rf "$w"; mkdir -p "$w"
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; date -u; } 2>&1 | tee "$out/machine.log"
serve() { # serve DATA_DIR PORT [ENV...] -> pid in $srv
  local d=$1 p=$2; shift 2
  env "$@" "$e" serve --bind "127.0.0.1:$p" --data-dir "$d" --import-root "$w" --sync-commits false > "$out/serve-$p.log" 2>&1 & srv=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$p/healthz" >/dev/null 2>&1 && return; sleep 0.1; done
  echo "server on $p did not start"; tail -5 "$out/serve-$p.log"
}
if part egb; then
  echo "== egb load 10^7 edges: old (separate passes) vs new (one scan) =="
  for r in 1 2; do for b in old new; do
    echo "-- $b run $r"; timeout 120 "$c/egb-$b" --runs 7 --dir "$w" --threads 1,16 > "$out/egb-$b-$r.log" 2>&1
    grep -E "v2 load|sums|text parse" "$out/egb-$b-$r.log"
  done; done
  rm -f "$w"/*.egb "$w"/*.mpg
fi
if part race; then
  echo "== service, default options, warm server: job solve ms; race GPU side energy vs fixpoint =="
  for route in energy fixpoint; do
    serve "$w/store-$route" 8383 EGSOLVE_RACE_GPU=$route
    # warm the server's GPU context with a first job
    "$e" submit "$c/games/Hesselink_datasize=2_property1.gm.gz" --server http://127.0.0.1:8383 --wait -o "$w/warm.json" >/dev/null 2>&1
    for g in "$c"/games/${GAMES:-*}.gm*; do
      name=$(basename "$g" | cut -c1-40); line="$route | $name |"
      for r in 1 2 3; do
        { zcat -f "$g"; echo "# run $r$route"; } > "$w/run.gm"
        id=$("$e" submit "$w/run.gm" --server http://127.0.0.1:8383 --wait --return strategies -o "$w/svc.json" 2>&1 | grep -oE '[0-9a-f]{8}-[0-9a-f-]{27}' | head -1)
        job=$(curl -s "http://127.0.0.1:8383/v1/jobs/$id")
        ok=$("$e" check "$w/run.gm" "$w/svc.json" >/dev/null 2>&1 && echo cert || echo NOCERT)
        line="$line $(python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print("%.1f ms %s %s %s" % (j["durations_ms"]["solve"], j["device"], j["backend"], (j.get("summary") or {}).get("algorithm","")))' "$job" 2>/dev/null || echo "?") $ok |"
      done
      echo "$line"
    done
    kill "$srv"; wait "$srv" 2>/dev/null
  done
fi
if part ref; then
  echo "== 10^7 egb by reference, warm server, fresh games =="
  serve "$w/storer" 8585 EGSOLVE_X=1
  gen() { "$e" gen random --vertices "$1" --degree 4..4 --weights=-10..10 --player1 10 --seed "${SEED:-3}" "${@:2}"; }
  for r in 0 1 2 3 4; do
    SEED=$((30 + r)) gen 2500000 --to egb -o "$w/r$r.egb" 2>/dev/null
    s=$(date +%s%N); "$e" solve "$w/r$r.egb" --backend gpu --output binary -o "$w/cli.bin" 2>/dev/null; cli=$(ms "$s")
    s=$(date +%s%N); "$e" submit --by-reference "$w/r$r.egb" --server http://127.0.0.1:8585 --backend gpu --wait \
      --result-format binary -o "$w/ref.bin" 2>/dev/null; ref=$(ms "$s")
    echo "fresh egb $r by reference: CLI whole process ${cli} ms | service POST->binary result ${ref} ms | $(cmp -s "$w/ref.bin" "$w/cli.bin" && echo same-as-CLI || echo DIFFERS)"
    curl -s http://127.0.0.1:8585/metrics | grep -E "^egsolve_phase_duration_seconds_sum" > "$out/metrics-r$r.log"
    rm -f "$w/r$r.egb" "$w"/*.bin
  done
  grep -E "copied into the store|solved|parsed" "$out/serve-8585.log" | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-300 | tail -12
  kill "$srv"; wait "$srv" 2>/dev/null
fi
rm -rf "$w"

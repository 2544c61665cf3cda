#!/usr/bin/env bash
# Session 52, call 5: (1) egb load old vs new (one scan, one fold per lane) at 1 and 16
# threads; (2) the race with the CPU side on every core vs --cpu-threads 4, and gpu alone;
# (3) 10^7 egb by reference, fresh games, warm server.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"; out="${OUT:-/tmp}"
export LD_LIBRARY_PATH="$c${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
w=/dev/shm/r17; rm -rf "$w"; mkdir -p "$w"
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; date -u; } 2>&1 | tee "$out/machine.log"
echo "== egb load 10^7 edges =="
for r in 1 2; do for b in old new; do
  echo "-- $b run $r"; timeout 120 "$c/egb-$b" --runs 7 --dir "$w" --threads 1,16 > "$out/egb-$b-$r.log" 2>&1
  grep -E "v2 load|sums|text parse" "$out/egb-$b-$r.log"
done; done
rm -f "$w"/*.egb "$w"/*.mpg
serve() { local d=$1 p=$2; shift 2
  "$e" serve --bind "127.0.0.1:$p" --data-dir "$d" --import-root "$w" --sync-commits false "$@" > "$out/serve-$p.log" 2>&1 & srv=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$p/healthz" >/dev/null 2>&1 && return; sleep 0.1; done; echo "no server"; }
echo "== service, warm server: job solve ms, 5 runs (sorted) =="
for threads in 0 4; do
  if [ $threads = 0 ]; then serve "$w/store-$threads" 8383; else serve "$w/store-$threads" 8383 --cpu-threads $threads; fi
  "$e" submit "$c/games/SWP_datasize=2_windowsize=3_nodeadlock.gm.gz" --server http://127.0.0.1:8383 --wait -o "$w/warm.json" >/dev/null 2>&1
  for g in "$c"/games/{BRP,Hesselink,Onebit,SWP,Hanoi_ndisks=10,Lift_\(Incorrect\)_nlifts=3}*.gm.gz; do
    name=$(basename "$g" | cut -c1-20)
    for opt in "" "--backend gpu" "--backend parity"; do
      [ $threads = 4 ] && [ "$opt" = "--backend gpu" ] && continue
      ts=""; who=""
      for r in 1 2 3 4 5; do
        { zcat -f "$g"; echo "# run $r $threads $opt"; } > "$w/run.gm"
        id=$("$e" submit "$w/run.gm" --server http://127.0.0.1:8383 --wait $opt -o "$w/svc.json" 2>&1 | grep -oE '[0-9a-f]{8}-[0-9a-f-]{27}' | head -1)
        j=$(curl -s "http://127.0.0.1:8383/v1/jobs/$id")
        ts="$ts $(python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print("%.1f" % j["durations_ms"]["solve"])' "$j")"
        who="$who $(python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print(j["backend"][0])' "$j")"
      done
      echo "cpu-threads $threads | $name | ${opt:-default} | $(echo $ts | tr ' ' '\n' | sort -n | tr '\n' ' ') | by:$who"
    done
  done
  kill "$srv"; wait "$srv" 2>/dev/null
done
echo "== 10^7 egb by reference, warm server, fresh games =="
serve "$w/storer" 8585
gen() { "$e" gen random --vertices "$1" --degree 4..4 --weights=-10..10 --player1 10 --seed "${SEED:-3}" "${@:2}"; }
for r in 0 1 2 3 4; do
  SEED=$((40 + r)) gen 2500000 --to egb -o "$w/r$r.egb" 2>/dev/null
  s=$(date +%s%N); "$e" solve "$w/r$r.egb" --backend gpu --output binary -o "$w/cli.bin" 2>/dev/null; cli=$(ms "$s")
  s=$(date +%s%N); "$e" submit --by-reference "$w/r$r.egb" --server http://127.0.0.1:8585 --backend gpu --wait \
    --result-format binary -o "$w/ref.bin" 2>/dev/null; ref=$(ms "$s")
  echo "fresh egb $r by reference: CLI whole process ${cli} ms | service POST->binary result ${ref} ms | $(cmp -s "$w/ref.bin" "$w/cli.bin" && echo same-as-CLI || echo DIFFERS)"
  rm -f "$w/r$r.egb" "$w"/*.bin
done
kill "$srv"; wait "$srv" 2>/dev/null
rm -rf "$w"

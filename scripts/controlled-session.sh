#!/usr/bin/env bash
# One device call for issue 42's random-game goal: the CPU portfolio with the
# winner-controlled winning cycles solved first (solve::parity::controlled), on random parity
# games, beside Oink on the same host: whole process (CLI), the solve itself (the summary's
# solve_seconds), and the service's job solve time with default options (warm server). Every
# answer is certified by `egsolve check`; the shared games are solved once each and
# certified too (no regression in answers).
# Run from a carried folder holding a stripped release `egsolve`, games/ and optionally
# `oink` with libboost_iostreams.so.1.74.0 beside it:
#   run(command="bash .carry/controlled-session.sh > $OUT/session.log 2>&1", carry=[".carry"])
set -u
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"; out="${OUT:-/tmp}"
export LD_LIBRARY_PATH="$c${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
w=/dev/shm/egc; rm -rf "$w"; mkdir -p "$w"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; "$e" --version; } 2>&1
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
solve_s() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print("%.1f ms (%s %s)" % (s["solve_seconds"]*1e3, s["backend"], s.get("algorithm","")))' "$1"; }

echo "== random games: CLI whole process and solve; Oink whole process =="
"$e" gen parity --vertices 1000000 --priorities 100 --degree 4 --seed 1 -o "$w/r6.gm"
"$e" gen parity --vertices 400000 --priorities 400000 --degree 2 --seed 1 -o "$w/r5.gm"
"$e" gen parity --vertices 100000 --priorities 100 --degree 4 --seed 2 -o "$w/r5p2.gm"
for g in r6 r5 r5p2; do
  for run in 1 2 3; do
    s=$(date +%s%N); "$e" solve "$w/$g.gm" -o "$w/$g.json" 2>/dev/null; t=$(ms "$s")
    echo "$g default run $run: whole $t ms, solve $(solve_s "$w/$g.json")"
  done
  "$e" check "$w/$g.gm" "$w/$g.json" >/dev/null 2>&1 && echo "$g certified" || echo "$g NOT CERTIFIED"
  # Where the solve's time goes: the first step's rounds and per-player phases.
  EGSOLVE_LOG=egsolve_core::solve::parity=debug "$e" solve "$w/$g.gm" -o "$w/$g.debug.json" 2>&1 \
    | grep -E 'winner-controlled|solved' | sed -e 's/\x1b\[[0-9;]*m//g' -e 's/^.*parity: //'
  if [ -x "$c/oink" ]; then
    for s in "--zlk -w 1" "--tl -w 1" "--zlk -w 16"; do
      st=$(date +%s%N); timeout 30 "$c/oink" $s "$w/$g.gm" > "$w/oink.log" 2>&1; t=$(ms "$st")
      echo "$g oink $s: whole $t ms; $(grep -iE 'solv|preprocess|wcwc|cycles' "$w/oink.log" | tr '\n' ' ' | cut -c1-300)"
    done
  fi
done

echo "== service, default options, warm server: job solve ms =="
"$e" serve --bind 127.0.0.1:8384 --data-dir "$w/store" --sync-commits false > "$out/serve.log" 2>&1 & srv=$!
for _ in $(seq 100); do curl -sf http://127.0.0.1:8384/healthz >/dev/null 2>&1 && break; sleep 0.1; done
sleep 2
for g in r6 r5p2; do
  for r in 1 2 3; do
    { cat "$w/$g.gm"; echo "# run $r"; } | gzip -1 > "$w/run$r-$g.gm.gz"
    id=$("$e" submit "$w/run$r-$g.gm.gz" --server http://127.0.0.1:8384 --wait -o "$w/svc.json" 2>&1 | grep -oE '[0-9a-f]{8}-[0-9a-f-]{27}' | head -1)
    job=$(curl -s "http://127.0.0.1:8384/v1/jobs/$id")
    echo "$g service run $r: $(python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print("%.1f ms on %s (%s)" % (j["durations_ms"]["solve"], j["device"], j["backend"]))' "$job" 2>/dev/null || echo "? $job" | cut -c1-300)"
  done
done
kill "$srv"; wait "$srv" 2>/dev/null

echo "== shared games: default route, certified =="
for g in "$c"/games/*.gm*; do
  s=$(date +%s%N); "$e" solve "$g" --backend parity -o "$w/s.json" 2>/dev/null; t=$(ms "$s")
  ok=$("$e" check "$g" "$w/s.json" >/dev/null 2>&1 && echo certified || echo NOT-CERTIFIED)
  echo "$(basename "$g") | parity whole $t ms | solve $(solve_s "$w/s.json") | $ok"
done
rm -rf "$w"

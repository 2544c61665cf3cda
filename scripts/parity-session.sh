#!/usr/bin/env bash
# One device call for BENCHMARKS.md's parity section (issue 42): per game, the default route
# (`auto`: the GPU route and the CPU portfolio raced), the GPU route alone (`--backend gpu`,
# the energy reduction) and the CPU portfolio alone (`--backend parity`), whole process, beside
# Oink (`-w 1` with its best solver, `--zlk -w 16`) when carried; then the same games through
# the service with default options (job solve time, the device it records, and the GPU busy
# metric). Every egsolve answer is certified by `egsolve check`, and the default route's
# winners are compared with the CPU portfolio's.
# Run from a carried folder (git-ignored, e.g. .carry/) holding a stripped release `egsolve`,
# the games under games/ (*.gm or *.gm.gz: Oink reads them through zcat) and optionally `oink` with
# `libboost_iostreams.so.1.74.0` beside it:
#   run(command="bash .carry/parity-session.sh > $OUT/session.log 2>&1", carry=[".carry"])
# PARTS picks the sections (default: cli service random); RUNS the repetitions (default 3);
# OINK_LIMIT the seconds an Oink run may take in the CLI part (default 10).
set -u
OINK_LIMIT=${OINK_LIMIT:-10}
PARTS=" ${PARTS:-cli service random} "; part() { [[ "$PARTS" == *" $1 "* ]]; }
RUNS=${RUNS:-3}
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"; out="${OUT:-/tmp}"
export LD_LIBRARY_PATH="$c${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
w=/dev/shm/egp; rm -rf "$w"; mkdir -p "$w"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; } 2>&1 | tee "$out/machine.log"
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# median of RUNS whole-process times of CMD... (prints the median in ms; output of the last run kept)
timed() { local t=() s; for _ in $(seq "$RUNS"); do s=$(date +%s%N); "$@" >/dev/null 2>&1; t+=("$(ms "$s")"); done
  printf '%s\n' "${t[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"; }
# winners of a solution JSON, one digit per vertex
winners() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("".join(str(v["winner"]) for v in d["vertices"]))' "$1" 2>/dev/null | md5sum | cut -c1-8; }

games=$(ls "$c"/games/*.gm* 2>/dev/null)
if part cli; then
  echo "== CLI, whole process, median of $RUNS (ms) =="
  echo "game | default (race) | backend gpu | backend parity | oink best -w1 | oink zlk -w16 | default answered by | certified | winners agree"
  for g in $games; do
    name=$(basename "$g")
    d=$(timed "$e" solve "$g"); gpu=$(timed "$e" solve "$g" --backend gpu); cpu=$(timed "$e" solve "$g" --backend parity)
    "$e" solve "$g" -o "$w/default.json" 2>/dev/null; "$e" solve "$g" --backend parity -o "$w/parity.json" 2>/dev/null
    by=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print(s["backend"], s.get("algorithm",""))' "$w/default.json" 2>/dev/null)
    ok=$("$e" check "$g" "$w/default.json" >/dev/null 2>&1 && echo yes || echo NO)
    agree=$([ "$(winners "$w/default.json")" = "$(winners "$w/parity.json")" ] && echo yes || echo NO)
    o1=-; o16=-
    if [ -x "$c/oink" ]; then
      zcat -f "$g" > "$w/g.gm"
      best=100000000
      for s in --tl --npp --zlk; do t=$(RUNS=1 timed timeout "$OINK_LIMIT" "$c/oink" $s -w 1 "$w/g.gm"); [ "$t" -lt "$best" ] && best=$t; done
      o1=$best; o16=$(RUNS=1 timed timeout "$OINK_LIMIT" "$c/oink" --zlk -w 16 "$w/g.gm")
    fi
    echo "$name | $d | $gpu | $cpu | $o1 | $o16 | $by | $ok | $agree"
  done
fi

serve() { # serve DATA_DIR PORT -> pid in $srv
  "$e" serve --bind "127.0.0.1:$2" --data-dir "$1" --sync-commits false > "$out/serve-$2.log" 2>&1 & srv=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$2/healthz" >/dev/null 2>&1 && return; sleep 0.1; done
  echo "server on $2 did not start"; tail -5 "$out/serve-$2.log"
}
if part service; then
  echo "== service, default options, warm server: job solve ms (device recorded) =="
  serve "$w/store" 8383; sleep 2
  for g in $games; do
    name=$(basename "$g"); line="$name |"
    for r in $(seq "$RUNS"); do
      # a copy with a comment of its own each run, so that the result cache does not answer
      { zcat -f "$g"; echo "# run $r"; } | gzip -1 > "$w/run$r-$name"
      id=$("$e" submit "$w/run$r-$name" --server http://127.0.0.1:8383 --wait -o "$w/svc.json" 2>&1 | grep -oE '[0-9a-f]{8}-[0-9a-f-]{27}' | head -1)
      job=$(curl -s "http://127.0.0.1:8383/v1/jobs/$id")
      line="$line $(python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print("%.1f ms on %s (%s)" % (j["durations_ms"]["solve"], j["device"], j["backend"]))' "$job" 2>/dev/null || echo "?") |"
    done
    echo "$line"
  done
  curl -s http://127.0.0.1:8383/metrics | grep -E "^egsolve_gpu_busy|^egsolve_jobs" > "$out/metrics.log"; cat "$out/metrics.log"
  curl -s http://127.0.0.1:8383/v1/devices > "$out/devices.json"; head -c 600 "$out/devices.json"; echo
  kill "$srv"; wait "$srv" 2>/dev/null
fi

if part random; then
  echo "== random parity games, whole process (ms) =="
  "$e" gen parity --vertices 1000000 --priorities 100 --degree 4 --seed 1 -o "$w/r6.gm"
  "$e" gen parity --vertices 400000 --priorities 400000 --degree 2 --seed 1 -o "$w/r5.gm"
  "$e" gen parity --vertices 100000 --priorities 100 --degree 4 --seed 2 -o "$w/r5p2.gm"
  for g in "$w/r6.gm" "$w/r5.gm" "$w/r5p2.gm"; do
    d=$(timed "$e" solve "$g"); cpu=$(timed "$e" solve "$g" --backend parity)
    "$e" solve "$g" -o "$w/default.json" 2>/dev/null
    ok=$("$e" check "$g" "$w/default.json" >/dev/null 2>&1 && echo yes || echo NO)
    by=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print(s["backend"], s.get("algorithm",""))' "$w/default.json" 2>/dev/null)
    o1=-; [ -x "$c/oink" ] && { best=100000000; for s in --tl --npp --zlk; do t=$(RUNS=1 timed timeout 30 "$c/oink" $s -w 1 "$g"); [ "$t" -lt "$best" ] && best=$t; done; o1=$best; }
    echo "$(basename "$g") | default $d | parity $cpu | oink best -w1 $o1 | $by | certified $ok"
  done
fi
rm -rf "$w"

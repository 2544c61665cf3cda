#!/usr/bin/env bash
# One device call for BENCHMARKS.md §9 (issue 39): text parsing at 1 and all threads, egb
# load, the service's POST -> binary result with the GPU from egb and zstd text (10^7 edges),
# and the 10^9-edge game generated to egb, solved with --backend gpu and sent through the
# service (uploaded, and by reference: the server's --import-root is the work folder). Answers are compared (GPU against CPU on 10^7 edges; service against CLI at 10^9).
# Run from a carried folder (git-ignored, e.g. .carry/) holding stripped release builds of
# `egsolve`, measure.sh and the `parse` and `egb` bench executables (`cargo bench -p egsolve-core --bench
# parse --bench egb --no-run` prints their paths; copy them as parse-bench, egb-bench):
#   run(command="bash .carry/datapath-session.sh > $OUT/session.log 2>&1", carry=[".carry"])
# PARTS picks the sections (default: egb service big parse, in this order; `parts`: the
# 10^9-edge game sent in parts, CONNECTIONS at a time; `ref`: jobs by reference at 10^7 and
# 10^9 edges; `cli`: the CLI at 10^9 edges, each of BUILDS); BIG_VERTICES the large game's
# vertices (default 250000000: 10^9 edges); SERVE_ARGS more `serve` flags; REF_SMALL_RUNS
# the 10^7 runs of `ref` less one (default 3); BUILDS the builds `ref` sends the 10^9 game to.
set -u
PARTS=" ${PARTS:-egb service big parse} "; part() { [[ "$PARTS" == *" $1 "* ]]; }
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"; out="${OUT:-/tmp}"
w=/dev/shm/egs; rm -rf "$w"; mkdir -p "$w"
gen() { "$e" gen random --vertices "$1" --degree 4..4 --weights=-10..10 --player1 10 --seed "${SEED:-3}" "${@:2}"; }
. "$c/measure.sh"  # ms, measure
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
  free -g | head -2; df -h /dev/shm | tail -1; echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; } 2>&1 | tee "$out/machine.log"

if part egb; then
  echo "== egb load (10^7 edges) =="
  timeout 200 "$c/egb-bench" --runs 7 --dir "$w" > "$out/egb.log" 2>&1; echo "egb rc=$?"
  cat "$out/egb.log" | tail -20
  EGSOLVE_EGB_CHECK=exact timeout 100 "$c/egb-bench" --runs 7 --dir "$w" > "$out/egb-exact.log" 2>&1
  echo "exact proof:"; grep -E "v2 load" "$out/egb-exact.log"
fi

wait_done() { # wait_done PORT JOB: until the job has ended
  local st; for _ in $(seq 100); do
    st=$("$e" status "$2" --server "http://127.0.0.1:$1" --wait 5 | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
    case "$st" in succeeded|failed|cancelled) return;; esac
  done
}
serve() { # serve DATA_DIR PORT -> pid in $srv
  "$e" serve --bind "127.0.0.1:$2" --data-dir "$1" --import-root "$w" --max-body-bytes 40000000000 --max-vertices 4000000000 \
    --max-edges 4000000000 --cpu-small-edges 0 --sync-commits false ${SERVE_ARGS:-} > "$out/serve-$2.log" 2>&1 & srv=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$2/healthz" >/dev/null 2>&1 && return; sleep 0.1; done
  echo "server on $2 did not start"; tail -5 "$out/serve-$2.log"
}

# timed_job LABEL PORT NAME SUBMIT_ARGS...: on a fresh store, the steps of `submit --wait` timed
# apart (upload or copy and the job, the solve, the binary result's download), the answer
# compared with the CLI's (big-cli.bin), the server's log and phase metrics kept under NAME.
timed_job() {
  local label=$1 port=$2 name=$3; shift 3
  serve "$w/store-$name" "$port"
  local s t id posted solved got rc; s=$(date +%s%N)
  id=$(timeout 150 "$e" submit "$@" --server "http://127.0.0.1:$port" --backend gpu 2>>"$out/$name-submit.log"); posted=$(ms "$s")
  t=$(date +%s%N); wait_done "$port" "$id"; solved=$(ms "$t")
  t=$(date +%s%N); timeout 150 "$e" result "$id" --server "http://127.0.0.1:$port" --format binary -o "$w/big-$name.bin"; rc=$?; got=$(ms "$t")
  echo "$label, POST->binary result: $(ms "$s") ms rc=$rc (upload or copy and job ${posted} ms, solve wait ${solved} ms, download ${got} ms); $(cmp -s "$w/big-$name.bin" "$w/big-cli.bin" && echo same-as-CLI || echo DIFFERS)"
  grep -E "upload in parts made|copied into the store|accepted|solved" "$out/serve-$port.log" | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-300
  curl -s "http://127.0.0.1:$port/metrics" | grep -E "^egsolve_phase_duration_seconds_sum" > "$out/metrics-$name.log"
  kill "$srv"; wait "$srv" 2>/dev/null; mv "$out/serve-$port.log" "$out/serve-$name.log"; rm -rf "$w/store-$name" "$w/big-$name.bin"
}

if part service; then
  echo "== 10^7 edges: CLI and service with --backend gpu =="
  gen 2500000 -o "$w/g7.mpg"; gen 2500000 --to egb -o "$w/g7.egb"; if command -v zstd >/dev/null; then zstd -q -3 -T0 "$w/g7.mpg" -o "$w/g7.mpg.zst"
  else python3 -c "import zstandard,sys; open(sys.argv[2],'wb').write(zstandard.ZstdCompressor(level=3,threads=-1).compress(open(sys.argv[1],'rb').read()))" "$w/g7.mpg" "$w/g7.mpg.zst" || echo "no zstd here"; fi
  ls -l "$w"/g7.*
  "$e" solve "$w/g7.egb" --backend auto --output binary -o "$w/cpu.bin" 2>/dev/null
  serve "$w/store7" 8181
  for f in g7.egb g7.mpg.zst g7.mpg; do
    for r in 1 2 3; do
      s=$(date +%s%N); "$e" solve "$w/$f" --backend gpu --output binary -o "$w/cli.bin" 2>/dev/null; cli=$(ms "$s")
      s=$(date +%s%N); "$e" submit "$w/$f" --server http://127.0.0.1:8181 --backend gpu --wait \
        --result-format binary -o "$w/svc.bin" 2>/dev/null; rc=$?; svc=$(ms "$s")
      s=$(date +%s%N); "$e" submit --by-reference "$w/$f" --server http://127.0.0.1:8181 --backend gpu --wait \
        --result-format binary -o "$w/ref.bin" 2>/dev/null; ref=$(ms "$s")
      # In parts (all of them at once): a fresh part size each run, so no run reuses another's arena.
      s=$(date +%s%N); "$e" submit "$w/$f" --server http://127.0.0.1:8181 --backend gpu --wait --parts-above 0 \
        --part-size $(( (8 + r) << 20 )) --connections 16 --result-format binary -o "$w/parts.bin" 2>/dev/null; parts=$(ms "$s")
      same=$(cmp -s "$w/cli.bin" "$w/cpu.bin" && cmp -s "$w/svc.bin" "$w/cpu.bin" && cmp -s "$w/ref.bin" "$w/cpu.bin" && cmp -s "$w/parts.bin" "$w/cpu.bin" && echo same-as-cpu || echo DIFFERS)
      echo "$f run $r: CLI whole process ${cli} ms | service POST->binary result ${svc} ms rc=$rc, by reference ${ref} ms, in parts ${parts} ms | $same"
    done
  done
  # Each run a game the server has not seen (so no result is reused): uploaded whole, then in
  # parts (another key: its own solve too), beside the CLI.
  for r in 1 2 3; do
    SEED=$((10 + r)) gen 2500000 --to egb -o "$w/f$r.egb" 2>/dev/null
    s=$(date +%s%N); "$e" solve "$w/f$r.egb" --backend gpu --output binary -o "$w/cli.bin" 2>/dev/null; cli=$(ms "$s")
    s=$(date +%s%N); "$e" submit "$w/f$r.egb" --server http://127.0.0.1:8181 --backend gpu --wait \
      --result-format binary -o "$w/svc.bin" 2>/dev/null; svc=$(ms "$s")
    s=$(date +%s%N); "$e" submit "$w/f$r.egb" --server http://127.0.0.1:8181 --backend gpu --wait --parts-above 0 \
      --part-size $((16 << 20)) --connections 16 --result-format binary -o "$w/parts.bin" 2>/dev/null; parts=$(ms "$s")
    same=$(cmp -s "$w/svc.bin" "$w/cli.bin" && cmp -s "$w/parts.bin" "$w/cli.bin" && echo same-as-CLI || echo DIFFERS)
    echo "fresh egb $r (no reuse): CLI whole process ${cli} ms | service uploaded ${svc} ms, in parts ${parts} ms | $same"
  done
  curl -s http://127.0.0.1:8181/metrics | grep -E "^egsolve_(upload|parse|phase|job_phase)" | head -30 > "$out/metrics7.log"
  kill "$srv"; wait "$srv" 2>/dev/null; rm -rf "$w/store7" "$w"/g7.mpg "$w"/*.bin
fi

if part big; then
  v="${BIG_VERTICES:-250000000}"
  echo "== $v vertices, 4 edges each: gen -> egb, solve --backend gpu, service =="
  measure gen gen "$v" --to egb -o "$w/big.egb"
  ls -l "$w/big.egb"
  for r in 1 2; do
    measure "solve run $r" "$e" solve "$w/big.egb" --backend gpu --output binary -o "$w/big-cli.bin"
  done
  RUST_LOG=debug "$e" solve "$w/big.egb" --backend gpu --output binary -o "$w/big-cli.bin" 2> "$out/big-phases.log"
  grep -iE "phase|ms=|seconds" "$out/big-phases.log" | cut -c1-220 | head -40
  serve "$w/storebig" 8282
  s=$(date +%s%N); timeout 120 "$e" submit "$w/big.egb" --server http://127.0.0.1:8282 --backend gpu --wait \
    --result-format binary -o "$w/big-svc.bin" 2>"$out/big-submit.log"; rc=$?
  echo "service POST->binary result: $(ms "$s") ms rc=$rc; $(cmp -s "$w/big-svc.bin" "$w/big-cli.bin" && echo same-as-CLI || echo DIFFERS)"
  for r in 1 2; do
    s=$(date +%s%N); timeout 120 "$e" submit --by-reference "$w/big.egb" --server http://127.0.0.1:8282 --backend gpu \
      --wait --result-format binary -o "$w/big-ref.bin" 2>>"$out/big-submit.log"; rc=$?
    echo "service by reference, POST->binary result run $r: $(ms "$s") ms rc=$rc; $(cmp -s "$w/big-ref.bin" "$w/big-cli.bin" && echo same-as-CLI || echo DIFFERS)"
    rm -f "$w/big-ref.bin"
  done
  curl -s http://127.0.0.1:8282/metrics | grep -E "^egsolve_" | grep -vE "_bucket" | head -60 > "$out/metricsbig.log"
  kill "$srv"; wait "$srv" 2>/dev/null
fi
if part parts; then
  # Issue 43 part 2: the 10^9-edge egb sent in parts over several connections (a fresh store
  # for each run: a second run of the same parts would reuse the first one's result), beside
  # the CLI and a job by reference in the same session.
  v="${BIG_VERTICES:-250000000}"
  [ -f "$w/big.egb" ] || measure gen gen "$v" --to egb -o "$w/big.egb"
  measure "CLI solve" "$e" solve "$w/big.egb" --backend gpu --output binary -o "$w/big-cli.bin"
  for conns in ${CONNECTIONS:-8 16}; do
    timed_job "service in parts, $conns connections" 8383 "parts-$conns" "$w/big.egb" --connections "$conns"
  done
  serve "$w/storeref" 8484
  s=$(date +%s%N); timeout 150 "$e" submit --by-reference "$w/big.egb" --server http://127.0.0.1:8484 --backend gpu \
    --wait --result-format binary -o "$w/big-ref.bin" 2>>"$out/parts-submit.log"; rc=$?
  echo "service by reference, POST->binary result: $(ms "$s") ms rc=$rc; $(cmp -s "$w/big-ref.bin" "$w/big-cli.bin" && echo same-as-CLI || echo DIFFERS)"
  grep -E "accepted|solved|copied" "$out/serve-8484.log" | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-300
  kill "$srv"; wait "$srv" 2>/dev/null; rm -rf "$w/storeref" "$w/big-ref.bin"
fi
if part ref; then
  # Issue 43 part 1: jobs by reference, each on a store of its own (nothing reused), beside
  # the CLI: games of 10^7 edges the server has not seen, then the 10^9-edge game (copied
  # in parts on every core; the server's log line says how long the copy took).
  # One server, warmed by a first job (its GPU context), then games it has not seen.
  serve "$w/storer" 8585
  for r in $(seq 0 "${REF_SMALL_RUNS:-3}"); do
    SEED=$((20 + r)) gen 2500000 --to egb -o "$w/r$r.egb" 2>/dev/null
    s=$(date +%s%N); "$e" solve "$w/r$r.egb" --backend gpu --output binary -o "$w/cli.bin" 2>/dev/null; cli=$(ms "$s")
    curl -s http://127.0.0.1:8585/metrics | grep -E "^egsolve_phase_duration_seconds_sum" > "$out/metrics-r$r-before.log"
    s=$(date +%s%N); "$e" submit --by-reference "$w/r$r.egb" --server http://127.0.0.1:8585 --backend gpu --wait \
      --result-format binary -o "$w/ref.bin" 2>/dev/null; ref=$(ms "$s")
    echo "fresh egb $r by reference$([ $r = 0 ] && echo ' (the server first job)'): CLI whole process ${cli} ms | service POST->binary result ${ref} ms | $(cmp -s "$w/ref.bin" "$w/cli.bin" && echo same-as-CLI || echo DIFFERS)"
    curl -s http://127.0.0.1:8585/metrics | grep -E "^egsolve_phase_duration_seconds_sum" > "$out/metrics-r$r.log"
    rm -f "$w/r$r.egb" "$w"/*.bin
  done
  kill "$srv"; wait "$srv" 2>/dev/null; rm -rf "$w/storer"
  v="${BIG_VERTICES:-250000000}"
  [ -f "$w/big.egb" ] || measure gen gen "$v" --to egb -o "$w/big.egb"
  measure "CLI solve" "$e" solve "$w/big.egb" --backend gpu --output binary -o "$w/big-cli.bin"
  # BUILDS: the builds (in the carried folder) whose servers take the 10^9 job in turn.
  for b in ${BUILDS:-egsolve}; do
    e="$c/$b"
    for r in 1 2; do
      timed_job "$b: service by reference run $r" 8484 "ref-$b-$r" --by-reference "$w/big.egb"
    done
  done
  e="$c/egsolve"
fi
if part cli; then
  # Issue 43: the CLI at 10^9 edges (`--backend gpu`, whole process, peak resident memory),
  # each build in BUILDS twice, in turn; every answer compared with the first.
  v="${BIG_VERTICES:-250000000}"
  [ -f "$w/big.egb" ] || measure gen gen "$v" --to egb -o "$w/big.egb"
  for r in 1 2; do
    for b in ${BUILDS:-egsolve}; do
      measure "$b: CLI solve run $r" "$c/$b" solve "$w/big.egb" --backend gpu --output binary -o "$w/big-cli-$b.bin"
      [ -f "$w/big-cli.bin" ] || cp "$w/big-cli-$b.bin" "$w/big-cli.bin"
      cmp -s "$w/big-cli-$b.bin" "$w/big-cli.bin" && echo "  same answer" || echo "  DIFFERS"
      rm -f "$w/big-cli-$b.bin"
    done
  done
fi
if part parse; then
  echo "== text parse (MB/s; 50 MB and 1 GB generated) =="
  for mb in 50 1000; do
    timeout 200 "$c/parse-bench" --no-default --generate-mb "$mb" --threads "1,$(nproc)" --runs 3 \
      --write-vertices 0 > "$out/parse-$mb.log" 2>&1; echo "parse $mb MB rc=$?"
    grep -E "parse\+build|sequential|scan|stream" "$out/parse-$mb.log" | head -12
  done
fi

rm -rf "$w"

#!/usr/bin/env bash
# One device call for issue 43's 10^9-edge service goals with results by reference: the game
# generated to egb in tmpfs, the CLI's answer as the reference, then the service's POST ->
# binary result on disk, each run on a fresh store (nothing reused), the result downloaded
# (`-o FILE`) against written by the server (`-o FILE --result-by-reference`: a link to its
# copy), alternating in the same call, for the job by reference and the upload in parts.
# Every answer is compared with the CLI's. Run from a carried folder holding stripped
# release builds (`egsolve`, and others named in BUILDS) and measure.sh:
#   run(command="bash .carry/export-session.sh > $OUT/session.log 2>&1", carry=[".carry"])
# RUNS: runs of each variant (default 2); BIG_VERTICES: the game's vertices (250000000: 10^9
# edges); CONNECTIONS: connections of the upload in parts (16); SERVE_ARGS: more `serve` flags;
# PARTS_RUNS: runs in parts (RUNS); BACKEND: the jobs' backend (gpu; cpu to try the script where there is no GPU).
set -u
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"; out="${OUT:-/tmp}"
w=/dev/shm/egs; rm -rf "$w"; mkdir -p "$w"
. "$c/measure.sh"  # ms, measure
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
  free -g | head -2; df -h /dev/shm | tail -1; echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; } 2>&1 | tee "$out/machine.log"

serve() { # serve DATA_DIR PORT -> pid in $srv
  EGSOLVE_LOG=info "$e" serve --bind "127.0.0.1:$2" --data-dir "$1" --import-root "$w" --export-root "$w" \
    --max-body-bytes 40000000000 --max-vertices 4000000000 --max-edges 4000000000 --cpu-small-edges 0 \
    --sync-commits false --inline-parse-bytes 16000000000 --preparsed-memory-bytes 40000000000 \
    ${SERVE_ARGS:-} > "$out/serve-$2.log" 2>&1 & srv=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$2/healthz" >/dev/null 2>&1 && return; sleep 0.1; done
  echo "server on $2 did not start"; tail -5 "$out/serve-$2.log"
}

# job LABEL NAME SUBMIT_ARGS...: a fresh server and store, `submit ... --wait --result-format
# binary -o $w/NAME.bin` timed from the POST to the result on disk, the answer compared.
job() {
  local label=$1 name=$2; shift 2
  serve "$w/store-$name" 8484
  local s; s=$(date +%s%N)
  timeout 150 "$e" submit "$@" --server http://127.0.0.1:8484 --backend "${BACKEND:-gpu}" --wait --result-format binary \
    -o "$w/$name.bin" 2>"$out/submit-$name.log"; local rc=$? took; took=$(ms "$s")
  echo "$label: POST->binary result on disk ${took} ms rc=$rc; $(cmp -s "$w/$name.bin" "$w/big-cli.bin" && echo same-as-CLI || echo DIFFERS); $(grep -o 'linked to the server.s copy' "$out/submit-$name.log")"
  sed 's/\x1b\[[0-9;]*m//g' "$out/serve-8484.log" | grep -oE "solve=[0-9.]+ result_write=[0-9.]+( summary=[0-9.]+)?" | sed 's/^/  server: /'
  curl -s http://127.0.0.1:8484/metrics | grep -E "^egsolve_phase_duration_seconds_sum" > "$out/metrics-$name.log"
  kill "$srv"; wait "$srv" 2>/dev/null; mv "$out/serve-8484.log" "$out/serve-$name.log"
  rm -rf "$w/store-$name" "$w/$name.bin"
}

v="${BIG_VERTICES:-250000000}"
measure gen "$e" gen random --vertices "$v" --degree 4..4 --weights=-10..10 --player1 10 --seed 3 --to egb -o "$w/big.egb"
# BUILDS: the builds (in the carried folder) measured in turn, each run; the first CLI answer
# is the reference.
for r in $(seq "${RUNS:-2}"); do
  for b in ${BUILDS:-egsolve}; do
    measure "$b: CLI solve run $r" "$c/$b" solve "$w/big.egb" --backend "${BACKEND:-gpu}" --output binary -o "$w/cli-$b.bin"
    [ -f "$w/big-cli.bin" ] || cp "$w/cli-$b.bin" "$w/big-cli.bin"
    cmp -s "$w/cli-$b.bin" "$w/big-cli.bin" && echo "  same answer" || echo "  DIFFERS"; rm -f "$w/cli-$b.bin"
  done
done
for r in $(seq "${RUNS:-2}"); do
  for b in ${BUILDS:-egsolve}; do
    e="$c/$b"
    job "$b: by reference, downloaded, run $r" "ref-dl-$b-$r" --by-reference "$w/big.egb"
    job "$b: by reference, result by reference, run $r" "ref-ex-$b-$r" --by-reference "$w/big.egb" --result-by-reference
  done
done
for r in $(seq "${PARTS_RUNS:-${RUNS:-2}}"); do
  for b in ${BUILDS:-egsolve}; do
    e="$c/$b"
    job "$b: in parts, result by reference, run $r" "parts-ex-$b-$r" "$w/big.egb" --connections "${CONNECTIONS:-16}" --result-by-reference
  done
done
rm -rf "$w"

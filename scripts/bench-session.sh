#!/usr/bin/env bash
# One device call for the CPU benchmarks that need many cores (issues 15 and 17): the
# `parse` benchmark (threads 1..16 on BRP, IEEE1394 and a generated 100 MB `.mpg`; egb
# loads; the parallel solution writer) and the `parity` benchmark (`--large`: 10^5 and 10^6
# vertices, one thread and all cores; compression on the shared parity games).
# Carried folder (git-ignored .carry/): the stripped bench executables `parse` and `parity`
# (`cargo bench -p egsolve-core --bench parse --bench parity --no-run` prints where cargo put
# them), this script and data/{energy,parity} as for scripts/phases-session.sh.
#   run(command="bash .carry/bench-session.sh > $OUT/session.log 2>&1", carry=[".carry"])
# Logs: $OUT/parse.log, $OUT/parity.log, $OUT/machine.log; $OUT/bench.jsonl holds the
# parse benchmark's records for scripts/bench-report.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"
export EGSOLVE_DATA="$c/data"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc;
  cat /proc/loadavg; lscpu | grep 'Model name'; } 2>&1 | tee "$out/machine.log"
BENCH_JSON="$out/bench.jsonl" timeout 300 "$c/parse" --threads "${THREADS:-1,2,4,8,16}" --runs 5 \
  2>&1 | tee "$out/parse.log"
timeout 240 "$c/parity" --large 2>&1 | tee "$out/parity.log"
cat /proc/loadavg >> "$out/machine.log"

#!/usr/bin/env bash
# GPU differential check and benchmark, run on the device machine from the carried folder:
#   bash .carry/gpu-check.sh [check|bench|all] [extra gpu_check args...]
# The folder holds gpu_check and egsolve (release builds: `cargo build --release -p egsolve
# -p gpu_check`), this script and data/{energy,parity} (copies of ../shared/data). Logs go to
# $OUT when set.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
mode="${1:-all}"; shift || true
out="${OUT:-/tmp}"
bin="$here/gpu_check"
echo "== machine =="; nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1; nproc
"$here/egsolve" devices 2>&1 || true
status=0
if [ "$mode" = check ] || [ "$mode" = all ]; then
  echo "== check =="
  timeout "${CHECK_TIMEOUT:-300}" "$bin" check --data "$here/data" "$@" 2>&1 | tee "$out/check.log"
  status=${PIPESTATUS[0]}
  echo "check exit status: $status"
fi
if [ "$mode" = bench ] || [ "$mode" = all ]; then
  echo "== bench =="
  timeout "${BENCH_TIMEOUT:-300}" "$bin" bench --data "$here/data" "$@" 2>&1 | tee "$out/bench.log"
  echo "bench exit status: ${PIPESTATUS[0]}"
fi
exit $status

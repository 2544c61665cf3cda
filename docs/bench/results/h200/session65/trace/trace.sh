#!/usr/bin/env bash
# A warm Hesselink (and BRP) service job traced at debug level: where the GPU side's time goes.
set -u
c="$(cd "$(dirname "$0")" && pwd)"
gunzip -c "$c/egsolve.gz" > "$c/egsolve" && chmod +x "$c/egsolve"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$OUT/logs"; cd "$c"
nproc; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
EGSOLVE_LOG=info,egsolve_core=debug,egsolve_gpu=debug SETTLE=4 GAMES="Hesselink_datasize=2_property1 BRP_datasize=2_counting" RUNS=${RUNS:-6} ./service-race.sh trace | tee $OUT/trace.txt
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs

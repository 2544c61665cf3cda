#!/usr/bin/env bash
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: ${NCU:-none}"; ls -d /usr/local/cuda* /opt/nvidia 2>/dev/null
"$c/gpu_check" rounds --lanes 1
[ -n "$NCU" ] || exit 0
for h in 1 4; do
  timeout 200 "$NCU" --kernel-name regex:lift_rounds --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section SchedulerStats \
    "$c/gpu_check" rounds --lanes $h > "$out/ncu_h$h.txt" 2>&1
  echo "ncu h=$h rc=$?"; grep -vE "^\s*$" "$out/ncu_h$h.txt" | grep -vE "^==PROF==" | cut -c1-150 | head -120
done

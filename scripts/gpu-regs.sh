#!/usr/bin/env bash
# Full rounds (10^7 and 10^8 edges, degree 4, narrow layout) with extra NVRTC register caps.
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"
NCU=$(command -v ncu)
for opt in "" "--maxrregcount=40" "--maxrregcount=64" "--maxrregcount=128"; do
  for h in 1 4 8; do
    echo "opt='$opt' h=$h 1e7: $(EGSOLVE_NVRTC_EXTRA_OPTIONS="$opt" "$c/gpu_check" rounds --lanes $h | grep 'full round' | tail -1)"
  done
  echo "opt='$opt' h=8 1e8: $(EGSOLVE_NVRTC_EXTRA_OPTIONS="$opt" "$c/gpu_check" rounds --lanes 8 --edges 100000000 | grep 'full round' | tail -1)"
  EGSOLVE_NVRTC_EXTRA_OPTIONS="$opt" timeout 100 $NCU --kernel-name regex:lift_rounds --launch-skip 1 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats "$c/gpu_check" rounds --lanes 1 > "$out/ncu_$(echo $opt | tr -dc 0-9).txt" 2>&1
  grep -E "Duration|Registers Per|Spilling Requests  |L2 Cache Throughput|DRAM Throughput|Block Limit Registers|Achieved Occupancy" "$out/ncu_$(echo $opt | tr -dc 0-9).txt" | tr -s ' ' | tr '\n' ';'; echo
done

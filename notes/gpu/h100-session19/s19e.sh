#!/usr/bin/env bash
# Session 19 call 6: the final read's Tarjan (scc::tarjan_over) under the device's components:
# the lib's device tests of the components and of the driver's evaluations.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"
export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } | tee "$out/machine.log"
timeout 400 "$c/libtests" --test-threads 1 --nocapture device_components device_lifts device_reachability > "$out/libtests.log" 2>&1
grep -E "^test |test result|fresh seed|giants|checked|panicked" "$out/libtests.log" | cut -c1-220

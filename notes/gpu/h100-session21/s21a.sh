#!/usr/bin/env bash
# Session 21 call 1: the attractor to ⊤ on the device. The lib's device tests (the new
# device_attractor_has_the_hosts_layers_where_a_gpu_is among them), then phases-session.sh
# with auto, gpu and gpu0 on every game (answers against the independent ones, auto's credits
# and player 0's moves, every JSON certified by `egsolve check`).
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"
gunzip -f "$c/egsolve.gz" "$c/libtests.gz"; chmod +x "$c/egsolve" "$c/libtests"
export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
timeout 300 "$c/libtests" --test-threads 1 --nocapture device_ freed_device_memory > "$out/device-tests.log" 2>&1
echo "device tests rc=$?"; grep -E "^test |test result" "$out/device-tests.log" | tail -14
mkdir -p "$out/phases"
BACKENDS="auto gpu gpu0" OUT="$out/phases" timeout 250 bash "$c/phases-session.sh" > "$out/phases/session.log" 2>&1
tail -2 "$out/phases/session.log"
cd "$out" && tar czf logs.tgz *.log phases && rm -rf *.log phases

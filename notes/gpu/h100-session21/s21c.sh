#!/usr/bin/env bash
# Session 21 call 3: the device attractor's test after call 2 found the one difference in
# the round where nothing moves (host top_layers 0 where nothing joined, device 1): the host
# now answers 1 there too (layer 0 alone). Three times (three fresh seeds).
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"
gunzip -f "$c/libtests.gz"; chmod +x "$c/libtests"
for i in 1 2 3; do
  timeout 150 "$c/libtests" --test-threads 1 --nocapture device_attractor >> "$out/device-tests.log" 2>&1
  echo "device attractor test rc=$?"
done
grep -E "fresh seed|attracted|panicked|test result" "$out/device-tests.log"

#!/usr/bin/env bash
# Session 13, call 3 (e1b38ee): every shared game and both 10^7-edge random games with auto
# and gpu against the independent answers (phases-session.sh), then random p70 (negative
# weights) six times with the gpu's component log: whether the device finished the
# components (done=true) or left them to the host.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"
BACKENDS="auto gpu" bash "$c/phases-session.sh" > "$out/session.log" 2>&1
"$c/egsolve" gen random --vertices 2500000 --degree 2..4 --weights=-100..60 --player1 70 --seed 11 -o /tmp/p70.mpg
for r in 1 2 3 4 5 6; do
  EGSOLVE_LOG=egsolve::solve::gpu::accel=debug,egsolve::solve::accel=debug "$c/egsolve" solve /tmp/p70.mpg --backend gpu -o /tmp/p70.json 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | cut -c28-300 | grep -E "gpu: components|least fixpoint|cycle test" | sed "s/^/run$r /"
done > "$out/p70-components.log"
tail -2 "$out/session.log"

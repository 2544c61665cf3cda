#!/usr/bin/env bash
# Session 20 call 4: the final code (HEAD: + Tarjan over a compact CSR only below an eighth of
# the graph) through phases-session.sh with auto, auto1, gpu and gpu0 on every game.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"
gunzip -f "$c/egsolve.gz"; chmod +x "$c/egsolve"
mkdir -p "$out/phases"
BACKENDS="auto auto1 gpu gpu0" OUT="$out/phases" timeout 500 bash "$c/phases-session.sh" > "$out/phases/session.log" 2>&1
tail -2 "$out/phases/session.log"
cd "$out" && tar czf logs.tgz phases && rm -rf phases

#!/usr/bin/env bash
# Session 20 call 5: the final code after the last read (HEAD: one Tarjan over members for
# the remainder and the compact path, positions_where) through phases-session.sh with auto, auto1, gpu and gpu0 on every game.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"
gunzip -f "$c/egsolve.gz"; chmod +x "$c/egsolve"
mkdir -p "$out/phases"
BACKENDS="auto auto1 gpu gpu0" OUT="$out/phases" timeout 500 bash "$c/phases-session.sh" > "$out/phases/session.log" 2>&1
tail -2 "$out/phases/session.log"
cd "$out" && tar czf logs.tgz phases && rm -rf phases

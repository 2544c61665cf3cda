#!/usr/bin/env bash
# Solves each shared parity and energy game (GAMES_DIR/*.gm.gz, *.mpg.gz) by default and with --backend gpu and
# prints `egsolve check`'s verdict on each answer. Used by the device sessions' checks
# (carried beside them).
# usage: certify-shared-games.sh EGSOLVE GAMES_DIR WORK_DIR
set -u
e=$1; games=$2; w=$3
for g in "$games"/*.gm.gz "$games"/*.mpg.gz; do
  [ -f "$g" ] || continue
  for opts in "" "--backend gpu"; do
    "$e" solve "$g" $opts -o "$w/answer.json" 2>/dev/null
    printf '%s %s: ' "$(basename "$g" .gz)" "${opts:-default}"; "$e" check "$g" "$w/answer.json" 2>&1 | tail -1
  done
done

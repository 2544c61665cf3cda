#!/usr/bin/env bash
# One device call for BENCHMARKS.md §7's native GPU parity solver (--parity-algorithm
# gpu-fixpoint): the device tests (the CPU mirror, and the device against Zielonka), Oink on
# random games of 100 priorities, then per game the GPU solver's whole process (certified by
# `egsolve check`, winners compared with --backend parity) and the loop's own figures per
# launch (EGSOLVE_LOG). Run from a carried, git-ignored folder holding a stripped release
# `egsolve`, the stripped `parity_device` test executable (cargo test --no-run), games/
# (the shared parity games) and `oink` with `libboost_iostreams.so.1.74.0`:
#   run(command="bash .carry/gpu-fixpoint-session.sh > $OUT/session.log 2>&1", carry=[".carry"])
# PARTS picks the sections (default: tests oink table launches).
set -u
PARTS=" ${PARTS:-tests oink table launches} "; part() { [[ "$PARTS" == *" $1 "* ]]; }
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"; out="${OUT:-/tmp}"
export LD_LIBRARY_PATH="$c${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
w=/dev/shm/gp; rm -rf "$w"; mkdir -p "$w"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; } 2>&1 | tee "$out/machine.log"
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
winners() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("".join(str(v["winner"]) for v in d["vertices"]))' "$1" 2>/dev/null | md5sum | cut -c1-8; }
summ() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print(s["backend"], s.get("algorithm",""), "rounds", s["rounds"], "solve_ms %.1f" % (1e3*s["solve_seconds"]), "prio", s.get("parity",{}).get("compressed_priorities"))' "$1" 2>/dev/null; }
if part tests; then
  echo "== device tests (CPU mirror + device vs Zielonka) =="
  timeout 120 "$c/parity_device" 2>&1 | tail -8
fi
"$e" gen parity --vertices 1000000 --priorities 100 --degree 4 -o "$w/r1m_p100.gm"
"$e" gen parity --vertices 100000 --priorities 100 --degree 4 -o "$w/r100k_p100.gm"
"$e" gen parity --vertices 10000 --priorities 100 --degree 4 -o "$w/r10k_p100.gm"
"$e" gen parity --vertices 100000 --priorities 100000 --degree 2 -o "$w/r100k_p100000.gm"
if part oink; then
echo "== Oink on the random games, whole process ms =="
for g in "$w"/r100k_p100.gm "$w"/r1m_p100.gm; do
  for s in "--zlk -w 1" "--tl -w 1" "--zlk -w 16" "--fpi -w 1"; do
    st=$(date +%s%N); timeout 15 "$c/oink" $s "$g" > "$w/oink.log" 2>&1; rc=$?
    echo "$(basename $g) oink $s: $(ms $st) ms rc=$rc $(grep -o 'solv[a-z]* with [0-9]* iterations\|solved in [0-9]* iterations' "$w/oink.log" | head -1) $(grep -o 'solving took [0-9.]* sec' "$w/oink.log")"
  done
done
fi
if part table; then
echo "== gpu-fixpoint: whole process ms (--timeout 8), certified, winners vs --backend parity =="
echo "game | gpu-fixpoint ms | summary | check | parity (portfolio) ms | winners agree"
for g in "$w"/r10k_p100.gm "$w"/r100k_p100.gm "$w"/r1m_p100.gm "$w"/r100k_p100000.gm $(ls -S -r "$c"/games/*.gm*); do
  name=$(basename "$g")
  rm -f "$w/gf.json" "$w/p.json"
  s=$(date +%s%N); timeout 12 "$e" solve "$g" --parity-algorithm gpu-fixpoint --timeout 8 -o "$w/gf.json" 2>"$w/err"; rc=$?; t=$(ms $s)
  [ $rc -ne 0 ] && t="$t(rc$rc:$(tail -c 150 "$w/err" | tr '\n' ' '))"
  ok=-; [ -s "$w/gf.json" ] && ok=$("$e" check "$g" "$w/gf.json" >/dev/null 2>&1 && echo yes || echo NO)
  s=$(date +%s%N); timeout 12 "$e" solve "$g" --backend parity --timeout 10 -o "$w/p.json" 2>/dev/null; tp=$(ms $s)
  agree=-; [ -s "$w/gf.json" ] && [ -s "$w/p.json" ] && agree=$([ "$(winners "$w/gf.json")" = "$(winners "$w/p.json")" ] && echo yes || echo NO)
  echo "$name | $t | $(summ "$w/gf.json") | $ok | $tp | $agree"
done
fi
if part launches; then
  echo "== the loop alone: last launch's restarts, passes and seconds (EGSOLVE_LOG) =="
  for g in "$c"/games/rngame* "$c"/games/BRP* "$c"/games/Lift*liveness* "$w"/r10k_p100.gm "$w"/r1m_p100.gm; do
    EGSOLVE_LOG=egsolve_gpu=debug timeout 12 "$e" solve "$g" --parity-algorithm gpu-fixpoint --timeout 5 -o "$w/gf.json" > "$w/dbg.log" 2>&1
    last=$(grep 'gpu-fixpoint: launch' "$w/dbg.log" | tail -1 | sed 's/\x1b\[[0-9;]*m//g' | grep -o 'restarts=.*')
    echo "$(basename "$g"): $(grep -c 'gpu-fixpoint: launch' "$w/dbg.log") launches, last: $last"
  done
fi

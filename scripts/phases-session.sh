#!/usr/bin/env bash
# One device call for issue 14 (every phase on all cores and on the GPU): for every game,
# `egsolve solve` with auto (all cores), auto --threads 1, cpu and gpu (and, in BACKENDS,
# gpu0: gpu with --gpu-components-from 0, so small games evaluate on the device too); each
# answer compared
# with the independent one (energy: credits; parity: Oink's winners) and with auto's (credits,
# and player 0's moves: the JSON records of W0), every
# JSON certified by `egsolve check`; the summary line (solve/strategy seconds, evaluations,
# per-phase seconds) of each run and the process's wall time go to $OUT/phases.log, and
# $OUT/phases.jsonl gets one JSON object per run for scripts/bench-report.
# GPU start-up: the first gpu run compiles the kernels into an empty cache
# (EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels), later ones load the cached CUBIN; the log
# gives each process's wall time beside its solve.
# Carried folder (git-ignored .carry/): stripped `egsolve` (`cargo build --release -p egsolve`),
# this script, data/{energy,parity} copied from ../shared/data, the .sol.zst solutions
# recompressed as .sol.gz (the device machine may lack zstd; egsolve reads the .gm.zst games
# itself). GAMES: a regex on file names.
#   run(command="bash .carry/phases-session.sh > $OUT/session.log 2>&1", carry=[".carry"])
set -u
c="$(cd "$(dirname "$0")" && pwd)"; d="$c/data"; e="$c/egsolve"; out="${OUT:-/tmp}"; t=/tmp/phases
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels; rm -rf "$EGSOLVE_KERNEL_CACHE"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; "$e" --version
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; } 2>&1 | tee "$out/machine.log"
BACKENDS="${BACKENDS:-auto auto1 cpu gpu}"
if [ -z "${NO_RANDOM:-}" ]; then
  "$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_2500000_p50_s5.mpg"
  "$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_2500000_p10_s3.mpg"
fi
games=$(ls "$d"/energy/*.mpg.gz "$d"/parity/*.gm.* 2>/dev/null | grep -v '\.sol\.' | grep -E "${GAMES:-.}"; ls "$t"/random_*.mpg 2>/dev/null)
# Winners (0/1 per id) of an answer: text output "ID CREDIT" (T = player 1), credits file, paritysol.
winners_text() { awk '{ print $1, ($2 == "T") ? 1 : 0 }' "$1"; }
winners_sol() { "$2" "$1" | awk 'NR > 1 { gsub(";", ""); print $1, $2 }'; }
: > "$out/phases.jsonl"
for f in $games; do
  name=$(basename "$f"); name=${name%%.mpg*}; name=${name%%.gm*}
  base="${f%.mpg.gz}"; base="${base%.gm.gz}"; base="${base%.gm.zst}"
  for b in $BACKENDS; do
    case $b in auto1) args="--backend auto --credits --threads 1";; gpu0) args="--backend gpu --gpu-components-from 0";; *) args="--backend $b --credits";; esac
    s=$(date +%s%N)
    timeout "${SOLVE_TIMEOUT:-60}" "$e" solve "$f" $args -o "$t/$b.json" 2>"$t/$b.err"; rc=$?
    wall=$(( ($(date +%s%N)-s)/1000000 ))
    summary=$(head -1 "$t/$b.json" 2>/dev/null | sed -e 's/^{"summary": //' -e 's/,$//')
    [ $rc = 0 ] || summary='null'
    timeout "${SOLVE_TIMEOUT:-60}" "$e" solve "$f" $args --output text -o "$t/$b.txt" 2>/dev/null
    ok=ref-none
    if [ -f "$base.credits.gz" ]; then cmp -s <(zcat "$base.credits.gz") "$t/$b.txt" && ok=ref-same || ok=ref-DIFFERS
    elif [ -f "$base.sol.gz" ]; then cmp -s <(winners_sol "$base.sol.gz" zcat) <(winners_text "$t/$b.txt") && ok=ref-same || ok=ref-DIFFERS
    fi
    [ "$b" = auto ] || { cmp -s "$t/auto.txt" "$t/$b.txt" && ok="$ok auto-same" || ok="$ok auto-DIFFERS"; }
    # Player 0's moves (the records of W0, one per line) must equal auto's on every backend.
    [ "$b" = auto ] || [ $rc != 0 ] || { cmp -s <(grep '"winner": 0' "$t/auto.json") <(grep '"winner": 0' "$t/$b.json") && ok="$ok p0-same" || ok="$ok p0-DIFFERS"; }
    chk=$(timeout 120 "$e" check "$f" "$t/$b.json" >/dev/null 2>"$t/check.err" && echo check-ok || echo "check-FAIL $(head -c 200 "$t/check.err")")
    echo "$name $b rc=$rc wall_ms=$wall $ok $chk"
    echo "  $summary" | cut -c1-900
    printf '{"game":"%s","backend":"%s","rc":%s,"wall_ms":%s,"answer":"%s","check":"%s","summary":%s}\n' \
      "$name" "$b" "$rc" "$wall" "$ok" "${chk%% *}" "$summary" >> "$out/phases.jsonl"
  done
  rm -f "$t"/*.json "$t"/*.txt
done 2>&1 | tee "$out/phases.log"
echo "== summary =="
echo "runs $(grep -c ' rc=' "$out/phases.log"), rc!=0 $(grep ' rc=' "$out/phases.log" | grep -vc ' rc=0 '), DIFFERS $(grep -c DIFFERS "$out/phases.log"), check-FAIL $(grep -c check-FAIL "$out/phases.log")"

#!/usr/bin/env bash
# One device call (issue 44, the allocator tried for the cold build): two builds that differ only in their global
# allocator (BUILDS, default 'egsolve-je egsolve-mi': jemalloc and mimalloc), side by side,
# each answer compared with the other's:
#   1. the service's default job on BRP and Hesselink (a warm server per build, RUNS jobs
#      each; every arena made new by a zstd frame of blank lines appended, so no result is
#      reused): solve ms and device, from the job record;
#   2. fresh CLI processes: BRP and Hesselink with default options, a random energy game of
#      10^7 edges from egb with `auto` (every core) and `gpu`: wall ms and peak RSS;
#   3. datapath-session.sh's `cli` part: the 10^9-edge egb game, `--backend gpu`, wall and
#      peak RSS, twice per build;
#   4. ref-ab-session.sh: jobs by reference at 10^7 edges.
# Run from a carried folder holding the two stripped builds, measure.sh, datapath-session.sh,
# ref-ab-session.sh, the games as games/{BRP,Hesselink}.gm.zst and games/nl{1..8}.zst
# (`printf '\n%.0s' $(seq N) | zstd -q > nlN.zst`):
#   run(command="bash .carry/alloc-ab-session.sh > $OUT/ab.log 2>&1", carry=[".carry"])
set -u
SECTIONS=" ${SECTIONS:-1 2 3 4} "; section() { [[ "$SECTIONS" == *" $1 "* ]]; }
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"
read -r -a builds <<< "${BUILDS:-egsolve-je egsolve-mi}"
ln -sf "${builds[-1]}" "$c/egsolve"   # the scripts below generate games with ./egsolve
w=/dev/shm/egs-alloc; rm -rf "$w"; mkdir -p "$w"
. "$c/measure.sh"  # ms, measure
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  cat /sys/kernel/mm/transparent_hugepage/enabled; } 2>&1

if section 1; then
echo "== 1. service, default options, warm server =="
pids=()
for i in "${!builds[@]}"; do
  "$c/${builds[$i]}" serve --bind "127.0.0.1:$((8686 + i))" --data-dir "$w/store-$i" \
    > "$out/serve-${builds[$i]}.log" 2>&1 & pids+=($!)
done
for i in "${!builds[@]}"; do
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$((8686 + i))/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
done
for g in ${GAMES:-BRP Hesselink}; do
  for r in $(seq "${RUNS:-6}"); do
    cat "$c/games/$g.gm.zst" "$c/games/nl$r.zst" > "$w/run.gm.zst"
    line="$g run $r:"
    order=("${!builds[@]}"); if (( r % 2 )); then order=($(printf '%s\n' "${order[@]}" | tac)); fi
    for i in "${order[@]}"; do
      port=$((8686 + i))
      # With --wait the job's id starts the status line written to standard error.
      id=$("$c/${builds[$i]}" submit --server "http://127.0.0.1:$port" --wait "$w/run.gm.zst" \
        -o "$w/sol-$i" 2>&1 | awk '{print $1}' | tail -1)
      j=$(curl -s "http://127.0.0.1:$port/v1/jobs/$id")
      solve=$(echo "$j" | grep -o '"solve":[0-9.]*' | head -1 | cut -d: -f2)
      dev=$(echo "$j" | grep -o '"device":"[^"]*"' | head -1 | cut -d'"' -f4)
      line+=" ${builds[$i]} ${solve:-?} ms ${dev:-?};"
    done
    cmp -s "$w/sol-0" "$w/sol-1" && line+=" same" || line+=" DIFFER"
    echo "$line"
  done
done
for p in "${pids[@]}"; do kill "$p"; wait "$p" 2>/dev/null; done
rm -rf "$w"/store-* "$w"/sol-*
fi

if section 2; then
echo "== 2. fresh CLI processes =="
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 \
  --seed 5 --to egb -o "$w/g7.egb" 2>/dev/null
for game in BRP Hesselink g7-auto g7-gpu; do
  case $game in
    g7-auto) args=("$w/g7.egb" --backend auto);;
    g7-gpu) args=("$w/g7.egb" --backend gpu);;
    *) args=("$c/games/$game.gm.zst");;
  esac
  for r in 1 2 3 4; do
    for b in "${builds[@]}"; do
      measure "$game run $r $b" "$c/$b" solve "${args[@]}" --output binary -o "$w/cli-$b.bin"
    done
    cmp -s "$w/cli-${builds[0]}.bin" "$w/cli-${builds[-1]}.bin" && echo "  same" || echo "  DIFFER"
  done
done
fi
rm -rf "$w"

if section 3; then
echo "== 3. 10^9 edges, CLI =="
PARTS=cli BUILDS="${builds[*]}" timeout 300 bash "$c/datapath-session.sh"
fi
if section 4; then
echo "== 4. by reference, 10^7 edges =="
BUILDS="${builds[*]}" RUNS="${REF_RUNS:-4}" SERVE_LOG=warn timeout 200 bash "$c/ref-ab-session.sh"
fi

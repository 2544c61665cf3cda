#!/usr/bin/env bash
# Device session (issue 43, the 10^7-edge goal ≤ 0.15 s): jobs by reference, two builds side
# by side. One warm server per build (each --import-root the work folder, its own store on
# tmpfs), then RUNS games of 10^7 edges neither has seen; each game is solved by the CLI
# (`--backend gpu`, whole process) and then sent to every server by `egsolve submit
# --by-reference --backend gpu --wait --result-format binary`, in alternating order; every
# answer is compared with the CLI's. Run from a carried folder holding the stripped builds:
#   run(command="BUILDS='egsolve-old egsolve' bash .carry/ref-ab-session.sh > $OUT/ab.log 2>&1",
#       carry=[".carry"])
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"
read -r -a builds <<< "${BUILDS:-egsolve}"
w=/dev/shm/egs-ref; rm -rf "$w"; mkdir -p "$w"
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
pids=()
for i in "${!builds[@]}"; do
  EGSOLVE_LOG="${SERVE_LOG:-egsolve_service=debug}" "$c/${builds[$i]}" serve --bind "127.0.0.1:$((8585 + i))" \
    --data-dir "$w/store-$i" --import-root "$w" > "$out/serve-${builds[$i]}.log" 2>&1 & pids+=($!)
done
for i in "${!builds[@]}"; do
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$((8585 + i))/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
done
e="$c/${builds[-1]}"
for r in $(seq 0 "${RUNS:-6}"); do
  "$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 \
    --seed $((40 + r)) --to egb -o "$w/r$r.egb" 2>/dev/null
  s=$(date +%s%N); "$e" solve "$w/r$r.egb" --backend gpu --output binary -o "$w/cli.bin" 2>/dev/null; cli=$(ms "$s")
  line="run $r: CLI ${cli} ms"
  order=("${!builds[@]}"); if (( r % 2 )); then order=($(printf '%s\n' "${order[@]}" | tac)); fi
  for i in "${order[@]}"; do
    s=$(date +%s%N)
    "$c/${builds[$i]}" submit --by-reference "$w/r$r.egb" --server "http://127.0.0.1:$((8585 + i))" \
      --backend gpu --wait --result-format binary -o "$w/ref.bin" > /dev/null 2> "$out/client-$r-$i.log"
    t=$(ms "$s")
    line+=", ${builds[$i]} ${t} ms $(cmp -s "$w/ref.bin" "$w/cli.bin" && echo same || echo DIFFERS)"
    rm -f "$w/ref.bin"
  done
  echo "$line"
  rm -f "$w/r$r.egb" "$w"/*.bin
done
for p in "${pids[@]}"; do kill "$p"; wait "$p" 2>/dev/null; done
for b in "${builds[@]}"; do
  echo "== $b: server phases"
  sed 's/\x1b\[[0-9;]*m//g' "$out/serve-$b.log" | grep -E "phases|accepted|copied|behind|read again" | grep -v healthz | tail -24
done
rm -rf "$w"

#!/usr/bin/env bash
# One device call: gpu_check check, CLI gpu (both vertex orders) vs auto (+ egsolve check) on
# every shared game and two 10^7-edge games, gpu_check bench, then full rounds with the
# gather-batch knob (LIFT_BATCH) at 1, 2, 4 and 8. Logs under $OUT.
# Run from a carried folder (git-ignored, e.g. .carry/) holding stripped release builds of
# `egsolve` and `gpu_check`, this script, and data/{energy,parity} copied from ../shared/data:
#   run(command="bash .carry/gpu-session.sh > $OUT/session.log 2>&1", carry=[".carry"])
# PARTS picks the sections (default: all four; a device call may run 10 minutes at most):
#   PARTS="check cli" bash .carry/gpu-session.sh; PARTS="bench batch" bash .carry/gpu-session.sh
set -u
PARTS=" ${PARTS:-check cli bench batch} "; part() { [[ "$PARTS" == *" $1 "* ]]; }
c="$(cd "$(dirname "$0")" && pwd)"; d="$c/data"; e="$c/egsolve"; out="${OUT:-/tmp}"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader; nproc; "$e" devices; } 2>&1 | tee "$out/machine.log"
if part check; then
echo "== gpu_check check =="
timeout "${CHECK_TIMEOUT:-180}" "$c/gpu_check" check --data "$d" --seed "${SEED:-29}" > "$out/check.log" 2>&1; echo "check rc=$?"
grep -E "FAIL|DIFF" "$out/check.log" | head -20; tail -3 "$out/check.log"
fi
if part cli; then
echo "== CLI =="
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o /tmp/big10.mpg
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o /tmp/big50.mpg
for f in "$d"/energy/*.mpg.gz "$d"/parity/*.gm.gz /tmp/big10.mpg /tmp/big50.mpg; do
  n=$(basename "$f" | cut -c1-40); line="$n"
  for b in gpu gpu-input auto; do
    case $b in gpu-input) args="--backend gpu --vertex-order input";; *) args="--backend $b";; esac
    s=$(date +%s%N); timeout "${SOLVE_TIMEOUT:-40}" "$e" solve "$f" $args --output text -o /tmp/$b.txt 2>/dev/null; rc=$?
    t=$(( ($(date +%s%N)-s)/1000000 )); line="$line | $b rc=$rc ${t}ms"
  done
  same=$(cmp -s /tmp/gpu.txt /tmp/auto.txt && echo gpu=auto || echo gpu-DIFFERS)
  same="$same $(cmp -s /tmp/gpu-input.txt /tmp/auto.txt && echo input=auto || echo input-DIFFERS)"
  timeout 60 "$e" solve "$f" --backend gpu -o /tmp/gpu.json 2>/dev/null
  chk=$(timeout 120 "$e" check "$f" /tmp/gpu.json >/dev/null 2>&1 && echo check-ok || echo check-FAIL)
  timeout 60 "$e" solve "$f" --backend gpu --vertex-order input -o /tmp/gpu.json 2>/dev/null
  chk="$chk $(timeout 120 "$e" check "$f" /tmp/gpu.json >/dev/null 2>&1 && echo input-check-ok || echo input-check-FAIL)"
  echo "$line | $same $chk"
  rm -f /tmp/gpu.txt /tmp/gpu-input.txt /tmp/auto.txt /tmp/gpu.json
done 2>&1 | tee "$out/cli.log"
fi
if part bench; then
echo "== bench =="
timeout "${BENCH_TIMEOUT:-240}" "$c/gpu_check" bench --max-edges 100000000 --cpu-limit 10 > "$out/bench.log" 2>&1; echo "bench rc=$?"
grep -vE "^\s*$" "$out/bench.log" | cut -c1-230
fi
if part batch; then
echo "== gather batches (full rounds, 10^7 edges, degree 4) =="
for b in 1 2 4 8; do for o in "" --input-order; do for h in 1 4; do
  EGSOLVE_NVRTC_EXTRA_OPTIONS="-DLIFT_BATCH=$b" timeout 60 "$c/gpu_check" rounds --edges 10000000 --lanes $h $o 2>&1 | tail -2 | sed "s/^/batch=$b order=${o:-players-first} /"
done; done; done | tee "$out/batch.log"
fi
echo "== summary =="; tail -1 "$out/check.log" 2>/dev/null; echo "check rows: pass $(grep -cE '  pass' "$out/check.log") FAIL $(grep -cE '  FAIL' "$out/check.log") skip $(grep -cE '  skip' "$out/check.log")"; if [ -f "$out/cli.log" ]; then grep -c "gpu=auto" "$out/cli.log"; grep -c "input=auto" "$out/cli.log"; grep -c " check-ok" "$out/cli.log"; grep -c "input-check-ok" "$out/cli.log"; fi

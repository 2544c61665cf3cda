#!/usr/bin/env bash
# One device call: gpu_check check, CLI gpu (both vertex orders) vs auto (+ egsolve check) on
# every shared game and two 10^7-edge games, gpu_check bench, then full rounds of kernel
# variants (LIFT_EARLY_EXIT, LIFT_BATCH, LIFT_MIN_BLOCKS; VARIANTS overrides the list); sweep:
# the accelerated driver on the device against cpu auto (gpu_check sweep). Logs under $OUT.
# Run from a carried folder (git-ignored, e.g. .carry/) holding stripped release builds of
# `egsolve` and `gpu_check` (`cargo build --release -p egsolve -p gpu_check`; gpu_check is
# the workspace package tools/gpu_check), this script, and data/{energy,parity} copied from ../shared/data:
#   run(command="bash .carry/gpu-session.sh > $OUT/session.log 2>&1", carry=[".carry"])
# PARTS picks the sections (default: check cli bench variants; sweep on request; a device call may run 10 minutes at most):
#   PARTS="check cli" bash .carry/gpu-session.sh; PARTS="bench variants" bash .carry/gpu-session.sh
set -u
PARTS=" ${PARTS:-check cli bench variants} "; part() { [[ "$PARTS" == *" $1 "* ]]; }
c="$(cd "$(dirname "$0")" && pwd)"; d="$c/data"; e="$c/egsolve"; out="${OUT:-/tmp}"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader; nproc; "$e" devices
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; } 2>&1 | tee "$out/machine.log"
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
  for b in gpu gpu-p0first auto; do
    case $b in gpu-p0first) args="--backend gpu --vertex-order players-first";; *) args="--backend $b --credits";; esac
    s=$(date +%s%N); timeout "${SOLVE_TIMEOUT:-40}" "$e" solve "$f" $args --output text -o /tmp/$b.txt 2>/dev/null; rc=$?
    t=$(( ($(date +%s%N)-s)/1000000 )); line="$line | $b rc=$rc ${t}ms"
  done
  same=$(cmp -s /tmp/gpu.txt /tmp/auto.txt && echo gpu=auto || echo gpu-DIFFERS)
  same="$same $(cmp -s /tmp/gpu-p0first.txt /tmp/auto.txt && echo p0first=auto || echo p0first-DIFFERS)"
  timeout 60 "$e" solve "$f" --backend gpu -o /tmp/gpu.json 2>/dev/null
  chk=$(timeout 120 "$e" check "$f" /tmp/gpu.json >/dev/null 2>&1 && echo check-ok || echo check-FAIL)
  timeout 60 "$e" solve "$f" --backend gpu --vertex-order players-first -o /tmp/gpu.json 2>/dev/null
  chk="$chk $(timeout 120 "$e" check "$f" /tmp/gpu.json >/dev/null 2>&1 && echo p0first-check-ok || echo p0first-check-FAIL)"
  echo "$line | $same $chk"
  rm -f /tmp/gpu.txt /tmp/gpu-p0first.txt /tmp/auto.txt /tmp/gpu.json
done 2>&1 | tee "$out/cli.log"
fi
if part bench; then
echo "== bench =="
timeout "${BENCH_TIMEOUT:-240}" "$c/gpu_check" bench --max-edges 100000000 --cpu-limit 10 > "$out/bench.log" 2>&1; echo "bench rc=$?"
grep -vE "^\s*$" "$out/bench.log" | cut -c1-230
fi
if part sweep; then
echo "== gpu_check sweep: the accelerated driver (--backend gpu) against cpu auto, warm process =="
timeout "${SWEEP_TIMEOUT:-200}" "$c/gpu_check" sweep --data "$d" --edges 10000000 > "$out/sweep.log" 2>&1; echo "sweep rc=$?"
grep -E "auto 1t|auto all|gpu 25%|gpu plain" "$out/sweep.log" | cut -c1-150
fi
if part variants; then
echo "== kernel variants: full rounds of 10^7-edge games, fastest row per layout and frontier form =="
# One process per build (EGSOLVE_NVRTC_EXTRA_OPTIONS): gpu_check full prints every lane count;
# the awk keeps the fastest h of each (layout, order, form). LIFT_EARLY_EXIT=0 reads every
# successor: the honest row for "% of copy bandwidth". VARIANTS: options separated by ';'.
IFS=';' read -r -a opts <<< "${VARIANTS:-;-DLIFT_EARLY_EXIT=0;-DLIFT_MIN_BLOCKS=4;-DLIFT_BATCH=2;-DLIFT_BATCH=4;-DLIFT_BATCH=4 -DLIFT_MIN_BLOCKS=2;-DLIFT_EARLY_EXIT=0 -DLIFT_BATCH=4 -DLIFT_MIN_BLOCKS=2;-DLIFT_EARLY_EXIT=0 -DLIFT_MIN_BLOCKS=3}"
for deg in 4 16; do for opt in "${opts[@]}"; do
  echo "### degree $deg options '$opt'" >> "$out/variants.log"
  EGSOLVE_NVRTC_EXTRA_OPTIONS="$opt" timeout 60 "$c/gpu_check" full --edges 10000000 --degree $deg 2>&1 | tee -a "$out/variants.log" |
  awk -v tag="deg=$deg '$opt'" '/^full round/ { key=$3" "$4" "$5; for (i=1;i<=NF;i++) if ($(i)=="ms") ms=$(i-1); pct=$(NF-3);
      h=$0; sub(/.*h=/,"",h); sub(/ .*/,"",h); if (!(key in best) || ms+0 < best[key]+0) { best[key]=ms; bh[key]=h; bp[key]=pct } }
    END { for (k in best) printf "%-44s %-22s h=%-2s %8.3f ms %6s\n", tag, k, bh[k], best[k], bp[k] }' | sort
done; done
fi
echo "== summary =="
if [ -f "$out/check.log" ]; then tail -1 "$out/check.log"; echo "check rows: pass $(grep -cE '  pass' "$out/check.log") FAIL $(grep -cE '  FAIL' "$out/check.log") skip $(grep -cE '  skip' "$out/check.log")"; fi
if [ -f "$out/cli.log" ]; then echo "cli: gpu=auto $(grep -c "gpu=auto" "$out/cli.log"), p0first=auto $(grep -c "p0first=auto" "$out/cli.log"), check-ok $(grep -c " check-ok" "$out/cli.log"), p0first-check-ok $(grep -c "p0first-check-ok" "$out/cli.log") of $(wc -l < "$out/cli.log")"; fi

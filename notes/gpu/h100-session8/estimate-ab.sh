#!/usr/bin/env bash
# Session 8 device call: auto with the first-phase estimate at threads^0.25 (egsolve) against
# sqrt(threads) (egsolve-sqrt, the same tree otherwise), and --backend gpu with staging buffers
# only for large copies (allocated by the warm-up); 3 fresh processes each; every answer
# compared with the independent one and between binaries, auto/gpu JSON certified by check.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; d="$c/data"; out="${OUT:-/tmp}"; t=/tmp/s8; mkdir -p "$t"
export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels; rm -rf "$EGSOLVE_KERNEL_CACHE"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; "$c/egsolve" --version; } 2>&1 | tee "$out/machine.log"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o "$t/random_2500000_p50_s5.mpg"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_2500000_p10_s3.mpg"
games=$(ls "$d"/energy/*.mpg.gz "$d"/parity/*.gm.* | grep -v '\.sol\.'; ls "$t"/random_*.mpg)
winners_text() { awk '{ print $1, ($2 == "T") ? 1 : 0 }' "$1"; }
winners_sol() { zcat "$1" | awk 'NR > 1 { gsub(";", ""); print $1, $2 }'; }
summary() { python3 -c '
import json,sys
try: s=json.loads(open(sys.argv[1]).readline().rstrip().rstrip(",")[len("{\"summary\": "):])
except Exception as e: print("no-summary"); sys.exit()
p=s["phases"]; g=lambda k: "%.3f"%p.get(k,0)
print("solve=%.3f strat=%.3f evals=%d lifting=%s evaluation=%s components=%s ctx=%s kern=%s upload=%s download=%s" % (s["solve_seconds"], s["strategy_seconds"], s["evaluations"], g("lifting"), g("evaluation"), g("components"), g("gpu_context"), g("gpu_kernels"), g("gpu_upload"), g("gpu_download")))' "$1"; }
for f in $games; do
  name=$(basename "$f"); name=${name%%.mpg*}; name=${name%%.gm*}
  base="${f%.mpg.gz}"; base="${base%.gm.gz}"; base="${base%.gm.zst}"
  for v in "egsolve-sqrt auto" "egsolve auto" "egsolve gpu"; do
    set -- $v; bin=$1; b=$2; tag="$bin:$b"
    for r in 1 2 3; do
      rm -f "$t/$r.json"; s=$(date +%s%N)
      timeout 60 "$c/$bin" solve "$f" --backend $b -o "$t/$r.json" 2>"$t/err"; rc=$?
      wall=$(( ($(date +%s%N)-s)/1000000 ))
      echo "$name $tag run=$r rc=$rc wall_ms=$wall $(summary "$t/$r.json")"
      [ $rc = 0 ] || tail -3 "$t/err"
    done
    rm -f "$t/$bin.$b.txt"; timeout 60 "$c/$bin" solve "$f" --backend $b --output text -o "$t/$bin.$b.txt" 2>/dev/null
    ok=ref-none
    if [ -f "$base.credits.gz" ]; then cmp -s <(zcat "$base.credits.gz") "$t/$bin.$b.txt" && ok=ref-same || ok=ref-DIFFERS
    elif [ -f "$base.sol.gz" ]; then cmp -s <(winners_sol "$base.sol.gz") <(winners_text "$t/$bin.$b.txt") && ok=ref-same || ok=ref-DIFFERS
    fi
    [ "$tag" = "egsolve-sqrt:auto" ] || { cmp -s "$t/egsolve-sqrt.auto.txt" "$t/$bin.$b.txt" && ok="$ok sqrt-auto-same" || ok="$ok sqrt-auto-DIFFERS"; }
    chk=$(timeout 120 "$c/egsolve" check "$f" "$t/3.json" >/dev/null 2>"$t/check.err" && echo check-ok || echo "check-FAIL $(head -c 200 "$t/check.err")")
    echo "$name $tag answer: $ok $chk"
  done
  rm -f "$t"/*.json "$t"/*.txt
done 2>&1 | tee "$out/s8.log"
# The staging allocation, timed by the debug log, on BRP (large) and a tiny game.
for f in "$d/parity/BRP_datasize=2_counting.gm.zst" "$d/parity/Buffer_ABP_(datasize=4)eq=branching-bisim.gm.gz"; do
  EGSOLVE_LOG=debug "$c/egsolve" solve "$f" --backend gpu -o /tmp/s8/x.json 2>&1 | grep -Ei "staging|parsed|solved|upload" | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-220
done 2>&1 | tee "$out/staging.log"
echo "== summary: runs $(grep -c ' rc=' "$out/s8.log"), rc!=0 $(grep ' rc=' "$out/s8.log" | grep -vc ' rc=0 '), DIFFERS $(grep -c DIFFERS "$out/s8.log"), check-FAIL $(grep -c check-FAIL "$out/s8.log")"

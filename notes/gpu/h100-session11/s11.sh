#!/usr/bin/env bash
# Session 11, one device call: run(command="bash .carry/s11.sh", carry=[".carry"]).
# .carry/: stripped egsolve (new), egsolve-old (b948126), gpu_check (new), data/.
# ab.log: old and new `auto` on 16 threads, interleaved, RUNS runs per game: solve, cycle test,
# components, strategies; credits of new compared with old's; new certified by `check`.
# warm.log: gpu_check warm (new) on the games of issue 14's goals, unless NO_WARM is set.
# The three calls: run 1 as is; run 2 RUNS=5 GAMES='p50|energy|Onebit|Hesselink';
# run 3 RUNS=5 GAMES='p50|energy|Onebit' NO_WARM=1 (run 2's warm.log also left random p10 out).
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"
export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
mkdir -p /tmp/g
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/machine.log"; nproc >> "$out/machine.log"
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o /tmp/g/random_p50_s5.mpg
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o /tmp/g/random_p10_s3.mpg
games=$(ls /tmp/g/random_p50_s5.mpg /tmp/g/random_p10_s3.mpg "$c"/data/parity/*.gm.* "$c"/data/energy/*.mpg.gz | grep -E "${GAMES:-.}")
summ() { python3 -c "
import json,sys
d=json.load(open(sys.argv[1]));s=d['summary'];p=s['phases']
print('solve %.4f strategies %.4f cycle_test %.4f components %.4f graph %.4f attractor %.4f lifting %.4f evals %d' % (s['solve_seconds'],s['strategy_seconds'],p['cycle_test'],p['components'],p['graph'],p['attractor'],p['lifting'],s['evaluations']))" "$1"; }
same() { python3 -c "
import json,sys
a=[v['credit'] for v in json.load(open(sys.argv[1]))['vertices']];b=[v['credit'] for v in json.load(open(sys.argv[2]))['vertices']]
print('credits-same' if a==b else 'credits-DIFFER')" "$1" "$2"; }
for g in $games; do
  name=$(basename "$g")
  for r in $(seq "${RUNS:-3}"); do
    for b in old new; do
      bin="$c/egsolve"; [ $b = old ] && bin="$c/egsolve-old"
      EGSOLVE_LOG=egsolve::solve::accel::cycles=debug timeout 60 "$bin" solve "$g" --threads 16 -o /tmp/$b.json 2>>"$out/debug-$b.log"
      echo "$name run $r $b rc=$? $(summ /tmp/$b.json)" >> "$out/ab.log"
    done
    echo "$name run $r $(same /tmp/old.json /tmp/new.json) $(timeout 120 "$c/egsolve" check "$g" /tmp/new.json >/dev/null 2>&1 && echo check-ok || echo check-FAIL)" >> "$out/ab.log"
  done
done
[ -n "${NO_WARM:-}" ] || timeout 200 "$c/gpu_check" warm --runs 4 "$c/data/parity/BRP_datasize=2_counting.gm.zst" \
  "$c/data/parity/Hesselink_datasize=2_property1.gm.zst" "$c"/data/energy/IEEE*.mpg.gz \
  /tmp/g/random_p50_s5.mpg /tmp/g/random_p10_s3.mpg > "$out/warm.log" 2>&1
echo "done $(date)" >> "$out/ab.log"

set -u
old=/tmp/headtarget/release/egsolve; new=target/release/egsolve; t=/tmp/tc
secs() { python3 -c "import json,sys; s=json.loads(open(sys.argv[1]).readline()[len('{\"summary\": '):].rstrip().rstrip(','));print(s['solve_seconds'], s['strategy_seconds'])" "$1"; }
echo "# rerun after the per-vertex predecessor checks became debug-only; load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
echo "## 10^6-vertex game: binary threads solve strategies"
for r in 1 2 3 4 5; do for b in old new; do for th in 1 2; do
  bin=$old; [ $b = new ] && bin=$new
  "$bin" solve $t/r1m.mpg --threads $th -o $t/o.json 2>/dev/null && echo "$b $th $(secs $t/o.json)"
done; done; done
echo "## shared games, one thread: game binary solve strategies"
for f in "/work/shared/data/parity/ABP_CABP_(datasize=2)eq=branching-bisim.gm.gz" "/work/shared/data/parity/ABP_CABP_(datasize=2)eq=weak-bisim.gm.gz" "/work/shared/data/parity/Lift_(Incorrect)_nlifts=3_liveness_1_1.gm.gz" /work/shared/data/parity/SWP_datasize=2_windowsize=3_nodeadlock.gm.gz; do
  n=$(basename "$f" | cut -c1-40)
  for r in 1 2 3 4 5 6; do for b in old new; do
    bin=$old; [ $b = new ] && bin=$new
    "$bin" solve "$f" --threads 1 -o $t/o.json 2>/dev/null && echo "$n $b $(secs $t/o.json)"
  done; done
done
echo "# load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"

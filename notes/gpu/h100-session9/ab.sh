#!/bin/bash
# Interleaved A/B on one lease: 12653c6 against ad8a394 (trim counts from each member's own lists,
# σ1 twins kept on both sides of the graph), random p50 and Hesselink, 16 cores, 4 rounds.
c="$(cd "$(dirname "$0")" && pwd)"; t=/tmp/ab; mkdir -p $t
nproc
$c/egsolve-ad8a394 gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 50 --seed 5 -o $t/p50.mpg
for r in 1 2 3 4; do for g in $t/p50.mpg $c/Hesselink_datasize=2_property1.gm.zst; do for b in 12653c6 ad8a394; do
  $c/egsolve-$b solve $g -o $t/$b.json 2>/dev/null
  python3 -c "
import json;s=json.load(open('$t/$b.json'))['summary'];p=s['phases']
print('$(basename $g | cut -c1-9)', '$b', 'solve %.3f'%s['solve_seconds'], 'strat %.3f'%s['strategy_seconds'], ' '.join('%s %.3f'%(k,p[k]) for k in ('lifting','graph','components','cycle_test','strategy1')))"
done; cmp -s <(python3 -c "import json;print([v['credit'] for v in json.load(open('$t/12653c6.json'))['vertices']])") <(python3 -c "import json;print([v['credit'] for v in json.load(open('$t/ad8a394.json'))['vertices']])") && echo credits-same || echo CREDITS-DIFFER; done; done

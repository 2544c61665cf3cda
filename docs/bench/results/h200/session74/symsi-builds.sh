#!/usr/bin/env bash
# One-off: counter-symsi 1000 on the H200 host, four builds pairwise (session 74).
set -u
c="$(cd "$(dirname "$0")" && pwd)"; cd "$c"
for b in lazy2 head fhead fold; do gunzip -c egsolve-$b.gz > /tmp/egsolve-$b && chmod +x /tmp/egsolve-$b; done
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
g=/dev/shm/ab; mkdir -p $g
/tmp/egsolve-head gen family counter-symsi --n 1000 > $g/symsi.gm
/tmp/egsolve-head gen family counter-core --n 20000 > $g/cc.gm
cases=("symsi default=$g/symsi.gm" "symsi t2=$g/symsi.gm,--threads,2" "symsi cpu-parity=$g/symsi.gm,--backend,parity"
  "symsi rtl t1=$g/symsi.gm,--threads,1,--parity-algorithm,recursive-tangle-learning"
  "symsi tl t1=$g/symsi.gm,--threads,1,--parity-algorithm,tangle-learning"
  "cc20000 default=$g/cc.gm" "cc20000 rtl t1=$g/cc.gm,--threads,1,--parity-algorithm,recursive-tangle-learning")
echo "== lazy2 (base) vs head (new), incremental builds"; python3 binary-ab.py /tmp/egsolve-lazy2 /tmp/egsolve-head ${RUNS:-9} "${cases[@]}"
echo "== fold (base, 92f7f62's induced.rs) vs fhead (new), fresh non-incremental builds"; python3 binary-ab.py /tmp/egsolve-fold /tmp/egsolve-fhead ${RUNS:-9} "${cases[@]}"
echo "== lazy2 (base) vs fhead (new)"; python3 binary-ab.py /tmp/egsolve-lazy2 /tmp/egsolve-fhead ${RUNS:-9} "symsi default=$g/symsi.gm" "symsi rtl t1=$g/symsi.gm,--threads,1,--parity-algorithm,recursive-tangle-learning"
for b in lazy2 fhead; do for i in 1 2 3; do EGSOLVE_LOG=egsolve_core::solve::parity=debug,egsolve=info NO_COLOR=1 /tmp/egsolve-$b solve $g/symsi.gm -o /dev/null 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | grep -E 'portfolio|solved|race|answer' | cut -c1-300 | sed "s/^/$b $i: /"; done; done

#!/usr/bin/env bash
# One-off (session 74): counter-core 20000 and counter-symsi 1000 on the H200 host, the two
# fresh non-incremental builds (HEAD, and HEAD with 92f7f62's induced.rs), every run printed.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; cd "$c"
for b in fhead fold; do gunzip -c egsolve-$b.gz > /tmp/egsolve-$b && chmod +x /tmp/egsolve-$b; done
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
g=/dev/shm/ab; mkdir -p $g
/tmp/egsolve-fhead gen family counter-symsi --n 1000 > $g/symsi.gm
/tmp/egsolve-fhead gen family counter-core --n 20000 > $g/cc.gm
nproc; uptime
python3 binary-ab.py /tmp/egsolve-fold /tmp/egsolve-fhead ${RUNS:-15} "cc20000 default=$g/cc.gm" \
  "cc20000 t2=$g/cc.gm,--threads,2" "cc20000 rtl t1=$g/cc.gm,--threads,1,--parity-algorithm,recursive-tangle-learning" \
  "symsi default=$g/symsi.gm" "symsi rtl t1=$g/symsi.gm,--threads,1,--parity-algorithm,recursive-tangle-learning"

#!/usr/bin/env bash
# 10^7 edges: service POST -> binary result with --backend gpu from gzip text (no zstd on the host).
set -u
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"; w=/dev/shm/egs; rm -rf $w; mkdir -p $w
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o $w/g7.mpg
python3 -c "import gzip,sys; open(sys.argv[2],'wb').write(gzip.compress(open(sys.argv[1],'rb').read(), 1))" $w/g7.mpg $w/g7.mpg.gz
"$e" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 --to egb -o $w/g7.egb
ls -l $w
"$e" solve $w/g7.egb --backend auto --output binary -o $w/cpu.bin 2>/dev/null
"$e" serve --bind 127.0.0.1:8181 --data-dir $w/store --cpu-small-edges 0 --sync-commits false > $OUT/serve.log 2>&1 & srv=$!
for _ in $(seq 100); do curl -sf http://127.0.0.1:8181/healthz >/dev/null 2>&1 && break; sleep 0.1; done
for f in g7.mpg.gz g7.egb g7.mpg.gz g7.egb g7.mpg.gz g7.egb g7.mpg.gz g7.egb; do
  s=$(date +%s%N); "$e" submit $w/$f --server http://127.0.0.1:8181 --backend gpu --wait --result-format binary -o $w/svc.bin 2>/dev/null; rc=$?; t=$(ms $s)
  echo "$f service POST->binary result ${t} ms rc=$rc $(cmp -s $w/svc.bin $w/cpu.bin && echo same-as-cpu || echo DIFFERS)"
done
curl -s http://127.0.0.1:8181/metrics | grep -E "^egsolve_phase_duration_seconds_(sum|count)" > $OUT/metrics.log
kill $srv

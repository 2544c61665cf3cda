#!/bin/bash
# Tries the IEEE1394 --backend gpu hang seen on one earlier lease: fresh processes, debug log.
C=$PWD/.carry; cd /tmp
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv
I=$C/data/IEEE1394nparties=2_datasize=2_headersize=2_acksize=2_property4.mpg.gz
for i in 1 2 3 4 5 6 7 8; do
  s=$(date +%s.%N)
  EGSOLVE_LOG=debug timeout 30 $C/egsolve solve $I --backend gpu -o /tmp/ieee.$i.json > $OUT/ieee-gpu.$i.log 2>&1
  rc=$?; e=$(date +%s.%N)
  echo "ieee gpu run $i rc=$rc wall=$(echo "$e - $s" | bc)"
  [ $rc -ne 0 ] && tail -5 $OUT/ieee-gpu.$i.log
done
timeout 60 $C/egsolve solve $I --backend auto -o /tmp/ieee.auto.json; echo "auto rc=$?"
python3 - <<'P'
import json
a=json.load(open('/tmp/ieee.auto.json'))
for i in range(1,9):
    try: g=json.load(open(f'/tmp/ieee.{i}.json'))
    except Exception as e: print(i,'no output',e); continue
    same = [v.get('credit') for v in g['vertices']] == [v.get('credit') for v in a['vertices']] if 'vertices' in g else g.get('credits')==a.get('credits')
    print(i, 'solve', round(g['summary']['solve_seconds'],3), 'same as auto', same)
P

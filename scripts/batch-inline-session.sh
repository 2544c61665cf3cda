#!/usr/bin/env bash
# Device session (issue 43 part 5): the 285 SYNTCOMP games of Oink's examples/ as one batch
# through the service, with the batch's small members solved while it is received (the
# default, `--batch-inline-ms 50`; and 20) and with every member queued (`--batch-inline-ms 0`),
# beside Oink `--tl -w 1` 16 at a time, in the same run (the order of the two ways
# alternates between runs). A fresh store for each; every way's winners compared with
# Oink's. Run from a folder holding egsolve, oink (with libboost_iostreams.so.1.74.0) and
# syntcomp.tgz (`tar -czf syntcomp.tgz examples` in an Oink checkout). Log:
# docs/bench/results/service/syntcomp-batch.md.
c="$(cd "$(dirname "$0")" && pwd)"
export LD_LIBRARY_PATH="$c"
E="$c/egsolve"; O="$c/oink"; RUNS="${RUNS:-5}"
mkdir -p /tmp/sc && tar -xzf "$c/syntcomp.tgz" -C /tmp/sc
G=/tmp/sc/examples
echo "$(ls $G/*.pg | wc -l) games, $(nproc) cores, $(cat /proc/loadavg)"
now() { date +%s%N; }
ms() { echo $(( ($(now) - $1) / 1000000 )); }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a/b}'; }
mkdir -p /tmp/oinksol
ls $G/*.pg | xargs -P16 -I{} sh -c 'n=$(basename "{}" .pg); "'"$O"'" -w 1 --tl "{}" /tmp/oinksol/$n.sol >/dev/null 2>&1'
(cd $G && tar -cf /tmp/sc.tar *.pg)
# A new store directory per server, none deleted during the runs: when each server's store
# was deleted before the next started, every run was slower than the one before (inline
# solve 30 → 212 ms over 5 runs; the H200 host's disk is ext4 mounted with `discard`).
STORES=0
serve() {
  STORES=$((STORES + 1)); mkdir -p /tmp/stores/$STORES
  EGSOLVE_LOG=egsolve_service::batch=debug "$E" serve --bind 127.0.0.1:0 --data-dir /tmp/stores/$STORES "$@" > /tmp/serve.out 2>/tmp/serve.err &
  SPID=$!
  for i in $(seq 100); do grep -q "listening on" /tmp/serve.out && break; sleep 0.05; done
  export EGSOLVE_SERVER=$(awk '/listening on/ {print $NF}' /tmp/serve.out)
  "$E" submit --wait -o /dev/null "$G/$(ls $G | head -1)" >/dev/null 2>&1  # warm: first job
}
stop() { kill $SPID; wait $SPID 2>/dev/null; }
wrong() {
  local w=0 f n
  for f in $G/*.pg; do
    n=$(basename "$f" .pg)
    cmp -s <(awk 'NR > 1 { gsub(";", ""); print $1, $2 }' "$1/$n.pg.sol" 2>/dev/null | sort -n) \
           <(awk '!/^paritysol/ { gsub(";", ""); print $1, $2 }' /tmp/oinksol/$n.sol | sort -n) || w=$((w+1))
  done
  echo $w
}
# One way: the batch by `egsolve submit`, then by curl (POST, then POST + results).
way() {
  local name=$1; shift
  serve "$@"
  rm -rf /tmp/res; local t=$(now)
  "$E" submit --wait --result-format paritysol -o /tmp/res $G/*.pg > /tmp/lines 2>/tmp/batch.err
  local rc=$? batch=$(ms $t) ok=$(grep -c " succeeded " /tmp/lines)
  local phases=$(sed 's/\x1b\[[0-9;]*m//g' /tmp/serve.err | grep -oE '(prepare_ms|receive_and_unpack_ms|inline ms).*(new_files|record_ms|slowest_ms)=[0-9.]*' | tail -3 | tr '\n' ' ')
  stop
  serve "$@"
  t=$(now)
  curl -s -X POST --data-binary @/tmp/sc.tar -H 'Content-Type: application/x-tar' "$EGSOLVE_SERVER/v1/batches" > /tmp/r.json
  local post=$(ms $t) B=$(python3 -c "import json; print(json.load(open('/tmp/r.json'))['id'])")
  curl -s "$EGSOLVE_SERVER/v1/batches/$B/results?format=paritysol" -o /tmp/res.tar
  local curlall=$(ms $t)
  local answered=$(python3 -c "import json; print(sum(j.get('state') == 'succeeded' for j in json.load(open('/tmp/r.json'))['jobs']))")
  stop
  echo "  $name: submit --wait ${batch} ms = $(ratio $batch $oink)× Oink (rc $rc, $ok succeeded, $(wrong /tmp/res) differ from Oink; server: $phases); curl POST ${post} ms ($answered answered in the POST), POST + results ${curlall} ms = $(ratio $curlall $oink)×"
}
for r in $(seq $RUNS); do
  t=$(now); ls $G/*.pg | xargs -P16 -I{} "$O" -w 1 --tl {} >/dev/null 2>&1; oink=$(ms $t)
  echo "run $r: Oink --tl 16 at a time ${oink} ms"
  if [ $((r % 2)) = 1 ]; then
    way inline-50ms; way queued --batch-inline-ms 0; way inline-20ms --batch-inline-ms 20
  else
    way inline-20ms --batch-inline-ms 20; way queued --batch-inline-ms 0; way inline-50ms
  fi
done
tail -3 /tmp/batch.err
rm -rf /tmp/stores

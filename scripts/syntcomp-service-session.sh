#!/usr/bin/env bash
# Device session: the 285 SYNTCOMP games of Oink's examples/ through the service, a fresh
# store per run (no answer reused), each way beside Oink `--tl -w 1` 16 at a time in the
# same run; every way's answers compared with Oink's:
#  - batch: `egsolve submit --wait -o DIR FILE…` (files of up to 64 MiB in all go as one
#    POST /v1/batches; the results come back in one stream), and the same with curl, timing
#    the POST and the results stream apart;
#  - one request per file: the same command with --no-batch (16 in flight, reused
#    connections), and 16 concurrent single `egsolve submit --wait` processes;
#  - the batch again on the same server (every answer reused): the service's own cost.
# Run from a folder holding egsolve, oink (with libboost_iostreams.so.1.74.0) and
# syntcomp.tgz (`tar -czf syntcomp.tgz examples` in an Oink checkout): copy this script and
# syntcomp-common.sh there (device runs carry them). Log: docs/bench/results/service/syntcomp-batch.md.
c="$(cd "$(dirname "$0")" && pwd)"
. "$c/syntcomp-common.sh"
for r in 1 2 3 4 5; do
  t=$(now); ls $G/*.pg | xargs -P16 -I{} "$O" -w 1 --tl {} >/dev/null 2>&1; oink=$(ms $t)
  serve
  rm -rf /tmp/res; t=$(now)
  "$E" submit --wait --result-format paritysol -o /tmp/res $G/*.pg > /tmp/lines 2>/tmp/batch.err
  rc=$?; batch=$(ms $t); ok=$(grep -c " succeeded " /tmp/lines)
  rm -rf /tmp/again; t=$(now)
  "$E" submit --wait --result-format paritysol -o /tmp/again $G/*.pg > /dev/null 2>&1
  again=$(ms $t)
  stop
  serve
  t=$(now)
  curl -s -X POST --data-binary @/tmp/sc.tar -H 'Content-Type: application/x-tar' "$EGSOLVE_SERVER/v1/batches" > /tmp/r.json
  post=$(ms $t); B=$(python3 -c "import json; print(json.load(open('/tmp/r.json'))['id'])")
  curl -s "$EGSOLVE_SERVER/v1/batches/$B/results?format=paritysol" -o /tmp/res.tar
  curlall=$(ms $t)
  stop
  serve
  rm -rf /tmp/res1; t=$(now)
  "$E" submit --no-batch --wait --in-flight 16 --result-format paritysol -o /tmp/res1 $G/*.pg > /dev/null 2>&1
  each=$(ms $t)
  stop
  serve
  rm -rf /tmp/res2; mkdir -p /tmp/res2; t=$(now)
  ls $G/*.pg | xargs -P16 -I{} sh -c '"'"$E"'" submit --wait --result-format paritysol -o /tmp/res2/$(basename "{}").sol "{}" >/dev/null 2>&1'
  single=$(ms $t)
  stop
  echo "run $r: Oink --tl 16 at a time ${oink} ms; batch ${batch} ms = $(ratio $batch $oink)× Oink (rc $rc, $ok succeeded, $(wrong /tmp/res) differ from Oink); curl POST ${post} ms, POST + results ${curlall} ms = $(ratio $curlall $oink)×; batch again, all reused ${again} ms; one request each ${each} ms = $(ratio $each $oink)× ($(wrong /tmp/res1) differ); 16 single submits ${single} ms = $(ratio $single $oink)×"
done
tail -3 /tmp/batch.err

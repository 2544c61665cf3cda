#!/usr/bin/env bash
# Device session (issue 43 part 5): the 285 SYNTCOMP games of Oink's examples/ as one batch
# through the service, with the batch's small members solved while it is received (the
# default, `--batch-inline-ms 20`; and 50) and with every member queued (`--batch-inline-ms 0`),
# beside Oink `--tl -w 1` 16 at a time, in the same run (the order of the ways alternates
# between runs). A fresh store for each; every way's winners compared with Oink's. Run from
# a folder holding egsolve, oink (with libboost_iostreams.so.1.74.0), syntcomp.tgz (`tar
# -czf syntcomp.tgz examples` in an Oink checkout) and syntcomp-common.sh. Log:
# docs/bench/results/service/syntcomp-batch.md.
c="$(cd "$(dirname "$0")" && pwd)"
. "$c/syntcomp-common.sh"
RUNS="${RUNS:-5}"
export SERVE_LOG=egsolve_service::batch=debug
# One way: the batch by `egsolve submit`, then by curl (POST, then POST + results).
way() {
  local name=$1; shift
  serve "$@"
  rm -rf /tmp/res; local t=$(now)
  "$E" submit --wait --result-format paritysol -o /tmp/res $G/*.pg > /tmp/lines 2>/tmp/batch.err
  local rc=$? batch=$(ms $t) ok=$(grep -c " succeeded " /tmp/lines)
  local phases=$(sed 's/\x1b\[[0-9;]*m//g' /tmp/serve.err | grep -oE '(place_ms|receive_store_and_solve_ms).*(new_files|record_ms)=[0-9.]*|answered=[0-9]+' | tail -3 | tr '\n' ' ')
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
    way inline-20ms; way queued --batch-inline-ms 0; way inline-50ms --batch-inline-ms 50
  else
    way inline-50ms --batch-inline-ms 50; way queued --batch-inline-ms 0; way inline-20ms
  fi
done
tail -3 /tmp/batch.err

#!/usr/bin/env bash
# Device session (issue 43 part 5): the 285 SYNTCOMP games of Oink's examples/ as one batch
# by `egsolve submit --wait --result-format paritysol -o DIR`, default server options, for
# each build named in BUILDS (files beside this script; the order alternates between runs),
# beside Oink `--tl -w 1` 16 at a time in the same run. A fresh server and store for each;
# every build's winners compared with Oink's. Run from a folder holding the builds, oink
# (with libboost_iostreams.so.1.74.0), syntcomp.tgz and syntcomp-common.sh:
#   BUILDS="egsolve-old egsolve" RUNS=8 bash batch-ab-session.sh
# Log: docs/bench/results/service/batch-inline/.
c="$(cd "$(dirname "$0")" && pwd)"
. "$c/syntcomp-common.sh"
RUNS="${RUNS:-8}"
read -r -a builds <<< "${BUILDS:-egsolve}"
export SERVE_LOG="${SERVE_LOG:-egsolve_service::batch=debug}"
for r in $(seq "$RUNS"); do
  t=$(now); ls $G/*.pg | xargs -P16 -I{} "$O" -w 1 --tl {} >/dev/null 2>&1; oink=$(ms $t)
  line="run $r: Oink ${oink} ms"
  order=("${builds[@]}")
  if [ $((r % 2)) = 0 ]; then order=($(printf '%s\n' "${builds[@]}" | tac)); fi
  for b in "${order[@]}"; do
    E="$c/$b" serve
    rm -rf /tmp/res; mkdir -p /tmp/res; t=$(now)
    EGSOLVE_LOG=egsolve=debug "$c/$b" submit --wait --result-format paritysol -o /tmp/res $G/*.pg > /tmp/lines 2>/tmp/batch.err
    took=$(ms $t) ok=$(grep -c " succeeded " /tmp/lines)
    phases=$( (sed 's/\x1b\[[0-9;]*m//g' /tmp/serve.err | grep -oE 'receive_store_and_solve_ms=[0-9.]+ place_and_admit_ms=[0-9.]+ record_ms=[0-9.]+|begun_ms=[0-9.]+ inserts_ms=[0-9.]+ commit_ms=[0-9.]+|results sent.*after_commit_ms=[0-9.]+' | sed 's/results sent.*after_commit/sent_after_commit/'; \
      sed 's/\x1b\[[0-9;]*m//g' /tmp/batch.err | grep -oE '(read_ms|answered_ms)=[0-9.]+' | sed 's/^/client_/') | sed -E 's/([0-9]+)\.[0-9]+/\1/g' | tr '\n' ' ')
    E="$c/$b" stop
    line="$line; $b ${took} ms = $(ratio $took $oink)× ($ok ok, $(wrong /tmp/res) differ; $phases)"
    if [ -n "${CURL:-}" ]; then
      # The same batch by curl: POST, then GET its results (record_ms without rendering
      # beside it); then POST ?results=paritysol where the build has it.
      E="$c/$b" serve
      t=$(now)
      curl -s -X POST --data-binary @/tmp/sc.tar -H 'Content-Type: application/x-tar' "$EGSOLVE_SERVER/v1/batches" > /tmp/r.json
      post=$(ms $t) B=$(python3 -c "import json; print(json.load(open('/tmp/r.json'))['id'])")
      curl -s "$EGSOLVE_SERVER/v1/batches/$B/results?format=paritysol" -o /tmp/res.tar
      both=$(ms $t)
      rec=$(sed 's/\x1b\[[0-9;]*m//g' /tmp/serve.err | grep -oE 'record_ms=[0-9]+' | tail -1)
      E="$c/$b" stop
      E="$c/$b" serve
      t=$(now)
      code=$(curl -s -o /tmp/res2.tar -w '%{http_code}' -X POST --data-binary @/tmp/sc.tar -H 'Content-Type: application/x-tar' "$EGSOLVE_SERVER/v1/batches?results=paritysol")
      one=$(ms $t)
      rec2=$(sed 's/\x1b\[[0-9;]*m//g' /tmp/serve.err | grep -oE 'record_ms=[0-9]+' | tail -1)
      E="$c/$b" stop
      line="$line [curl: POST $post ms ($rec), + GET results $both ms; POST ?results: $code in $one ms ($rec2)]"
    fi
  done
  echo "$line"
done

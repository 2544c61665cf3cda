#!/usr/bin/env bash
# Device session (issue 43 part 5): where a batch's time goes after the POST: the results
# stream timed on its own (no other process between the POST and the GET), three times, then
# the CLI's submit --wait, the CLI's start and a tar of the games. Run like
# scripts/batch-inline-session.sh; log: docs/bench/results/service/batch-inline/12-*.
c="$(cd "$(dirname "$0")" && pwd)"
. "$c/syntcomp-common.sh"
export SERVE_LOG=egsolve_service::batch=debug
for r in 1 2 3; do
  serve
  curl -s -o /tmp/r.json -w "POST %{time_total}\n" -X POST --data-binary @/tmp/sc.tar -H 'Content-Type: application/x-tar' "$EGSOLVE_SERVER/v1/batches"
  B=$(grep -o '"id":"[^"]*"' /tmp/r.json | head -1 | cut -d'"' -f4)
  for i in 1 2 3; do curl -s -o /tmp/res.tar -w "results paritysol: first byte %{time_starttransfer} total %{time_total} bytes %{size_download}\n" "$EGSOLVE_SERVER/v1/batches/$B/results?format=paritysol"; done
  curl -s -o /dev/null -w "batch view %{time_total}\n" "$EGSOLVE_SERVER/v1/batches/$B"
  stop
  serve
  rm -rf /tmp/res; t=$(now)
  "$E" submit --wait --result-format paritysol -o /tmp/res $G/*.pg > /tmp/lines 2>/tmp/batch.err
  echo "submit --wait $(ms $t) ms, $(grep -c ' succeeded ' /tmp/lines) succeeded"
  t=$(now); "$E" --help > /dev/null; echo "egsolve --help $(ms $t) ms"
  t=$(now); tar -cf /tmp/x.tar -C $G . ; echo "tar of the games $(ms $t) ms"
  stop
done

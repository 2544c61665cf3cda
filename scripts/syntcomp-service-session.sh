#!/usr/bin/env bash
# Device session: the 285 SYNTCOMP games of Oink's examples/ through the service, a fresh
# store per run (no reuse): one `egsolve submit --wait -o DIR FILE…` process (connections
# reused, 16 in flight) against 16 concurrent single `egsolve submit --wait` processes
# (the issue's way) and Oink `--tl -w 1` 16 at a time; answers compared with Oink's.
# Run from a folder holding egsolve, oink (with libboost_iostreams.so.1.74.0) and
# syntcomp.tgz (`tar -czf syntcomp.tgz examples` in an Oink checkout): copy this script
# there (the device runs carry it as .carry/round6.sh). Log:
# docs/bench/results/service/syntcomp-many-files.md.
c="$(cd "$(dirname "$0")" && pwd)"
export LD_LIBRARY_PATH="$c"
E="$c/egsolve"; O="$c/oink"
mkdir -p /tmp/sc && tar -xzf "$c/syntcomp.tgz" -C /tmp/sc
G=/tmp/sc/examples
ls $G/*.pg | wc -l
now() { date +%s%N; }
ms() { echo $(( ($(now) - $1) / 1000000 )); }
# Oink's answers (winners) once, for the comparison.
mkdir -p /tmp/oinksol
ls $G/*.pg | xargs -P16 -I{} sh -c 'n=$(basename "{}" .pg); "'"$O"'" -w 1 --tl "{}" /tmp/oinksol/$n.sol >/dev/null 2>&1'
serve() {
  rm -rf /tmp/store; mkdir -p /tmp/store
  "$E" serve --bind 127.0.0.1:0 --data-dir /tmp/store "$@" > /tmp/serve.out 2>/tmp/serve.err &
  SPID=$!
  for i in $(seq 100); do grep -q "listening on" /tmp/serve.out && break; sleep 0.05; done
  export EGSOLVE_SERVER=$(awk '/listening on/ {print $NF}' /tmp/serve.out)
  "$E" submit --wait -o /dev/null "$G/$(ls $G | head -1)" >/dev/null 2>&1  # warm: first job
}
stop() { kill $SPID; wait $SPID 2>/dev/null; }
for r in 1 2 3; do
  serve
  rm -rf /tmp/res; t=$(now)
  "$E" submit --wait --in-flight 16 --result-format paritysol -o /tmp/res $G/*.pg > /tmp/lines 2>/tmp/many.err
  rc=$?; many=$(ms $t)
  ok=$(grep -c " succeeded " /tmp/lines)
  stop
  serve
  rm -rf /tmp/res1; mkdir -p /tmp/res1; t=$(now)
  ls $G/*.pg | xargs -P16 -I{} sh -c '"'"$E"'" submit --wait --result-format paritysol -o /tmp/res1/$(basename "{}").sol "{}" >/dev/null 2>&1'
  single=$(ms $t)
  stop
  t=$(now)
  ls $G/*.pg | xargs -P16 -I{} "$O" -w 1 --tl {} >/dev/null 2>&1
  oink=$(ms $t)
  wrong=0
  for f in /tmp/res/*.sol; do
    n=$(basename "$f" .pg.sol)
    cmp -s <(awk 'NR > 1 { gsub(";", ""); print $1, $2 }' "$f" | sort -n) \
           <(awk '!/^paritysol/ { gsub(";", ""); print $1, $2 }' /tmp/oinksol/$n.sol | sort -n) || wrong=$((wrong+1))
  done
  echo "run $r: many-files ${many} ms (rc $rc, $ok succeeded, $wrong winners differ from Oink), 16 single submits ${single} ms, Oink --tl 16 at a time ${oink} ms; ratio many/oink $(awk -v a=$many -v b=$oink "BEGIN {printf \"%.2f\", a/b}")"
done
# Where the time goes: the same without the store's fsyncs (--sync-commits false), and
# with the CPU pool as wide as the host.
for extra in "--sync-commits false" "--sync-commits false --cpu-workers 16"; do
  serve $extra
  rm -rf /tmp/res; t=$(now)
  "$E" submit --wait --in-flight 16 --result-format paritysol -o /tmp/res $G/*.pg > /tmp/lines 2>/tmp/many.err
  echo "many-files with $extra: $(ms $t) ms, $(grep -c " succeeded " /tmp/lines) succeeded"
  stop
done
"$E" serve --help | grep -A2 -E "cpu-workers|sync-commits" | head -12
tail -3 /tmp/many.err

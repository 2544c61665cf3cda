# Shared by the SYNTCOMP device sessions (`scripts/syntcomp-service-session.sh`,
# `scripts/batch-inline-session.sh`): sourced from a folder `$c` holding egsolve, oink (with
# libboost_iostreams.so.1.74.0) and syntcomp.tgz (`tar -czf syntcomp.tgz examples` in an
# Oink checkout). Sets E, O and G (the games), takes Oink's answers once, makes /tmp/sc.tar
# and defines now/ms/ratio, serve/stop (a server on a new store directory, warmed by a
# first job; `SERVE_LOG` is its EGSOLVE_LOG) and wrong (winners that differ from Oink's).
export LD_LIBRARY_PATH="$c"
E="${EGSOLVE_BIN:-$c/egsolve}"; O="$c/oink"  # EGSOLVE_BIN: another build, for an A/B in one session
mkdir -p /tmp/sc && tar -xzf "$c/syntcomp.tgz" -C /tmp/sc
G=/tmp/sc/examples
echo "$(ls $G/*.pg | wc -l) games, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
now() { date +%s%N; }
ms() { echo $(( ($(now) - $1) / 1000000 )); }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a/b}'; }
# Oink's answers (winners) once, for the comparison.
mkdir -p /tmp/oinksol
ls $G/*.pg | xargs -P16 -I{} sh -c 'n=$(basename "{}" .pg); "'"$O"'" -w 1 --tl "{}" /tmp/oinksol/$n.sol >/dev/null 2>&1'
(cd $G && tar -cf /tmp/sc.tar *.pg)
# A new store directory per server, none deleted during the runs: when each server's store
# was deleted before the next started, every run was slower than the one before (session
# 54: a batch's inline solves from 30 to 212 ms over 5 runs; the H200 host's disk is ext4
# mounted with `discard`). Removed when the session's script ends.
STORES=0
trap 'rm -rf /tmp/stores' EXIT
serve() {
  STORES=$((STORES + 1)); mkdir -p /tmp/stores/$STORES
  EGSOLVE_LOG="${SERVE_LOG:-warn}" "$E" serve --bind 127.0.0.1:0 --data-dir /tmp/stores/$STORES "$@" > /tmp/serve.out 2>/tmp/serve.err &
  SPID=$!
  for i in $(seq 100); do grep -q "listening on" /tmp/serve.out && break; sleep 0.05; done
  export EGSOLVE_SERVER=$(awk '/listening on/ {print $NF}' /tmp/serve.out)
  "$E" submit --wait -o /dev/null "$G/$(ls $G | head -1)" >/dev/null 2>&1  # warm: first job
}
stop() { kill $SPID; wait $SPID 2>/dev/null; }
# Winners in DIR/*.pg.sol that differ from Oink's (and results missing).
wrong() {
  local w=0 f n
  for f in $G/*.pg; do
    n=$(basename "$f" .pg)
    cmp -s <(awk 'NR > 1 { gsub(";", ""); print $1, $2 }' "$1/$n.pg.sol" 2>/dev/null | sort -n) \
           <(awk '!/^paritysol/ { gsub(";", ""); print $1, $2 }' /tmp/oinksol/$n.sol | sort -n) || w=$((w+1))
  done
  echo $w
}

#!/usr/bin/env bash
# Session 64's device check: the GPU crate's device tests; BRP and Hesselink solved by
# default and with --backend gpu, certified; the 10^9-edge CLI solve (--backend gpu, binary
# answer into a new file on /dev/shm) with its exit's teardown handed to a child (default)
# or done inline (EGSOLVE_DETACHED_EXIT=0), alternated, answers compared; the time from the
# answer written to the shell seeing the exit, from the CLI's own log.
# Carry a folder holding `egsolve.gz`, `gpu-tests.gz`, games/*.gm.gz and certify-shared-games.sh:
#   run(command="bash .carry/session64-check.sh > $OUT/check.log 2>&1", carry=[".carry"])
set -u
c="$(cd "$(dirname "$0")" && pwd)"; e="$c/egsolve"
for z in egsolve gpu-tests; do gunzip -c "$c/$z.gz" > "$c/$z" && chmod +x "$c/$z"; done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv,noheader; nproc
[ "${TESTS:-1}" = 1 ] && timeout 200 "$c/gpu-tests" --skip compile --skip knobs 2>&1 | grep -E '^test |test result|panicked|fresh seed'
w=/dev/shm/egs; rm -rf "$w"; mkdir -p "$w"
[ "${GAMES:-1}" = 1 ] && "$c/certify-shared-games.sh" "$e" "$c/games" "$w"
"$e" gen random --vertices 250000000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 --to egb -o "$w/big.egb"
for r in $(seq 1 ${RUNS:-4}); do
  for v in ${ORDER:-inline detached}; do
    env=""; [ $v = inline ] && env="EGSOLVE_DETACHED_EXIT=0"
    sleep 1
    s=$(date +%s%N); env $env EGSOLVE_LOG=info,egsolve::cli::detached_exit=debug "$e" solve "$w/big.egb" --backend gpu --output binary -o "$w/out.bin" 2> "$w/log"; rc=$?; end=$(date +%s%N)
    clean=$(sed 's/\x1b\[[0-9;]*m//g' "$w/log")
    wt=$(echo "$clean" | grep ' written ' | awk '{print $1}')
    after=$(python3 -c "import datetime;w=datetime.datetime.fromisoformat('$wt'.replace('Z','+00:00')).timestamp();print('%.3f'%($end/1e9-w))")
    echo "10^9 $v run $r: rc $rc whole $(( (end - s) / 1000000 )) ms, $(echo "$clean" | grep -o 'written seconds=[0-9.]*'), exit seen ${after} s after written, handed: $(echo "$clean" | grep -c 'handed to a child')"
    mkdir -p "$w/logs" && echo "$clean" > "$w/logs/$r-$v.log"
    [ -f "$w/first.bin" ] || mv "$w/out.bin" "$w/first.bin"
    [ -f "$w/out.bin" ] && { cmp -s "$w/out.bin" "$w/first.bin" && echo "  same answer" || echo "  DIFFERS"; rm -f "$w/out.bin"; }
  done
done
[ -d "${OUT:-}" ] && tar czf "$OUT/cli-logs.tgz" -C "$w" logs
rm -rf "$w"

#!/usr/bin/env bash
# Session 21 call 5: where a fresh `egsolve solve --backend gpu` process spends its time
# beyond the solve (item 6): each run's info log gives the parse's end ("parsed"), the
# solve's and the output's ("written"); the script notes the process's start and end, so the
# time after "written" (dropping the game, the CUDA driver's teardown at exit) shows.
# Then the two device tests whose game construction moved into a shared helper.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"
gunzip -f "$c/egsolve.gz" "$c/libtests.gz"; chmod +x "$c/egsolve" "$c/libtests"
export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
"$c/egsolve" solve "$c"/data/parity/Hesselink*.gm.zst --backend gpu -o /tmp/warm.json 2>/dev/null  # fills the kernel cache
for round in 1 2 3; do
  for f in "$c"/data/parity/BRP*.gm.zst "$c"/data/parity/Hesselink*.gm.zst; do
    for b in gpu auto; do
      s=$(date +%s%N)
      EGSOLVE_LOG=egsolve=info "$c/egsolve" solve "$f" --backend $b -o /tmp/o.json 2> /tmp/err.log
      e=$(date +%s%N)
      python3 - "$s" "$e" "$(basename "$f" | cut -c1-9)" "$b" /tmp/err.log <<'PY'
import sys,re,datetime
s,e=int(sys.argv[2-1]),int(sys.argv[2])
def ns(line):
    t=re.sub(r'\x1b\[[0-9;]*m','',line).split()[0]
    d=datetime.datetime.strptime(t[:26],'%Y-%m-%dT%H:%M:%S.%f').replace(tzinfo=datetime.timezone.utc)
    return int(d.timestamp()*1e9)
marks={}
for line in open(sys.argv[5]):
    for k in ('parsed','solved','written'):
        if re.search(r'\b'+k+r'\b', re.sub(r'\x1b\[[0-9;]*m','',line)): marks[k]=ns(line)
ms=lambda a,b:(b-a)/1e6
print(f"{sys.argv[3]} {sys.argv[4]:4} wall {ms(s,e):6.0f} ms: parsed at {ms(s,marks['parsed']):5.0f}, solved at {ms(s,marks['solved']):5.0f}, written at {ms(s,marks['written']):5.0f}, exit {ms(marks['written'],e):5.0f} after")
PY
    done
  done
done | tee "$out/fresh.log"
timeout 200 "$c/libtests" --test-threads 1 --nocapture device_attractor device_player1_edges > "$out/device-tests.log" 2>&1
echo "device tests rc=$?"; grep -E "attracted|test result" "$out/device-tests.log"

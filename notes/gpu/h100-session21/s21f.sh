#!/usr/bin/env bash
# Session 21 calls 6 and 7 (SHIM_EXIT=1: the shim's handler then ends the process with
# _exit(0), skipping the shared libraries' destructors, libcuda's among them): what the ~150 ms after "written" in a fresh gpu process is (call 5):
# the last system calls of a BRP gpu process with their times (strace, if the machine has
# it), and the same process under an LD_PRELOAD shim whose atexit handler prints the time the
# C library's exit began.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"
gunzip -f "$c/egsolve.gz"; chmod +x "$c/egsolve"
export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
f=$(ls "$c"/data/parity/BRP*.gm.zst)
"$c/egsolve" solve "$f" --backend gpu -o /tmp/warm.json 2>/dev/null
which strace perf ltrace gdb 2>&1 | tee "$out/tools.log"
if command -v strace >/dev/null; then
  EGSOLVE_LOG=egsolve=info strace -f -tt -T -o "$out/strace.log" "$c/egsolve" solve "$f" --backend gpu -o /tmp/o.json 2> "$out/info.log"
  grep -n "written" "$out/info.log"
  tail -60 "$out/strace.log" | cut -c1-200
  awk '{print $3}' "$out/strace.log" | sort | uniq -c | sort -rn | head -5
fi
cat > /tmp/shim.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static void at_exit_began(void) {
  struct timespec t; clock_gettime(CLOCK_REALTIME, &t);
  fprintf(stderr, "EXIT-BEGAN %ld.%09ld\n", (long)t.tv_sec, t.tv_nsec);
#ifdef SHIM_EXIT
  fflush(NULL); _exit(0);
#endif
}
__attribute__((constructor)) static void init(void) { atexit(at_exit_began); }
C
gcc ${SHIM_EXIT:+-DSHIM_EXIT} -shared -fPIC -o /tmp/shim.so /tmp/shim.c && for i in 1 2 3; do
  s=$(date +%s.%N)
  EGSOLVE_LOG=egsolve=info LD_PRELOAD=/tmp/shim.so "$c/egsolve" solve "$f" --backend gpu -o /tmp/o.json 2> /tmp/e.log
  e=$(date +%s.%N)
  w=$(grep written /tmp/e.log | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1}')
  python3 -c "
import datetime,sys
w=datetime.datetime.strptime('$w'[:26],'%Y-%m-%dT%H:%M:%S.%f').replace(tzinfo=datetime.timezone.utc).timestamp()
x=float('$(grep EXIT-BEGAN /tmp/e.log | awk '{print $2}')'); s=$s; e=$e
print(f'wall {1e3*(e-s):.0f} ms, written at {1e3*(w-s):.0f}, exit began {1e3*(x-w):.0f} ms after written, process gone {1e3*(e-x):.0f} ms after that')"
done | tee "$out/shim${SHIM_EXIT:+-exit}.log"

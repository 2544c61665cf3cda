# Sourced by the device session scripts (datapath-session.sh, alloc-ab-session.sh; carry it
# beside them): `ms START_NS` prints the milliseconds since START_NS (`date +%s%N`);
# `measure LABEL CMD...` runs CMD and prints its wall time, peak resident memory (VmHWM,
# polled every 50 ms) and exit status.
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
measure() {
  local label=$1; shift; local s; s=$(date +%s%N); "$@" & local p=$! hwm=0 h
  while kill -0 "$p" 2>/dev/null; do
    h=$(awk '/VmHWM/ {print $2}' "/proc/$p/status" 2>/dev/null); [ -n "$h" ] && hwm=$h; sleep 0.05
  done
  wait "$p"; local rc=$?
  echo "$label: $(ms "$s") ms wall, peak RSS $((hwm / 1024)) MiB, rc=$rc"
}

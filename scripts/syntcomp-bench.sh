#!/usr/bin/env bash
# The SYNTCOMP parity games (Oink's examples/, 285 files, not in the repository): egsolve's
# whole process (one thread, the default answer: winners and strategies) against Oink's
# `--tl` (one thread), alternating per game, best of RUNS each; winners compared with Oink's
# solution files (<game>.sol beside each .pg). Prints one line per game and the totals.
#   scripts/syntcomp-bench.sh DIR [EGSOLVE] [OINK]
# DIR holds the .pg files (and .sol); EGSOLVE defaults to target/release/egsolve, OINK to
# `oink` on PATH. RUNS (default 3) runs per game and solver.
set -u
dir=$1; e=${2:-target/release/egsolve}; oink=${3:-oink}; runs=${RUNS:-3}
ms() { local s=$(date +%s%N); "$@" >/dev/null 2>&1; local rc=$?; echo "$(( ($(date +%s%N)-s)/1000 )) $rc"; }
best() { sort -n | head -1; }
total_e=0; total_o=0; max_e=0; worst=""; wrong=0; n=0
for g in "$dir"/*.pg; do
  name=$(basename "$g" .pg); te=(); to=()
  for i in $(seq "$runs"); do
    read -r t rc < <(ms "$e" solve "$g" --threads 1 --output paritysol -o /tmp/syntcomp.sol); te+=("$t")
    [ "$rc" = 0 ] || echo "$name: egsolve exit $rc"
    read -r t rc < <(ms "$oink" -w -1 --tl "$g"); to+=("$t")
  done
  be=$(printf '%s\n' "${te[@]}" | best); bo=$(printf '%s\n' "${to[@]}" | best)
  same=same
  if [ -f "$dir/$name.sol" ]; then
    cmp -s <(awk 'NR > 1 { gsub(";", ""); print $1, $2 }' /tmp/syntcomp.sol | sort -n) \
           <(awk '!/^paritysol/ { gsub(";", ""); print $1, $2 }' "$dir/$name.sol" | sort -n) || { same=DIFFERS; wrong=$((wrong+1)); }
  fi
  echo "$name egsolve_us=$be oink_tl_us=$bo $same"
  total_e=$((total_e+be)); total_o=$((total_o+bo)); n=$((n+1))
  if [ "$be" -gt "$max_e" ]; then max_e=$be; worst=$name; fi
done
echo "games=$n egsolve_total_ms=$((total_e/1000)) oink_tl_total_ms=$((total_o/1000)) egsolve_max_ms=$((max_e/1000)) ($worst) winners_differ=$wrong"

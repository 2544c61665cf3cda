#!/usr/bin/env bash
# Where random p10's gpu "threads and state ready" goes: finer debug events, THP, malloc tunables.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; out="${OUT:-/tmp}"; t=/tmp/s16
mkdir -p "$t"; export EGSOLVE_KERNEL_CACHE=/tmp/egsolve-kernels
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag; ldd --version | head -1
"$c/egsolve" gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed 3 -o "$t/random_p10.mpg"
for tun in none glibc.malloc.hugetlb=1 glibc.malloc.mmap_threshold=1048576 glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=4294967295; do
  echo "== $tun"
  if [ $tun = none ]; then unset GLIBC_TUNABLES; else export GLIBC_TUNABLES=$tun; fi
  EGSOLVE_LOG=egsolve=debug timeout 200 "$c/gc-new" warm --runs 4 "$t/random_p10.mpg" > "$out/warm-$tun.log" 2> "$out/dbg-$tun.log"
  grep -E " run [0-9]" "$out/warm-$tun.log" | cut -c1-150
  sed 's/\x1b\[[0-9;]*m//g' "$out/dbg-$tun.log" | cut -c29-330 | grep -E "allocated|state ready|lifting phase|engine ready" | tail -12 | cut -c1-200
done

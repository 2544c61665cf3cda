#!/usr/bin/env bash
# How fast 3 GB lands in a new tmpfs file (what bounds a 10^9-edge result write): one writer,
# several writers at their own offsets, fallocate first; each 3 times. A device call:
#   run(command="bash .carry/tmpfs-write.sh | tee $OUT/tmpfs.log", carry=[".carry"])
w=/dev/shm/tw; mkdir -p $w; ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
head -c 3000000000 /dev/urandom > $w/src 2>/dev/null || dd if=/dev/urandom of=$w/src bs=1M count=2861 status=none
for r in 1 2 3; do
  rm -f $w/a; s=$(date +%s%N); dd if=$w/src of=$w/a bs=64M status=none; echo "one writer: $(ms $s) ms"
  for k in 2 4 8 16; do
    rm -f $w/a; per=$((3000 / k)); s=$(date +%s%N)
    for i in $(seq 0 $((k-1))); do dd if=$w/src of=$w/a bs=1M skip=$((i*per)) seek=$((i*per)) count=$per conv=notrunc status=none & done; wait
    echo "$k writers (pwrite, own offsets): $(ms $s) ms"
  done
  rm -f $w/a; s=$(date +%s%N); fallocate -l 3000000000 $w/a; t=$(ms $s); dd if=$w/src of=$w/a bs=64M conv=notrunc status=none; echo "fallocate ${t} ms, then one writer: total $(ms $s) ms"
  rm -f $w/a; s=$(date +%s%N); fallocate -l 3145728000 $w/a; per=375; for i in $(seq 0 7); do dd if=$w/src of=$w/a bs=1M skip=$((i*per)) seek=$((i*per)) count=$per conv=notrunc status=none & done; wait; echo "fallocate then 8 writers: $(ms $s) ms"
done
rm -rf $w

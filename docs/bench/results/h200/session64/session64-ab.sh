#!/usr/bin/env bash
# Session 64's A/B on the device host, old build (egsolve-old.gz) against new (egsolve.gz):
# 1. Hesselink's default service job, warm server, old and new servers alternated (the race's
#    credits-to-winners pass on threads of its own instead of rayon's pool);
# 2. a 10^7-edge egb job through `egsolve submit --wait --result-format binary` to one running
#    (new) server, old and new clients alternated (the new one reads the file ahead in 4 MiB
#    chunks), each run a game of its own, the answer compared with the CLI's.
# Carry a folder holding egsolve.gz, egsolve-old.gz, games/*.gm.gz and service-race.sh:
#   run(command="bash .carry/session64-ab.sh > $OUT/ab.log 2>&1", carry=[".carry"])
set -u
c="$(cd "$(dirname "$0")" && pwd)"
for z in egsolve egsolve-old; do gunzip -c "$c/$z.gz" > "$c/$z" && chmod +x "$c/$z"; done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv,noheader; nproc
mkdir -p "$OUT/logs"
cd "$c"
for round in 1 2; do
  for b in old new; do
    bin=./egsolve; [ $b = old ] && bin=./egsolve-old
    EGSOLVE_BIN=$bin SETTLE=4 GAMES=Hesselink_datasize=2_property1 RUNS=${RUNS:-12} RUN_OFFSET=$((round * 100)) ./service-race.sh "$b-$round"
  done
done
w=/dev/shm/egs; rm -rf "$w"; mkdir -p "$w"
reps=${REPS:-5}
for i in $(seq 0 $((2 * reps))); do
  ./egsolve gen random --vertices 2500000 --degree 4..4 --weights=-10..10 --player1 10 --seed $((200 + i)) --to egb -o "$w/g$i.egb"
done
port=18$((RANDOM % 900 + 100))
EGSOLVE_LOG=info ./egsolve serve --bind 127.0.0.1:$port --data-dir "$w/data" > "$OUT/logs/serve-submit.log" 2>&1 &
pid=$!
for i in $(seq 100); do curl -sf http://127.0.0.1:$port/healthz >/dev/null 2>&1 && break; sleep 0.1; done
./egsolve submit "$w/g$((2 * reps)).egb" --server http://127.0.0.1:$port --wait --result-format binary -o "$w/r.bin" 2>/dev/null
for i in $(seq 0 $((2 * reps - 1))); do
  b=new; bin=./egsolve; [ $((i % 2)) = 0 ] && { b=old; bin=./egsolve-old; }
  rm -f "$w/r.bin"
  s=$(date +%s%N); $bin submit "$w/g$i.egb" --server http://127.0.0.1:$port --wait --result-format binary -o "$w/r.bin" 2>/dev/null; e=$(date +%s%N)
  ./egsolve solve "$w/g$i.egb" --backend gpu --output binary -o "$w/c.bin" 2>/dev/null; e2=$(date +%s%N)
  cmp -s "$w/r.bin" "$w/c.bin" && same=same || same=DIFFERS
  echo "10^7 egb submit $b client: $(( (e - s) / 1000000 )) ms (CLI --backend gpu $(( (e2 - e) / 1000000 )) ms), answer $same"
done
kill $pid; wait $pid 2>/dev/null
sed 's/\x1b\[[0-9;]*m//g' "$OUT/logs/serve-submit.log" | grep -o ' receive=[0-9.]*\| write=[0-9.]*\| solve=[0-9.]*\|result_write=[0-9.]*' | paste -s -d' ' | sed 's/ receive/\nreceive/g'
rm -rf "$w"
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs

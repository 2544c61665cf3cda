#!/usr/bin/env bash
# Issue 42's benchmark section, the games `parity-session.sh` leaves out, on the device host:
# Oink's lower-bound families at large sizes (made here by `egsolve gen family`, Oink's files
# byte for byte) and the SYNTCOMP games of Oink's `examples/` (carried as syntcomp.tgz).
# Per family game, whole process (wall ms, median of RUNS): egsolve's default route
# (`auto`: the GPU route raced against the CPU portfolio from 2^20 vertices), the GPU route
# (`--backend gpu`: the energy reduction) and the CPU portfolio (`--backend parity`),
# beside Oink's best solver on that family (chosen on the build VM among `--tl --rtl --ortl
# --npp --zlk --fpi --pp --psi`; FAMILIES gives it) at `-w 1` and `-w 16`; `>L` where a run
# passed LIMIT seconds. The default answer is certified by `egsolve check` and its winners
# compared with Oink's. SYNTCOMP: the routes as totals over every game, one run each, Oink's
# `--tl`, `--npp`, `--zlk` at `-w 1` and `--tl`, `--zlk` at `-w 16`, with the certified count
# and the count whose winners equal Oink's `--tl`.
# Carried folder: egsolve (or egsolve.gz), oink, libboost_iostreams.so.1.74.0,
# syntcomp.tgz. Usage: run(command="bash .carry/parity-families-session.sh", carry=[...]).
# env: RUNS (3), LIMIT (10), FAMILIES ("name:N:oink-solver ..."), PARTS ("families syntcomp").
set -u
c="$(cd "$(dirname "$0")" && pwd)"; cd "$c"
export LD_LIBRARY_PATH="$c:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -x egsolve ] || { gunzip -c egsolve.gz > egsolve && chmod +x egsolve; }
e="$c/egsolve"; o="$c/oink"; out="${OUT:-/tmp}"; w=/dev/shm/egf; rm -rf "$w"; mkdir -p "$w"
RUNS=${RUNS:-3}; LIMIT=${LIMIT:-10}; PARTS=" ${PARTS:-families syntcomp} "
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; } | tee "$out/machine.log"

# wall ms of one run of CMD..., or ">LIMIT*1000" past the limit
once() { local s r; s=$(date +%s%N); timeout "$LIMIT" "$@" >/dev/null 2>&1; r=$?
  [ $r -eq 124 ] && { echo ">$((LIMIT * 1000))"; return; }
  echo $(( ($(date +%s%N) - s) / 1000000 )); }
# median of RUNS runs (a run past the limit ends the series)
median() { local t=() x; for _ in $(seq "$RUNS"); do x=$(once "$@"); [[ $x == '>'* ]] && { echo "$x"; return; }; t+=("$x"); done
  printf '%s\n' "${t[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"; }
# winners of a paritysol file, one per vertex in vertex order, as a checksum
winners() { grep -v '^parity' "$1" | tr -d ';' | awk '{print $1, $2}' | sort -n | awk '{print $2}' | md5sum | cut -c1-8; }

if [[ $PARTS == *" families "* ]]; then
  echo "== Oink's families, whole process, wall ms (median of $RUNS; >L: past $LIMIT s) =="
  echo "game | vertices | default | backend gpu | backend parity | Oink solver | Oink -w 1 | Oink -w 16 | default answered by | certified | winners = Oink's"
  for spec in ${FAMILIES:-two-counters:64:rtl counter-rr:40000:ortl counter-dp:40000:ortl counter-core:20000:ortl counter-ortl:80000:tl counter-m:80000:tl counter-qpt:80000:fpi counter-symsi:2000:tl counter-rob:200:tl}; do
    IFS=: read -r f n s <<< "$spec"; g="$w/$f-$n.gm"
    "$e" gen family "$f" --n "$n" -o "$g"
    v=$(head -1 "$g" | tr -dc '0-9'); v=$((v + 1))
    d=$(median "$e" solve "$g"); gpu=$(median "$e" solve "$g" --backend gpu); cpu=$(median "$e" solve "$g" --backend parity)
    o1=$(median "$o" --"$s" -w 1 "$g"); o16=$(median "$o" --"$s" -w 16 "$g")
    "$e" solve "$g" -o "$w/default.json" 2>/dev/null
    by=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print(s["backend"], s.get("algorithm",""))' "$w/default.json" 2>/dev/null)
    ok=$("$e" check "$g" "$w/default.json" >/dev/null 2>&1 && echo yes || echo NO)
    "$e" solve "$g" --output paritysol -o "$w/e.sol" 2>/dev/null
    agree=-; timeout "$LIMIT" "$o" --"$s" -w 1 "$g" "$w/o.sol" >/dev/null 2>&1 && \
      agree=$([ "$(winners "$w/e.sol")" = "$(winners "$w/o.sol")" ] && echo yes || echo NO)
    echo "$f $n | $v | $d | $gpu | $cpu | --$s | $o1 | $o16 | $by | $ok | $agree"
    rm -f "$g" "$w"/*.sol "$w/default.json"
  done
fi

if [[ $PARTS == *" syntcomp "* ]]; then
  tar xzf syntcomp.tgz -C "$w"; games=$(ls "$w"/examples/*.pg)
  echo "== SYNTCOMP ($(echo "$games" | wc -l) games), whole process, one run each: total wall ms =="
  total() { local s; s=$(date +%s%N); for g in $games; do timeout "$LIMIT" "$@" "$g" >/dev/null 2>&1; done
    echo $(( ($(date +%s%N) - s) / 1000000 )); }
  echo "default: $(total "$e" solve) | backend gpu: $(total "$e" solve --backend gpu) | backend parity: $(total "$e" solve --backend parity)"
  for s in tl npp zlk; do echo "Oink --$s -w 1: $(total "$o" --$s -w 1)"; done
  for s in tl zlk; do echo "Oink --$s -w 16: $(total "$o" --$s -w 16)"; done
  ok=0; agree=0; n=0
  for g in $games; do
    n=$((n + 1))
    "$e" solve "$g" -o "$w/d.json" 2>/dev/null && "$e" check "$g" "$w/d.json" >/dev/null 2>&1 && ok=$((ok + 1))
    "$e" solve "$g" --output paritysol -o "$w/e.sol" 2>/dev/null
    timeout "$LIMIT" "$o" --tl -w 1 "$g" "$w/o.sol" >/dev/null 2>&1 && \
      [ "$(winners "$w/e.sol")" = "$(winners "$w/o.sol")" ] && agree=$((agree + 1))
  done
  echo "default answers certified: $ok of $n; winners equal to Oink --tl: $agree of $n"
fi
rm -rf "$w"

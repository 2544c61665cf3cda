#!/usr/bin/env bash
# jemalloc with transparent huge pages (thp:always) against egsolve's CONF, fresh CLI
# processes alternated, whole-process wall ms and peak RSS (KB), RUNS runs each.
set -u
c="$(cd "$(dirname "$0")" && pwd)"; cd "$c"
export LD_LIBRARY_PATH="$c:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
gunzip -c egsolve-new.gz > e && chmod +x e
w=/dev/shm/thp; mkdir -p $w; RUNS=${RUNS:-5}
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag; nproc; uptime
for f in "counter-rr 40000" "counter-core 20000" "counter-dp 40000" "counter-symsi 2000"; do
  set -- $f; ./e gen family $1 --n $2 --to gm -o $w/$1-$2.gm; done
for g in BRP_datasize=2_counting Hesselink_datasize=2_property1; do gunzip -c games/$g.gm.gz > $w/$g.gm; done
python3 - "$w" "$RUNS" <<'PY'
import os, sys, time, statistics, subprocess, resource
w, runs = sys.argv[1], int(sys.argv[2])
confs = {"conf": "dirty_decay_ms:-1,narenas:1", "thp": "dirty_decay_ms:-1,narenas:1,thp:always"}
games = sorted(f for f in os.listdir(w) if f.endswith(".gm"))
for g in games:
    for threads in (["2", "16"] if "counter" in g else ["16"]):
        res = {k: ([], []) for k in confs}
        for _ in range(runs):
            for k, v in confs.items():
                env = dict(os.environ, _RJEM_MALLOC_CONF=v)
                t = time.perf_counter()
                p = subprocess.Popen(["./e", "solve", f"{w}/{g}", "--threads", threads, "--output", "paritysol", "-o", "/dev/null"], env=env)
                _, status, ru = os.wait4(p.pid, 0)
                res[k][0].append((time.perf_counter() - t) * 1e3); res[k][1].append(ru.ru_maxrss)
                assert status == 0, (g, k)
        m = {k: statistics.median(v[0]) for k, v in res.items()}
        r = {k: max(v[1]) for k, v in res.items()}
        print(f"{g} threads {threads}: conf {m['conf']:.1f} ms, thp {m['thp']:.1f} ms ({m['thp']/m['conf']:.2f}x); peak RSS conf {r['conf']//1024} MB, thp {r['thp']//1024} MB; all conf {sorted(round(x,1) for x in res['conf'][0])} thp {sorted(round(x,1) for x in res['thp'][0])}", flush=True)
PY

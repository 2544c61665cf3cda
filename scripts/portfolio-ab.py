#!/usr/bin/env python3
"""Two (or more) builds' parity portfolio against their better single search, interleaved run
by run (each run takes every build and algorithm once, in a fresh random order), so a VM whose
speed drifts between minutes (steal time) weighs on every build alike; scripts/portfolio-bench.py
runs one build at a time. Games are read from /tmp/portfolio-bench (portfolio-bench.py's
default --dir, where it generates them).

    BINS="base=/path/egsolve,new=/path/egsolve" scripts/portfolio-ab.py RUNS GAME:ALG[+ALG] ...

e.g. `counter-rr_20000.pg:tangle-learning+recursive-tangle-learning`. Prints per game and
build: `auto`'s median whole-process wall time (`--threads 2`), the better single search's
median, and their ratio (issue 42's goal: <= 1.2)."""
import os, sys, time, subprocess, statistics, random
bins = dict(x.split('=') for x in os.environ['BINS'].split(','))
runs = int(sys.argv[1])
print(f"runs {runs}, bins {bins}, load {os.getloadavg()}")
for case in sys.argv[2:]:
    game, algs = case.split(':'); algs = algs.split('+')
    keys = [(b, a) for b in bins for a in ['auto'] + algs]
    t = {k: [] for k in keys}
    for r in range(runs):
        random.shuffle(keys)
        for b, a in keys:
            cmd = [bins[b], 'solve', '/tmp/portfolio-bench/' + game, '--threads', '2', '--parity-algorithm', a, '-o', '/dev/null']
            s = time.perf_counter(); subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); t[(b, a)].append((time.perf_counter() - s) * 1e3)
    out = [game]
    for b in bins:
        auto = statistics.median(t[(b, 'auto')]); best = min(statistics.median(t[(b, a)]) for a in algs)
        out.append(f"{b}: auto {auto:.1f} better {best:.1f} = {auto/best:.2f}")
    print(' | '.join(out), flush=True)

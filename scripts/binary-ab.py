#!/usr/bin/env python3
"""Two builds of egsolve on the same games, alternated run by run (base first in even runs,
new first in odd ones): whole-process wall time, medians, the ratio new/base, and whether
both builds give every vertex the same winner and credit (strategies may differ: where a
race or a schedule picks among winning moves, any of them is an answer). A second line per
case gives every run, sorted: where a host's processes spread widely or fall into speed
modes (the H200 host on counter-symsi 1000 in session 74: about 100 or 150-160 ms a process
in one call, 109-197 ms spread in the next), a median of a few runs can land anywhere in
that spread, and the runs show it.

Usage: binary-ab.py BASE NEW RUNS CASE... where each CASE is `name=arg,arg,...`: the
arguments of `egsolve solve` (the output is always JSON). Prints two lines per case."""

import hashlib
import json
import statistics
import subprocess
import sys
import time


def answer_key(stdout: bytes) -> str:
    """Each vertex's winner and credit, hashed."""
    doc = json.loads(stdout)
    pairs = [(v.get("winner"), v.get("credit")) for v in doc["vertices"]]
    return hashlib.sha256(json.dumps(pairs).encode()).hexdigest()


def main() -> None:
    base, new, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for case in sys.argv[4:]:
        name, _, args = case.partition("=")
        args = args.split(",")
        times = {"base": [], "new": []}
        keys = {}
        for r in range(runs):
            order = [("base", base), ("new", new)]
            if r % 2:
                order.reverse()
            for label, binary in order:
                start = time.perf_counter()
                done = subprocess.run(
                    [binary, "solve", *args, "--output", "json"],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
                times[label].append(time.perf_counter() - start)
                if done.returncode != 0:
                    print(f"{name}: {label} failed: {done.stderr.decode()[-400:]}", flush=True)
                    sys.exit(1)
                key = answer_key(done.stdout)
                if keys.setdefault(label, key) != key:
                    print(f"{name}: {label} answered differently from run to run", flush=True)
        b, n = statistics.median(times["base"]), statistics.median(times["new"])
        same = "same winners and credits" if keys["base"] == keys["new"] else "ANSWERS DIFFER"
        spread = lambda ts: f"{min(ts) * 1000:.1f}-{max(ts) * 1000:.1f}"
        print(
            f"{name:34s} base {b * 1000:9.1f} ms ({spread(times['base'])})  "
            f"new {n * 1000:9.1f} ms ({spread(times['new'])})  new/base {n / b:5.2f}  {same}",
            flush=True,
        )
        runs_of = lambda ts: " ".join(f"{t * 1000:.1f}" for t in sorted(ts))
        print(f"{'':34s} runs, ms: base {runs_of(times['base'])} | new {runs_of(times['new'])}", flush=True)


if __name__ == "__main__":
    main()

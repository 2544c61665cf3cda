#!/usr/bin/env python3
"""The parity portfolio (`--parity-algorithm auto`) against its two searches alone, whole
process, and egsolve's tangle learning against Oink's (`--tl -w 1`) on the same games.

    scripts/portfolio-bench.py [--egsolve PATH] [--oink PATH] [--runs R] [--dir DIR]
                               [--threads T] [CASE ...]

A CASE is `family:n` (`egsolve gen family` names or Oink's tool names); the default list
is every family size where the better search took >= 10 ms in BENCHMARKS.md §8, plus
Oink's counter_symsi 1000 and counter_rob 100. Each game is generated once into DIR
(default /tmp/portfolio-bench) with `egsolve gen family`; runs alternate between the
solvers (auto, tangle-learning, recursive-tangle-learning, Oink --tl -w 1 if given), R
runs each (default 5). Prints one markdown row per game: median wall and CPU (user + sys
of the process) milliseconds, and auto / the better single search. The machine is shared:
the load average is printed with the table.
"""

import argparse
import os
import signal
import statistics
import subprocess
import threading
import time

DEFAULT_CASES = [
    "tc:32", "tc:48", "tc:64",
    "counter-rr:20000",
    "counter-dp:10000", "counter-dp:20000",
    "counter-core:5000", "counter-core:10000", "counter-core:20000",
    "counter-ortl:20000",
    "counter-symsi:1000", "counter-rob:100",
]
ALGORITHMS = ["auto", "tangle-learning", "recursive-tangle-learning"]


def run(cmd, limit):
    """Runs `cmd` for at most `limit` seconds; returns (wall ms, CPU ms of the child), or
    None past the limit. Any other failure raises. The child is waited for with a blocking
    `wait4` (`subprocess.run` with a timeout polls, sleeping up to 50 ms between looks,
    which rounds every wall time up to that grain)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    killer = threading.Timer(limit, proc.kill)
    killer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        killer.cancel()
    wall = (time.perf_counter() - start) * 1e3
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode == -signal.SIGKILL:
        return None
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, cmd)
    return wall, (usage.ru_utime + usage.ru_stime) * 1e3


def median(times, i):
    """The median of field `i` over the runs that finished (inf if none did)."""
    done = [t[i] for t in times if t is not None]
    return statistics.median(done) if len(done) == len(times) else float("inf")


def ms(x):
    return f"{x:.1f}" if x != float("inf") else "-"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--egsolve", default="target/release/egsolve")
    parser.add_argument("--oink")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dir", default="/tmp/portfolio-bench")
    parser.add_argument("--threads", default="0")
    parser.add_argument("--limit", type=float, default=10.0, help="seconds per run")
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    cases = args.cases or DEFAULT_CASES
    print(f"cores: {os.cpu_count()}, load average: {' '.join(map(str, os.getloadavg()))}")
    print()
    header = "| game | V | auto wall | tl wall | rtl wall | auto ÷ better | auto CPU | tl CPU | rtl CPU |"
    if args.oink:
        header += " Oink --tl wall | Oink --tl CPU | tl ÷ Oink CPU |"
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for case in cases:
        family, n = case.split(":")
        path = os.path.join(args.dir, f"{family}_{n}.pg")
        if not os.path.exists(path):
            subprocess.run([args.egsolve, "gen", "family", family, "--n", n, "-o", path], check=True)
        with open(path) as f:
            vertices = int(f.readline().split()[1].rstrip(";")) + 1
        solvers = {a: [args.egsolve, "solve", path, "--parity-algorithm", a, "--threads",
                       args.threads, "--output", "paritysol", "-o", "/dev/null"]
                   for a in ALGORITHMS}
        if args.oink:
            solvers["oink"] = [args.oink, "--tl", "-w", "1", path]
        times = {name: [] for name in solvers}
        given_up = set()
        for _ in range(args.runs):
            for name, cmd in solvers.items():
                # A solver past the limit once is not run again on this game.
                result = None if name in given_up else run(cmd, args.limit)
                if result is None:
                    given_up.add(name)
                times[name].append(result)
        wall = {k: median(v, 0) for k, v in times.items()}
        cpu = {k: median(v, 1) for k, v in times.items()}
        best = min(wall["tangle-learning"], wall["recursive-tangle-learning"])
        row = (f"| {family} {n} | {vertices} | {ms(wall['auto'])} | "
               f"{ms(wall['tangle-learning'])} | {ms(wall['recursive-tangle-learning'])} | "
               f"{wall['auto'] / best:.2f} | {ms(cpu['auto'])} | {ms(cpu['tangle-learning'])} | "
               f"{ms(cpu['recursive-tangle-learning'])} |")
        if args.oink:
            row += (f" {ms(wall['oink'])} | {ms(cpu['oink'])} | "
                    f"{cpu['tangle-learning'] / cpu['oink']:.2f} |")
        print(row, flush=True)
    print()
    print(f"load average after: {' '.join(map(str, os.getloadavg()))}")


if __name__ == "__main__":
    main()

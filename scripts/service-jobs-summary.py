#!/usr/bin/env python3
"""Summarises service-race.sh's job lines (service-ab-session.sh's jobs.txt): per game and label,
the warm jobs' (every server's second job on) median, mean and worst solve, how many met
issue 42's goals (Hesselink <= 8 ms, BRP <= 15 ms), each server's first job, and where the
jobs ran. usage: service-jobs-summary.py jobs.txt..."""
import re
import statistics
import sys

GOALS = {"Hesselink": 8.0, "BRP": 15.0}
LINE = re.compile(r"(\w+)-r(\d+) (\S+) run (\d+): solve ([\d.]+) ms (\S+) (\S+)")

rows = {}
for path in sys.argv[1:]:
    for line in open(path):
        m = LINE.match(line)
        if m:
            label, _, game, run, ms, device, backend = m.groups()
            game = re.split(r"[=_]", game)[0]
            rows.setdefault((game, label), []).append((int(run), float(ms), device + backend))
for (game, label), jobs in sorted(rows.items()):
    warm = [ms for run, ms, _ in jobs if run > 1]
    first = [ms for run, ms, _ in jobs if run == 1]
    if not warm:
        print(f"{game:10s} {label:8s} no warm jobs; first {first}")
        continue
    goal = GOALS.get(game)
    met = f" <= {goal:g}: {sum(ms <= goal for ms in warm)}/{len(warm)}" if goal else ""
    where = sorted({w for *_, w in jobs})
    print(f"{game:10s} {label:8s} warm n={len(warm)} median {statistics.median(warm):6.2f} "
          f"mean {statistics.mean(warm):6.2f} max {max(warm):6.2f}{met}; first {first} {where}")

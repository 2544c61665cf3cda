"""The Python client's two ways to send many small games, side by side on one warm server:
``submit_batch`` then ``Batch.results()`` (two exchanges and the batch's read), and
``solve_batch`` (one ``POST /v1/batches?results=``). Every game is made new per run (blank
lines appended, as many as the run's number, so no result is reused) and every answer is checked
against the first run's winners.

    python scripts/python-batch-bench.py --server URL --runs 7 GAME...
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Dict, List

from egsolve import Client


def winners(text: str) -> str:
    """A paritysol answer's winners, line by line (strategies may differ between runs)."""
    return "\n".join(" ".join(line.split()[:2]) for line in text.splitlines())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("games", nargs="+", type=Path)
    args = parser.parse_args()
    games = [g.read_bytes() for g in args.games]
    names = [g.name for g in args.games]
    times: Dict[str, List[float]] = {"submit_batch + results": [], "solve_batch": []}
    first: Dict[str, str] = {}
    with Client(args.server, token="") as client:
        for run in range(args.runs):
            for way in (list(times) if run % 2 == 0 else list(reversed(times))):
                tail = b"\n" * (2 * run + (way == "solve_batch") + 1)
                sources = [g + tail for g in games]
                start = time.perf_counter()
                if way == "solve_batch":
                    with client.solve_batch(sources, names=names, results="paritysol") as solved:
                        answers = {e.name: e.text() for e in solved}
                else:
                    batch = client.submit_batch(sources, names=names)
                    answers = {e.name: e.text() for e in batch.results("paritysol")}
                times[way].append(time.perf_counter() - start)
                assert sorted(answers) == sorted(names), "an answer per game"
                for name, text in answers.items():
                    assert winners(text) == first.setdefault(name, winners(text)), name
    for way, seconds in times.items():
        print(f"{way}: median {statistics.median(seconds) * 1e3:.0f} ms, "
              f"min {min(seconds) * 1e3:.0f} ms ({len(games)} games, {args.runs} runs)")


if __name__ == "__main__":
    main()

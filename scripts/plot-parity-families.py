"""Plots the parity algorithms' time against game size per lower-bound family (BENCHMARKS.md §8).

Usage: python scripts/plot-parity-families.py BENCH_JSON [OUT.svg]

BENCH_JSON holds the lines `cargo bench -p egsolve-core --bench parity_algorithms` records
(`"bench": "parity_algorithms"`: family, vertices, algorithm, cpu_s). One panel per family,
log-log, one line per algorithm; a slope of 1 is linear growth, 2 quadratic.
"""

import json
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> None:
    source = sys.argv[1]
    target = sys.argv[2] if len(sys.argv) > 2 else "docs/bench/parity-families.svg"
    series: dict = defaultdict(lambda: defaultdict(list))
    with open(source) as lines:
        for line in lines:
            row = json.loads(line)
            if row.get("bench") != "parity_algorithms" or "cpu_s" not in row:
                continue
            series[row["family"]][row["algorithm"]].append((row["vertices"], row["cpu_s"] * 1e3))
    families = sorted(series)
    columns = 4
    rows = (len(families) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(4 * columns, 3.2 * rows), squeeze=False)
    for axis, family in zip(axes.flat, families):
        for algorithm, points in sorted(series[family].items()):
            points.sort()
            style = {"linewidth": 2.5, "color": "black"} if algorithm == "auto" else {"alpha": 0.7}
            axis.plot([p[0] for p in points], [max(p[1], 1e-3) for p in points], marker=".", label=algorithm, **style)
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_title(family)
        axis.set_xlabel("vertices")
        axis.set_ylabel("CPU ms, one thread")
        axis.grid(True, which="major", alpha=0.3)
    for axis in list(axes.flat)[len(families):]:
        axis.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower right", ncol=2)
    figure.tight_layout()
    figure.savefig(target)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()

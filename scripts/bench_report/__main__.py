"""bench-report's Python half (called by `scripts/bench-report`).

  python3 scripts/bench_report render --results DIR [--gpu-results DIR] [--report FILE]
                                      [--plots DIR] [--no-plots]
      Splices markdown tables into the report between `<!-- bench-report:NAME -->` and
      `<!-- /bench-report:NAME -->` and writes SVG plots; sections and plots whose inputs are
      missing keep their old content.
  python3 scripts/bench_report take-gpu --from DIR --to DIR --commit SHA
      Copies a device run's bench.log / sweep.log / phases.jsonl (each only if it holds
      measurements) and machine.log into the GPU results folder, recording each log's commit,
      machine and load average (a `load average: …` line of machine.log) in its meta.json;
      logs the run lacks keep their earlier source.
  python3 scripts/bench_report anchors --egsolve BIN --data DIR --out FILE [--timeout S]
                                       [--repeat K]
      Solves the games of shared/guide/ANCHORS.md with `egsolve solve` per backend and
      appends one JSON line per (game, backend) with `summary.solve_seconds`.
"""

import argparse
import importlib.util
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_report import plots, tables  # noqa: E402
from bench_report.results import (  # noqa: E402
    GpuResults,
    Results,
    machine_load,
    parse_gpu_bench,
    parse_gpu_sweep,
    parse_phases,
)

ROOT = Path(__file__).resolve().parents[2]

ANCHOR_GAMES = [
    "parity/BRP_datasize=2_counting.gm.zst",
    "parity/Hesselink_datasize=2_property1.gm.zst",
    "energy/IEEE1394nparties=2_datasize=2_headersize=2_acksize=2_property4.mpg.gz",
    "parity/Onebit_datasize=2_messages_read_are_inevitably_sent.gm.gz",
    "parity/Lift_(Incorrect)_nlifts=3_liveness_1_1.gm.gz",
    "parity/Hanoi_ndisks=10_eventually_done.gm.gz",
]
ANCHOR_BACKENDS = {"reference": ["--backend", "reference"],
                   "auto-1": ["--backend", "auto", "--threads", "1"],
                   "auto": ["--backend", "auto"]}


def splice(report, name, fragment):
    """Replaces the text between the markers of section `name`; fails if they are missing."""
    begin, end = f"<!-- bench-report:{name} -->", f"<!-- /bench-report:{name} -->"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if not pattern.search(report):
        raise SystemExit(f"report has no `{begin}` … `{end}` pair; add it where the "
                         f"'{name}' table belongs")
    return pattern.sub(lambda _: f"{begin}\n{fragment}\n{end}", report, count=1)


def relpath(path):
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def render(args):
    for what, path in (("results directory", args.results), ("GPU results directory", args.gpu_results)):
        if path and not Path(path).is_dir():
            raise SystemExit(f"{path}: no such {what}; pass a folder of bench results")
    if not Path(args.report).is_file():
        raise SystemExit(f"{args.report}: no such report; pass --report with BENCHMARKS.md's path")
    results = Results(args.results)
    gpu = GpuResults(args.gpu_results, ROOT) if args.gpu_results else None
    sections = {
        "parse": tables.parsing(results),
        "cpu": tables.cpu_backend(results),
        "auto": tables.auto(results),
        "gpu-vs-cpu": tables.gpu_vs_cpu(gpu, relpath),
        "gpu-sweep": tables.gpu_sweep(gpu, relpath),
        "gpu-shared": tables.gpu_shared(gpu, relpath),
        "service": tables.service(results),
        "cluster": tables.cluster(results),
        "anchors": tables.anchors(results, gpu),
    }
    report_path = Path(args.report)
    report = report_path.read_text()
    updated = []
    for name, fragment in sections.items():
        if fragment is not None:
            report = splice(report, name, fragment)
            updated.append(name)
    report_path.write_text(report)
    print(f"{report_path}: tables updated: {', '.join(updated) or 'none'}")
    if args.no_plots:
        return
    if importlib.util.find_spec("matplotlib") is None:
        raise SystemExit("matplotlib is not installed: run scripts/bench-report (it makes a venv) "
                         "or pass --no-plots")
    out = Path(args.plots)
    out.mkdir(parents=True, exist_ok=True)
    written = [plots.solve_time_vs_edges(results, gpu, out),
               plots.speedup_vs_threads(results, gpu, out),
               plots.gpu_vs_cpu(gpu, out),
               plots.service_latency(results, out)]
    print("plots written: " + (", ".join(relpath(p) for p in written if p) or "none"))


def take_gpu(args):
    import shutil

    source, dest = Path(getattr(args, "from")), Path(args.to)
    checks = {
        "bench": ("bench.log", lambda p: any(g["gpu"] for g in parse_gpu_bench(p.read_text())["games"])),
        "sweep": ("sweep.log", lambda p: bool(parse_gpu_sweep(p.read_text()))),
        "phases": ("phases.jsonl", lambda p: bool(parse_phases(p))),
    }
    machine_log = source / "machine.log"
    machine, cores, load = None, None, None
    if machine_log.is_file():
        lines = machine_log.read_text().splitlines()
        if len(lines) >= 2 and lines[1].strip().isdigit():
            fields = [f.strip() for f in lines[0].split(",")]
            driver = f", driver {fields[1]}" if len(fields) > 1 else ""
            machine, cores = f"{fields[0]}{driver}, {lines[1].strip()} CPU cores", int(lines[1])
        load = machine_load(lines[2:])
    dest.mkdir(parents=True, exist_ok=True)
    meta_path = dest / "meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    taken = []
    for key, (name, has_measurements) in checks.items():
        log = source / name
        if not log.is_file():
            continue
        if not has_measurements(log):
            raise SystemExit(f"{log}: no measurements in it (a failed run?); not taken")
        shutil.copyfile(log, dest / name)
        meta.pop(f"{key}_log", None)
        meta[f"{key}_commit"] = args.commit
        if machine:
            meta[f"{key}_machine"], meta[f"{key}_cores"] = machine, cores
        # The load average the run recorded, else none: an earlier run's must not stay.
        meta.pop(f"{key}_load", None)
        if load:
            meta[f"{key}_load"] = load
        taken.append(name)
    if not taken:
        raise SystemExit(f"{source}: no bench.log, sweep.log or phases.jsonl to take")
    if machine_log.is_file():
        shutil.copyfile(machine_log, dest / "machine.log")
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    print(f"taken into {dest}: {', '.join(taken)} (commit {args.commit})")


def summary_of(json_path):
    """The `summary` object at the start of `egsolve solve`'s JSON (read without the rest)."""
    with open(json_path, "rb") as f:
        head = f.read(1 << 16).decode("utf-8", "replace")
    start = head.index('"summary"')
    start = head.index("{", start)
    return json.JSONDecoder().raw_decode(head[start:])[0]


def anchors(args):
    out = Path(args.out)
    with tempfile.TemporaryDirectory() as tmp:
        answer = Path(tmp) / "answer.json"
        for game in ANCHOR_GAMES:
            path = Path(args.data) / game
            if not path.is_file():
                print(f"skip {game}: not in {args.data}")
                continue
            for backend, flags in ANCHOR_BACKENDS.items():
                best, wall, timeout = None, None, args.timeout
                for _ in range(args.repeat):
                    start = time.monotonic()
                    done = subprocess.run([args.egsolve, "solve", str(path), *flags, "--timeout",
                                           str(timeout), "-o", str(answer)],
                                          stderr=subprocess.PIPE, text=True)
                    elapsed = time.monotonic() - start
                    if done.returncode != 0:
                        if done.returncode != 4:
                            raise SystemExit(f"egsolve solve {game} {flags}: exit "
                                             f"{done.returncode}: {done.stderr.strip()}")
                        break  # past the timeout: no repetition
                    solve = summary_of(answer)["solve_seconds"]
                    if best is None or solve < best:
                        best, wall = solve, elapsed
                row = {"bench": "anchors", "game": Path(game).name, "backend": backend,
                       "solve_s": best, "wall_s": wall, "timeout_s": timeout,
                       "repeat": args.repeat}
                print(json.dumps(row), flush=True)
                with out.open("a") as f:
                    f.write(json.dumps(row) + "\n")


def main():
    parser = argparse.ArgumentParser(prog="bench_report")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("render")
    r.add_argument("--results", required=True)
    r.add_argument("--gpu-results")
    r.add_argument("--report", default=str(ROOT / "BENCHMARKS.md"))
    r.add_argument("--plots", default=str(ROOT / "docs" / "bench"))
    r.add_argument("--no-plots", action="store_true")
    t = sub.add_parser("take-gpu")
    t.add_argument("--from", required=True)
    t.add_argument("--to", required=True)
    t.add_argument("--commit", required=True)
    a = sub.add_parser("anchors")
    a.add_argument("--egsolve", required=True)
    a.add_argument("--data", required=True)
    a.add_argument("--out", required=True)
    a.add_argument("--timeout", type=float, default=30)
    a.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    {"render": render, "anchors": anchors, "take-gpu": take_gpu}[args.command](args)


if __name__ == "__main__":
    main()

"""Loading measured results: the JSON lines the benches write (`BENCH_JSON`), the run's
`meta.json`, and the text logs of `gpu_check bench` / `gpu_check sweep` (device runs)."""

import json
import re
from pathlib import Path

# Shared-game file stems → short names used in every table and plot.
SHORT_NAMES = [
    (r"^IEEE1394", "IEEE1394 property4"),
    (r"^clique_500_cp4", "clique_500_cp4"),
    (r"^ABP_ABP\(BW\).*strong", "ABP strong-bisim"),
    (r"^ABP_CABP.*branching", "ABP/CABP branching"),
    (r"^ABP_CABP.*weak", "ABP/CABP weak"),
    (r"^ABP_datasize=2_infinitely_often_lost", "ABP lost"),
    (r"^BRP", "BRP counting"),
    (r"^Buffer_ABP", "Buffer/ABP branching"),
    (r"^CABP_", "CABP receive_for_all"),
    (r"^Hanoi_ndisks=(\d+)", "Hanoi {0}"),
    (r"^Hesselink", "Hesselink property1"),
    (r"^Lift_\(Incorrect\)_nlifts=(\d+)", "Lift nlifts={0}"),
    (r"^Onebit", "Onebit inevitably_sent"),
    (r"^SWP", "SWP windowsize=3"),
    (r"^rngame_n(\d+)", "rngame n{0}"),
]


def short_name(name):
    """A short, stable name for a shared game (file stem or path); others unchanged."""
    stem = Path(name).name if "/" in name else name
    for pattern, short in SHORT_NAMES:
        match = re.match(pattern, stem)
        if match:
            return short.format(*match.groups())
    return name


def is_shared(name):
    return any(re.match(p, Path(name).name) for p, _ in SHORT_NAMES)


def read_jsonl(path):
    """Every JSON object in a JSON-lines file (empty list when the file is missing)."""
    path = Path(path)
    if not path.is_file():
        return []
    rows = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path}:{number}: not a JSON line ({e}); rerun the bench")
    return rows


class Results:
    """One results directory: meta.json plus `<bench>.jsonl` files."""

    def __init__(self, directory):
        self.dir = Path(directory)
        meta = self.dir / "meta.json"
        self.meta = json.loads(meta.read_text()) if meta.is_file() else {}
        self.parse = read_jsonl(self.dir / "parse.jsonl")
        self.cpu = read_jsonl(self.dir / "cpu.jsonl")
        self.accel = read_jsonl(self.dir / "accel.jsonl")
        self.service = read_jsonl(self.dir / "service.jsonl")
        self.anchors = read_jsonl(self.dir / "anchors.jsonl")
        self.cluster = read_jsonl(self.dir / "cluster.jsonl")

    def part(self, name):
        """The run metadata of one part (`meta.json` keeps one entry per part, so a run of
        some parts leaves the others' provenance as it was)."""
        return self.meta.get("parts", {}).get(name, {})

    def provenance(self, name):
        m = self.part(name)
        load = ""
        if m.get("load_before") or m.get("load_after"):
            load = (f", load average {m.get('load_before', '?')} before / "
                    f"{m.get('load_after', '?')} after")
        mode = f", {m['mode']} mode" if m.get("mode") else ""
        return (
            f"commit `{m.get('commit', 'unknown')}`, {m.get('machine', 'unknown machine')}"
            f"{load}{mode}, {m.get('date', 'date unknown')}"
        )


# ---- gpu_check logs -----------------------------------------------------------------------

NUM = r"([\d.]+)"
SECTION = re.compile(r"^-- (.*?): n=(\d+) m=(\d+) avg degree (\d+)")
GPU_RUN = re.compile(
    rf"^(gpu .+?)\s+h=(\d+)\s+prepare\s+{NUM} ms\s+upload\s+{NUM} ms\s+solve\s+{NUM} ms"
    rf"\s+download\s+{NUM} ms\s+total\s+{NUM} ms"
)
CPU_RUN = re.compile(rf"^cpu backend \((\d+) threads\)\s+solve\s+{NUM} ms")
RATIOS = re.compile(rf"{NUM}× faster solve only, {NUM}× counting")
REF_RUN = re.compile(rf"^reference \(1 CPU thread\)\s+solve\s+{NUM} ms")
TINY = re.compile(rf"^(persistent.*?|host-driven.*?)\s+rounds\s+(\d+).*?{NUM} µs/round")
COPY = re.compile(rf"^copy bandwidth.*?:\s+{NUM} GB/s")
SWEEP = re.compile(
    r"^(?P<case>.+?)\s+(?P<n>\d+)\s+(?P<m>\d+)\s+(?P<variant>auto \S+|gpu \S+|gpu|cpu \S+)"
    r"\s+(?P<ms>[\d.]+)\s+(?P<evals>\d+)\s+(?P<phases>\d+)\s+[\d.]+\s+[\d.]+\s+(?P<result>.*)$"
)


LOAD = re.compile(r"^(?:.*load average:?\s*)?(\d+\.\d+),?\s+(\d+\.\d+),?\s+(\d+\.\d+)(?:\s+\d+/\d+\s+\d+)?\s*$")


def machine_load(lines):
    """The load average a device run's `machine.log` recorded (`load average: 0.20 0.05 0.01`,
    `uptime`'s line or a copy of /proc/loadavg), as "0.20 0.05 0.01"; None when it has none."""
    for line in lines:
        if m := LOAD.match(line.strip()):
            return " ".join(m.groups())
    return None


def parse_gpu_bench(text):
    """`gpu_check bench` output → {copy_gb_s, tiny: [...], games: [...]}."""
    out = {"copy_gb_s": None, "tiny": [], "games": []}
    game = None
    for line in text.splitlines():
        if m := COPY.match(line):
            out["copy_gb_s"] = float(m.group(1))
        elif m := TINY.match(line):
            out["tiny"].append({"tier": m.group(1).strip(), "us_per_round": float(m.group(3))})
        elif m := SECTION.match(line):
            game = {"game": m.group(1), "vertices": int(m.group(2)), "edges": int(m.group(3)),
                    "degree": int(m.group(4)), "gpu": {}, "cpu": None, "reference_ms": None}
            out["games"].append(game)
        elif game is None:
            continue
        elif m := GPU_RUN.match(line):
            prepare, upload, solve, download, total = map(float, m.groups()[2:])
            game["gpu"][m.group(1).strip()] = {
                "lanes": int(m.group(2)), "prepare_ms": prepare, "upload_ms": upload,
                "solve_ms": solve, "download_ms": download, "total_ms": total}
        elif m := CPU_RUN.match(line):
            game["cpu"] = {"threads": int(m.group(1)), "solve_ms": float(m.group(2))}
            # The bench's own ratios (from unrounded times), where it printed them.
            if r := RATIOS.search(line):
                game["cpu"]["solve_ratio"] = float(r.group(1))
                game["cpu"]["total_ratio"] = float(r.group(2))
        elif m := REF_RUN.match(line):
            game["reference_ms"] = float(m.group(1))
    return out


def parse_gpu_sweep(text):
    """`gpu_check sweep` output → [{case, vertices, edges, variants: {name: ms or None}}]."""
    cases = {}
    for line in text.splitlines():
        m = SWEEP.match(line)
        if not m:
            continue
        case = cases.setdefault(m["case"].strip(), {
            "case": m["case"].strip(), "vertices": int(m["n"]), "edges": int(m["m"]),
            "variants": {}})
        ok = m["result"].startswith("pass")
        case["variants"][m["variant"]] = float(m["ms"]) if ok else None
    return list(cases.values())


def parse_phases(path):
    """`scripts/phases-session.sh`'s phases.jsonl → {game: {"edges", backend: run}}, where a
    run is `{"solve_s", "strategy_s", "wall_ms", "ok"}` (`solve_s` None when it failed)."""
    games = {}
    for r in read_jsonl(path):
        summary = r.get("summary") or {}
        game = games.setdefault(r["game"], {"edges": summary.get("edges"), "runs": {}})
        game["edges"] = game["edges"] or summary.get("edges")
        ok = r.get("rc") == 0 and "check-ok" in r.get("check", "") and "DIFF" not in r.get("answer", "")
        game["runs"][r["backend"]] = {
            "solve_s": summary.get("solve_seconds") if r.get("rc") == 0 else None,
            "strategy_s": summary.get("strategy_seconds"), "wall_ms": r.get("wall_ms"), "ok": ok}
    return games


class GpuResults:
    """A device run: `bench.log`, `sweep.log`, `phases.jsonl` and `machine.log` (any may be
    missing), with provenance from `meta.json` (`commit`, `machine`, `load`, each also per log
    as `bench_commit`, `sweep_load`, …; `bench_log`/`sweep_log`/`phases_log`/`machine_log`
    may point elsewhere, relative to the repository root)."""

    def __init__(self, directory, root):
        self.dir = Path(directory)
        meta = self.dir / "meta.json"
        self.meta = json.loads(meta.read_text()) if meta.is_file() else {}

        def log(key, default):
            where = self.meta.get(key)
            path = (Path(root) / where) if where else self.dir / default
            return path if path.is_file() else None

        self.bench_path = log("bench_log", "bench.log")
        self.sweep_path = log("sweep_log", "sweep.log")
        machine = log("machine_log", "machine.log")
        self.phases_path = log("phases_log", "phases.jsonl")
        self.phases = parse_phases(self.phases_path) if self.phases_path else None
        self.bench = parse_gpu_bench(self.bench_path.read_text()) if self.bench_path else None
        self.sweep = parse_gpu_sweep(self.sweep_path.read_text()) if self.sweep_path else None
        if "machine" not in self.meta and machine:  # a folder without meta.json
            lines = machine.read_text().splitlines()
            gpu = lines[0].split(",")[0] if lines else "GPU"
            cores = lines[1].strip() if len(lines) > 1 else "?"
            self.meta["machine"] = f"{gpu}, {cores} CPU cores"

    def provenance(self, which):
        m = self.meta
        commit = m.get(f"{which}_commit", m.get("commit", "unknown"))
        machine = m.get(f"{which}_machine", m.get("machine", "unknown machine"))
        load = m.get(f"{which}_load", m.get("load"))
        load = f"load average {load}" if load else "load not recorded"
        path = {"bench": self.bench_path, "sweep": self.sweep_path,
                "phases": self.phases_path}[which]
        return f"commit `{commit}`, {machine}, {load}, log `{path}`"

    def cores(self, which):
        return int(self.meta.get(f"{which}_cores", self.meta.get("cores", 16)))

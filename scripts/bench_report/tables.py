"""Markdown fragments, one per report section; each returns None when its input is missing,
so that a partial run leaves the other sections of BENCHMARKS.md as they were."""

from .results import is_shared, short_name

# Goals from the issues, printed beside the service figures.
SERVICE_GOALS = {"idle_latency": "p50 ≤ 10 ms", "throughput": "≥ 200 jobs/s",
                 "overhead_cli": "≤ 10 %"}

# The numbers to beat (shared/guide/ANCHORS.md; measured by others, quoted, seconds,
# parsing excluded; "—" = did not finish within 25 s; "paper GPU" = the faster of its two
# kernels).
ANCHORS = {
    # game: (paper seq, paper 16 threads, paper GPU best of two, plain Algorithm 1, Oink)
    "BRP counting": ("0.715", "0.119", "0.076", "2.75", "0.15"),
    "Hesselink property1": ("0.106", "0.074", "0.061", "0.27", "0.11"),
    "IEEE1394 property4": ("1.275", "1.668", "1.62", "0.49", "– (energy game)"),
    "Onebit inevitably_sent": ("—", "—", "6.9", "93", "0.008"),
    "Lift nlifts=3": ("8.87", "11.36", "13.57", "4.9", "0.006"),
    "Hanoi 10": ("1.435", "0.209", "0.142", "2.58", "0.001"),
}


def table(header, rows, align=None):
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def sec(value, digits=3):
    """Seconds; below 10 ms with more decimals, so that short runs do not all read 0.000."""
    if value is None:
        return "–"
    if 0 < value < 0.01 and digits <= 3:
        return f"{value:.5f}"
    return f"{value:.{digits}f}"


def times(x):
    """A speed-up factor: two decimals below 10×, thousands separators above."""
    return f"{x:.2f}×" if x < 10 else f"{x:,.0f}×"


def ms(value, digits=1):
    return "–" if value is None else f"{value:.{digits}f}"


def ratio(slow, fast):
    if slow is None or fast is None or fast <= 0:
        return "–"
    return times(slow / fast)


def footer(provenance, command):
    """The table's provenance: its own line, ending the note's paragraph."""
    return f"\n_Measured: {provenance}. Regenerate: `{command}`._"


# Steps measured once per input (baselines), and the threaded step each one is shown beside.
PARSE_BASELINES = {"sequential": ("parse+build", "write text"), "scan (newlines)": ("parse+build",),
                   "decompress": ("stream",)}


def parsing(results):
    """One row per input and threaded step (`parse+build`, `stream`, `egb load`, `write
    text`), MB/s per thread count, the step's baselines of the same run beside it."""
    if not results.parse:
        return None
    inputs = {}  # input → {"baselines": {measure: row}, "steps": {step: {threads: row}}}
    threads = set()
    for r in results.parse:
        entry = inputs.setdefault(r["input"], {"baselines": {}, "steps": {}})
        step, _, count = r["measure"].rpartition(" ")
        if step and count.isdigit():
            entry["steps"].setdefault(step, {})[int(count)] = r
            threads.add(int(count))
        else:
            entry["baselines"][r["measure"]] = r
    threads = sorted(threads)
    rate = lambda r: "–" if r is None or r.get("mb_per_s") is None else f"{r['mb_per_s']:.0f}"
    rows = []
    for name, entry in inputs.items():
        steps = list(entry["steps"]) or [""]
        placed = set()
        for i, step in enumerate(steps):
            base = []
            order = list(PARSE_BASELINES)
            for measure, r in sorted(entry["baselines"].items(),
                                     key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)):
                homes = [s for s in PARSE_BASELINES.get(measure, ()) if s in entry["steps"]]
                if (homes and homes[0] == step) or (not homes and i == 0):
                    base.append(f"{measure.split(' ')[0]} {rate(r)}")
                    placed.add(measure)
            runs = entry["steps"].get(step, {})
            last = runs[max(runs)] if runs else None
            speedup = "" if last is None or last.get("speedup") is None else f"{last['speedup']:.2f}×"
            mb = (last or next(iter(entry["baselines"].values())))["mb"]
            cells = [rate(runs.get(t)) if t in runs else "" for t in threads]
            if runs:
                cells[threads.index(max(runs))] = f"**{cells[threads.index(max(runs))]}**"
            rows.append((short_name(name) if i == 0 else "", step, f"{mb:.1f}", ", ".join(base),
                         *cells, speedup))
    header = ["input", "step", "MB", "baselines, MB/s", *[f"{t} thread{'s' * (t > 1)}" for t in threads],
              "speed-up"]
    return (table(header, rows, ["---", "---", "---:", "---"] + ["---:"] * (len(threads) + 1))
            + "\n\nMB/s, wall clock, median of the run's repetitions, of decompressed text (`egb "
            "load`: of egb bytes; `write text`: of solution text written to memory). `parse+build "
            "T` reads the text on T threads, building the arena included; `stream T` reads the "
            "compressed file as it is; `egb load T` loads the game converted to egb. Baselines of "
            "the same run: `sequential`, the reader (or writer) as one pass on one thread, against "
            "which the speed-up at the most threads is taken (`egb load`: against its 1 thread); "
            "`scan`, a byte loop counting newlines (memory speed on one core); `decompress`."
            + footer(results.provenance("parse"), "scripts/bench-report --only parse"))


def cpu_backend(results):
    if not results.cpu:
        return None
    rows = []
    for r in results.cpu:
        timeout = r.get("timeout_s")
        t = lambda key: sec(r[key]) if r[key] is not None else f"> {timeout:g}"
        bpe = r.get("bytes_per_edge")
        rows.append((short_name(r["game"]), f"{r['edges']:,}", t("reference_s"), t("frontier1_s"),
                     t("frontier2_s"), t("sweep2_s"), ratio(r["reference_s"], r["frontier1_s"]),
                     ratio(r["frontier1_s"], r["frontier2_s"]), "–" if bpe is None else f"{bpe:.1f}"))
    return (table(["game", "edges", "reference s", "frontier 1t s", "frontier 2t s",
                   "sweep 2t s", "ref / 1t", "1t / 2t", "B/edge"], rows)
            + "\n\nCredits only (strategies excluded); runs under 3 s best of 5, interleaved; every "
            "run's credits equal the reference's."
            + footer(results.provenance("cpu"), "scripts/bench-report --only cpu"))


def auto(results):
    if not results.accel:
        return None
    rows = []
    for r in results.accel:
        name = short_name(r["game"]) if is_shared(r["game"]) else r["game"]
        reference = (sec(r["reference_s"]) if r["reference_finished"]
                     else f"> {r['reference_s']:.1f}")
        speedup = r["reference_s"] / max(r["auto_s"], 1e-9)
        rows.append((name, f"{r['edges']:,}", reference, f"{r['reference_lifts']:,}",
                     sec(r["auto_s"]), sec(r["auto_strategies_s"]), f"{r['auto_lifts']:,}",
                     r["evaluations"], ("" if r["reference_finished"] else "> ") + times(speedup)))
    return (table(["game", "edges", "reference s", "ref lifts", "auto s", "+ strategies s",
                   "auto lifts", "evaluations", "ref / auto"], rows)
            + "\n\nOne core; credits only, strategies in their own column; `>`: the reference "
            "did not finish within the limit (its time and lifts are lower bounds)."
            + footer(results.provenance("accel"), "scripts/bench-report --only accel"))


def gpu_vs_cpu(gpu, relpath):
    if not gpu or not gpu.bench:
        return None
    rows = []
    for g in gpu.bench["games"]:
        run = g["gpu"].get("gpu auto")
        if not run or not g["cpu"]:
            continue
        cpu = g["cpu"]["solve_ms"]
        solve_ratio = g["cpu"].get("solve_ratio") or cpu / run["solve_ms"]
        total_ratio = g["cpu"].get("total_ratio") or cpu / run["total_ms"]
        rows.append((f"{g['game']}, {g['edges']:.1e} edges".replace("e+0", "e"),
                     f"{run['prepare_ms']} / {run['upload_ms']} / {run['solve_ms']} / {run['download_ms']}",
                     ms(run["total_ms"]), ms(cpu), f"**{solve_ratio:.1f}×**",
                     f"{total_ratio:.1f}×", ms(g["reference_ms"])))
    if not rows:
        return None
    threads = next((g["cpu"]["threads"] for g in gpu.bench["games"] if g["cpu"]), "all")
    tiny = "; ".join(f"{t['tier']} {t['us_per_round']} µs" for t in gpu.bench["tiny"])
    text = table(["game", "GPU prepare / upload / solve / download ms", "GPU total ms",
                  f"CPU backend, {threads} threads ms", "solve only", "end to end",
                  "reference, 1 thread ms"], rows)
    text += ("\n\nLifting from 0 to the fixpoint, credits only, warm context; CPU best of up to 3. "
             f"Per-round overhead on tiny frontiers: {tiny}.")
    if gpu.bench["copy_gb_s"]:
        text += f" Device copy bandwidth {gpu.bench['copy_gb_s']:.0f} GB/s (read + write)."
    return text + footer(gpu.provenance("bench").replace(str(gpu.bench_path), relpath(gpu.bench_path)),
                         "scripts/bench-report --gpu-results DIR (see docs/bench/regenerating.md)")


def gpu_sweep(gpu, relpath):
    if not gpu or not gpu.sweep:
        return None
    variants = []
    for case in gpu.sweep:
        for v in case["variants"]:
            if v not in variants:
                variants.append(v)
    rows = [(short_name(c["case"]), f"{c['edges']:,}",
             *[ms(c["variants"].get(v)) if c["variants"].get(v) is not None else "–" for v in variants])
            for c in gpu.sweep]
    return (table(["game", "edges", *[f"{v} ms" for v in variants]], rows)
            + "\n\nWarm process, strategies included (except `gpu plain`: device lifting alone, "
            "credits only); median of 3 under 1 s; `–`: past the time limit; every finished row "
            "equals the worklist's answer."
            + footer(gpu.provenance("sweep").replace(str(gpu.sweep_path), relpath(gpu.sweep_path)),
                     "scripts/bench-report --gpu-results DIR"))


def gpu_shared(gpu, relpath):
    if not gpu or not gpu.phases:
        return None
    backends = [("auto1", "auto, 1 thread"), ("auto", "auto, all cores"),
                ("cpu", "cpu, all cores"), ("gpu", "gpu")]
    rows = []
    for name, game in sorted(gpu.phases.items(), key=lambda kv: kv[1]["edges"] or 0):
        cells = []
        for key, _ in backends:
            run = game["runs"].get(key)
            cells.append("–" if not run or run["solve_s"] is None else ms(run["solve_s"] * 1e3))
        runs = [r for r in game["runs"].values() if r["solve_s"] is not None]
        certified = "all" if runs and all(r["ok"] for r in runs) else "**no**"
        rows.append((short_name(name), f"{game['edges']:,}" if game["edges"] else "?", *cells,
                     certified))
    text = table(["game", "edges", *[f"{label} ms" for _, label in backends],
                  "answers equal and certified"], rows)
    text += ("\n\n`summary.solve_seconds` of one `egsolve solve` process per backend (credits; "
             "strategies and parsing excluded). gpu times include the device start-up of each fresh "
             "process (about 0.3 s even on the smallest games; the first gpu run also compiles "
             "the kernels), so they are not warm figures: those are in the sweep above. Every "
             "answer is compared with the independent one and `auto`'s and certified by `egsolve "
             "check`.")
    return text + footer(gpu.provenance("phases").replace(str(gpu.phases_path),
                                                         relpath(gpu.phases_path)),
                         "device run of scripts/phases-session.sh, then "
                         "scripts/bench-report --gpu-results DIR")


def service(results):
    if not results.service:
        return None
    by = {}
    for r in results.service:
        key = (r["measurement"], r.get("family", ""))
        by.setdefault(key, {})[r["sync_commits"]] = r
    rows = []
    for (measurement, family), runs in by.items():
        cell = lambda r: {
            "idle_latency": lambda: f"{r['p50_ms']:.2f} / {r['p99_ms']:.2f} ms",
            "throughput": lambda: f"{r['jobs_per_s']:.0f} jobs/s (p50 {r['p50_ms']:.1f} ms)",
            "overhead_in_process": lambda: f"{r['overhead_percent']:+.1f} %",
            "overhead_cli": lambda: (f"{r['overhead_median_percent']:+.1f} % "
                                     f"({r['overhead_min_percent']:+.1f} %)"),
        }[measurement]() if r else "–"
        label = {
            "idle_latency": "idle submit → result, 1,000-vertex arenas, p50 / p99",
            "throughput": f"throughput, 1,000 jobs from 32 clients, {family}",
            "overhead_in_process": "IEEE1394 in-process: JSON into a sink vs over HTTP, median of 3",
            "overhead_cli": "IEEE1394 `solve -o` vs `submit --wait -o`, overhead of medians (minima)",
        }[measurement]
        rows.append((label, cell(runs.get(True)), cell(runs.get(False)),
                     SERVICE_GOALS.get(measurement, "")))
    return (table(["measurement", "`sync_commits` on (default)", "off", "goal"], rows,
                  ["---", "---:", "---:", "---"])
            + "\n\nA real server on loopback in the benchmark's process; every arena distinct (no "
            "cache hits)."
            + footer(results.provenance("service"), "scripts/bench-report --only service"))


def cluster(results):
    if not results.cluster:
        return None
    rows = []
    for r in results.cluster:
        if r["measurement"] == "throughput":
            goal = {2: "≥ 1.8× at 2", 4: "≥ 3.5× at 4"}.get(r["workers"], "")
            rows.append((f"throughput, {r['workers']} worker process(es), {r['jobs']} reference "
                         f"jobs of {r['job_vertices']:,} vertices",
                         f"{r['jobs_per_s']:.2f} jobs/s = {r['vs_one_worker']:.2f}× one worker", goal))
        elif r["measurement"] == "idle_latency":
            rows.append((f"idle submit → result, 1,000-vertex arenas, {r['engine']}, p50 / p99",
                         f"{r['p50_ms']:.2f} / {r['p99_ms']:.2f} ms",
                         "p50 ≤ 15 ms" if r["engine"] == "postgres" else ""))
        elif r["measurement"] == "lease_expiry":
            rerun = sorted(r["rerun_ms"])
            rows.append((f"lease expiry to re-run, lease {r['lease_ms']} ms, worker killed "
                         "mid-solve, min / median / max",
                         " / ".join(f"{x:.0f}" for x in rerun) + " ms = "
                         f"{rerun[-1] / r['lease_ms']:.2f}× the lease at most", "≤ 2×"))
    cores = results.part("cluster").get("cores", "?")
    return (table(["measurement", "result", "goal"], rows, ["---", "---:", "---"])
            + f"\n\nA throwaway PostgreSQL server (fsync on) on the same machine; worker processes "
            f"of one CPU thread each, so the ratio needs a core per worker ({cores} here)."
            + footer(results.provenance("cluster"), "scripts/bench-report --only cluster"))


def anchors(results, gpu):
    ours = {}
    for r in results.anchors:
        ours.setdefault(short_name(r["game"]), {})[r["backend"]] = r
    if not ours:
        return None
    # The GPU machine's columns: phases.jsonl (solve seconds, like ours) when present, else
    # the sweep (warm process, strategies included).
    sweep = {}
    if gpu and gpu.phases:
        sweep = {short_name(g): {"auto all": (r["runs"].get("auto") or {}).get("solve_s"),
                                 "gpu": (r["runs"].get("gpu") or {}).get("solve_s")}
                 for g, r in gpu.phases.items()}
        sweep = {g: {k: None if v is None else v * 1e3 for k, v in runs.items()}
                 for g, runs in sweep.items()}
    elif gpu and gpu.sweep:
        sweep = {short_name(c["case"]): c["variants"] for c in gpu.sweep}
    cores = results.part("anchors").get("cores", "all")

    def mine(game, backend):
        r = ours.get(game, {}).get(backend)
        if r is None:
            return "–"
        return sec(r["solve_s"]) if r["solve_s"] is not None else f"> {r['timeout_s']:g}"

    def device(game, variant):
        value = sweep.get(game, {}).get(variant)
        return "–" if value is None else f"{value / 1e3:.3f}"

    gpu_variant = next((v for v in ("gpu", "gpu 25%") if any(v in s for s in sweep.values())), "gpu")
    rows = []
    for game, (seq, par, dev, plain, oink) in ANCHORS.items():
        rows.append((game, seq, par, dev, plain, oink,
                     mine(game, "reference"), mine(game, "auto-1"), mine(game, "auto"),
                     device(game, "auto all"), device(game, gpu_variant)))
    header = ["game", "paper seq", "paper 16t", "paper GPU", "plain Alg. 1", "Oink",
              "egsolve reference", "egsolve auto 1t", f"egsolve auto {cores}t",
              "auto all cores (GPU machine)", "gpu (GPU machine)"]
    text = table(header, rows)
    text += ("\n\nSeconds, parsing excluded. The first five columns are quoted from "
             "`shared/guide/ANCHORS.md` (measured by others: the paper's code on the lent H100 "
             "machine, plain Algorithm 1 and Oink on a 2-core machine); `egsolve` columns are "
             "`summary.solve_seconds` of `egsolve solve --backend B` (credits only; strategies "
             "excluded), best of the run's repetitions."
             + footer(results.provenance("anchors"), "scripts/bench-report --only anchors"))
    if gpu and gpu.phases:
        text += (" The GPU-machine columns are `solve_seconds` from `phases.jsonl`: "
                 + gpu.provenance("phases").split(", log")[0] + ".")
    elif sweep:
        text += (" The GPU-machine columns are `gpu_check sweep` (strategies included): "
                 + gpu.provenance("sweep").split(", log")[0] + ".")
    return text

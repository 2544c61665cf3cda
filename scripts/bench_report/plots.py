"""SVG plots with matplotlib (deterministic output: fixed hash salt, no date). Each function
returns the file it wrote, or None when its input is missing (the old plot stays)."""

from pathlib import Path

from .results import short_name


def _pyplot():
    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "egsolve-bench-report", "svg.fonttype": "none",
                         "font.size": 9, "figure.dpi": 100})
    return plt


def _save(plt, fig, out, name):
    path = Path(out) / name
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None, "Creator": "scripts/bench-report"})
    plt.close(fig)
    return path


def solve_time_vs_edges(results, gpu, out):
    """Solve time against edges, one series per backend, log-log."""
    series = {}

    def add(label, edges, seconds):
        if seconds is not None and seconds > 0:
            series.setdefault(label, []).append((edges, seconds))

    for r in results.cpu:
        add("reference (1 thread)", r["edges"], r["reference_s"])
        add("cpu frontier, 1 thread", r["edges"], r["frontier1_s"])
        add("cpu frontier, 2 threads", r["edges"], r["frontier2_s"])
    for r in results.accel:
        add("auto (1 thread)", r["edges"], r["auto_s"])
    if gpu and gpu.bench:
        for g in gpu.bench["games"]:
            run = g["gpu"].get("gpu auto")
            if run:
                add("gpu lifting, end to end (GPU machine)", g["edges"], run["total_ms"] / 1e3)
            if g["cpu"]:
                add(f"cpu frontier, {g['cpu']['threads']} threads (GPU machine)", g["edges"],
                    g["cpu"]["solve_ms"] / 1e3)
    if gpu and gpu.phases:
        for game in gpu.phases.values():
            run = game["runs"].get("auto")
            if run and game["edges"]:
                add("auto, all cores (GPU machine)", game["edges"], run["solve_s"])
    if not series:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    markers = "os^vDPX*"
    for i, (label, points) in enumerate(sorted(series.items())):
        points.sort()
        ax.scatter([p[0] for p in points], [p[1] for p in points], label=label,
                   marker=markers[i % len(markers)], s=22)
    ax.set(xscale="log", yscale="log", xlabel="edges", ylabel="solve time, s (credits only)",
           title="Solve time vs edges per backend")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    return _save(plt, fig, out, "solve-time-vs-edges.svg")


def speedup_vs_threads(results, gpu, out):
    """Speed-up over one thread: the CPU backend 1 → 2 threads here, `auto` 1 → all cores on
    the GPU machine."""
    lines = []
    for r in results.cpu:
        if r["frontier1_s"] and r["frontier2_s"] and r["frontier1_s"] >= 0.01:
            lines.append((f"{short_name(r['game'])} (cpu)", [1, 2],
                          [1.0, r["frontier1_s"] / r["frontier2_s"]], "-"))
    if gpu and gpu.phases:
        cores = gpu.cores("phases")
        for name, game in gpu.phases.items():
            one = (game["runs"].get("auto1") or {}).get("solve_s")
            many = (game["runs"].get("auto") or {}).get("solve_s")
            if one and many and one >= 0.01:
                lines.append((f"{short_name(name)} (auto, GPU machine)", [1, cores],
                              [1.0, one / many], "--"))
    elif gpu and gpu.sweep:
        cores = gpu.cores("sweep")
        for c in gpu.sweep:
            one, many = c["variants"].get("auto 1t"), c["variants"].get("auto all")
            if one and many and one >= 10:
                lines.append((f"{short_name(c['case'])} (auto, GPU machine)", [1, cores],
                              [1.0, one / many], "--"))
    if not lines:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    top = max(x for line in lines for x in line[1])
    ax.plot([1, top], [1, top], color="grey", lw=0.8, ls=":", label="ideal")
    for label, xs, ys, style in lines:
        ax.plot(xs, ys, style, marker="o", ms=3, label=label)
    ax.set(xscale="log", yscale="log", ylabel="speed-up over 1 thread",
           xlabel="threads (solid: CPU backend, 1 → 2 threads; dashed: auto, 1 → all cores)",
           title="Speed-up vs threads (games of ≥ 10 ms on one thread)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    return _save(plt, fig, out, "speedup-vs-threads.svg")


def gpu_vs_cpu(gpu, out):
    """Per game: `auto` on one thread and on all cores against the gpu backend (sweep), log y."""
    if not gpu or not gpu.sweep:
        return None
    wanted = [v for v in ("auto 1t", "auto all", "gpu", "gpu 25%", "gpu plain")
              if any(v in c["variants"] for c in gpu.sweep)]
    cases = [c for c in gpu.sweep if any(c["variants"].get(v) for v in wanted)
             and max(c["variants"].get(v) or 0 for v in wanted) >= 1.0]
    if not cases or not wanted:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.8 / len(wanted)
    for i, variant in enumerate(wanted):
        xs = [k + i * width for k in range(len(cases))]
        ys = [c["variants"].get(variant) or 0 for c in cases]
        ax.bar(xs, ys, width, label=variant)
    ax.set_xticks([k + (len(wanted) - 1) * width / 2 for k in range(len(cases))])
    ax.set_xticklabels([short_name(c["case"]) for c in cases], rotation=35, ha="right", fontsize=7)
    ax.set(yscale="log", ylabel="ms (warm process)",
           title=f"GPU vs CPU per game ({gpu.provenance('sweep').split(', load')[0]}); missing bar: past the limit")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=7)
    return _save(plt, fig, out, "gpu-vs-cpu.svg")


def service_latency(results, out):
    """Distribution (empirical CDF) of submit → result latency: idle and under load."""
    runs = [r for r in results.service + results.cluster if r.get("latencies_ms")]
    if not runs:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for r in runs:
        xs = sorted(r["latencies_ms"])
        ys = [(i + 1) / len(xs) for i in range(len(xs))]
        if r["bench"] == "cluster":
            label = f"idle, one client, {r['engine']} store (cluster bench)"
        else:
            what = ("idle, one client" if r["measurement"] == "idle_latency"
                    else f"32 clients, {r['family']}")
            label = f"{what}, sync_commits {'on' if r['sync_commits'] else 'off'}"
        ax.step(xs, ys, where="post", label=label)
    ax.set(xscale="log", xlabel="submit → result latency, ms", ylabel="fraction of jobs",
           title="Service latency distribution (1,000-vertex arenas)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    return _save(plt, fig, out, "service-latency.svg")

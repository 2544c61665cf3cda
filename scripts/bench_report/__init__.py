"""Tables and plots for BENCHMARKS.md from benchmark results (see scripts/bench-report)."""

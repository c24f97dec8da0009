"""Run every benchmark and print one table: ``python benchmarks/run.py [NAME ...]``.

Each ``benchmarks/bench_*.py`` module defines ``bench_*()`` functions that
return a list of rows: dict(benchmark, case, seconds, target_seconds or None,
reference_seconds or None, note). ``ratio`` is seconds / reference_seconds
(below 1: ours is faster). Timings are the best of several repeats (the
minimum is the least disturbed by other load on the machine). The table is
also written to ``data/results/benchmarks/latest.csv``.
"""

from __future__ import annotations

import importlib
import platform
import sys
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def best_of(fn, repeat=5, min_seconds=0.2):
    """Best wall time of ``fn()`` over ``repeat`` runs (at least ``min_seconds`` of total work)."""
    times = []
    start = time.perf_counter()
    while len(times) < repeat or (time.perf_counter() - start < min_seconds and len(times) < 100):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(names):
    rows = []
    for module_path in sorted(HERE.glob("bench_*.py")):
        module = importlib.import_module(module_path.stem)
        for attr in sorted(dir(module)):
            if attr.startswith("bench_") and (not names or any(n in attr for n in names)):
                print(f"running {module_path.stem}.{attr} ...", file=sys.stderr, flush=True)
                rows.extend(getattr(module, attr)())
    table = pd.DataFrame(rows, columns=["benchmark", "case", "seconds", "target_seconds", "reference_seconds", "note"])
    for column in ("seconds", "target_seconds", "reference_seconds"):
        table[column] = pd.to_numeric(table[column], errors="coerce")  # None -> NaN
    table["ratio"] = table["seconds"] / table["reference_seconds"]
    table["meets_target"] = table["target_seconds"].isna() | (table["seconds"] <= table["target_seconds"])
    out = HERE.parent / "data" / "results" / "benchmarks" / "latest.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    with pd.option_context("display.width", 200, "display.max_colwidth", 60, "display.max_rows", 500):
        print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0 if table["meets_target"].all() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Run every benchmark and print one table: ``python benchmarks/run.py [NAME ...]``.

Each ``benchmarks/bench_*.py`` module defines ``bench_*(n=None)`` functions that
return a list of rows: dict(benchmark, case, seconds, target_seconds or None,
reference_seconds or None, note) (``COLUMNS``). ``n=None`` runs the documented
sizes; an integer caps the number of records (cells, users) of every case, so
that ``tests/test_benchmarks.py`` can run each benchmark at a tiny size. A
module that needs optional packages lists them in ``REQUIRES`` (import names);
when one is missing its benchmarks give a "not run" row instead of running.
A case whose data file is absent gives a "not run" row too (``seconds`` NaN).
``ratio`` is seconds / reference_seconds (below 1: ours is faster). Timings are
the best of several repeats (the minimum is the least disturbed by other load
on the machine). The table is also written to
``data/results/benchmarks/latest.csv``.
"""

from __future__ import annotations

import importlib
import importlib.util
import platform
import sys
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

COLUMNS = ["benchmark", "case", "seconds", "target_seconds", "reference_seconds", "note"]

# Set by the tests: one run per timing, whatever the benchmark asks (tiny sizes measure nothing anyway).
QUICK = False


def best_of(fn, repeat=5, min_seconds=0.2, clock=time.perf_counter):
    """Best time of ``fn()`` over ``repeat`` runs (at least ``min_seconds`` of total work): wall time, or with
    ``clock=time.process_time`` the CPU time of this process (for one-threaded work on a loaded machine)."""
    if QUICK:
        repeat, min_seconds = 1, 0.0
    times = []
    start = time.perf_counter()
    while len(times) < repeat or (time.perf_counter() - start < min_seconds and len(times) < 100):
        t = clock()
        fn()
        times.append(clock() - t)
    return min(times)


def not_run(benchmark, case, reason, target_seconds=None):
    """The one row of a benchmark that could not run (``reason`` says why; ``seconds`` is NaN)."""
    return [
        {
            "benchmark": benchmark,
            "case": case,
            "seconds": float("nan"),
            "target_seconds": target_seconds,
            "reference_seconds": None,
            "note": f"not run: {reason}",
        }
    ]


def cap(X, n):
    """The first ``n`` records of ``X`` (all of them when ``n`` is None)."""
    return X if n is None else X[:n]


def missing_requirements(module):
    """The optional packages listed in ``module.REQUIRES`` that cannot be found."""
    return [name for name in getattr(module, "REQUIRES", ()) if importlib.util.find_spec(name) is None]


def benchmarks(module):
    """The names of the ``bench_*`` functions of ``module``, sorted."""
    return sorted(attr for attr in dir(module) if attr.startswith("bench_") and callable(getattr(module, attr)))


def main(names):
    rows = []
    for module_path in sorted(HERE.glob("bench_*.py")):
        module = importlib.import_module(module_path.stem)
        missing = missing_requirements(module)
        for attr in benchmarks(module):
            if names and not any(n in attr for n in names):
                continue
            if missing:
                rows.extend(not_run(f"{module_path.stem}.{attr}", "-", "needs " + ", ".join(missing)))
                continue
            print(f"running {module_path.stem}.{attr} ...", file=sys.stderr, flush=True)
            rows.extend(getattr(module, attr)())
    table = pd.DataFrame(rows, columns=COLUMNS)
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

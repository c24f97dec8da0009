"""Every benchmark of ``benchmarks/bench_*.py`` runs at a tiny size and returns rows of the documented columns.

The modules are found by their file names, so a new ``bench_*.py`` is tested without editing this file. A
module whose optional packages (its ``REQUIRES``) are missing is skipped; a benchmark whose data files are
absent returns "not run" rows, and is skipped when it has nothing else.
"""

import importlib
import math
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
TINY = 300  # records (cells, users): small enough for the whole file to run in seconds


def _import(name):
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))  # the modules import their helpers as ``from run import ...``
    return importlib.import_module(name)


def _cases():
    for path in sorted(BENCHMARKS.glob("bench_*.py")):
        module = _import(path.stem)
        for attr in _import("run").benchmarks(module):
            yield pytest.param(path.stem, attr, id=f"{path.stem}.{attr}")


@pytest.fixture
def run(monkeypatch):
    run = _import("run")
    monkeypatch.setattr(run, "QUICK", True)  # one timing per case
    monkeypatch.setenv("DPCLUST_NO_DOWNLOAD", "1")  # a missing data file gives a "not run" row, not a download
    return run


@pytest.mark.parametrize(("module_name", "attr"), list(_cases()))
def test_benchmark_runs_at_tiny_size(run, module_name, attr, monkeypatch, tmp_path):
    module = _import(module_name)
    missing = run.missing_requirements(module)
    if missing:
        pytest.skip("needs " + ", ".join(missing))
    if hasattr(module, "OUT"):
        monkeypatch.setattr(module, "OUT", tmp_path / Path(module.OUT).name)  # figures go to the test's folder
    rows = getattr(module, attr)(n=TINY)
    assert rows, "a benchmark returns at least one row"
    for row in rows:
        assert list(row) == run.COLUMNS
        assert isinstance(row["note"], str) and row["benchmark"] and row["case"]
        for column in ("target_seconds", "reference_seconds"):
            assert row[column] is None or math.isfinite(row[column]) and row[column] >= 0
    ran = [row for row in rows if not row["note"].startswith("not run")]
    if not ran:
        pytest.skip(rows[0]["note"])
    for row in ran:
        assert math.isfinite(row["seconds"]) and row["seconds"] >= 0, row["case"]


def test_missing_requirement_gives_a_not_run_row(run):
    module = type(sys)("bench_needs_nothing_installed")
    module.REQUIRES = ("no_such_package_for_dpclust",)
    assert run.missing_requirements(module) == ["no_such_package_for_dpclust"]
    (row,) = run.not_run("x", "-", "needs no_such_package_for_dpclust")
    assert list(row) == run.COLUMNS and math.isnan(row["seconds"]) and row["note"].startswith("not run")

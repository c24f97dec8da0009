"""Batch runs of the notebooks with papermill.

:func:`reproduce` runs notebooks under a profile: the paper profile in place
(what ``make reproduce`` does), the smoke profile into
``data/results/smoke/notebooks/``, so the committed paper-profile outputs
stay. :func:`sweep_notebook` runs one papermill execution per point of a
parameter grid into a separate folder and concatenates the result tables the
runs wrote. ``python -m dpclust_lib`` is the command line of both.

The kernel is the current environment's: its ``python3`` kernel resolves to
the interpreter running this code. The profile reaches an in-place run
through ``$DPCLUST_PROFILE`` rather than an injected cell, so a committed
notebook carries no hard-wired profile and the test run (smoke) and the main
run (paper) execute the same cells.
"""
from __future__ import annotations

import ast
import contextlib
import itertools
import os
import re
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

from ._paths import notebook_dir, results_dir
from .experiments import PROFILE_ENV, resolve_profile

__all__ = ["list_notebooks", "resolve_notebook", "run_notebook", "reproduce", "sweep_notebook", "parse_value"]

DEFAULT_CELL_TIMEOUT = 1800  # seconds per cell
OVERVIEW_PREFIX = "00_"  # the overview notebook, which reads the others' results


def list_notebooks(folder=None):
    """The project's notebooks, ``NN_name.ipynb``, in order."""
    folder = Path(folder) if folder is not None else notebook_dir()
    return sorted(p for p in folder.glob("[0-9][0-9]_*.ipynb"))


def resolve_notebook(name, folder=None):
    """A notebook from a path, a file name, a stem ("01_ldpk_modes") or its number ("01")."""
    path = Path(name)
    if path.suffix == ".ipynb" and path.is_file():
        return path.resolve()
    candidates = [p for p in list_notebooks(folder) if p.name == name or p.stem == name or p.stem.split("_")[0] == name]
    if len(candidates) == 1:
        return candidates[0]
    known = ", ".join(p.stem for p in list_notebooks(folder)) or "(none)"
    raise ValueError(f"unknown notebook={name!r}; known: {known}")


@contextlib.contextmanager
def _environment(**values):
    old = {k: os.environ.get(k) for k in values}
    os.environ.update({k: str(v) for k, v in values.items() if v is not None})
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _describe_failure(exc):
    cell = getattr(exc, "cell_index", None)
    if cell is not None:
        return f"cell {cell} (execution count {getattr(exc, 'exec_count', '?')}): {exc.ename}: {exc.evalue}".strip()
    return f"{type(exc).__name__}: {exc}".strip()


def _drop_machine_paths(path):
    """papermill records absolute input/output paths; keep only file names, so a committed
    notebook does not carry the folder layout of the machine that ran it."""
    import nbformat

    if not Path(path).is_file():
        return
    nb = nbformat.read(path, as_version=4)
    meta = nb.metadata.get("papermill")
    if meta is None:
        return
    for key in ("input_path", "output_path"):
        if meta.get(key):
            meta[key] = Path(meta[key]).name
    nbformat.write(nb, path)


def run_notebook(notebook, output_path=None, parameters=None, profile=None, timeout=DEFAULT_CELL_TIMEOUT,
                 single_thread=False):
    """Execute one notebook with papermill; return a summary dict (never raises on notebook errors).

    Parameters
    ----------
    notebook : path of the notebook
    output_path : where to write the executed notebook (default: in place)
    parameters : dict injected by papermill (the notebook's ``parameters`` cell must declare them)
    profile : "paper" or "smoke", passed to the kernel as $DPCLUST_PROFILE
    timeout : seconds allowed per cell
    single_thread : limit BLAS threads in the kernel (when notebooks run side by side)
    """
    import papermill as pm

    notebook = Path(notebook)
    output_path = Path(output_path) if output_path is not None else notebook
    env = {"JUPYTER_PREFER_ENV_PATH": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    if profile is not None:
        env[PROFILE_ENV] = resolve_profile(profile).name
    if single_thread:
        env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    start = time.perf_counter()
    status, error = "ok", ""
    with _environment(**env):
        try:
            pm.execute_notebook(
                str(notebook), str(output_path), parameters=parameters or None, kernel_name="python3",
                cwd=str(notebook.parent), execution_timeout=timeout, progress_bar=False, log_output=False,
            )
        except Exception as exc:  # a failing notebook is reported, not raised: the batch goes on
            status, error = "failed", _describe_failure(exc)
    _drop_machine_paths(output_path)
    return {"notebook": notebook.stem, "status": status, "seconds": round(time.perf_counter() - start, 1),
            "error": error, "output": str(output_path)}


def _last_duration(path):
    """Seconds the notebook's last papermill run took (0 if unknown)."""
    import nbformat

    try:
        return float(nbformat.read(path, as_version=4).metadata.get("papermill", {}).get("duration") or 0.0)
    except (OSError, ValueError):
        return 0.0


def _run_many(calls, jobs):
    if jobs <= 1 or len(calls) <= 1:
        return [run_notebook(**kw) for kw in calls]
    # Longest first (by the last recorded run), so a long notebook does not start last and run alone.
    order = sorted(range(len(calls)), key=lambda i: -_last_duration(calls[i]["notebook"]))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {i: pool.submit(run_notebook, single_thread=True, **calls[i]) for i in order}
        return [futures[i].result() for i in range(len(calls))]


def reproduce(notebooks=None, profile="paper", jobs=1, timeout=DEFAULT_CELL_TIMEOUT, output_dir=None):
    """Run notebooks under a profile; return a summary table (notebook, status, seconds, error).

    The executed notebooks go to ``output_dir``; by default the paper profile
    runs in place and the smoke profile writes to ``data/results/smoke/notebooks/``.
    """
    profile = resolve_profile(profile).name
    paths = [resolve_notebook(n) for n in notebooks] if notebooks else list_notebooks()
    if not paths:
        raise ValueError(f"no notebooks found in {notebook_dir()}")
    if output_dir is None and profile != "paper":
        output_dir = results_dir() / profile / "notebooks"
    if output_dir is not None:
        Path(output_dir).mkdir(parents=True, exist_ok=True)

    def call(path):
        out = None if output_dir is None else Path(output_dir) / path.name
        return dict(notebook=path, output_path=out, profile=profile, timeout=timeout)

    # The overview gathers the other notebooks' ledgers, so in a batch with them it runs after them.
    gatherers = [p for p in paths if p.stem.startswith(OVERVIEW_PREFIX)] if len(paths) > 1 else []
    rest = [p for p in paths if p not in gatherers]
    rows = []
    for batch in (rest, gatherers):
        rows += _run_many([call(p) for p in batch], jobs)
    order = {p.stem: i for i, p in enumerate(paths)}
    rows.sort(key=lambda row: order[row["notebook"]])
    return pd.DataFrame(rows)[["notebook", "status", "seconds", "error"]]


def parse_value(text):
    """A command-line value: a Python literal if it is one (1, 0.5, 'a', [1, 2], None), else the string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _tag(point):
    text = "__".join(f"{k}={v}" for k, v in point.items())
    return re.sub(r"[^A-Za-z0-9_.=,-]+", "_", text)


def sweep_notebook(notebook, grid, out_dir, parameters=None, profile=None, jobs=1, timeout=DEFAULT_CELL_TIMEOUT):
    """One papermill execution per grid point; concatenate the result CSVs they write.

    Each run gets ``results_dir`` and ``figures_dir`` parameters pointing into
    ``out_dir/<point>/``; every CSV a run writes there is concatenated over
    the grid into ``out_dir/<name>.csv`` with one ``param_<name>`` column per
    grid parameter.

    Returns
    -------
    (summary DataFrame of the runs, dict csv name -> concatenated DataFrame)
    """
    import papermill as pm

    path = resolve_notebook(notebook)
    declared = set(pm.inspect_notebook(str(path)))
    if not grid:
        raise ValueError("grid is empty: give at least one parameter with its values")
    fixed = dict(parameters or {})
    for name in list(grid) + list(fixed):
        if name not in declared:
            raise ValueError(f"parameter {name!r} is not declared in the parameters cell of {path.name} "
                             f"(declared: {', '.join(sorted(declared)) or 'none'})")
    for name in ("results_dir", "figures_dir"):
        if name not in declared:
            raise ValueError(f"{path.name} does not declare {name!r}, so a sweep cannot collect its results")
    out_dir = Path(out_dir)
    names = list(grid)
    points = [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]
    calls = []
    for point in points:
        run_dir = out_dir / _tag(point)
        run_dir.mkdir(parents=True, exist_ok=True)
        params = {**fixed, **point, "results_dir": str(run_dir / "results"), "figures_dir": str(run_dir / "figures")}
        if profile is not None:
            params["profile"] = resolve_profile(profile).name
        calls.append(dict(notebook=path, output_path=run_dir / path.name, parameters=params, profile=profile,
                          timeout=timeout))
    rows = _run_many(calls, jobs)
    tables = {}
    for point, call in zip(points, calls):
        for csv in sorted(Path(call["parameters"]["results_dir"]).glob("*.csv")):
            frame = pd.read_csv(csv)
            for k, v in point.items():
                frame.insert(0, f"param_{k}", v)
            tables.setdefault(csv.stem, []).append(frame)
    merged = {name: pd.concat(frames, ignore_index=True) for name, frames in tables.items()}
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, frame in merged.items():
        frame.to_csv(out_dir / f"{name}.csv", index=False)
    summary = pd.DataFrame(rows)
    summary.insert(1, "point", [_tag(p) for p in points])
    return summary[["notebook", "point", "status", "seconds", "error"]], merged

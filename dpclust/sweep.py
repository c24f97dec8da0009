"""Parameter sweeps: one papermill run of a notebook per point of a grid, here or on a Dask cluster.

:func:`sweep_notebook` checks every value against the notebook's declared parameters, resolves the
output folder to an absolute path, then runs each point with its ``results_dir`` and ``figures_dir``
in ``OUT/<point>/``, side by side in worker processes or on a Dask cluster (:mod:`dpclust.cluster`),
which sends the same files back. A point that ends without writing a table has failed. Then every
table is concatenated over the points into ``OUT/<table>.csv`` with one ``param_<name>`` column per
grid parameter, and ``OUT/sweep_points.csv`` gets one row per point (its parameters as columns,
status, seconds, attempts, tables, error).

A grid is ``{name: [values]}``: on the command line ``--grid NAME=V1,V2,...`` (commas inside
brackets or quotes do not split: ``epsilons=[0.5, 1],[2]`` is two lists), or a JSON or YAML file
(:func:`read_grid_file`). A parameter declared a list (``PositiveFloats``) that is given one number receives it
as a one-element list, so ``--grid epsilons=0.5,1,2`` is one run per ε.
"""

from __future__ import annotations

import ast
import contextlib
import itertools
import json
import os
import re
import shutil
from pathlib import Path

import pandas as pd

from . import parameters
from ._optional import require
from ._paths import HOME_ENV, project_dir
from .experiments import TIMINGS, resolve_profile
from .reproduce import (
    DEFAULT_CELL_TIMEOUT,
    Interrupted,
    _run_many,
    _show_progress,
    check_parameters,
    finished_lines,
    recover_interrupted_commits,
    resolve_notebook,
)

__all__ = [
    "parse_value",
    "split_values",
    "parse_grid",
    "read_grid_file",
    "grid_points",
    "point_label",
    "sweep_notebook",
    "POINTS_TABLE",
]

POINTS_TABLE = "sweep_points.csv"  # one row per point, beside the gathered tables
MANIFEST = "sweep.json"  # what a sweep wrote in its folder (so that the next one may replace it, and nothing else)
SET_BY_SWEEP = ("results_dir", "figures_dir")


def parse_value(text):
    """A command-line value: a Python literal if it is one (1, 0.5, 'a', [1, 2], None), else the string.

    Parameters
    ----------
    text : str

    Examples
    --------
    >>> [parse_value(t) for t in ["5", "1e-3", "[0.5, 1]", "None", "'paper'", "paper"]]
    [5, 0.001, [0.5, 1], None, 'paper', 'paper']
    """
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return text.strip()


def split_values(text):
    """Split on the commas that are outside brackets and quotes.

    Examples
    --------
    >>> split_values("0.5,1,2")
    ['0.5', '1', '2']
    >>> split_values("[0.5, 1],[2], 'a,b'")
    ['[0.5, 1]', '[2]', "'a,b'"]
    """
    parts, depth, quote, start = [], 0, None, 0
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def parse_grid(text):
    """``NAME=V1,V2,...`` as ``(name, [values])``, each value read by :func:`parse_value`.

    Examples
    --------
    >>> parse_grid("epsilons=[0.5, 1],[2]")
    ('epsilons', [[0.5, 1], [2]])
    >>> parse_grid("epsilon")
    Traceback (most recent call last):
    ...
    ValueError: a grid is NAME=V1,V2,... (lists in brackets: epsilons=[0.5,1],[2]), got 'epsilon'
    """
    name, sep, values = text.partition("=")
    items = [parse_value(v) for v in split_values(values)]
    if not sep or not name.strip() or not items:
        raise ValueError(f"a grid is NAME=V1,V2,... (lists in brackets: epsilons=[0.5,1],[2]), got {text!r}")
    return name.strip(), items


def read_grid_file(path):
    """A grid from a JSON or YAML file: a mapping of each parameter's name to the list of its values.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "grid.yaml")
    ...     _ = open(path, "w").write("epsilons: [[0.5, 1], [2]]\\nseed: [0, 1]\\n")
    ...     read_grid_file(path)
    {'epsilons': [[0.5, 1], [2]], 'seed': [0, 1]}
    """
    path = Path(path)
    if path.suffix not in (".json", ".yaml", ".yml"):
        raise ValueError(f"grid file {path} must end in .json, .yaml or .yml")
    try:
        text = path.read_text()
        grid = json.loads(text) if path.suffix == ".json" else require("yaml", "notebooks").safe_load(text)
    except OSError as exc:
        raise ValueError(f"cannot read grid file {path}: {exc.strerror}") from None
    except ValueError as exc:  # json's and yaml's parse errors
        raise ValueError(f"grid file {path} is not valid {path.suffix[1:].upper()}: {exc}") from None
    except Exception as exc:  # yaml.YAMLError
        raise ValueError(f"grid file {path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(grid, dict) or not grid:
        raise ValueError(f"grid file {path} must map each parameter's name to the list of its values")
    for name, values in grid.items():
        if not isinstance(values, list) or not values:
            raise ValueError(f"grid file {path}: {name!r} must have a non-empty list of values, got {values!r}")
    return grid


def grid_points(grid):
    """Every combination of the grid's values, the first parameter varying slowest.

    Examples
    --------
    >>> grid_points({"a": [1, 2], "b": ["x", "y"]})
    [{'a': 1, 'b': 'x'}, {'a': 1, 'b': 'y'}, {'a': 2, 'b': 'x'}, {'a': 2, 'b': 'y'}]
    """
    names = list(grid)
    return [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]


def point_label(point):
    """A point's name and folder: ``name=value`` joined by ``__``, other characters as ``_``.

    Examples
    --------
    >>> point_label({"epsilons": [0.5, 1], "seed": 3})
    'epsilons=_0.5,_1___seed=3'
    """
    text = "__".join(f"{k}={v}" for k, v in point.items())
    return re.sub(r"[^A-Za-z0-9_.=,-]", "_", text)


def _checked(path, grid, fixed):
    """The grid and fixed values as the notebook gets them, each checked against its declaration first."""
    if not grid:
        raise ValueError("grid is empty: give at least one parameter with its values")
    declared = parameters.declared(path)
    for name in SET_BY_SWEEP:
        if name not in declared:
            raise ValueError(f"{path.name} does not declare {name!r}, so a sweep cannot collect its results")
        if name in grid or name in fixed:
            raise ValueError(f"{name} is set by the sweep (under --out), not by a grid or -p")
    both = sorted(set(grid) & set(fixed))
    if both:
        raise ValueError(f"{', '.join(both)} is given both as a grid and as a fixed parameter (-p)")
    for name, values in grid.items():
        if len({json.dumps(v, sort_keys=True, default=str) for v in values}) < len(values):
            raise ValueError(f"grid {name} repeats a value: {values!r}")
    fixed = check_parameters(path, fixed)
    for name, values in grid.items():
        for value in values:
            check_parameters(path, {name: value})
    passed = lambda name, value: parameters.convert(name, value, declared[name])  # noqa: E731
    return fixed, passed


def _check_out_dir(out_dir):
    """A sweep writes into a new or empty folder, or one an earlier sweep wrote (whose files it replaces)."""
    if out_dir.is_file():
        raise ValueError(f"--out {out_dir} is a file; give a folder")
    if (
        out_dir.is_dir()
        and any(p.name != ".sweep.lock" for p in out_dir.iterdir())
        and not (out_dir / MANIFEST).is_file()
    ):
        raise ValueError(
            f"--out {out_dir} holds files that no sweep wrote; give a new or empty folder "
            "(a sweep replaces only what an earlier sweep wrote there)"
        )


def _clear_earlier_sweep(out_dir):
    """Remove what the earlier sweep listed in its manifest (its points' folders, tables, summary), nothing else."""
    manifest = out_dir / MANIFEST
    if not manifest.is_file():
        return
    earlier = json.loads(manifest.read_text())
    for label in earlier.get("points", []):
        shutil.rmtree(out_dir / label, ignore_errors=True)
    for name in [*earlier.get("tables", []), POINTS_TABLE]:
        (out_dir / name).unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # the timings' folder, once empty
        (out_dir / TIMINGS).rmdir()
    manifest.unlink()


def _write_manifest(out_dir, path, profile, grid, labels, tables=()):
    manifest = {"notebook": path.name, "profile": profile, "grid": grid, "points": labels, "tables": list(tables)}
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=1, default=str) + "\n")


def _point_dirs(out_dir, label, name):
    folder = out_dir / label
    return {"notebook": folder / name, "results": folder / "results", "figures": folder / "figures"}


def _tables_check(row, results):
    """A point that ended without an error but wrote no table has failed: its results would be lost."""
    tables = sorted(Path(results).glob("*.csv")) if Path(results).is_dir() else []
    if row["status"] == "ok" and not tables:
        row.update(status="failed", error=f"the run ended without writing a result table into {results}")
    row["tables"] = len(tables)
    return row


def _write_files(dirs, files):
    """Write what a worker sent back where a local run writes it."""
    if files.get("notebook") is not None:
        dirs["notebook"].parent.mkdir(parents=True, exist_ok=True)
        dirs["notebook"].write_bytes(files["notebook"])
    for kind in ("results", "figures"):
        for relative, data in files.get(kind, {}).items():
            target = dirs[kind] / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


def _run_here(path, points, labels, out_dir, fixed, passed, profile, jobs, timeout, show, say):
    calls = []
    for point, label in zip(points, labels):
        dirs = _point_dirs(out_dir, label, path.name)
        dirs["notebook"].parent.mkdir(parents=True, exist_ok=True)
        params = {**fixed, **{k: passed(k, v) for k, v in point.items()}, "profile": profile}
        params.update(results_dir=str(dirs["results"]), figures_dir=str(dirs["figures"]))
        calls.append(
            dict(
                notebook=path,
                output_path=dirs["notebook"],
                parameters=params,
                profile=profile,
                timeout=timeout,
                label=label,
            )
        )

    def on_done(call, row):
        row = _tables_check({**row, "attempts": 1}, call["parameters"]["results_dir"])
        say(call["label"], row)
        return row

    return _run_many(calls, jobs, show, on_done)


def _run_on_cluster(client, path, points, labels, out_dir, fixed, passed, profile, timeout, show, say):
    from .cluster import kernel_environment, run_points

    # The compendium this client found (from its folder, or $DPCLUST_HOME) goes along, for workers that can reach it
    source = path.read_text()
    environment = kernel_environment(profile, {**os.environ, HOME_ENV: str(project_dir())})
    sent = [
        dict(
            label=label,
            name=path.name,
            source=source,
            parameters={**fixed, **{k: passed(k, v) for k, v in point.items()}, "profile": profile},
            profile=profile,
            timeout=timeout,
            environment=environment,
        )
        for point, label in zip(points, labels)
    ]

    def on_done(i, row, files):
        dirs = _point_dirs(out_dir, labels[i], path.name)
        _write_files(dirs, files)
        _tables_check(row, dirs["results"])
        say(labels[i], row)

    return run_points(client, sent, on_done, show)


def _gather(out_dir, name, points, labels, rows):
    """Concatenate each table over the points that succeeded, with one ``param_<name>`` column per grid parameter."""
    tables = {}
    for point, label, row in zip(points, labels, rows):
        if row["status"] != "ok":
            continue
        results = _point_dirs(out_dir, label, name)["results"]
        for csv in sorted([*results.glob("*.csv"), *results.glob(f"{TIMINGS}/*.csv")]):
            try:
                frame = pd.read_csv(csv)
            except pd.errors.EmptyDataError:  # a table saved with no columns
                continue
            for k, v in reversed(point.items()):
                frame.insert(0, f"param_{k}", str(v) if isinstance(v, (list, tuple, dict)) else v)
            tables.setdefault(csv.relative_to(results).with_suffix("").as_posix(), []).append(frame)
    merged = {table: pd.concat(frames, ignore_index=True) for table, frames in tables.items()}
    for table, frame in merged.items():
        (out_dir / table).parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(out_dir / f"{table}.csv", index=False)
    return merged


def _points_table(points, labels, rows):
    summary = pd.DataFrame(
        [
            {
                "point": label,
                **{k: str(v) if isinstance(v, (list, tuple, dict)) else v for k, v in point.items()},
                **{c: row.get(c) for c in ("status", "seconds", "attempts", "tables", "error")},
            }
            for point, label, row in zip(points, labels, rows)
        ]
    )
    summary["error"] = summary["error"].fillna("")
    return summary


def sweep_notebook(
    notebook,
    grid,
    out_dir,
    parameters=None,
    profile=None,
    jobs=1,
    timeout=DEFAULT_CELL_TIMEOUT,
    scheduler=None,
    scheduler_file=None,
    progress=None,
):
    """One papermill run of a notebook per point of a grid; gather every point's tables, figures and notebook.

    Parameters
    ----------
    notebook : str or path-like
        A path, name or number (``"04"``).
    grid : dict
        Parameter name -> list of values (:func:`parse_grid`, :func:`read_grid_file`).
    out_dir : path-like
        Where everything goes (made absolute first): ``OUT/<point>/`` holds the executed notebook,
        ``results/`` and ``figures/`` of each point; ``OUT/<table>.csv`` each table over the points
        that succeeded; ``OUT/sweep_points.csv`` one row per point. A folder an earlier sweep wrote
        is replaced; a folder with other files is refused.
    parameters : dict, optional
        Fixed parameters of every point.
    profile : {"paper", "smoke"}, optional
        Default: ``$DPCLUST_PROFILE``, else paper; every point gets it (as a parameter and in its
        kernel's environment), on a cluster too.
    jobs : int
        Points run side by side here (ignored on a cluster).
    timeout : int
        Seconds allowed per cell.
    scheduler : str or distributed.Client, optional
        A Dask scheduler's address (or a client): the points run on its workers.
    scheduler_file : path-like, optional
        A scheduler file instead of an address (dask-jobqueue, dask-mpi, ``dask scheduler --scheduler-file``).
    progress : bool, optional
        Show which cell each point is at (None: on a terminal).

    Returns
    -------
    (DataFrame, dict)
        One row per point (point, the grid's parameters, status, seconds, attempts, tables, error),
        and each gathered table by name.

    Every value is checked against the notebook's declarations, and the scheduler reached, before
    anything is created. Ctrl-C stops every run (on a cluster: cancels its futures and stops the
    kernels on the workers) and raises :class:`dpclust.reproduce.Interrupted`.

    Examples
    --------
    The whole grid is checked before the first run:

    >>> import nbformat, pathlib, tempfile
    >>> source = "from dpclust.parameters import PositiveInt\\n\\nmax_iter: PositiveInt = 5  # noisy releases"
    >>> cell = nbformat.v4.new_code_cell(source)
    >>> cell.metadata["tags"] = ["parameters"]
    >>> kernel = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = pathlib.Path(tmp.name, "01_toy.ipynb")
    >>> nbformat.write(nbformat.v4.new_notebook(cells=[cell], metadata=kernel), path)
    >>> sweep_notebook(path, {"max_iter": [5, 10]}, pathlib.Path(tmp.name, "runs"))
    Traceback (most recent call last):
    ...
    ValueError: 01_toy.ipynb does not declare 'results_dir', so a sweep cannot collect its results
    >>> tmp.cleanup()
    """
    path = resolve_notebook(notebook)
    grid = {name: list(values) for name, values in grid.items()}
    fixed, passed = _checked(path, grid, dict(parameters or {}))
    out_dir = Path(out_dir).expanduser().resolve()
    _check_out_dir(out_dir)
    profile = resolve_profile(profile).name
    points = grid_points(grid)
    labels = [point_label(p) for p in points]
    if len(set(labels)) < len(labels):
        labels = [f"{i:03d}_{label}" for i, label in enumerate(labels)]
    recover_interrupted_commits()
    client = None
    if scheduler is not None or scheduler_file is not None:
        from .cluster import connect

        client = scheduler if hasattr(scheduler, "submit") else connect(scheduler, scheduler_file)
    try:
        return _sweep(client, path, grid, points, labels, out_dir, fixed, passed, profile, jobs, timeout, progress)
    finally:
        if client is not None and client is not scheduler:
            client.close()


@contextlib.contextmanager
def _folder_lock(out_dir):
    """One sweep at a time writes a folder (an ``flock`` on ``OUT/.sweep.lock``, released even on SIGKILL)."""
    import fcntl

    out_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(out_dir / ".sweep.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise ValueError(f"another sweep is writing {out_dir}; wait for it to end or give another --out") from None
    try:
        yield
    finally:
        os.close(fd)


def _sweep(client, path, grid, points, labels, out_dir, fixed, passed, profile, jobs, timeout, progress):
    with _folder_lock(out_dir):
        _clear_earlier_sweep(out_dir)
        _write_manifest(out_dir, path, profile, grid, labels)
        return _run_and_gather(
            client, path, grid, points, labels, out_dir, fixed, passed, profile, jobs, timeout, progress
        )


def _run_and_gather(client, path, grid, points, labels, out_dir, fixed, passed, profile, jobs, timeout, progress):
    show, say = _show_progress(progress), finished_lines(progress, len(points))
    try:
        if client is not None:
            rows = _run_on_cluster(client, path, points, labels, out_dir, fixed, passed, profile, timeout, show, say)
        else:
            rows = _run_here(path, points, labels, out_dir, fixed, passed, profile, jobs, timeout, show, say)
    except KeyboardInterrupt as exc:
        how = f"{exc}; " if str(exc) else ""
        raise Interrupted(f"{how}the points that had finished are in their folders under {out_dir}") from None
    tables = _gather(out_dir, path.name, points, labels, rows)
    summary = _points_table(points, labels, rows)
    summary.to_csv(out_dir / POINTS_TABLE, index=False)
    _write_manifest(out_dir, path, profile, grid, labels, [f"{t}.csv" for t in tables])
    return summary, tables

"""Batch runs of the notebooks with papermill.

:func:`reproduce` runs notebooks under a profile: the paper profile in place
(what ``make reproduce`` does), the smoke profile into
``data/results/smoke/notebooks/``, so the committed paper-profile outputs
stay. :func:`sweep_notebook` runs one papermill execution per point of a
parameter grid into a separate folder and concatenates the result tables the
runs wrote. ``python -m dpclust`` is the command line of both.

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
import queue
import re
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

from ._paths import notebook_dir, results_dir
from .experiments import PROFILE_ENV, VERDICTS, output_dirs, read_ledgers, resolve_profile, verdict_counts

__all__ = [
    "list_notebooks",
    "resolve_notebook",
    "committed_results_dir",
    "run_notebook",
    "run_batch",
    "reproduce",
    "sweep_notebook",
    "parse_value",
    "ledger_counts",
]

DEFAULT_CELL_TIMEOUT = 1800  # seconds per cell
OVERVIEW_PREFIX = "00_"  # the overview notebook, which reads the others' results


def list_notebooks(folder=None):
    """The project's notebooks, ``NN_name.ipynb``, in order."""
    folder = Path(folder) if folder is not None else notebook_dir()
    return sorted(p for p in folder.glob("[0-9][0-9]_*.ipynb"))


def committed_results_dir(stem):
    """The folder of a notebook's committed (paper-profile) result tables."""
    return results_dir() / stem


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
def kernel_environment(**values):
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


@contextlib.contextmanager
def kernel_stderr_to(path):
    """Send file descriptor 2 to ``path`` while a notebook runs.

    The kernel is a child process that writes straight to the inherited
    descriptor 2 (ipykernel's "running over TCP without encryption" warning,
    debugger notices, ...): redirecting ``sys.stderr`` would not reach it.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "ab") as sink:
        os.dup2(sink.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def _tail(path, lines=5):
    try:
        text = Path(path).read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


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


def run_notebook(
    notebook,
    output_path=None,
    parameters=None,
    profile=None,
    timeout=DEFAULT_CELL_TIMEOUT,
    single_thread=False,
    events=None,
    label=None,
):
    """Execute one notebook with papermill; return a summary dict (never raises on notebook errors).

    Parameters
    ----------
    notebook : path of the notebook
    output_path : where to write the executed notebook (default: in place)
    parameters : dict injected by papermill (the notebook's ``parameters`` cell must declare them)
    profile : "paper" or "smoke", passed to the kernel as $DPCLUST_PROFILE
    timeout : seconds allowed per cell
    single_thread : limit BLAS threads in the kernel (when notebooks run side by side)
    events : a queue that receives ``(label, cell number, number of cells)`` as each cell starts
        (progress); None: none sent
    label : the run's name in those events (default: the notebook's stem)

    The kernel's own stderr (not the cells' outputs) is kept out of the terminal; the
    last lines of it are added to the error of a notebook that fails.
    """
    import papermill as pm

    notebook = Path(notebook)
    output_path = Path(output_path) if output_path is not None else notebook
    env = {"JUPYTER_PREFER_ENV_PATH": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    if profile is not None:
        env[PROFILE_ENV] = resolve_profile(profile).name
    if single_thread:
        env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    hooks = {}
    if events is not None:
        n_cells, name = {}, label or notebook.stem

        def on_notebook_start(**kw):  # nbclient passes the notebook, with papermill's injected cell
            n_cells["n"] = len(kw["notebook"].cells)

        def on_cell_start(cell_index=0, **_):
            events.put((name, cell_index + 1, n_cells.get("n", 0)))

        hooks = {"on_notebook_start": on_notebook_start, "on_cell_start": on_cell_start}
    start = time.perf_counter()
    status, error = "ok", ""
    with tempfile.TemporaryDirectory(prefix="dpclust-kernel-") as tmp, kernel_environment(**env):
        log = Path(tmp) / "stderr.log"
        try:
            with kernel_stderr_to(log):
                pm.execute_notebook(
                    str(notebook),
                    str(output_path),
                    parameters=parameters or None,
                    kernel_name="python3",
                    cwd=str(notebook.parent),
                    execution_timeout=timeout,
                    progress_bar=False,
                    log_output=False,
                    **hooks,
                )
        except Exception as exc:  # a failing notebook is reported, not raised: the batch goes on
            status, error = "failed", _describe_failure(exc)
            if getattr(exc, "cell_index", None) is None and _tail(log):
                error += "\n" + _tail(log)  # e.g. a kernel that did not start: its stderr says why
    _drop_machine_paths(output_path)
    return {
        "notebook": notebook.stem,
        "status": status,
        "seconds": round(time.perf_counter() - start, 1),
        "error": error,
        "output": str(output_path),
    }


def _last_duration(path):
    """Seconds the notebook's last papermill run took (0 if unknown)."""
    import nbformat

    try:
        return float(nbformat.read(path, as_version=4).metadata.get("papermill", {}).get("duration") or 0.0)
    except (OSError, ValueError):
        return 0.0


class _Progress:
    """One status line for the notebooks running now: name, cell k of n, elapsed time.

    Fed by a queue of ``(label, k, n)`` events (``(label, None, None)`` when a run
    ends). On a terminal the line is redrawn in place and erased at the end, so a
    successful batch leaves only its summary; elsewhere (logs) a line is printed
    at most every ``every`` seconds.
    """

    def __init__(self, events, total, stream=None, every=30.0):
        self.events, self.total, self.stream = events, total, stream or sys.stdout
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.every = 0.5 if self.tty else every
        self.running, self.done, self.start = {}, 0, time.perf_counter()
        self._last, self._stop = 0.0, threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._drain()
        if self.tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()

    def line(self):
        now = time.perf_counter()
        parts = [
            f"{label} {f'cell {k}/{n}' if k else 'starting'} {_clock(now - t0)}"
            for label, (k, n, t0) in self.running.items()
        ]
        return f"[{self.done}/{self.total} done, {_clock(now - self.start)}] " + " | ".join(parts)

    def _drain(self):
        changed = False
        while True:
            try:
                label, k, n = self.events.get_nowait()
            except (queue.Empty, EOFError, OSError):
                return changed
            changed = True
            if k is None:
                self.running.pop(label, None)
                self.done += 1
            else:
                t0 = self.running.get(label, (0, 0, time.perf_counter()))[2]
                self.running[label] = (k, n, t0)

    def _loop(self):
        while not self._stop.wait(0.2):
            self._drain()
            now = time.perf_counter()
            if now - self._last < self.every or not self.running:
                continue
            self._last = now
            if self.tty:
                width = shutil.get_terminal_size((120, 20)).columns - 1
                self.stream.write("\r\x1b[K" + self.line()[:width])
            else:
                self.stream.write(self.line() + "\n")
            self.stream.flush()


def _clock(seconds):
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def _run_one(call, events, single_thread=False):
    if events is not None:
        events.put((call.get("label") or Path(call["notebook"]).stem, 0, 0))  # the clock starts with the kernel
    row = run_notebook(single_thread=single_thread, events=events, **call)
    if events is not None:
        events.put((call.get("label") or Path(call["notebook"]).stem, None, None))
    return row


def _run_many(calls, jobs, progress=False):
    if jobs <= 1 or len(calls) <= 1:
        events = queue.Queue() if progress else None
        with _Progress(events, len(calls)) if progress else contextlib.nullcontext():
            return [_run_one(kw, events) for kw in calls]
    import multiprocessing

    # Longest first (by the last recorded run), so a long notebook does not start last and run alone.
    order = sorted(range(len(calls)), key=lambda i: -_last_duration(calls[i]["notebook"]))
    with multiprocessing.Manager() if progress else contextlib.nullcontext() as manager:
        events = manager.Queue() if progress else None
        with (
            _Progress(events, len(calls)) if progress else contextlib.nullcontext(),
            ProcessPoolExecutor(max_workers=jobs) as pool,
        ):
            futures = {i: pool.submit(_run_one, calls[i], events, True) for i in order}
            return [futures[i].result() for i in range(len(calls))]


def ledger_counts(results_dir):
    """How many ledger rows of each verdict a results folder holds (zeros without a ledger)."""
    folder = Path(results_dir)
    ledgers = read_ledgers([folder.name], folder.parent)
    if ledgers.empty:
        return dict.fromkeys(VERDICTS, 0)
    return verdict_counts(ledgers).drop(columns="claims").iloc[0].astype(int).to_dict()


def _show_progress(progress):
    return sys.stdout.isatty() if progress is None else bool(progress)


def run_batch(calls, jobs=1, progress=None):
    """Run papermill calls (dicts of :func:`run_notebook` arguments); one summary row each.

    The summary has notebook, status, seconds, error and, per verdict, the count
    of rows in the ledger the run wrote (its ``results_dir`` parameter, else the
    profile's default folder). The overview (00_) runs after the others, whose
    ledgers it gathers.
    """
    calls = list(calls)
    gatherers = [c for c in calls if Path(c["notebook"]).stem.startswith(OVERVIEW_PREFIX)] if len(calls) > 1 else []
    rest = [c for c in calls if not any(c is g for g in gatherers)]
    show = _show_progress(progress)
    rows = {}
    for batch in (rest, gatherers):
        for call, row in zip(batch, _run_many(batch, jobs, show)):
            rows[id(call)] = row
    out = []
    for call in calls:
        row = dict(rows[id(call)])
        stem = Path(call["notebook"]).stem
        folder = (call.get("parameters") or {}).get("results_dir")
        folder = folder if folder is not None else output_dirs(stem, call.get("profile") or "paper")[0]
        row.update(ledger_counts(folder))
        out.append(row)
    return pd.DataFrame(out)[["notebook", "status", "seconds", *VERDICTS, "error"]]


def reproduce(notebooks=None, profile="paper", jobs=1, timeout=DEFAULT_CELL_TIMEOUT, output_dir=None, progress=None):
    """Run notebooks under a profile; return a summary table (notebook, status, seconds, ledger
    counts per verdict, error).

    The executed notebooks go to ``output_dir``; by default the paper profile
    runs in place and the smoke profile writes to ``data/results/smoke/notebooks/``.
    ``progress``: show which cell each running notebook is at (None: on a terminal).
    """
    profile = resolve_profile(profile).name
    paths = [resolve_notebook(n) for n in notebooks] if notebooks else list_notebooks()
    if not paths:
        raise ValueError(f"no notebooks found in {notebook_dir()}")
    if output_dir is None and profile != "paper":
        output_dir = results_dir() / profile / "notebooks"
    if output_dir is not None:
        Path(output_dir).mkdir(parents=True, exist_ok=True)
    calls = [
        dict(
            notebook=path,
            output_path=None if output_dir is None else Path(output_dir) / path.name,
            profile=profile,
            timeout=timeout,
        )
        for path in paths
    ]
    return run_batch(calls, jobs, progress)


def parse_value(text):
    """A command-line value: a Python literal if it is one (1, 0.5, 'a', [1, 2], None), else the string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _tag(point):
    text = "__".join(f"{k}={v}" for k, v in point.items())
    return re.sub(r"[^A-Za-z0-9_.=,-]+", "_", text)


def _remote_run(source, name, parameters, profile, timeout):
    """Run one grid point where a Dask worker is: the notebook travels as text, its executed copy
    and result CSVs come back as text, so the workers need the environment but no shared folder.

    A run sets environment variables and the kernel's stderr for the whole worker process, so
    workers run one notebook at a time (``--nthreads 1``)."""
    with tempfile.TemporaryDirectory(prefix="dpclust-sweep-") as tmp:
        tmp = Path(tmp)
        notebook = tmp / name
        notebook.write_text(source)
        params = {**parameters, "results_dir": str(tmp / "results"), "figures_dir": str(tmp / "figures")}
        row = run_notebook(notebook, parameters=params, profile=profile, timeout=timeout)  # in place, in tmp
        tables = {p.name: p.read_text() for p in sorted((tmp / "results").glob("*.csv"))}
        return row, notebook.read_text(), tables


def _run_on_dask(calls, scheduler, progress=False):
    """The calls of a sweep on a Dask cluster (``scheduler``: its address, or a ``distributed.Client``)."""
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise ValueError("--scheduler needs dask.distributed: pip install 'dask[distributed]'") from None
    client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    try:
        futures = {}
        for i, call in enumerate(calls):
            fixed = {k: v for k, v in call["parameters"].items() if k not in ("results_dir", "figures_dir")}
            future = client.submit(
                _remote_run,
                Path(call["notebook"]).read_text(),
                Path(call["notebook"]).name,
                fixed,
                call["profile"],
                call["timeout"],
                pure=False,
            )
            futures[future] = i
        rows = [None] * len(calls)
        for n_done, future in enumerate(as_completed(futures), 1):
            i = futures[future]
            call = calls[i]
            try:
                row, executed, tables = future.result()
            except Exception as exc:  # the worker itself failed (lost, killed): a failed row, the sweep goes on
                row, executed, tables = (
                    {
                        "notebook": Path(call["notebook"]).stem,
                        "status": "failed",
                        "seconds": 0.0,
                        "error": f"dask: {type(exc).__name__}: {exc}",
                    },
                    None,
                    {},
                )
            if executed is not None:
                Path(call["output_path"]).write_text(executed)
            results = Path(call["parameters"]["results_dir"])
            results.mkdir(parents=True, exist_ok=True)
            for file, text in tables.items():
                (results / file).write_text(text)
            row["output"] = str(call["output_path"])
            rows[i] = row
            if progress:
                print(f"[{n_done}/{len(calls)} done] {call['label']}: {row['status']}", flush=True)
        return rows
    finally:
        if client is not scheduler:
            client.close()


def sweep_notebook(
    notebook,
    grid,
    out_dir,
    parameters=None,
    profile=None,
    jobs=1,
    timeout=DEFAULT_CELL_TIMEOUT,
    scheduler=None,
    progress=None,
):
    """One papermill execution per grid point; concatenate the result CSVs they write.

    Each run gets ``results_dir`` and ``figures_dir`` parameters pointing into
    ``out_dir/<point>/``; every CSV a run writes there is concatenated over
    the grid into ``out_dir/<name>.csv`` with one ``param_<name>`` column per
    grid parameter.

    ``scheduler``: the address of a Dask scheduler (or a ``distributed.Client``):
    the runs then go to its workers (``jobs`` is ignored), which need this
    package and the data but no folder shared with this machine; the tables are
    the same as a local run's. ``progress``: show progress (None: on a terminal).

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
            raise ValueError(
                f"parameter {name!r} is not declared in the parameters cell of {path.name} "
                f"(declared: {', '.join(sorted(declared)) or 'none'})"
            )
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
        calls.append(
            dict(
                notebook=path,
                output_path=run_dir / path.name,
                parameters=params,
                profile=profile,
                timeout=timeout,
                label=f"{path.stem}[{_tag(point)}]",
            )
        )
    show = _show_progress(progress)
    rows = _run_on_dask(calls, scheduler, show) if scheduler is not None else _run_many(calls, jobs, show)
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

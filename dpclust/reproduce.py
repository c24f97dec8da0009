"""Batch runs of the notebooks with papermill.

:func:`reproduce` runs notebooks under a profile. A run never writes its targets while it
runs: the kernel writes the executed notebook, tables and figures into a staging folder
(``$DPCLUST_OUTPUT_DIR``, read by :func:`dpclust.experiments.output_dirs`), and only a run
that finished replaces the targets, all together (:func:`commit_run`): the committed
notebook, ``data/results/<notebook>`` and ``figures/<notebook>`` under the paper profile
(what ``make reproduce`` does), the git-ignored ``smoke/`` folders under the smoke profile.
A failed or interrupted run leaves them byte for byte as they were and keeps its notebook
in ``data/results/failed/``; two runs of one notebook cannot overlap (:func:`notebook_locks`),
and a commit cut short by SIGKILL is completed by the next command of any kind
(:func:`recover_interrupted_commits`). A run that lacked data the committed results had is not
committed. Parameter values are checked first against the types declared in the notebook's
parameters cell (:func:`check_parameters`). Sweeps (:mod:`dpclust.sweep`) and
``verify`` run their notebooks with :func:`run_notebook` too; ``python -m dpclust`` is the
command line of all three. Every batch is a set of doit tasks, one per run, side by side in
threads of this process (:func:`_run_many`); doit's record of what each committed run read
lets ``reproduce(resume=True)`` skip the notebooks whose inputs have not changed since.

The kernel is the current environment's: its ``python3`` kernel resolves to
the interpreter running this code. The profile reaches a run through
``$DPCLUST_PROFILE`` rather than an injected cell, so a committed notebook
carries no hard-wired profile and the test run (smoke) and the main run
(paper) execute the same cells.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
import queue
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

import pandas as pd

from . import parameters
from ._optional import require
from ._paths import notebook_dir, results_dir
from .experiments import JOBS_ENV, OUTPUT_ENV, PROFILE_ENV, output_dirs, resolve_profile, target_dirs
from .verdicts import REPLICATES, VERDICTS, read_ledgers, verdict_counts

__all__ = [
    "list_notebooks",
    "resolve_notebook",
    "committed_results_dir",
    "run_notebook",
    "run_batch",
    "reproduce",
    "recover_interrupted_commits",
    "output_findings",
    "absent_data_sets",
    "ledger_counts",
    "check_parameters",
    "notebook_locks",
    "commit_run",
    "staging_dir",
    "failed_dir",
    "Interrupted",
]

DEFAULT_CELL_TIMEOUT = 1800  # seconds per cell
OVERVIEW_PREFIX = "00_"  # the overview notebook, which reads the others' results


def list_notebooks(folder=None):
    """The project's notebooks, ``NN_name.ipynb``, in order.

    Parameters
    ----------
    folder : path-like, optional
        Default: the compendium's ``notebooks/``.

    Returns
    -------
    list of Path

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     for name in ["02_b.ipynb", "00_overview.ipynb", "notes.ipynb", "01_a.ipynb"]:
    ...         pathlib.Path(folder, name).touch()
    ...     print([p.name for p in list_notebooks(folder)])
    ['00_overview.ipynb', '01_a.ipynb', '02_b.ipynb']
    """
    folder = Path(folder) if folder is not None else notebook_dir()
    return sorted(p for p in folder.glob("[0-9][0-9]_*.ipynb"))


def committed_results_dir(stem):
    """The folder of a notebook's committed (paper-profile) result tables.

    Parameters
    ----------
    stem : str
        The notebook's stem, e.g. ``"01_ldpk_modes"``.

    Returns
    -------
    Path
        ``data/results/<stem>`` of the compendium.

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as home, mock.patch.dict(os.environ, {"DPCLUST_HOME": home}):
    ...     pathlib.Path(home, "notebooks").mkdir()
    ...     pathlib.Path(home, "Makefile").touch()
    ...     print(committed_results_dir("01_ldpk_modes").relative_to(pathlib.Path(home).resolve()).as_posix())
    data/results/01_ldpk_modes
    """
    return results_dir() / stem


def resolve_notebook(name, folder=None):
    """A notebook from a path, a file name, a stem ("01_ldpk_modes") or its number ("01").

    Parameters
    ----------
    name : str or path-like
    folder : path-like, optional
        Where names are looked up (default: the compendium's ``notebooks/``).

    Returns
    -------
    Path

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     for name in ["01_ldpk_modes.ipynb", "02_ldp_kmodes_sampling.ipynb"]:
    ...         pathlib.Path(folder, name).touch()
    ...     print([resolve_notebook(n, folder).name for n in ["01", "02_ldp_kmodes_sampling"]])
    ...     resolve_notebook("07", folder)
    Traceback (most recent call last):
    ...
    ValueError: unknown notebook='07'; known: 01_ldpk_modes, 02_ldp_kmodes_sampling
    """
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
    """Set environment variables of this process while a kernel it starts runs (``grade`` uses it; a run
    of :func:`run_notebook` gives its kernel its variables at its start instead)."""
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
    """Send file descriptor 2 to ``path`` while a notebook runs (``grade`` uses it).

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


# One BLAS and OpenMP thread in every kernel: threaded sums (BLAS, scikit-learn's k-means) change their last digits
# with the number of threads, so a table's digits would depend on how many notebooks ran side by side. A notebook
# uses the cores through its sweeps' n_jobs, whose results do not depend on it.
SINGLE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _kernel_env(profile, environment):
    env = {"JUPYTER_PREFER_ENV_PATH": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1", **SINGLE_THREAD}
    if profile is not None:
        env[PROFILE_ENV] = resolve_profile(profile).name
    env.update(environment or {})
    return env


def _progress_hooks(events, name):
    """papermill hooks that put ``(name, cell number, number of cells)`` on ``events`` as each cell starts."""
    if events is None:
        return {}
    n_cells = {}

    def on_notebook_start(**kw):  # nbclient passes the notebook, with papermill's injected cell
        n_cells["n"] = len(kw["notebook"].cells)

    def on_cell_start(cell_index=0, **_):
        events.put((name, cell_index + 1, n_cells.get("n", 0)))

    return {"on_notebook_start": on_notebook_start, "on_cell_start": on_cell_start}


@contextlib.contextmanager
def _ignoring_sigint():
    """A second Ctrl-C while a kernel shuts down must not leave the kernel running."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _shutdown(km, now):
    """Stop the kernel and its process group (its own workers too), however the run ended."""
    from jupyter_core.utils import run_sync

    with _ignoring_sigint():
        try:
            if km.has_kernel:
                run_sync(km.shutdown_kernel)(now=now)
        except Exception:  # a kernel that will not shut down cleanly is killed, never left behind
            with contextlib.suppress(Exception):
                run_sync(km.kill_kernel)()


def _kernel_manager():
    """A manager for this environment's ``python3`` kernel, whatever kernels the user's folders declare.

    The environment's own kernel folder is searched first (what ``JUPYTER_PREFER_ENV_PATH`` does),
    set on the manager rather than in ``os.environ``, so that runs in threads side by side change
    nothing they share."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    specs = KernelSpecManager()
    specs.kernel_dirs = [str(Path(sys.prefix, "share", "jupyter", "kernels")), *specs.kernel_dirs]
    return AsyncKernelManager(kernel_name="python3", kernel_spec_manager=specs)


def _left_behind(loop, context):
    logging.getLogger(__name__).debug("left behind by a finished run: %s", context.get("message"))


def _in_own_event_loop(func, *args):
    """``func(*args)`` in a context of its own, on an event loop of its own, closed at the end.

    jupyter_core keeps the event loop that drives a kernel in a context variable, and the threads of a Dask
    worker may run their tasks in copies of one context: two runs side by side would then drive their kernels
    on one loop, and the second fails ("This event loop is already running").
    """

    def body():
        import asyncio

        from jupyter_core.utils import ensure_event_loop

        loop = ensure_event_loop()  # this context's: a new loop, set for this thread
        # A run stopped by Ctrl-C, a timeout or a failing cell leaves nbclient's wait for the kernel's reply
        # behind; once the kernel is shut down that task ends with DeadKernelError, which asyncio would print
        # as a traceback whenever the task is collected. The run's own outcome is reported by the caller.
        loop.set_exception_handler(_left_behind)
        try:
            return func(*args)
        finally:
            loop.close()
            asyncio.set_event_loop(None)

    return contextvars.Context().run(body)


def _execute(notebook, output_path, parameters, timeout, hooks, env, log, on_kernel):
    """papermill on a kernel this process starts and owns, shut down whether the run ends, fails or is
    interrupted. The kernel gets its environment, working folder and stderr at its start, so that
    nothing of this process (``os.environ``, the working folder, descriptor 2) changes during a run:
    runs in several threads of one process (a Dask worker) stay apart."""
    import papermill as pm
    from jupyter_core.utils import run_sync

    km = _kernel_manager()
    clean = False
    try:
        with open(log, "ab") as sink:  # the kernel's own output (not the cells'), e.g. why it did not start
            run_sync(km.start_kernel)(cwd=str(notebook.parent), env={**os.environ, **env}, stdout=sink, stderr=sink)
        if on_kernel is not None:
            on_kernel(km.provisioner.pid)
        pm.execute_notebook(
            str(notebook),
            str(output_path),
            parameters=parameters or None,
            kernel_name="python3",
            execution_timeout=timeout,
            progress_bar=False,
            log_output=False,
            km=km,
            **hooks,
        )
        clean = True
    finally:
        _shutdown(km, now=not clean)


def run_notebook(
    notebook,
    output_path=None,
    parameters=None,
    profile=None,
    timeout=DEFAULT_CELL_TIMEOUT,
    events=None,
    label=None,
    environment=None,
    on_kernel=None,
):
    """Execute one notebook with papermill; return a summary dict (never raises on notebook errors).

    Parameters
    ----------
    notebook : path of the notebook
    output_path : where to write the executed notebook (default: in place)
    parameters : dict injected by papermill (the notebook's ``parameters`` cell must declare them)
    profile : "paper" or "smoke", passed to the kernel as $DPCLUST_PROFILE
    timeout : seconds allowed per cell
    events : a queue that receives ``(label, cell number, number of cells)`` as each cell starts
        (progress); None: none sent
    label : the run's name in those events (default: the notebook's stem)
    environment : more environment variables for the kernel (``reproduce`` sets its staging folder)
    on_kernel : called with the kernel's process id once it has started (a sweep on a cluster
        keeps it, to stop the kernel when the sweep is interrupted)

    The kernel runs in the notebook's folder, with this process's environment plus the
    variables above and one BLAS and OpenMP thread (so that no digit depends on the thread
    count); its own stderr (not the cells' outputs) is kept out of the terminal, and the
    last lines of it are added to the error of a notebook that fails. Nothing of this
    process changes, so runs may go side by side in threads. Ctrl-C shuts the kernel down,
    then raises :class:`KeyboardInterrupt` to the caller.

    Returns
    -------
    dict with notebook, status (``"ok"`` or ``"failed"``), seconds, error and output

    Examples
    --------
    A notebook that cannot run is reported, not raised (here one that is not there, so no
    kernel starts):

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     row = run_notebook(pathlib.Path(tmp, "01_absent.ipynb"), pathlib.Path(tmp, "out.ipynb"))
    >>> row["notebook"], row["status"], row["error"]
    ('01_absent', 'failed', "FileNotFoundError: [Errno 2] No such file or directory: '.../01_absent.ipynb'")
    """
    notebook = Path(notebook)
    output_path = Path(output_path) if output_path is not None else notebook
    env = _kernel_env(profile, environment)
    hooks = _progress_hooks(events, label or notebook.stem)
    start = time.perf_counter()
    status, error = "ok", ""
    with tempfile.TemporaryDirectory(prefix="dpclust-kernel-") as tmp:
        log = Path(tmp) / "stderr.log"
        try:
            if not notebook.is_file():  # before a kernel starts for nothing
                raise FileNotFoundError(2, "No such file or directory", str(notebook))
            _in_own_event_loop(_execute, notebook, output_path, parameters, timeout, hooks, env, log, on_kernel)
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
    ends; labels are unique). On a terminal the line is redrawn in place and erased at the end, so a
    successful batch leaves only its summary; elsewhere (logs) a line is printed
    at most every ``every`` seconds. :meth:`note` prints a line of its own above it
    (a point run again after a lost worker), from any thread.
    """

    def __init__(self, events, total, stream=None, every=30.0):
        self.events, self.total, self.stream = events, total, stream or sys.stdout
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.every = 0.5 if self.tty else every
        self.running, self.done, self.finished, self.start = {}, 0, set(), time.perf_counter()
        self._last, self._stop, self._lock = 0.0, threading.Event(), threading.Lock()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._drain()
        if self.tty:
            self._write("\r\x1b[K")

    def line(self):
        now = time.perf_counter()
        parts = [
            f"{label} {f'cell {k}/{n}' if k else 'starting'} {_clock(now - t0)}"
            for label, (k, n, t0) in self.running.items()
        ]
        return f"[{self.done}/{self.total} done, {_clock(now - self.start)}] " + " | ".join(parts)

    def note(self, text):
        """Print ``text`` on a line of its own (on a terminal, the status line is drawn again below it)."""
        self._write(("\r\x1b[K" if self.tty else "") + text + "\n")
        self._last = 0.0

    def _write(self, text):
        with self._lock:
            self.stream.write(text)
            self.stream.flush()

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
                self.finished.add(label)
                self.done += 1
            elif label not in self.finished:  # a late event of a run that has ended (a cluster's) is dropped
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
                self._write("\r\x1b[K" + self.line()[:width])
            else:
                self._write(self.line() + "\n")


def _clock(seconds):
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def _doit(tasks, db, jobs, always):
    """Run doit's ``tasks`` in their order, ``jobs`` side by side, recording in ``db``; return doit's exit status."""
    from doit.cmd_base import TaskLoader2
    from doit.doit_cmd import DoitMain
    from doit.reporter import ZeroReporter

    class Batch(TaskLoader2):
        def setup(self, opt_values):
            pass

        def load_doit_config(self):
            return {
                "reporter": ZeroReporter(sys.stdout, {}),  # the batch prints its own lines; doit only its errors
                "dep_file": str(db),
                "backend": "sqlite3",  # several batches may record their runs in one file side by side
                "num_process": jobs if jobs > 1 else 0,  # 0: one after the other in this thread, where Ctrl-C lands
                "par_type": "thread",
                "continue": True,  # a failed run does not stop the others
                "verbosity": 0,
            }

        def load_tasks(self, cmd, pos_args):
            return tasks

    return DoitMain(Batch(), config_filenames=()).run(["run", *(["--always-execute"] if always else [])])


def _run_many(calls, jobs, progress=False, on_done=None, db=None, resume=False):
    """Run the calls as doit tasks, ``jobs`` side by side, the longest first (by the last recorded run); return
    one row each, in their order.

    ``on_done(call, row)`` runs in the run's thread as it ends and returns its row: a run whose row is not
    ``ok`` is a failed task. Each run side by side is a thread of this process driving a kernel of its own (a
    process), so the runs need no worker processes and nothing to send back. A call's ``task`` entry (not
    passed to :func:`run_notebook`) names its task (``name``, the same in every batch) and declares what it
    reads and writes: ``file_dep``, ``targets`` and ``config`` (the values it ran with). doit records them
    in its file ``db`` for each run that succeeded; with ``resume``, a run whose files and values are
    unchanged since is skipped (a None row). Without ``db`` every call runs and nothing is kept. Ctrl-C
    stops the kernels under way; each such run then ends as a failed one before :class:`KeyboardInterrupt`
    is raised.
    """
    require("doit", "notebooks")
    from doit.task import dict_to_task
    from doit.tools import config_changed

    on_done = on_done or (lambda call, row: row)
    rows, kernels, under_way, errors = [None] * len(calls), {}, set(), []
    events = queue.Queue() if progress else None

    def run(i):
        call = calls[i]
        label = call.get("label") or Path(call["notebook"]).stem
        under_way.add(i)
        try:
            if events is not None:
                events.put((label, 0, 0))  # the clock starts with the kernel
            arguments = {k: v for k, v in call.items() if k != "task"}
            row = run_notebook(events=events, **arguments, on_kernel=lambda pid: kernels.__setitem__(i, pid))
            rows[i] = on_done(call, row)
            return rows[i]["status"] == "ok"
        except Exception as exc:  # raised again in the caller's thread once the batch is over (Ctrl-C goes up now)
            errors.append(exc)
            return False
        finally:
            if events is not None:
                events.put((label, None, None))
            kernels.pop(i, None)
            under_way.discard(i)

    def task(i):
        what = calls[i].get("task", {})
        uptodate = [config_changed(what["config"])] if "config" in what else []
        return dict_to_task(
            {
                "name": what.get("name", f"run{i}"),
                "actions": [(run, [i])],
                "file_dep": [str(p) for p in what.get("file_dep", [])],
                "targets": [str(p) for p in what.get("targets", [])],
                "uptodate": uptodate,
                "io": {"capture": False},  # the runs' threads print their own lines
                "verbosity": 0,
            }
        )

    order = sorted(range(len(calls)), key=lambda i: -_last_duration(calls[i]["notebook"]))
    with (
        _Progress(events, len(calls)) if progress else contextlib.nullcontext(),
        tempfile.TemporaryDirectory(prefix="dpclust-runs-") as scratch,
    ):
        try:
            status = _doit([task(i) for i in order], db or Path(scratch) / "runs.sqlite3", jobs, always=not resume)
        except KeyboardInterrupt:
            _stop_kernels(kernels, under_way)
            raise
    if status not in (0, 1):  # 0: every task succeeded or was skipped, 1: some failed (their rows say why)
        raise RuntimeError(f"doit could not run the batch (status {status}; its message is above)")
    if errors:
        raise errors[0]
    return rows


def _stop_kernels(kernels, under_way, patience=60.0):
    """Ctrl-C reaches this thread only: stop the kernels of the runs under way in the others and wait until those
    runs have ended (each as a failed run: its notebook kept, nothing committed)."""
    deadline = time.monotonic() + patience
    client_log = logging.getLogger("papermill")  # each run would say that its kernel died, which it was told to
    level = client_log.level
    client_log.setLevel(logging.CRITICAL)
    try:
        while under_way and time.monotonic() < deadline:
            for pid in list(kernels.values()):  # again until the run has ended: a kernel may start in the meantime
                kill_kernel(pid)
            time.sleep(0.1)
    finally:
        client_log.setLevel(level)


def kill_kernel(pid):
    """Stop a kernel that :func:`run_notebook` started (its ``on_kernel`` pid) at once, with its own workers."""
    with contextlib.suppress(OSError):
        if hasattr(os, "killpg"):
            os.killpg(pid, signal.SIGKILL)  # the kernel leads its own process group (its workers are in it)
        else:  # Windows: TerminateProcess
            os.kill(pid, signal.SIGTERM)


def ledger_counts(results_dir):
    """How many ledger rows of each verdict a results folder holds (zeros without a ledger).

    Parameters
    ----------
    results_dir : path-like
        A notebook's results folder, named after it (its ``ledger.csv`` is read).

    Returns
    -------
    dict
        Verdict -> count (and, with a ledger, the count of claims graded on run times).

    Examples
    --------
    >>> import os, tempfile
    >>> from dpclust.verdicts import Ledger
    >>> ledger = Ledger("Li et al. 2013", "04_idp_kmeans")
    >>> _ = ledger.add("fig3", "NICV falls", "Fig. 3", "0.12", "partly", artefact="Fig. 3")
    >>> _ = ledger.add("fig4", "F falls", "Fig. 4", "", "partly", artefact="Fig. 4")
    >>> with tempfile.TemporaryDirectory() as root:
    ...     folder = os.path.join(root, "04_idp_kmeans")
    ...     print(ledger_counts(folder))
    ...     _ = ledger.save(folder)
    ...     print(ledger_counts(folder))
    {'reproduced': 0, 'partly': 0, 'not reproduced': 0, 'unstable': 0, 'not testable': 0, 'not run': 0}
    {'reproduced': 0, 'partly': 2, 'not reproduced': 0, 'unstable': 0, ..., 'on run times': 0}
    """
    folder = Path(results_dir)
    ledgers = read_ledgers([folder.name], folder.parent)
    if ledgers.empty:
        return dict.fromkeys(VERDICTS, 0)
    return verdict_counts(ledgers).drop(columns="claims").iloc[0].astype(int).to_dict()


def _show_progress(progress):
    return sys.stdout.isatty() if progress is None else bool(progress)


def finished_lines(progress, total):
    """``say(label, row)``, one line per finished run as it ends, off a terminal (a log, a pipe) when no live
    status line was asked for: `make reproduce > log` would otherwise print nothing until its summary."""
    if progress is not None or sys.stdout.isatty():
        return lambda label, row: None
    start, done = time.perf_counter(), iter(range(1, total + 1))

    def say(label, row):
        took = f"{row['status']} in {_clock(row.get('seconds') or 0)}"
        print(f"[{next(done, total)}/{total} done, {_clock(time.perf_counter() - start)}] {label}: {took}", flush=True)

    return say


def _written_results(call, row):
    """The folder a finished run wrote its tables to: its ``results_dir`` parameter, else its profile's default."""
    folder = (call.get("parameters") or {}).get("results_dir")
    if folder is not None:
        return folder
    return output_dirs(Path(call["notebook"]).stem, call.get("profile") or "paper")[0]


def run_batch(calls, jobs=1, progress=None, finish=None, db=None, resume=False):
    """Run papermill calls (dicts of :func:`run_notebook` arguments); one summary row each.

    The summary has notebook, status, seconds, error and, per verdict, the count
    of rows in the ledger the run wrote. ``finish(call, row)`` runs as each run ends and
    returns the results folder to count (None: no counts); by default the run's
    ``results_dir`` parameter, else the profile's default folder. The overview (00_) runs
    after the others, whose ledgers it gathers. Every call's parameters are checked
    against the notebook's declarations first (:func:`check_parameters`).

    Parameters
    ----------
    calls : iterable of dict
        Keyword arguments of :func:`run_notebook`, one dict per run.
    jobs : int, default 1
        Runs side by side (doit tasks in threads of this process, each driving its own kernel).
    progress : bool, optional
        Show which cell each run is at (None: on a terminal).
    finish : callable (call, row) -> path-like or None, optional
    db, resume : doit's record of the runs that succeeded, and whether to skip those whose declared inputs
        (each call's ``task``, see :func:`_run_many`) are unchanged since; a skipped run's row says so in its
        note, with the counts of its ``task["results"]`` folder.

    Returns
    -------
    DataFrame with columns notebook, status, seconds, one per verdict, error, note

    Examples
    --------
    The batch is checked before anything runs:

    >>> import nbformat, pathlib, tempfile
    >>> source = "from dpclust.parameters import PositiveInt\\n\\nmax_iter: PositiveInt = 5  # noisy releases"
    >>> cell = nbformat.v4.new_code_cell(source)
    >>> cell.metadata["tags"] = ["parameters"]
    >>> kernel = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "01_toy.ipynb")
    ...     nbformat.write(nbformat.v4.new_notebook(cells=[cell], metadata=kernel), path)
    ...     run_batch([{"notebook": path, "parameters": {"max_iter": 3}},
    ...                 {"notebook": path, "parameters": {"max_iter": 0}}])
    Traceback (most recent call last):
    ...
    ValueError: 01_toy.ipynb: notebook parameter max_iter=0 must be an integer ≥ 1 (PositiveInt): not ≥ 1
    """
    calls = list(calls)
    for call in calls:  # in place: a caller may know its calls by identity (reproduce's finish)
        call["parameters"] = check_parameters(call["notebook"], call.get("parameters") or {})
    finish = finish or _written_results
    say = finished_lines(progress, len(calls))

    def on_done(call, row):
        say(Path(call["notebook"]).stem, row)
        folder = finish(call, row)
        counts = ledger_counts(folder) if folder is not None else dict.fromkeys(VERDICTS, 0)
        return {"note": "", **row, **counts}

    gatherers = [c for c in calls if Path(c["notebook"]).stem.startswith(OVERVIEW_PREFIX)] if len(calls) > 1 else []
    rest = [c for c in calls if not any(c is g for g in gatherers)]
    show = _show_progress(progress)
    rows = {}
    for batch in (rest, gatherers):
        runs = [_alone_with_every_worker(call, jobs) for call in batch] if len(batch) == 1 else batch
        original = {id(run): call for run, call in zip(runs, batch)}
        done = _run_many(runs, jobs, show, lambda run, row: on_done(original[id(run)], row), db, resume)
        for call, row in zip(batch, done):
            rows[id(call)] = row if row is not None else _skipped(call)
    columns = ["notebook", "status", "seconds", *VERDICTS, "error", "note"]
    return pd.DataFrame([rows[id(call)] for call in calls])[columns]


def _skipped(call):
    """The row of a run that ``resume`` skipped: its last committed run had the same inputs."""
    counts = ledger_counts(call["task"]["results"])
    note = "up to date: its last committed run had the same notebook, code, packages and data (--resume)"
    return {
        "notebook": Path(call["notebook"]).stem,
        "status": "ok",
        "seconds": 0.0,
        "error": "",
        "note": note,
        **counts,
    }


def _alone_with_every_worker(call, jobs):
    """A run that has the machine to itself (the overview, after the others) is told it may use ``jobs`` workers
    (``$DPCLUST_JOBS``, the default of a notebook's ``n_jobs`` that reads it): its results do not depend on it."""
    if jobs <= 1:
        return call
    return {**call, "environment": {JOBS_ENV: str(jobs), **(call.get("environment") or {})}}


def check_parameters(notebook, values):
    """Values for a notebook's parameters as it will use them, checked before it runs: each must be a parameter of
    its ``parameters`` cell and of the type declared there (:mod:`dpclust.parameters`, the check the notebook
    itself makes in the cell after its parameters cell).

    Raises ValueError naming the notebook parameter, e.g. ``max_iter='abc'``.

    Parameters
    ----------
    notebook : path-like
    values : dict
        Parameter name -> value.

    Returns
    -------
    dict
        Name -> the value the notebook's check makes of it (one number for a list becomes a list of one).

    Examples
    --------
    >>> import nbformat, pathlib, tempfile
    >>> source = "from dpclust.parameters import PositiveInt\\n\\nmax_iter: PositiveInt = 5  # noisy releases"
    >>> cell = nbformat.v4.new_code_cell(source)
    >>> cell.metadata["tags"] = ["parameters"]
    >>> kernel = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = pathlib.Path(tmp.name, "01_toy.ipynb")
    >>> nbformat.write(nbformat.v4.new_notebook(cells=[cell], metadata=kernel), path)
    >>> check_parameters(path, {"max_iter": 10})
    {'max_iter': 10}
    >>> check_parameters(path, {"max_iter": "abc"})
    Traceback (most recent call last):
    ...
    ValueError: 01_toy.ipynb: notebook parameter max_iter='abc' must be an integer ≥ 1 (PositiveInt): not an integer
    >>> tmp.cleanup()
    """
    if not values:
        return {}
    path = Path(notebook)
    declared = parameters.declared(path)
    out = {}
    for name, value in values.items():
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise ValueError(
                f"parameter {name!r} is not declared in the parameters cell of {path.name} (declared: {known})"
            )
        try:
            out[name] = parameters.convert(name, value, declared[name])
        except ValueError as exc:
            raise ValueError(f"{path.name}: {exc}") from None
    return out


TMP_SUFFIX = ".dpclust-tmp"  # a prepared file beside its target, renamed onto it at the switch (git-ignored)


class Interrupted(KeyboardInterrupt):
    """A reproduce run stopped by Ctrl-C (or SIGTERM); the message says what was kept where.

    A :class:`KeyboardInterrupt`, so code that stops on Ctrl-C stops on it too.

    Examples
    --------
    >>> try:
    ...     raise Interrupted("the notebooks under way are unchanged (notebook, tables and figures)")
    ... except KeyboardInterrupt as exc:  # what the command line prints before it exits with status 130
    ...     print(f"interrupted: {exc}")
    interrupted: the notebooks under way are unchanged (notebook, tables and figures)
    """


def staging_dir():
    """``data/results/staging``: the runs under way, their locks and commit journals (git-ignored).

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as home, mock.patch.dict(os.environ, {"DPCLUST_HOME": home}):
    ...     pathlib.Path(home, "notebooks").mkdir()
    ...     pathlib.Path(home, "Makefile").touch()
    ...     print(staging_dir().relative_to(pathlib.Path(home).resolve()).as_posix())
    data/results/staging
    """
    return results_dir() / "staging"


def failed_dir():
    """``data/results/failed``: the executed notebook of each failed or interrupted run (git-ignored).

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as home, mock.patch.dict(os.environ, {"DPCLUST_HOME": home}):
    ...     pathlib.Path(home, "notebooks").mkdir()
    ...     pathlib.Path(home, "Makefile").touch()
    ...     print(failed_dir().relative_to(pathlib.Path(home).resolve()).as_posix())
    data/results/failed
    """
    return results_dir() / "failed"


def _targets(path, profile, output_dir):
    """Where a run's notebook, tables and figures go once it has succeeded."""
    results, figures = target_dirs(path.stem, profile)
    if output_dir is None and profile != "paper":
        output_dir = results_dir() / profile / "notebooks"
    notebook = path if output_dir is None else Path(output_dir) / path.name
    return {"notebook": notebook, "results": results, "figures": figures}


def _write_synced(path, data):
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _default_targets(stem):
    """The targets of a notebook's runs under each profile, without their --out (where leftovers are looked for)."""
    path = notebook_dir() / f"{stem}.ipynb"
    return [_targets(path, profile, None) for profile in ("paper", "smoke")]


def _recover(stem, targets=None):
    """Finish what a killed run of ``stem`` left, under its lock: a switch cut short is rolled forward
    from its journal (so its files end up all new), prepared files and staging folders are removed.
    Return whether a switch was completed."""
    journal = staging_dir() / f"{stem}.commit.json"
    completed = journal.is_file()
    if completed:
        _apply_journal(json.loads(journal.read_text()))
        journal.unlink()
    journal.with_suffix(TMP_SUFFIX).unlink(missing_ok=True)
    stale = []
    for where in [targets] if targets is not None else _default_targets(stem):
        stale.append(where["notebook"].parent / f".{where['notebook'].name}{TMP_SUFFIX}")
        for folder in (where["results"], where["figures"]):
            stale += list(folder.rglob(f".*{TMP_SUFFIX}")) if folder.is_dir() else []
    for path in stale:
        path.unlink(missing_ok=True)
    for folder in staging_dir().glob(f"{stem}.run-*"):
        shutil.rmtree(folder, ignore_errors=True)
    return completed


def recover_interrupted_commits():
    """Complete every commit a killed run left half done, before a command reads or writes results.

    A run killed (SIGKILL, power loss) between the first and the last rename of its commit leaves
    some targets new and the rest old, with a journal of the renames. Every ``dpclust`` command
    (and :func:`reproduce`, :func:`dpclust.verify.verify`, :func:`dpclust.sweep.sweep_notebook`)
    calls this first: under each notebook's lock, the renames are completed from the journal, so
    the files are all new, and the killed run's prepared files and staging folders are removed. A
    notebook whose lock a live run holds is left to that run. Outside a compendium it does nothing.

    Returns
    -------
    list of str
        The notebooks whose commit was completed.

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as home, mock.patch.dict(os.environ, {"DPCLUST_HOME": home}):
    ...     pathlib.Path(home, "notebooks").mkdir()
    ...     pathlib.Path(home, "Makefile").touch()
    ...     target = pathlib.Path(home, "data", "results", "01_toy", "table.csv")
    ...     target.parent.mkdir(parents=True)
    ...     _ = target.write_text("old")
    ...     prepared = target.with_name(".table.csv" + TMP_SUFFIX)
    ...     _ = prepared.write_text("new")
    ...     staging_dir().mkdir(parents=True)
    ...     journal = staging_dir() / "01_toy.commit.json"
    ...     _ = journal.write_text(json.dumps([[str(prepared), str(target)]]))  # killed before its rename
    ...     print(recover_interrupted_commits(), target.read_text(), journal.exists())
    ['01_toy'] new False
    """
    import fcntl

    from ._paths import find_project_dir

    if find_project_dir() is None or not staging_dir().is_dir():
        return []
    stems = {p.name.removesuffix(".commit.json") for p in staging_dir().glob("*.commit.json")}
    stems |= {p.name.split(".run-")[0] for p in staging_dir().glob("*.run-*")}
    completed = []
    for stem in sorted(stems):
        fd = os.open(staging_dir() / f"{stem}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue  # a live run holds it: that run finishes its own commit
        try:
            if _recover(stem):
                completed.append(stem)
        finally:
            os.close(fd)
    return completed


# Windows locks a byte range, which then cannot be read: the lock is on a byte past the holder's process id.
_LOCKED_BYTE = 1024


def _lock_file(fd):
    """Lock an open file without waiting, as the system's own lock (released when the process dies); False if
    another process holds it."""
    if os.name == "nt":
        import msvcrt

        os.lseek(fd, _LOCKED_BYTE, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        finally:
            os.lseek(fd, 0, os.SEEK_SET)
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextlib.contextmanager
def notebook_locks(targets_by_stem):
    """Hold one lock per notebook (``data/results/staging/<stem>.lock``) for a whole reproduce run.

    A second run of the same notebook is refused at once, before it writes anything. The locks
    are the system's own file locks (``flock`` on Linux and macOS, ``msvcrt.locking`` on Windows):
    the system releases them when the holder dies, even by SIGKILL, and the next run then finishes
    or removes what the killed one left (:func:`_recover`).

    Parameters
    ----------
    targets_by_stem : dict
        Notebook stem -> its targets (a dict with the paths ``notebook``, ``results`` and ``figures``).

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as home, mock.patch.dict(os.environ, {"DPCLUST_HOME": home}):
    ...     pathlib.Path(home, "notebooks").mkdir()
    ...     pathlib.Path(home, "Makefile").touch()
    ...     targets = {"notebook": pathlib.Path(home, "notebooks", "01_toy.ipynb"),
    ...                "results": pathlib.Path(home, "data", "results", "01_toy"),
    ...                "figures": pathlib.Path(home, "figures", "01_toy")}
    ...     with notebook_locks({"01_toy": targets}):
    ...         print(sorted(os.listdir(staging_dir())))
    ...         try:
    ...             with notebook_locks({"01_toy": targets}):  # a second run of the same notebook
    ...                 pass
    ...         except ValueError as exc:
    ...             print(exc)
    ['01_toy.lock']
    notebook 01_toy is being reproduced by another run (process ...); wait for it to end or stop it. Nothing was run ...
    """
    staging_dir().mkdir(parents=True, exist_ok=True)
    held = []
    try:
        for stem, targets in targets_by_stem.items():
            flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
            fd = os.open(staging_dir() / f"{stem}.lock", flags, 0o644)
            if not _lock_file(fd):
                owner = os.read(fd, 32).decode(errors="replace").strip() or "?"
                os.close(fd)
                raise ValueError(
                    f"notebook {stem} is being reproduced by another run (process {owner}); wait for it to end "
                    f"or stop it. Nothing was run or changed."
                ) from None
            held.append(fd)
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
            _recover(stem, targets)
        yield
    finally:
        for fd in held:
            os.close(fd)


@contextlib.contextmanager
def _signals_deferred():
    """Ctrl-C and SIGTERM wait until the switch is over: it happens whole or (SIGKILL) rolls forward later."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _staged_files(stage, name, targets):
    """(staged file, target) pairs: every table and figure the run wrote, then its notebook."""
    pairs = []
    for kind in ("results", "figures"):
        folder = stage / kind
        files = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
        pairs += [(p, targets[kind] / p.relative_to(folder)) for p in files]
    return pairs + [(stage / name, targets["notebook"])]


def commit_run(stage, name, targets, journal):
    """Replace a notebook's targets with a finished run's files, together: return the targets.

    Each file is first copied beside its target (same file system, synced), which can fail or be
    interrupted without touching a target. Then, with Ctrl-C and SIGTERM held back, a journal of the
    renames is written and every prepared file is renamed onto its target (``os.replace``, atomic
    per file), the notebook last, and the committed tables and figures the run did not write are
    removed (the stability run's ``replicates.csv`` apart). The only window left is a SIGKILL or
    power loss between the first and the last step (milliseconds): some targets are then new, the
    rest old, and the next command completes the steps from the journal before it starts.

    Parameters
    ----------
    stage : Path
        The run's staging folder: the executed notebook ``name``, and ``results/`` and ``figures/``.
    name : str
        The notebook's file name.
    targets : dict
        The paths ``notebook`` (a file), ``results`` and ``figures`` (folders) to replace.
    journal : Path
        Where the list of renames is kept while they happen.

    Returns
    -------
    list of Path
        The targets written, the notebook last.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> root = pathlib.Path(tmp.name)
    >>> stage = root / "staging" / "01_toy.run"
    >>> (stage / "results").mkdir(parents=True)
    >>> _ = (stage / "results" / "ledger.csv").write_text("claim_id,verdict\\nfig3,partly\\n")
    >>> _ = (stage / "01_toy.ipynb").write_text("the executed notebook")
    >>> targets = {"notebook": root / "notebooks" / "01_toy.ipynb", "results": root / "results" / "01_toy",
    ...            "figures": root / "figures" / "01_toy"}
    >>> targets["results"].mkdir(parents=True)
    >>> for old in ("old_table.csv", "replicates.csv"):  # a table the run no longer writes; the stability run's
    ...     _ = (targets["results"] / old).write_text("x\\n1\\n")
    >>> written = commit_run(stage, "01_toy.ipynb", targets, root / "staging" / "01_toy.commit.json")
    >>> [p.relative_to(root).as_posix() for p in written]
    ['results/01_toy/ledger.csv', 'notebooks/01_toy.ipynb']
    >>> (root / "results" / "01_toy" / "ledger.csv").read_text().splitlines()
    ['claim_id,verdict', 'fig3,partly']
    >>> sorted(p.name for p in targets["results"].iterdir())  # the stale table is gone, the replicates stay
    ['ledger.csv', 'replicates.csv']
    >>> sorted(p.name for p in (root / "staging").iterdir())  # the journal is gone once every rename is done
    ['01_toy.run']
    >>> tmp.cleanup()
    """
    prepared = []
    try:
        for source, target in _staged_files(stage, name, targets):
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.parent / f".{target.name}{TMP_SUFFIX}"
            prepared.append((tmp, target))
            _write_synced(tmp, source.read_bytes())
    except BaseException:
        for tmp, _ in prepared:
            tmp.unlink(missing_ok=True)
        raise
    # A table or figure the new run no longer writes would be left beside tables it does not match.
    stale = [[str(path), None] for path in _stale_files(targets, {target for _, target in prepared})]
    with _signals_deferred():
        steps = [[str(a), str(b)] for a, b in prepared] + stale
        _write_synced(journal.with_suffix(TMP_SUFFIX), json.dumps(steps).encode())
        os.replace(journal.with_suffix(TMP_SUFFIX), journal)
        _apply_journal(steps)
        journal.unlink()
    return [target for _, target in prepared]


def _stale_files(targets, written):
    """The committed tables and figures of a notebook that its new run did not write (the stability run's
    replicates apart: they are written by ``stability``, not by the notebook)."""
    found = []
    for kind in ("results", "figures"):
        folder = Path(targets[kind])
        if folder.is_dir():
            found += [p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")]
    return sorted(p for p in found if p not in written and p.name != REPLICATES)


def _apply_journal(steps):
    """Carry out a commit's steps: rename each prepared file onto its target, then remove each stale file."""
    for source, target in steps:
        if target is None:
            Path(source).unlink(missing_ok=True)
        elif Path(source).is_file():
            os.replace(source, target)


def _keep_failed(stage, name, stem):
    """Move a failed run's executed notebook to ``data/results/failed/<stem>.ipynb``; None if it has none."""
    staged = stage / name
    if not staged.is_file():
        return None
    failed_dir().mkdir(parents=True, exist_ok=True)
    kept = failed_dir() / f"{stem}.ipynb"
    shutil.move(str(staged), kept)
    return kept


def _relative(path):
    with contextlib.suppress(ValueError, OSError):
        return str(Path(path).resolve().relative_to(Path(results_dir()).parents[1]))
    return str(path)


# What a committed notebook must not show, and what says a run lacked a data set. A warning as Python prints
# it ("...: SomeWarning: message"); a folder of the machine that ran it; the message experiments.load_dataset
# prints for a data set it could not find.
_WARNING = re.compile(r"\b\w*Warning: ")
_GENERIC_PATH = re.compile(r"(?<![\w.])(/(home|Users|tmp|root|opt|usr|var)/[\w.-]+|[A-Z]:\\\\[\w.-]+|site-packages)")
_ABSENT_DATA = re.compile(r"not run: the data set '([^']+)' is not on this machine")


def _output_texts(notebook):
    """(cell index, text) of every text output of a notebook file (streams, text data, tracebacks)."""
    import nbformat

    try:
        cells = nbformat.read(notebook, as_version=4).cells
    except (OSError, ValueError, AttributeError):  # absent, or not a notebook: nothing shown
        return
    for i, cell in enumerate(cells):
        for output in cell.get("outputs", []):
            texts = [output.get("text", "")] + [v for k, v in output.get("data", {}).items() if k.startswith("text/")]
            texts += output.get("traceback", [])
            for text in texts:
                yield i, "".join(text) if isinstance(text, list) else str(text)


def _machine_paths():
    """The folders of this machine a committed output could leak: the compendium, home, the environment, temp."""
    folders = {Path.home(), Path(sys.prefix), Path(sys.base_prefix), Path(tempfile.gettempdir())}
    with contextlib.suppress(OSError):
        folders.add(notebook_dir().parent)
    return sorted({str(f.resolve()) for f in folders if len(f.resolve().parts) > 1}, key=len, reverse=True)


def output_findings(notebook):
    """What a reader of a committed notebook must not see: every warning and every path of this machine.

    Parameters
    ----------
    notebook : path-like
        An executed notebook.

    Returns
    -------
    list of (cell index, what, excerpt)
        ``what`` is ``"warning"`` or ``"machine path"``.

    Examples
    --------
    >>> import nbformat, os, tempfile
    >>> cell = nbformat.v4.new_code_cell("print(1)")
    >>> cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text="x.py:3: UserWarning: slow\\n")]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "01_toy.ipynb")
    ...     nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    ...     output_findings(path)
    [(0, 'warning', 'x.py:3: UserWarning: slow')]
    """
    own = [re.escape(p) for p in _machine_paths()]
    machine = re.compile("|".join([_GENERIC_PATH.pattern, *(rf"(?<![\w.]){p}(?![\w.-])" for p in own)]))
    found = []
    for i, text in _output_texts(notebook):
        for pattern, what in ((_WARNING, "warning"), (machine, "machine path")):
            match = pattern.search(text)
            if match:
                line_start = text.rfind("\n", 0, match.start()) + 1
                line_end = text.find("\n", match.end())
                found.append((i, what, text[line_start : line_end if line_end >= 0 else None].strip()[:160]))
    return found


def absent_data_sets(notebook):
    """The data sets an executed notebook said it could not find (``not run: the data set 'X' ...``).

    Examples
    --------
    >>> import nbformat, os, tempfile
    >>> cell = nbformat.v4.new_code_cell("...")
    >>> text = "not run: the data set 'magic' is not on this machine and could not be downloaded\\n"
    >>> cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "04_toy.ipynb")
    ...     nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    ...     absent_data_sets(path), absent_data_sets(os.path.join(tmp, "absent.ipynb"))
    (['magic'], [])
    """
    return sorted({name for _, text in _output_texts(notebook) for name in _ABSENT_DATA.findall(text)})


def data_the_notebooks_use(names):
    """Of the data sets ``names``, those the notebooks name in their code, and of these the ones their committed
    runs had (:func:`absent_data_sets`): what ``make reproduce`` needs to remake every committed result.

    Returns
    -------
    (set, set) : the data sets named, the data sets needed
    """
    named, needed = set(), set()
    for path in list_notebooks():
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        in_code = {n for n in names if re.search(rf"[\"']{re.escape(n)}[\"']", code)}
        named |= in_code
        needed |= in_code - set(absent_data_sets(path))
    return named, needed


def claims_lost(new_results, old_results):
    """Claims the committed run graded and the new run could not (``not run``: its data were absent).

    Each run is judged by its own draws (``run_verdicts``), not by the headline verdict, which joins the
    committed replicates: a run that graded nothing can still show a replicate's verdict there.
    """
    from .verdicts import SEPARATOR

    old, new = Path(old_results) / "ledger.csv", Path(new_results) / "ledger.csv"
    if not (old.is_file() and new.is_file()):
        return []

    def graded(path):  # claim_id -> whether the run graded it (a draw other than "not run")
        ledger = pd.read_csv(path, keep_default_na=False).set_index("claim_id")
        draws = ledger["run_verdicts"] if "run_verdicts" in ledger else ledger["verdict"]
        return draws.map(lambda cell: any(d != "not run" for d in str(cell).split(SEPARATOR)))

    before, after = graded(old), graded(new)
    shared = before.index.intersection(after.index)
    return [c for c in shared if before[c] and not after[c]]


def _data_files(names):
    """``name (file, URL)`` for the registry's files of each data set that are not on this machine."""
    from .datasets import available

    table = available()
    described = []
    for name in names:
        rows = table[(table["dataset"] == name) & ~table["present"].astype(bool)]
        files = ", ".join(
            f"{r.file} from {r.url}" if isinstance(r.url, str) and r.url else str(r.file) for r in rows.itertuples()
        )
        described.append(f"{name} ({files})" if files else name)
    return described


def _data_loss(run):
    """Why a finished run may not replace its targets: data the committed results had and this run lacked."""
    stage, targets = run["stage"], run["targets"]
    if not Path(targets["notebook"]).is_file():
        return ""  # a first run: there are no committed results to lose
    lost = sorted(set(absent_data_sets(stage / run["name"])) - set(absent_data_sets(targets["notebook"])))
    claims = claims_lost(stage / "results", targets["results"])
    if not lost and not claims:
        return ""
    what = f"the data sets {'; '.join(_data_files(lost))}" if lost else "their data"
    text = f"this run could not reach {what}, which the committed results had"
    if claims:
        text += f" (claims graded there and 'not run' now: {', '.join(claims)})"
    return text


def _commit_refusal(run, row):
    """The reason a finished run is not committed ("" if it may be), or a note when it is committed anyway."""
    lost = _data_loss(run)
    if lost and run.get("allow_missing_data"):
        row["note"] = f"committed without its data, as asked (--allow-missing-data): {lost}"
        lost = ""
    if lost:
        return (
            f"{lost}. Get the files with `make data` (python -m dpclust data --fetch) or put them in a folder "
            "listed in $DPCLUST_DATA_DIR; to commit a run without them, ask for it: --allow-missing-data"
        )
    if run.get("profile") == "paper":
        found = output_findings(run["stage"] / run["name"])
        if found:
            cells = "; ".join(f"cell {i}: {what}: {excerpt}" for i, what, excerpt in found[:3])
            more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
            return f"its outputs show a warning or a path of this machine (no committed notebook may): {cells}{more}"
    return ""


def _finish_run(run, row):
    """After a run: commit it (ok) or keep its notebook for debugging (failed); the folder to count."""
    stem = Path(run["notebook"]).stem
    if row["status"] == "ok":
        refusal = _commit_refusal(run, row)
        if refusal:
            row.update(status="failed", error=f"not committed: {refusal}")
    if row["status"] == "ok":
        try:
            commit_run(run["stage"], run["name"], run["targets"], staging_dir() / f"{stem}.commit.json")
            run["done"] = run["committed"] = True
            row["output"] = str(run["targets"]["notebook"])
            return run["targets"]["results"]
        except OSError as exc:
            row.update(status="failed", error=f"the finished run could not replace the committed files: {exc}")
    kept = run["kept"] = _keep_failed(run["stage"], run["name"], stem)
    run["done"] = True
    where = f"the failed run's notebook is kept as {_relative(kept)}" if kept else "the run left no notebook"
    row["error"] = f"{row['error']}\nthe committed notebook, tables and figures are unchanged; {where}"
    row["output"] = str(kept) if kept else ""
    return None


def _interrupted_message(runs):
    # a run stopped by the interrupt has ended as a failed one (its notebook kept), or has not started
    kept = [r.get("kept") if r["done"] else _keep_failed(r["stage"], r["name"], Path(r["notebook"]).stem) for r in runs]
    kept = [_relative(k) for k in kept if k is not None]
    committed = [Path(r["notebook"]).stem for r in runs if r.get("committed")]
    text = "the notebooks under way are unchanged (notebook, tables and figures)"
    if kept:
        text += "; their partial runs are kept as " + ", ".join(kept)
    if committed:
        text += "; finished before the interrupt and committed: " + ", ".join(committed)
    return text


def _inputs(notebook, targets, profile, allow_missing_data):
    """What a reproduce run reads and writes, as its doit task declares them: the notebook, the two packages' files
    and the committed replicates it reads (``file_dep``); its committed notebook and results (``targets``); the
    profile, the installed packages and the data sets on this machine (``config``). The overview reads the
    others' results too."""
    import importlib.metadata

    import dpclust_lib

    from .datasets import available

    code = [*_files_of(Path(dpclust_lib.__file__).parent), *_files_of(Path(__file__).parent)]
    read = [Path(notebook), *code, *[p for p in [Path(targets["results"]) / REPLICATES] if p.is_file()]]
    if Path(notebook).stem.startswith(OVERVIEW_PREFIX):
        others = [p.stem for p in list_notebooks() if not p.stem.startswith(OVERVIEW_PREFIX)]
        read += [table for stem in others for table in sorted(target_dirs(stem, profile)[0].glob("*.csv"))]
    written = [targets["results"]]
    if Path(targets["notebook"]) != Path(notebook):  # a paper-profile run writes the notebook it read: a dependency
        written.append(targets["notebook"])
    data = available()
    return {
        "name": f"{profile} {_relative(targets['notebook'])}",  # one record per notebook, profile and output
        "file_dep": read,
        "targets": written,
        "config": {
            "profile": profile,
            "allow_missing_data": bool(allow_missing_data),
            "packages": sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()),
            "data": sorted(data.loc[data["present"].astype(bool), "file"].dropna().astype(str)),
        },
        "results": targets["results"],
    }


def _files_of(folder):
    """A package's files, without what building or importing it leaves beside them."""

    def left_by_a_build(part):
        return part in ("__pycache__", "build") or part.endswith(".egg-info")

    return sorted(
        p for p in Path(folder).rglob("*") if p.is_file() and not any(map(left_by_a_build, p.relative_to(folder).parts))
    )


@contextlib.contextmanager
def _sigterm_as_interrupt():
    """SIGTERM (a ``kill``, a CI timeout) stops a reproduce run the way Ctrl-C does."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def reproduce(
    notebooks=None,
    profile="paper",
    jobs=1,
    timeout=DEFAULT_CELL_TIMEOUT,
    output_dir=None,
    progress=None,
    allow_missing_data=False,
    resume=False,
):
    """Run notebooks under a profile; return a summary table (notebook, status, seconds, ledger
    counts per verdict, error, note).

    Each notebook runs into a staging folder (``data/results/staging/``): its executed notebook,
    tables and figures. Only when the whole run succeeded do they replace the targets, together
    (:func:`commit_run`): by default the paper profile's committed notebook, ``data/results/<notebook>``
    and ``figures/<notebook>``; the smoke profile's ``data/results/smoke/...`` and
    ``figures/smoke/...``, its notebooks in ``data/results/smoke/notebooks/``; ``output_dir``:
    where the executed notebooks go instead. A failed run leaves the targets as they were and
    keeps its notebook in ``data/results/failed/``; Ctrl-C does the same for the runs under way
    and raises :class:`Interrupted`, whose message says what was kept. A notebook that another
    run is reproducing is refused (:func:`notebook_locks`).
    ``progress``: show which cell each running notebook is at (None: on a terminal).

    Each run is a doit task, which records in ``data/results/staging/runs.sqlite3`` what a committed run
    read (:func:`_inputs`). ``resume=True`` skips a notebook whose last committed run under this profile
    read the same notebook, code, installed packages and data sets: after an interrupted or failed batch,
    only what did not finish runs again.

    A finished run is not committed, but kept as a failed one with the reason, when it could not
    reach a data set the committed results had (its ``not run`` message, or a claim graded in the
    committed ledger and ``not run`` in the new one): the reason names the files, where they come
    from and how to get them. ``allow_missing_data=True`` commits such a run all the same, and
    its row's ``note`` says so. Under the paper profile a run whose outputs show a warning or a
    path of this machine (:func:`output_findings`) is not committed either.

    Examples
    --------
    Every notebook is resolved before anything is locked, staged or run:

    >>> import os, pathlib, tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as home, mock.patch.dict(os.environ, {"DPCLUST_HOME": home}):
    ...     pathlib.Path(home, "notebooks").mkdir()
    ...     pathlib.Path(home, "Makefile").touch()
    ...     pathlib.Path(home, "notebooks", "01_toy.ipynb").touch()
    ...     try:
    ...         reproduce(["01", "02"], profile="smoke")
    ...     except ValueError as exc:
    ...         print(exc)
    ...     print(sorted(p.name for p in pathlib.Path(home).iterdir()))
    unknown notebook='02'; known: 01_toy
    ['Makefile', 'notebooks']
    """
    profile = resolve_profile(profile).name
    paths = [resolve_notebook(n) for n in notebooks] if notebooks else list_notebooks()
    if not paths:
        raise ValueError(f"no notebooks found in {notebook_dir()}")
    recover_interrupted_commits()
    targets = {path.stem: _targets(path, profile, output_dir) for path in paths}
    with notebook_locks(targets), _sigterm_as_interrupt():
        runs = []
        for path in paths:
            stage = Path(tempfile.mkdtemp(prefix=f"{path.stem}.run-", dir=staging_dir()))
            run = dict(notebook=path, name=path.name, stage=stage, targets=targets[path.stem], done=False)
            runs.append(dict(run, profile=profile, allow_missing_data=allow_missing_data))
        calls = [
            dict(
                notebook=r["notebook"],
                output_path=r["stage"] / r["name"],
                profile=profile,
                timeout=timeout,
                environment={OUTPUT_ENV: str(r["stage"])},
                task=_inputs(r["notebook"], r["targets"], profile, allow_missing_data),
            )
            for r in runs
        ]
        by_call = {id(call): run for call, run in zip(calls, runs)}
        finish = lambda call, row: _finish_run(by_call[id(call)], row)  # noqa: E731
        try:
            return run_batch(calls, jobs, progress, finish, db=staging_dir() / "runs.sqlite3", resume=resume)
        except KeyboardInterrupt:
            raise Interrupted(_interrupted_message(runs)) from None
        finally:
            for run in runs:
                shutil.rmtree(run["stage"], ignore_errors=True)

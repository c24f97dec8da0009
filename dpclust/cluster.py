"""A notebook sweep on a Dask cluster: each point of the grid is one task that runs papermill on a worker.

The client sends each point's notebook as text with its parameters, its profile and the environment
its kernel needs; the worker runs it in a folder of its own inside the worker's local directory and
sends back the executed notebook, the result tables and the figures, which the client writes where a
local run writes them. No folder is shared. Everything else is Dask's own machinery:

- progress: the worker logs an event per cell (``Worker.log_event``) on a topic of the sweep, which
  the client follows (``Client.subscribe_topic``) on its progress line;
- a lost worker: the scheduler runs its points again elsewhere; the second start event of a point
  says so, and the summary counts the attempts;
- a killed worker's folders: they live in the worker's local directory, which Dask's workspace
  removes when the next worker starts there (a nanny restarts one at once);
- Ctrl-C: the client cancels every future and asks every worker (``Client.run``) to stop the kernels
  of the sweep.

A kernel gets its environment, working folder and stderr when it starts (:func:`dpclust.reproduce.run_notebook`),
so a worker with several threads runs several points side by side safely; each kernel then limits
its BLAS threads to one.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import socket
import tempfile
import threading
import uuid
from pathlib import Path

from ._optional import require
from .experiments import PROFILE_ENV
from .reproduce import kill_kernel

__all__ = ["CONNECT_TIMEOUT", "connect", "describe_workers", "kernel_environment"]

CONNECT_TIMEOUT = 10  # seconds to reach a scheduler before giving up
SENT = (PROFILE_ENV, "DPCLUST_NO_DOWNLOAD")  # environment variables every point takes from the client
SENT_IF_THERE = ("DPCLUST_DATA_DIR", "DPCLUST_HOME")  # folders: the worker's own first, else the client's if there

# On a worker: the kernels each sweep runs there, and the sweeps stopped (a point that starts late stops at once).
_kernels = {}
_stopped = set()
_lock = threading.Lock()


def _unreachable(where, reason):
    return ValueError(f"could not reach the Dask scheduler {where}: {reason}. Nothing was run or created.")


def _address_from_file(path):
    """The scheduler's address from a scheduler file (what ``dask scheduler --scheduler-file``, dask-jobqueue and
    dask-mpi write)."""
    try:
        address = json.loads(Path(path).read_text())["address"]
    except FileNotFoundError:
        raise _unreachable(f"of --scheduler-file {path}", "no such file (has the scheduler started?)") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise _unreachable(f"of --scheduler-file {path}", f"not a scheduler file ({type(exc).__name__})") from None
    return address


def _probe(address, timeout):
    """Fail at once on a refused TCP connection (the client would retry until its timeout)."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme not in ("tcp", "tls"):
            return
        host, port = parse_host_port(location)
    except (ValueError, TypeError) as exc:
        raise _unreachable(f"at {address}", f"not an address of the form tcp://host:port ({exc})") from None
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        raise _unreachable(f"at {address}", exc.strerror or type(exc).__name__) from None


def connect(scheduler=None, scheduler_file=None, timeout=CONNECT_TIMEOUT):
    """A client of the scheduler at ``scheduler`` (an address) or named in ``scheduler_file``.

    An address that is malformed, refuses the connection or does not answer within ``timeout``
    seconds raises ValueError with one line naming it; nothing is created.

    Parameters
    ----------
    scheduler : str, optional
        The scheduler's address, e.g. ``tcp://host:8786``.
    scheduler_file : path-like, optional
        A scheduler file (JSON with its ``address``).
    timeout : float
        Seconds to wait for the scheduler.

    Returns
    -------
    distributed.Client

    Examples
    --------
    >>> with socket.socket() as s:  # a port nothing listens on
    ...     s.bind(("127.0.0.1", 0))
    ...     port = s.getsockname()[1]
    >>> connect(f"tcp://127.0.0.1:{port}")
    Traceback (most recent call last):
    ...
    ValueError: could not reach the Dask scheduler at tcp://127.0.0.1:...: Connection refused. Nothing was run ...
    """
    distributed = require("distributed", "dask")
    if scheduler_file is not None:
        scheduler = _address_from_file(scheduler_file)
    _probe(scheduler, timeout)
    try:
        with _quiet_distributed():
            return distributed.Client(scheduler, timeout=timeout, set_as_default=False)
    except Exception as exc:  # distributed raises OSError, ValueError, TimeoutError, ... with long texts
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise _unreachable(f"at {scheduler}", reason) from None


@contextlib.contextmanager
def _quiet_distributed():
    """distributed logs each failed connection attempt; the caller reports the failure in one line."""
    import logging

    logger = logging.getLogger("distributed")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def kernel_environment(profile, client_environ=None):
    """The environment variables every point's kernel takes from the client.

    The profile always; ``$DPCLUST_NO_DOWNLOAD`` when set; ``$DPCLUST_DATA_DIR`` and ``$DPCLUST_HOME``
    as fallbacks (a worker's own values win, and the client's are used only where their folders
    exist on the worker: the same machine, or a shared file system).

    Parameters
    ----------
    profile : str
        The sweep's profile.
    client_environ : mapping, optional
        The client's environment (default: ``os.environ``).

    Returns
    -------
    dict with ``"set"`` (always sent) and ``"fallback"`` (used where the worker has none)

    Examples
    --------
    >>> kernel_environment("smoke", {"DPCLUST_NO_DOWNLOAD": "1", "DPCLUST_DATA_DIR": "/data", "HOME": "/me"})
    {'set': {'DPCLUST_PROFILE': 'smoke', 'DPCLUST_NO_DOWNLOAD': '1'}, 'fallback': {'DPCLUST_DATA_DIR': '/data'}}
    """
    environ = os.environ if client_environ is None else client_environ
    sent = {PROFILE_ENV: profile, **{k: environ[k] for k in SENT[1:] if environ.get(k)}}
    return {"set": sent, "fallback": {k: environ[k] for k in SENT_IF_THERE if environ.get(k)}}


def _worker_environment(environment):
    """On the worker: the kernel's variables, the client's folders only where the worker has none and they exist."""
    env = dict(environment["set"])
    for name, value in environment["fallback"].items():
        if os.environ.get(name):
            continue
        there = [p for p in value.split(os.pathsep) if p and Path(p).is_dir()]
        if there:
            env[name] = os.pathsep.join(there)
    return env


class _Events:
    """The worker side of the progress line: ``put((label, k, n))`` becomes an event on the sweep's topic."""

    def __init__(self, worker, topic):
        self.worker, self.topic = worker, topic

    def put(self, event):
        label, k, n = event
        self.worker.log_event(self.topic, {"label": label, "cell": k, "cells": n})


def _files(folder):
    folder = Path(folder)
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _run_point(point, sweep, topic):
    """Run one point on this worker (a Dask task): (summary row, files to write where a local run writes them)."""
    from distributed import get_worker

    from .reproduce import run_notebook

    worker = get_worker()
    label = point["label"]
    worker.log_event(topic, {"label": label, "start": uuid.uuid4().hex, "worker": worker.address})
    if sweep in _stopped:
        return {"notebook": Path(point["name"]).stem, "status": "failed", "seconds": 0.0, "error": "stopped"}, {}

    started = []

    def keep(pid):
        started.append(pid)
        with _lock:
            _kernels.setdefault(sweep, set()).add(pid)
            stopped = sweep in _stopped
        if stopped:
            kill_kernel(pid)

    with tempfile.TemporaryDirectory(prefix="dpclust-point-", dir=worker.local_directory) as tmp:
        tmp = Path(tmp)
        notebook = tmp / point["name"]
        notebook.write_text(point["source"])
        parameters = {**point["parameters"], "results_dir": str(tmp / "results"), "figures_dir": str(tmp / "figures")}
        try:
            row = run_notebook(
                notebook,
                parameters=parameters,
                profile=point["profile"],
                timeout=point["timeout"],
                events=_Events(worker, topic),
                label=label,
                environment=_worker_environment(point["environment"]),
                on_kernel=keep,
            )
        finally:
            with _lock:  # its kernel has ended: a stop counts (and kills) the running ones only
                _kernels.get(sweep, set()).difference_update(started)
        files = {"notebook": notebook.read_bytes() if notebook.is_file() else None}
        files.update(results=_files(tmp / "results"), figures=_files(tmp / "figures"))
    return row, files


def _stop_sweep(sweep):
    """On every worker (``Client.run``): stop the sweep's kernels; a point that starts later stops at once."""
    with _lock:
        _stopped.add(sweep)
        pids = _kernels.pop(sweep, set())
    for pid in pids:
        kill_kernel(pid)
    return len(pids)


def _forget_sweep(sweep):
    with _lock:
        _kernels.pop(sweep, None)


def describe_workers(client):
    """How many workers and threads a cluster has (or that none has joined yet: the points then wait for one).

    Examples
    --------
    >>> from distributed import Client, LocalCluster
    >>> with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
    ...     with Client(cluster, set_as_default=False) as client:
    ...         print(describe_workers(client))
    2 workers, 2 threads
    """
    try:
        workers = client.scheduler_info(n_workers=-1)["workers"]
    except TypeError:  # distributed before 2025.4 lists every worker without being asked
        workers = client.scheduler_info()["workers"]
    threads = sum(w.get("nthreads", 0) for w in workers.values())
    return f"{len(workers)} workers, {threads} threads" if workers else "no worker yet: the points wait for one"


class _Follower:
    """The client side of the events: cells on the progress line, and the points a lost worker made run again."""

    def __init__(self, events, note):
        self.events, self.note = events, note
        self.attempts, self.where = {}, {}

    def __call__(self, event):
        _, msg = event
        label = msg["label"]
        if "start" not in msg:
            self.events.put((label, msg["cell"], msg["cells"]))
            return
        self.attempts[label] = self.attempts.get(label, 0) + 1
        if self.attempts[label] > 1:
            self.note(
                f"{label}: its worker {self.where.get(label, '?')} was lost; Dask runs it again on {msg['worker']} "
                f"(attempt {self.attempts[label]})"
            )
        self.where[label] = msg["worker"]
        self.events.put((label, 0, 0))


def run_points(client, points, on_done, progress=False):
    """Run every point on the cluster; ``on_done(i, row, files)`` runs here as each ends; return the rows.

    The engine of :func:`dpclust.sweep.sweep_notebook` on a cluster (tested in ``tests/test_cluster.py``).

    Parameters
    ----------
    client : distributed.Client
    points : list of dict
        Each with ``label``, ``name`` (the notebook's file name), ``source`` (its text), ``parameters``,
        ``profile``, ``timeout`` and ``environment`` (:func:`kernel_environment`).
    on_done : callable (index, row, files)
        ``files``: ``{"notebook": bytes or None, "results": {path: bytes}, "figures": {path: bytes}}``.
    progress : bool
        Show the progress line (cells done per point) and a line per point run again.

    Returns
    -------
    list of dict
        One summary row per point, with ``attempts`` (more than 1 after a lost worker).

    Ctrl-C cancels every future and stops the sweep's kernels on every worker, then raises
    :class:`KeyboardInterrupt` with a message that says so.
    """
    from distributed import as_completed

    from .reproduce import _Progress

    sweep = uuid.uuid4().hex
    topic = f"dpclust-sweep-{sweep}"
    events = queue.Queue()
    with _Progress(events, len(points)) if progress else contextlib.nullcontext() as shown:
        follower = _Follower(events, shown.note if shown else print)
        client.subscribe_topic(topic, follower)
        futures = {}
        try:
            for i, point in enumerate(points):
                key = f"dpclust-point-{i}-{sweep}"
                futures[client.submit(_run_point, point, sweep, topic, key=key, pure=False)] = i
            rows = [None] * len(points)
            for future in as_completed(futures, loop=client.loop):
                i = futures[future]
                rows[i] = _collect(future, points[i], follower)
                on_done(i, rows[i], rows[i].pop("files"))
                events.put((points[i]["label"], None, None))
            return rows
        except BaseException as exc:  # Ctrl-C, or anything else that ends the sweep here: nothing runs on
            stopped = _cancel_and_stop(client, list(futures), sweep)
            if isinstance(exc, KeyboardInterrupt):
                raise KeyboardInterrupt(stopped) from None
            raise
        finally:
            client.unsubscribe_topic(topic)
            with contextlib.suppress(Exception):
                client.run(_forget_sweep, sweep, on_error="ignore")


def _cancel_and_stop(client, futures, sweep):
    """Stop the sweep's kernels on every worker, then cancel the futures (a second Ctrl-C waits); say what was done.

    The stop comes first: from then on a point that a worker starts stops at once, so no kernel starts in the
    moment between the cancel and the stop (a worker can start a queued point when its running one is cancelled).
    """
    from .reproduce import _ignoring_sigint

    with _ignoring_sigint():
        try:
            stopped = client.run(_stop_sweep, sweep, on_error="ignore")
            client.cancel(futures, force=True)
        except Exception as exc:  # the scheduler is gone too: the workers' kernels end with their workers
            return f"cancelled the points, but could not reach the workers to stop their kernels ({type(exc).__name__})"
    kernels = sum(n for n in stopped.values() if isinstance(n, int))
    return f"cancelled every point on the cluster and stopped {kernels} running kernel(s) on the workers"


def _collect(future, point, follower):
    """A finished future as a summary row with its files (a worker that failed gives a failed row)."""
    try:
        row, files = future.result()
    except Exception as exc:  # the task itself failed (a worker killed too often, a worker without dpclust)
        text = str(exc).splitlines()[0] if str(exc) else ""
        row, files = {"notebook": Path(point["name"]).stem, "status": "failed", "seconds": 0.0}, {}
        row["error"] = f"dask: {type(exc).__name__}: {text}".strip()
    row["attempts"] = max(1, follower.attempts.get(point["label"], 0))
    row["files"] = files
    return row

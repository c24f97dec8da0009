"""The grader's side of a graded run: the student's functions as proxies that run in a process of their own.

A :class:`GradedRun` starts the student's solution cells in a fresh Python process inside an operating-system
sandbox (:mod:`dpclust.exercises._bwrap`: the Python installation read-only, an empty scratch folder, no
network, no view of the grader's processes or files; :mod:`dpclust.exercises._sandbox` is the program it runs)
and hands out :class:`Remote` functions: a
checker calls them as it would call the student's functions, with the arguments it chose, and gets back
what they returned (numbers, text, arrays, tuples; anything else as an opaque value). What a call does to
its array arguments and to its random generator is done to the checker's too, so a checker works the same
on a remote function as on a local one. The checker itself, the expected values and the comparisons stay
in the grader's process, where the student's code never runs; what crosses from the run is JSON (arrays as
numbers or ``.npy`` bytes read without pickles).
"""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from . import _bwrap, _sandbox
from ._core import ExerciseError

__all__ = ["GradedRun", "Remote", "RunBroken"]

SANDBOX = Path(_sandbox.__file__).resolve()
MAX_LINE = 256 * 2**20  # the longest message the graded run may send (bytes)
START_TIME = 60.0  # seconds for the process to start and run the solution cells, on top of a call's limit


class RunBroken(ExerciseError):
    """The graded run stopped answering: it ran past its time, died, or broke the protocol."""


class StudentException(Exception):
    """An exception raised by the student's code in the graded run (its class carries the student's type name)."""

    where = ()


def _exception(reply):
    """The student's exception as a local one: of the builtin class of that name when there is one."""
    name = str(reply.get("type", "Exception"))
    name = name if name.isidentifier() else "Exception"
    if name == "NotImplementedError":
        return NotImplementedError(reply.get("message", ""))
    base = getattr(builtins, name, None)
    bases = (base, StudentException) if isinstance(base, type) and issubclass(base, Exception) else (StudentException,)
    exc = type(name, bases, {})(reply.get("message", ""))
    exc.where = tuple(str(w) for w in reply.get("where", []))[:3]
    return exc


class Remote:
    """A student's function in the graded run: call it like the function itself.

    Examples
    --------
    >>> with GradedRun([("ex1", "def double(x):\\n    return 2 * x")]) as run:
    ...     run.function("double")(21)
    42
    """

    def __init__(self, run, name):
        self._run, self.__name__, self._lent = run, name, {}

    def __call__(self, *args):
        return self._run.call(self.__name__, args, self._lent)

    @contextlib.contextmanager
    def lend(self, **references):
        """While the block runs, the student's code that calls these names calls the grader's references."""
        saved, self._lent = self._lent, {**self._lent, **references}
        self._run.lent_once = True
        try:
            yield
        finally:
            self._lent = saved


class GradedRun:
    """The student's solution cells run in a sandboxed process (:mod:`._bwrap`); a context manager (the
    process ends with it).

    Parameters
    ----------
    cells : list of (str, str)
        The solution cells, (cell id, source), run in this order in one namespace.
    prelude : list of str
        Import lines run before them (the notebook's setup a solution may lean on: numpy, scipy, math).
    timeout : float
        Seconds allowed to each call (and to the start, on top of ``START_TIME``).
    deny : list of paths
        Folders the run may not read even inside the Python installation (default: those of
        ``dpclust`` and ``dpclust_lib``): they appear empty in the sandbox.
    sandbox : bool
        Run in the operating-system sandbox (:mod:`._bwrap`); False only for a teacher's unsandboxed run.
    cpu : float
        Seconds of CPU time for the whole run (default: ``timeout`` and the start's allowance).

    Attributes
    ----------
    defined : set of str
        The callables the cells defined.
    errors : dict
        {cell id: what the cell raised at its top level}.
    notes : list of str
        What the student's code wrote to stderr or warned, and what the audit hook refused it.
    lent_once : bool
        Whether a reference was lent to this run (it must then not grade anything else).
    deadline : float or None
        A ``time.monotonic()`` past which no call may end (the time allowed to a whole check).

    Examples
    --------
    >>> import numpy as np
    >>> cells = [("ex1", "import numpy as np\\ndef f(x):\\n    x[0] = 1.0\\n    return np.sum(x)")]
    >>> with GradedRun(cells) as run:
    ...     x = np.zeros(3)
    ...     total = run.function("f")(x)
    >>> float(total), x.tolist()  # the call wrote into its argument, in the run and here
    (1.0, [1.0, 0.0, 0.0])
    """

    def __init__(self, cells, prelude=(), timeout=300.0, deny=None, sandbox=True, cpu=None):
        self.timeout, self.lent_once, self.notes, self.dead, self.deadline = float(timeout), False, [], None, None
        self._folder = tempfile.TemporaryDirectory(prefix="dpclust-graded-run-")
        threads = {k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
        # -B: a module first imported after the audit hook is added must not try to write its bytecode cache (a
        # fresh install has none), which the hook refuses and would flag as the student's doing. The program
        # goes as -c: nothing of the compendium is inside the sandbox.
        argv = [sys.executable, "-I", "-B", "-c", SANDBOX.read_text()]
        if sandbox:
            cpu = self.timeout + START_TIME if cpu is None else cpu
            argv = _bwrap.command(argv, self._folder.name, hidden=_denied(deny), env=threads, cpu=max(1, int(cpu)))
            where, env = None, None
        else:
            where, env = self._folder.name, {"PATH": os.defpath, "HOME": self._folder.name, **threads}
        self._process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=where, env=env
        )
        self._lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._send({"prelude": list(prelude), "cells": [list(c) for c in cells], "deny": _denied(deny)})
        ready = self._receive(self.timeout + START_TIME, "to start", ("ready",))
        self.defined, self.errors = set(ready.get("defined", [])), dict(ready.get("errors", {}))
        self._refused(ready)

    def _read(self):
        stream = self._process.stdout
        while True:
            try:
                line = stream.readline(MAX_LINE)
            except (OSError, ValueError):
                line = b""
            self._lines.put(line)
            if not line:
                # closed here, not by close(): closing a stream another thread reads waits for that read, which
                # a process the run left behind (outside the sandbox) can hold open for ever
                stream.close()
                return

    def _send(self, message):
        if self.dead:
            raise RunBroken(self.dead)
        try:
            self._process.stdin.write((json.dumps(message) + "\n").encode())
            self._process.stdin.flush()
        except (OSError, ValueError):
            self._broken("stopped (its process ended)")

    def _receive(self, timeout, doing, expected):
        if self.dead:
            raise RunBroken(self.dead)
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            self._broken(f"ran past its time limit ({self.timeout:g} s for a check) {doing}")
        if not line:
            self._broken(f"stopped {doing} (its process ended: a crash, or os._exit)")
        try:
            message = json.loads(line)
            assert isinstance(message, dict) and message.get("op") in expected
            return message
        except Exception:
            self._broken(f"sent something that is not an answer {doing} (did it write to the grader's pipes?)")

    def _broken(self, why):
        self.dead = f"the graded run of your solution cells {why}"
        self.close()
        raise RunBroken(self.dead)

    def _refused(self, message):
        for what in message.get("refused", []):
            note = f"the graded run refused: {what}"
            if note not in self.notes:
                self.notes.append(note)

    def function(self, name):
        """The student's function ``name`` as a :class:`Remote`."""
        return Remote(self, name)

    def call(self, name, args, lent=None):
        """``name(*args)`` in the graded run; lent references answer the student's calls of their names."""
        lent = lent or {}
        if name not in self.defined:
            why = "; ".join(f"{cell} raised {error}" for cell, error in self.errors.items())
            raise NameError(f"name {name!r} is not defined by your solution cells" + (f" ({why})" if why else ""))
        self._send({"op": "call", "name": name, "args": [_sandbox.encode(a) for a in args], "lend": sorted(lent)})
        while True:
            left = self.timeout if self.deadline is None else min(self.timeout, self.deadline - time.monotonic())
            message = self._receive(max(left, 0.0), f"in {name}", ("callback", "return", "raise"))
            if message.get("op") != "callback":
                break
            self._answer(message, lent)
        self._refused(message)
        if message.get("stderr"):
            self.notes.append(f"{name} wrote to stderr: {message['stderr'].strip()[:300]}")
        if message.get("op") == "raise":
            raise _exception(message)
        try:
            _sandbox._update(args, [_sandbox.decode(a) for a in message.get("args", [])])
            return _sandbox.decode(message.get("value"))
        except Exception as exc:
            raise RunBroken(f"{name} returned a value that does not decode: {exc}") from None

    def _answer(self, message, lent):
        """A callback: the student's code called a lent name; the reference runs here, on decoded arguments."""
        name = message.get("name")
        try:
            if name not in lent:
                raise KeyError(f"{name!r} is not lent")
            args = [_sandbox.decode(a) for a in message.get("args", [])]
            value = lent[name](*args)
            reply = {"op": "return", "value": _sandbox.encode(value), "args": [_sandbox.encode(a) for a in args]}
        except Exception as exc:
            reply = {"op": "raise", "type": type(exc).__name__, "message": str(exc)[:500]}
        self._send(reply)

    def close(self):
        """End the process (killed if it still runs) and remove its folder."""
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        with contextlib.suppress(OSError):
            self._process.stdin.close()
        self._folder.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _denied(deny):
    if deny is not None:
        return [str(p) for p in deny]
    import dpclust
    import dpclust_lib

    return [str(Path(m.__file__).resolve().parent) for m in (dpclust, dpclust_lib)]

"""The graded run of a student's solution cells, in a process of its own (run as a script, never imported
by it).

:mod:`dpclust.exercises._remote` starts ``python -I <this file>`` and speaks JSON lines with it on its
stdin and stdout. The first line is the job: the import lines of the notebook's setup that a solution may
lean on (numpy, scipy, the standard library's mathematics) and the student's solution cells. This process
runs the imports, then fences itself in, then runs the cells, and answers ``ready`` with what they
defined. Then each request calls one of the student's functions on arguments the grader chose and sends
back what it returned (and what it did to its array arguments and its random generator), or what it
raised. While a call runs, a function of an earlier exercise may be lent by the grader: the student's
code then calls a stub that asks the grader, which answers with its reference's result.

What keeps the student's code from the grader is the operating-system sandbox this process runs in
(:mod:`dpclust.exercises._bwrap`): it sees the Python installation read-only and an empty scratch folder,
and sends nothing to the grader but the values of its answers, which the grader decodes as data and compares
with what it expects. The audit hook added here (PEP 578) is no part of that defence: code in the same
interpreter can rewrite it. It is a courtesy to the teacher: what it refused (imports of ``dpclust`` or
``dpclust_lib``, files, processes, sockets, foreign functions) is reported as a note on the check, so that
a student whose code tried is seen. The module's functions are also the codec of those values, which the
grader imports (values only: arrays go as numbers or as ``.npy`` bytes without pickles, and anything else
as its type name).
"""

from __future__ import annotations

import base64
import builtins
import io
import json
import os
import sys
import traceback

import numpy as np

SMALL = 64  # arrays up to this size travel as JSON numbers, larger ones as base64 .npy bytes
MAX_DEPTH = 20
BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")
NUMERIC = "biuf"


class Opaque:
    """A value that does not travel (a student's object of another kind): its type name and a short repr."""

    def __init__(self, kind, text):
        self.kind, self.text = str(kind), str(text)

    def __repr__(self):
        return f"<{self.kind}: {self.text}>"


def _array(value):
    arr = np.array(value, copy=True, subok=False)
    if arr.dtype.kind not in NUMERIC + "cUS":
        return {"t": "opaque", "kind": f"array of dtype {arr.dtype}", "text": ""}
    if arr.size <= SMALL and arr.dtype.kind in NUMERIC:
        return {"t": "array", "dtype": arr.dtype.str, "shape": list(arr.shape), "v": arr.ravel().tolist()}
    buffer = io.BytesIO()
    np.save(buffer, arr, allow_pickle=False)
    return {"t": "npy", "v": base64.b64encode(buffer.getvalue()).decode("ascii")}


def _short_repr(value):
    try:
        text = repr(value)
    except Exception:  # a student's __repr__ may raise anything
        text = "?"
    return text if len(text) <= 80 else text[:77] + "..."


def encode(value, depth=0):
    """A value as JSON data: numbers, text, None, arrays, generators' states, tuples, lists, dicts of text."""
    if depth > MAX_DEPTH:
        raise ValueError("a value nested too deep to send")
    if value is None or type(value) in (bool, str, int, float):
        return value
    if isinstance(value, (bool, np.bool_)):
        return {"t": "scalar", "v": _array(bool(value))}
    if isinstance(value, (int, float, complex, np.generic)):  # a subclass travels as its plain value
        return {"t": "scalar", "v": _array(value)}
    if isinstance(value, str):
        return str(value)
    if isinstance(value, np.ndarray):
        return _array(value)
    if isinstance(value, np.random.Generator):
        return {"t": "rng", "v": value.bit_generator.state}
    if isinstance(value, (tuple, list)):
        return {"t": "tuple" if isinstance(value, tuple) else "list", "v": [encode(v, depth + 1) for v in value]}
    if isinstance(value, dict) and all(type(k) is str for k in value):
        return {"t": "dict", "v": {k: encode(v, depth + 1) for k, v in value.items()}}
    return {"t": "opaque", "kind": type(value).__name__, "text": _short_repr(value)}


def _decode_array(data):
    if data["t"] == "npy":
        arr = np.load(io.BytesIO(base64.b64decode(data["v"], validate=True)), allow_pickle=False)
    else:
        dtype = np.dtype(data["dtype"])
        if dtype.kind not in NUMERIC:
            raise ValueError(f"an array of dtype {dtype} sent as numbers")
        arr = np.array(data["v"], dtype=dtype).reshape([int(s) for s in data["shape"]])
    if arr.dtype.kind not in NUMERIC + "cUS":
        raise ValueError(f"an array of dtype {arr.dtype}")
    return arr


def generator(state):
    """A numpy Generator in ``state`` (a bit generator's state dict, of a known bit generator)."""
    name = state.get("bit_generator") if isinstance(state, dict) else None
    if name not in BIT_GENERATORS:
        raise ValueError(f"an unknown bit generator {name!r}")
    bits = getattr(np.random, name)()
    bits.state = state
    return np.random.Generator(bits)


def decode(data, depth=0):
    """The value of :func:`encode`'s data (a generator comes back as a new Generator in the sent state)."""
    if depth > MAX_DEPTH:
        raise ValueError("a value nested too deep")
    if data is None or type(data) in (bool, str, int, float):
        return data
    if type(data) is not dict:
        raise ValueError(f"unexpected data of type {type(data).__name__}")
    kind = data.get("t")
    if kind in ("array", "npy"):
        return _decode_array(data)
    if kind == "scalar":
        return _decode_array(data["v"])[()]
    if kind == "rng":
        return generator(data["v"])
    if kind in ("tuple", "list"):
        items = [decode(v, depth + 1) for v in data["v"]]
        return tuple(items) if kind == "tuple" else items
    if kind == "dict":
        return {str(k): decode(v, depth + 1) for k, v in data["v"].items()}
    if kind == "opaque":
        return Opaque(data.get("kind", "object"), data.get("text", ""))
    raise ValueError(f"unexpected data kind {kind!r}")


# ---------------------------------------------------------------------------------------------------------
# The worker: everything below runs only in the graded run's own process.

DENIED_MODULES = ("dpclust", "dpclust_lib", "ctypes", "_ctypes", "subprocess", "_posixsubprocess", "socket")
DENIED_EVENTS = ("os.", "ctypes.", "subprocess.", "socket.", "shutil.", "mmap.", "gc.get_", "tempfile.", "glob.")
DENIED_EVENTS += ("urllib.", "http.", "ftplib.", "smtplib.", "webbrowser.", "sqlite3.", "pty.", "msvcrt.", "winreg.")


class _Fence:
    """The audit hook: what the student's code may not do, and a record of what it tried."""

    def __init__(self, readable, denied):
        self.readable = tuple(os.path.join(os.path.realpath(p), "") for p in readable)
        self.denied = tuple(os.path.join(os.path.realpath(p), "") for p in denied)
        self.refused = []

    def refuse(self, what, error=PermissionError):
        if len(self.refused) < 20:
            self.refused.append(what)
        raise error(f"not allowed in a graded run: {what}")

    def __call__(self, event, args):
        if event == "import":
            if str(args[0]).split(".")[0] in DENIED_MODULES:
                self.refuse(f"import {args[0]}", ImportError)
        elif event == "open":
            self._open(args)
        elif event in ("os.listdir", "os.scandir"):  # the import system lists the folders it imports from
            self._read(args[0] if args and args[0] not in (None, "") else ".", "list a folder")
        elif event.startswith(DENIED_EVENTS) or event in ("os.system", "sys.remote_exec", "builtins.input"):
            self.refuse(event)

    def _open(self, args):
        path, mode, flags = (list(args) + [None, None, None])[:3]
        writing = (mode is not None and any(c in str(mode) for c in "wax+")) or (
            isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND)
        )
        if writing:
            self.refuse("open a file for writing")
        self._read(path, "open a file")

    def _read(self, path, what):
        if not isinstance(path, (str, bytes, os.PathLike)):
            self.refuse(f"{what} by its descriptor")
        path = os.path.join(os.path.realpath(os.fsdecode(path)), "")
        if not path.startswith(self.readable) or path.startswith(self.denied):
            self.refuse(f"{what} outside the Python installation")


def _disarm():
    """Private process-starting entry points that raise no audit event: out of reach of the student's code."""
    for name in ("_posixsubprocess", "_winapi"):
        module = sys.modules.get(name)
        for attr in ("fork_exec", "CreateProcess"):
            if module is not None and hasattr(module, attr):
                setattr(module, attr, None)
    subprocess = sys.modules.get("subprocess")
    if subprocess is not None:
        subprocess._fork_exec = None
    for name in ("ctypes", "_ctypes", "subprocess", "_posixsubprocess", "_winapi"):
        sys.modules.pop(name, None)


def _readable_roots():
    import sysconfig

    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    roots |= {os.path.dirname(np.__file__), sys.base_prefix, sys.prefix}
    return sorted(roots)


def _run_cells(cells, namespace, fence):
    """Run the solution cells, each on its own; {cell id: what it raised at its top level}."""
    import linecache

    errors = {}
    for cell_id, source in cells:
        filename = f"<solution cell {cell_id}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        try:
            exec(compile(source, filename, "exec"), namespace)
        except BaseException as exc:  # a cell that raises (even SystemExit) costs only what it defines after
            errors[cell_id] = _describe(exc)["message"] or type(exc).__name__
    return errors


def _describe(exc):
    """The student's exception: its type, message and the lines of the student's own cells it went through."""
    # Lines are looked up for the student's frames only (from the cells' text): reading the grader's files
    # for the other frames would be refused, and would show the grader's paths.
    frames = traceback.StackSummary.extract(traceback.walk_tb(exc.__traceback__), lookup_lines=False)
    frames = [f for f in frames if f.filename.startswith("<solution cell")]
    where = [f"{f.filename[1:-1]}, line {f.lineno}: {(f.line or '').strip()}" for f in frames][-3:]
    try:
        message = str(exc)
    except Exception:
        message = "?"
    return {"op": "raise", "type": type(exc).__name__, "message": message[:2000], "where": where}


class _Worker:
    def __init__(self, reader, writer, namespace, fence):
        self.reader, self.writer, self.namespace, self.fence = reader, writer, namespace, fence

    def send(self, message):
        self.writer.write(json.dumps(message) + "\n")
        self.writer.flush()

    def receive(self):
        line = self.reader.readline()
        if not line:
            os._exit(0)  # the grader is gone
        return json.loads(line)

    def stub(self, name):
        """A lent function: the call goes to the grader, which runs its reference."""

        def lent(*args):
            self.send({"op": "callback", "name": name, "args": [encode(a) for a in args]})
            reply = self.receive()
            if reply.get("op") == "raise":
                raise RuntimeError(f"the reference {name} raised {reply.get('type')}: {reply.get('message')}")
            _update(args, [decode(a) for a in reply.get("args", [])])
            return decode(reply.get("value"))

        lent.__name__ = name
        return lent

    def call(self, request):
        name, lent = request["name"], request.get("lend", [])
        saved = {n: self.namespace[n] for n in lent if n in self.namespace}
        self.namespace.update({n: self.stub(n) for n in lent})
        out, err = io.StringIO(), io.StringIO()
        sys.stdout, sys.stderr = out, err
        try:
            args = [decode(a) for a in request["args"]]
            value = self.namespace[name](*args)
            reply = {"op": "return", "value": encode(value), "args": [encode(a) for a in args]}
        except BaseException as exc:
            reply = _describe(exc)
        finally:
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
            for n in lent:  # the student's own function again, or nothing
                self.namespace.pop(n, None)
            self.namespace.update(saved)
        reply["stderr"] = err.getvalue()[-2000:]
        reply["refused"] = self.fence.refused[:]
        return reply

    def serve(self):
        while True:
            request = self.receive()
            try:
                reply = self.call(request)
            except BaseException as exc:  # a reply that cannot be encoded is the student's error too
                reply = _describe(exc)
            self.send(reply)


def _update(originals, returned):
    """What a call did to its arguments, done to the caller's: arrays written in place, generators' states."""
    for old, new in zip(originals, returned):
        if isinstance(old, np.ndarray) and isinstance(new, np.ndarray) and old.shape == new.shape:
            if old.flags.writeable:
                np.copyto(old, new, casting="unsafe")
        elif isinstance(old, np.random.Generator) and isinstance(new, np.random.Generator):
            old.bit_generator.state = new.bit_generator.state
        elif isinstance(old, list) and isinstance(new, list):
            old[:] = new
        elif isinstance(old, tuple) and isinstance(new, tuple):
            _update(old, new)


def _main():
    protocol_in = os.fdopen(os.dup(0), "r", encoding="utf-8")
    protocol_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the student's prints and C-level writes go nowhere, never into the protocol
        os.dup2(null, fd)
    sys.stdin = io.StringIO("")
    job = json.loads(protocol_in.readline())
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    for line in job.get("prelude", []):
        try:
            exec(line, namespace)
        except Exception:  # a missing optional module: the solution will say so if it needs it
            pass
    fence = _Fence(_readable_roots(), job.get("deny", []))
    _disarm()
    sys.addaudithook(fence)
    worker = _Worker(protocol_in, protocol_out, namespace, fence)
    errors = _run_cells(job.get("cells", []), namespace, fence)
    defined = sorted(k for k, v in namespace.items() if callable(v) and not k.startswith("__"))
    worker.send({"op": "ready", "defined": defined, "errors": errors, "refused": fence.refused[:]})
    worker.serve()


if __name__ == "__main__":
    _main()

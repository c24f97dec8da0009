"""The operating-system sandbox of every process that runs a student's code: bubblewrap (``bwrap``).

:func:`command` wraps a command line in ``bwrap`` so that the processes it starts

* see, read-only, the system's programs and libraries (``/usr`` and the ``/bin``, ``/lib`` links), the Python
  installation that runs the grader (its environment and its base installation) and the folders named in
  ``readable``; a writable scratch folder at ``/submission`` (and an empty ``/tmp``); nothing else of the
  grader's file system: no course folder, gradebook or grading key unless one of those was named;
* run in their own user, process, network, IPC, UTS and cgroup namespaces (no network device but an
  unconnected loopback, no ``/proc`` entry of any process outside), in a session of their own, with no
  capability and an environment of only what ``env`` sets;
* are killed when the process that started ``bwrap`` dies (``--die-with-parent``), and with them every
  process they started, detached or not (the sandbox's process namespace ends with its first process);
* have, each, a limit on CPU time, on address space and on the size of a file written (``prlimit``).

What it does not limit: the wall-clock time (the caller kills the sandbox at its deadline), the number of
processes, and the total space written in the scratch folder.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

__all__ = ["SCRATCH", "Unavailable", "available", "command", "python_roots", "MISSING"]

SCRATCH = "/submission"  # where the scratch folder appears inside
MISSING = (
    "grading runs every student's code in an operating-system sandbox, bubblewrap, which is not available here "
    "({why}). Install it (Debian, Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or, "
    "knowing that the students' code then runs with your rights (it can read the grading keys, and write the "
    "gradebook and every file you can), ask for an unsandboxed run by name: unsandboxed=True in "
    "nbgrader_config.py's OutsideTheKernel, or --unsandboxed on the command line"
)
UNSANDBOXED = (
    "grading WITHOUT a sandbox, as asked: the students' code runs with the grader's rights and can read the "
    "grading keys, write the gradebook and the feedback, and reach the network; the scores are only as "
    "trustworthy as the students"
)


class Unavailable(RuntimeError):
    """No sandbox here, and no unsandboxed run was asked for."""


def python_roots():
    """The folders of the Python installation running this process (its environment and base installation).

    Examples
    --------
    >>> any(sys.prefix.startswith(root) for root in python_roots())
    True
    """
    paths = sysconfig.get_paths()
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    roots |= {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    roots |= {os.path.dirname(os.path.realpath(sys.executable))}
    return _outermost(roots)


def _outermost(paths):
    """The paths (resolved too, when a link) without those inside another one."""
    found = set()
    for path in paths:
        if path and os.path.exists(path):
            found |= {os.path.abspath(path), os.path.realpath(path)}
    ordered = sorted(found)
    return [p for p in ordered if not any(p != q and p.startswith(os.path.join(q, "")) for q in ordered)]


def _system():
    """The system's programs and libraries: /usr, and /bin, /lib... as the links or folders they are."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    return args


def command(argv, scratch, *, readable=(), hidden=(), env=None, cpu=600, memory=4 * 2**30, file_size=2**30):
    """``argv`` wrapped in bwrap: its processes see only what the module's docstring says.

    Parameters
    ----------
    argv : list of str
        The command, as run inside (absolute paths of the Python installation work as they are).
    scratch : path
        The writable folder, seen as :data:`SCRATCH` (the command's working folder and home).
    readable : paths
        More folders or files seen read-only at their own paths (e.g. the packages of an editable install).
    hidden : paths
        Folders inside a seen one that appear empty (e.g. ``dpclust`` when installed in the environment).
    env : dict
        The whole environment inside, on top of ``PATH``, ``HOME`` and ``TMPDIR``.
    cpu, memory, file_size : int
        Seconds of CPU time, bytes of address space and bytes of a file, per process.

    Examples
    --------
    >>> args = command(["python", "-c", "1"], "/tmp/x", cpu=5, memory=2**30)
    >>> args[0], "--unshare-all" in args, "--die-with-parent" in args, args[args.index("prlimit"):]
    ('bwrap', True, True, ['prlimit', '--cpu=5', '--as=1073741824', '--fsize=1073741824', '--', 'python', '-c', '1'])
    """
    roots = python_roots()
    # The empty /tmp first: an environment or a readable folder under /tmp (a clone there) is then bound on top of
    # it, not hidden by it.
    args = ["bwrap", *_system(), "--tmpfs", "/tmp"]
    for root in _outermost([*roots, *map(str, readable)]):
        args += ["--ro-bind", root, root]
    inside = _outermost([*roots, *map(str, readable)])
    for path in sorted({os.path.realpath(p) for p in hidden}):
        if os.path.isdir(path) and any(path.startswith(os.path.join(r, "")) for r in inside):
            args += ["--tmpfs", path]
    args += ["--bind", str(scratch), SCRATCH, "--chdir", SCRATCH, "--proc", "/proc", "--dev", "/dev"]
    args += ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"]
    for name, value in {"PATH": "/usr/bin:/bin", "HOME": SCRATCH, "TMPDIR": "/tmp", **(env or {})}.items():
        args += ["--setenv", name, str(value)]
    prlimit = ["prlimit", f"--cpu={int(cpu)}", f"--as={int(memory)}", f"--fsize={int(file_size)}", "--"]
    return args + prlimit + list(argv)


@functools.cache
def _why_not():
    """None when bwrap runs a sandbox here; else why not."""
    if os.name != "posix" or sys.platform == "darwin":
        return f"bubblewrap runs on Linux only, not on {sys.platform}"
    if shutil.which("bwrap") is None:
        return "no bwrap program on PATH"
    if shutil.which("prlimit") is None:
        return "no prlimit program on PATH (util-linux)"
    probe = Path(os.environ.get("TMPDIR", "/tmp"))
    try:
        result = subprocess.run(
            command([sys.executable, "-c", "pass"], probe, cpu=30), capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap did not run: {exc}"
    if result.returncode:
        return f"bwrap could not make a sandbox: {result.stderr.strip()[-300:] or result.returncode}"
    return None


def available(unsandboxed=False, log=None):
    """True when the sandbox works here; False for an unsandboxed run asked by name (said on ``log``); else raise.

    Examples
    --------
    >>> available(unsandboxed=True) in (True, False)  # never raises when an unsandboxed run is asked for
    True
    """
    why = _why_not()
    if why is None:
        return True
    if not unsandboxed:
        raise Unavailable(MISSING.format(why=why))
    if log is not None:
        log.warning(UNSANDBOXED)
    return False

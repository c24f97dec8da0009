"""The software environment: the locked versions (``uv.lock``) against the installed ones.

A notebook's Session cell prints :func:`versions`, so a reader sees whether a run used
the versions that produced the committed outputs. ``uv.lock`` holds every supported Python
on every platform; the versions compared are those it gives this interpreter and platform.
Outside the compendium (an exported assignment) there is no lock to compare with, and it
reports the installed versions alone.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
from pathlib import Path

import pandas as pd
from packaging.markers import Marker, default_environment
from packaging.requirements import Requirement

from . import _paths

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: tomllib's forerunner
    import tomli as tomllib

__all__ = ["LOCK_FILE", "canonical_name", "read_lock", "requirements", "versions"]

LOCK_FILE = "uv.lock"


def canonical_name(name):
    """A distribution name in its normalised form (PEP 503): lower case, runs of ``-_.`` as ``-``.

    Parameters
    ----------
    name : str

    Returns
    -------
    str

    Examples
    --------
    >>> canonical_name("Scikit_Learn"), canonical_name("jupyter.server--mathjax")
    ('scikit-learn', 'jupyter-server-mathjax')
    """
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path=None, environment=None):
    """``{canonical name: version}`` of a lock file, for this interpreter and platform.

    Parameters
    ----------
    path : path-like, optional
        The lock file; default ``uv.lock`` of the compendium. A uv lock (TOML) gives, for each package,
        the version whose resolution markers hold in ``environment``; any other file is read as
        ``name==version`` lines (``requirements/minimum.lock``).
    environment : dict, optional
        The marker environment (``packaging.markers.default_environment()`` keys); default this one.

    Returns
    -------
    dict
        Canonical name -> version; this repository's own (editable) packages, comments, markers, extras
        and options (``-e``) are left out.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> uv_lock = '''version = 1
    ... [[package]]
    ... name = "numpy"
    ... version = "2.2.6"
    ... resolution-markers = ["python_full_version < '3.11'"]
    ... [[package]]
    ... name = "numpy"
    ... version = "2.4.6"
    ... resolution-markers = ["python_full_version >= '3.11'"]
    ... [[package]]
    ... name = "Scikit_Learn"
    ... version = "1.9.1"
    ... [[package]]
    ... name = "dpclust"
    ... version = "0.2.0"
    ... source = { editable = "." }
    ... '''
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     lock = pathlib.Path(tmp, "uv.lock")
    ...     _ = lock.write_text(uv_lock)
    ...     read_lock(lock, {"python_full_version": "3.10.13"}), read_lock(lock, {"python_full_version": "3.12.1"})
    ({'numpy': '2.2.6', 'scikit-learn': '1.9.1'}, {'numpy': '2.4.6', 'scikit-learn': '1.9.1'})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     lock = pathlib.Path(tmp, "minimum.lock")
    ...     _ = lock.write_text("# the lowest versions\\nnumpy==2.2.0  # via dpclust_lib\\n")
    ...     read_lock(lock)
    {'numpy': '2.2.0'}
    """
    path = Path(path) if path is not None else _paths.project_dir() / LOCK_FILE
    text = path.read_text()
    if text.startswith("version = "):
        return _uv_lock_pins(tomllib.loads(text), environment)
    pins = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].split(";", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        if "==" not in line:
            raise ValueError(f"{path}: every line must pin one version (name==version), got {line!r}")
        name, version = line.split("==", 1)
        pins[canonical_name(name.split("[", 1)[0].strip())] = version.strip().split()[0].rstrip("\\")
    return pins


def _uv_lock_pins(lock, environment=None):
    """The version of each package of a parsed uv lock whose resolution markers hold (its only one, if unforked)."""
    env = {**default_environment(), **(environment or {})}
    pins = {}
    for package in lock.get("package", []):
        if {"editable", "virtual", "directory"} & set(package.get("source", {})):
            continue  # this repository's own packages
        markers = package.get("resolution-markers")
        if markers is None or any(Marker(m).evaluate(env) for m in markers):
            pins.setdefault(canonical_name(package["name"]), package["version"])
    return pins


def requirements(extras=("notebooks",)):
    """Canonical names of what the compendium requires: the runtime dependencies of dpclust_lib and of
    dpclust, and those of ``extras`` (this repository's own two distributions left out).

    Read from the installed distributions' metadata.

    Parameters
    ----------
    extras : sequence of str, default ("notebooks",)
        The extras of dpclust whose requirements are added (the reader's set: what the notebooks import).

    Returns
    -------
    list of str
        dpclust_lib's requirements first, in the order they are declared.

    Examples
    --------
    >>> requirements(extras=())[:4]
    ['numpy', 'scipy', 'pandas', 'scikit-learn']
    >>> "matplotlib" in requirements(), "pytest" in requirements(), "pytest" in requirements(extras=("test",))
    (True, False, True)
    """
    names = []
    names, wanted, done = [], list(extras), set()
    specs = (importlib.metadata.requires("dpclust_lib") or []) + (importlib.metadata.requires("dpclust") or [])
    while True:
        for spec in map(Requirement, specs):
            name = canonical_name(spec.name)
            if spec.marker is not None and not any(spec.marker.evaluate({"extra": e}) for e in ["", *wanted]):
                continue  # another extra's, or another platform's
            if name == "dpclust":  # an extra that includes others (test: the reader's, the teacher's, ...)
                wanted += [e for e in spec.extras if e not in wanted]
            elif name != "dpclust-lib" and name not in names:
                names.append(name)
        if set(wanted) == done:
            return names
        done = set(wanted)


def _installed(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def versions(lock=None, packages=None):
    """The locked and the installed version of each package, and whether they match.

    Parameters
    ----------
    lock : path-like, optional
        The lock file; default ``uv.lock`` of the compendium. Outside a
        compendium (an exported assignment, an installed package) there is no
        default lock: the installed versions are reported, with ``locked`` and
        ``match`` missing (NA) in every row, rather than an error in a notebook's
        last cell. An explicit ``lock`` that does not exist is an error.
    packages : sequence of str, optional
        Default: dpclust_lib's and dpclust's requirements, with the notebooks extra (the reader's set).

    Returns
    -------
    DataFrame with columns package, locked, installed, match (one row per package;
    ``locked`` or ``installed`` is missing (NA) where the package is not in the lock or not installed).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     lock = pathlib.Path(tmp, "uv.lock")
    ...     _ = lock.write_text('version = 1\\n[[package]]\\nname = "numpy"\\nversion = "0.0.1"\\n')
    ...     table = versions(lock, ["numpy", "no-such-package"])
    >>> table["locked"].iloc[0], bool(table["match"].iloc[0]), bool(table["locked"].isna().iloc[1])
    ('0.0.1', False, True)
    """
    if lock is None and _paths.find_project_dir() is None:
        pins = None  # no compendium, so no lock: the installed versions alone
    else:
        pins = read_lock(lock)
    names = [canonical_name(p) for p in packages] if packages is not None else requirements()
    rows = []
    for name in names:
        locked, installed = (pins or {}).get(name), _installed(name)
        match = None if pins is None else (locked is not None and locked == installed)
        rows.append({"package": name, "locked": locked, "installed": installed, "match": match})
    return pd.DataFrame(rows, columns=["package", "locked", "installed", "match"])

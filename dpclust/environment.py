"""The software environment: the locked versions (``requirements.lock``) against the installed ones.

A notebook's Session cell prints :func:`versions`, so a reader sees whether a run used
the versions that produced the committed outputs. Outside the compendium (an exported
assignment) there is no lock to compare with, and it reports the installed versions alone.
"""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pandas as pd

from . import _paths

__all__ = ["LOCK_FILE", "canonical_name", "read_lock", "requirements", "versions"]

LOCK_FILE = "requirements.lock"


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


def read_lock(path=None):
    """``{canonical name: version}`` of the ``name==version`` lines of a lock file.

    Parameters
    ----------
    path : path-like, optional
        The lock file; default ``requirements.lock`` of the compendium.

    Returns
    -------
    dict
        Canonical name -> version; comments, environment markers, extras and options (``-e``) are dropped.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     lock = pathlib.Path(tmp, "requirements.lock")
    ...     _ = lock.write_text("# the versions of a run\\nnumpy==2.2.0  # via dpclust_lib\\n"
    ...                         'Scikit_Learn[alldeps]==1.7.1 ; python_version >= "3.10"\\n')
    ...     read_lock(lock)
    {'numpy': '2.2.0', 'scikit-learn': '1.7.1'}
    """
    path = Path(path) if path is not None else _paths.project_dir() / LOCK_FILE
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].split(";", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        if "==" not in line:
            raise ValueError(f"{path}: every line must pin one version (name==version), got {line!r}")
        name, version = line.split("==", 1)
        pins[canonical_name(name.split("[", 1)[0].strip())] = version.strip().split()[0].rstrip("\\")
    return pins


def requirements(extras=("notebooks", "test")):
    """Canonical names of what the compendium requires: the runtime dependencies of dpclust_lib and of
    dpclust, and those of ``extras`` (this repository's own two distributions left out).

    Read from the installed distributions' metadata.

    Parameters
    ----------
    extras : sequence of str, default ("notebooks", "test")
        The extras of dpclust whose requirements are added.

    Returns
    -------
    list of str
        dpclust_lib's requirements first, in the order they are declared.

    Examples
    --------
    >>> requirements(extras=())[:4]
    ['numpy', 'scipy', 'pandas', 'scikit-learn']
    >>> "pytest" in requirements(), "pytest" in requirements(extras=())
    (True, False)
    """
    names = []
    specs = (importlib.metadata.requires("dpclust_lib") or []) + (importlib.metadata.requires("dpclust") or [])
    for spec in specs:
        name = canonical_name(re.split(r"[\s<>=!~;\[(]", spec, maxsplit=1)[0])
        if name in ("dpclust", "dpclust-lib"):
            continue
        marker = spec.split(";", 1)[1] if ";" in spec else ""
        extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
        if (extra is None or extra.group(1) in extras) and name not in names:
            names.append(name)
    return names


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
        The lock file; default ``requirements.lock`` of the compendium. Outside a
        compendium (an exported assignment, an installed package) there is no
        default lock: the installed versions are reported, with ``locked`` and
        ``match`` missing (NA) in every row, rather than an error in a notebook's
        last cell. An explicit ``lock`` that does not exist is an error.
    packages : sequence of str, optional
        Default: dpclust_lib's requirements, with the notebooks and test extras.

    Returns
    -------
    DataFrame with columns package, locked, installed, match (one row per package;
    ``locked`` or ``installed`` is missing (NA) where the package is not in the lock or not installed).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     lock = pathlib.Path(tmp, "requirements.lock")
    ...     _ = lock.write_text("numpy==0.0.1\\n")
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

"""Where the compendium keeps its notebooks, results and figures, decided at run time.

The library alone (fitting, metrics, data sets) needs no compendium. The commands that
read notebooks or write results do: they find it from ``$DPCLUST_HOME``, else by
searching upwards from the working directory for a folder that holds ``notebooks/``
next to ``pyproject.toml`` (or a ``Makefile``). Nothing is derived from ``__file__``:
an installed package lives in site-packages, where no results belong.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "HOME_ENV",
    "CompendiumNotFoundError",
    "find_project_dir",
    "project_dir",
    "notebook_dir",
    "results_dir",
    "figures_dir",
]

HOME_ENV = "DPCLUST_HOME"
_MARKERS = ("pyproject.toml", "Makefile")


class CompendiumNotFoundError(FileNotFoundError):
    """A command needs the dpclust compendium (its notebooks and result folders) and none was found."""


def _is_compendium(folder):
    return (folder / "notebooks").is_dir() and any((folder / m).is_file() for m in _MARKERS)


def find_project_dir(start=None):
    """The compendium's folder, or None when there is none (see the module docstring for the search).

    Parameters
    ----------
    start : path-like, optional
        Where the upward search starts (default: the working directory).
        ``$DPCLUST_HOME``, when set, wins over the search.

    Returns
    -------
    Path or None

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as tmp, mock.patch.dict(os.environ, {"DPCLUST_HOME": ""}):
    ...     home = pathlib.Path(tmp).resolve()
    ...     (home / "notebooks" / "figures").mkdir(parents=True)
    ...     (home / "Makefile").touch()
    ...     print(find_project_dir(home / "notebooks" / "figures") == home, find_project_dir(home.parent))
    True None
    """
    home = os.environ.get(HOME_ENV, "").strip()
    if home:
        folder = Path(home).expanduser().resolve()
        return folder if _is_compendium(folder) else None
    here = Path.cwd() if start is None else Path(start)
    here = here.resolve()
    for folder in (here, *here.parents):
        if _is_compendium(folder):
            return folder
    return None


def project_dir(start=None):
    """The compendium's folder; raises :class:`CompendiumNotFoundError` when there is none.

    Parameters
    ----------
    start : path-like, optional
        Where the upward search starts (default: the working directory).

    Returns
    -------
    Path

    Examples
    --------
    >>> import os, tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as tmp, mock.patch.dict(os.environ, {"DPCLUST_HOME": tmp}):
    ...     project_dir()
    Traceback (most recent call last):
    ...
    dpclust._paths.CompendiumNotFoundError: $DPCLUST_HOME=... is not a dpclust compendium: it needs a notebooks/ ...
    """
    folder = find_project_dir(start)
    if folder is not None:
        return folder
    home = os.environ.get(HOME_ENV, "").strip()
    if home:
        raise CompendiumNotFoundError(
            f"${HOME_ENV}={home} is not a dpclust compendium: it needs a notebooks/ folder next to "
            f"{' or '.join(_MARKERS)}. Point ${HOME_ENV} at the compendium's folder."
        )
    where = Path.cwd() if start is None else Path(start)
    raise CompendiumNotFoundError(
        f"this command needs the dpclust compendium (its notebooks/ and result folders), and none was found "
        f"in {where} or above it. Run it inside the compendium or set ${HOME_ENV} to its folder."
    )


def notebook_dir():
    """``<project>/notebooks``.

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as home, mock.patch.dict(os.environ, {"DPCLUST_HOME": home}):
    ...     os.mkdir(os.path.join(home, "notebooks"))
    ...     pathlib.Path(home, "Makefile").touch()
    ...     print(notebook_dir().relative_to(project_dir()).as_posix())
    notebooks
    """
    return project_dir() / "notebooks"


def results_dir():
    """``<project>/data/results``.

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as home, mock.patch.dict(os.environ, {"DPCLUST_HOME": home}):
    ...     os.mkdir(os.path.join(home, "notebooks"))
    ...     pathlib.Path(home, "Makefile").touch()
    ...     print(results_dir().relative_to(project_dir()).as_posix())
    data/results
    """
    return project_dir() / "data" / "results"


def figures_dir():
    """``<project>/figures``.

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as home, mock.patch.dict(os.environ, {"DPCLUST_HOME": home}):
    ...     os.mkdir(os.path.join(home, "notebooks"))
    ...     pathlib.Path(home, "Makefile").touch()
    ...     print(figures_dir().relative_to(project_dir()).as_posix())
    figures
    """
    return project_dir() / "figures"

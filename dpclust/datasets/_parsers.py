"""What the readers of the data files share: a path in, a checked DataFrame out.

Each paper's module (``dpclust.datasets.<paper>``) reads its own files' formats (columns, separators,
categories) with these helpers; where a file comes from (URLs, checksums, folders) is the registry's
part (:mod:`dpclust.datasets._registry`). Every problem with a file's content is a :class:`DataError`
that names the file (and the row), never a record's values beyond the unknown category.
"""

from __future__ import annotations

import gzip
import io

import numpy as np
import pandas as pd

__all__ = ["DataError", "read_table", "check_no_missing", "check_categories", "numeric", "codes", "minmax"]


class DataError(Exception):
    """Base class of the data-loading errors (a file that cannot be parsed raises it directly)."""


DataError.__module__ = "dpclust.datasets"  # public as dpclust.datasets.DataError, and its tracebacks say so


def read_table(path, n_columns, names=None, **kwargs):
    """A headerless delimited file (plain or .gz) with exactly ``n_columns`` columns and at least one row.

    Parameters
    ----------
    path : path-like
        The file; a name ending in ``.gz`` is read through gzip.
    n_columns : int
        The number of columns every row must have.
    names : list of str, optional
        Column names (default: 0, 1, ...).
    **kwargs
        Passed to :func:`pandas.read_csv` (``sep``, ``dtype``, ...).

    Returns
    -------
    DataFrame

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "points.txt")
    ...     _ = path.write_text("1 2\\n3 4\\n")
    ...     frame = read_table(path, 2, names=["x", "y"], sep=" ")
    ...     read_table(path, 3, sep=" ")
    Traceback (most recent call last):
    ...
    dpclust.datasets.DataError: ...points.txt has 2 columns per row, expected 3; is it the right file?
    >>> frame.to_dict("list")
    {'x': [1, 3], 'y': [2, 4]}
    """
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    try:
        df = pd.read_csv(io.BytesIO(raw), header=None, **kwargs)
    except (pd.errors.ParserError, UnicodeDecodeError, EOFError) as exc:
        raise DataError(f"{path} could not be parsed: {exc}") from exc
    if df.shape[1] != n_columns:
        raise DataError(f"{path} has {df.shape[1]} columns per row, expected {n_columns}; is it the right file?")
    if df.shape[0] == 0:
        raise DataError(f"{path} holds no records")
    if names is not None:
        df.columns = names
    return df


def check_no_missing(df, path, columns=None):
    """Raise DataError naming the first row with a missing or unparsable value.

    Parameters
    ----------
    df : DataFrame
        The parsed file.
    path : path-like
        The file, named in the error.
    columns : list, optional
        The columns to check (default: all).

    Examples
    --------
    >>> frame = pd.DataFrame({"x": [1.0, 2.0], "y": [3.0, np.nan]})
    >>> check_no_missing(frame, "points.txt", ["x"])  # x is complete: no error
    >>> check_no_missing(frame, "points.txt")
    Traceback (most recent call last):
    ...
    dpclust.datasets.DataError: points.txt: row 1 has missing or unparsable values; the file looks truncated or corrupt
    """
    cols = df.columns if columns is None else columns
    bad = df[cols].isna()
    if bad.to_numpy().any():
        i = int(np.argmax(bad.to_numpy().any(axis=1)))
        raise DataError(f"{path}: row {i} has missing or unparsable values; the file looks truncated or corrupt")


def check_categories(df, path, categories):
    """Raise DataError when a column holds a value outside its declared categories.

    Parameters
    ----------
    df : DataFrame
        The parsed file.
    path : path-like
        The file, named in the error.
    categories : dict
        Column -> the list of its allowed values.

    Examples
    --------
    >>> frame = pd.DataFrame({"safety": ["low", "high", "none"]})
    >>> check_categories(frame.iloc[:2], "car.data", {"safety": ["low", "med", "high"]})  # no error
    >>> check_categories(frame, "car.data", {"safety": ["low", "med", "high"]})
    Traceback (most recent call last):
    ...
    dpclust.datasets.DataError: car.data: attribute 'safety' has the value 'none', not among ['low', 'med', 'high']
    """
    for col, values in categories.items():
        unknown = sorted(set(df[col]) - set(values))
        if unknown:
            raise DataError(f"{path}: attribute {col!r} has the value {unknown[0]!r}, not among {values}")


def numeric(df, path, columns):
    """The given columns as a C-contiguous float array; a value that is not a number is a DataError.

    Parameters
    ----------
    df : DataFrame
        The parsed file.
    path : path-like
        The file, named in the error.
    columns : list
        The columns to convert, in order.

    Returns
    -------
    ndarray of shape (n, len(columns)), float

    Examples
    --------
    >>> frame = pd.DataFrame({"x": ["1.5", "2"], "y": ["3", "oops"], "name": ["a", "b"]})
    >>> numeric(frame, "points.txt", ["x"]).tolist()
    [[1.5], [2.0]]
    >>> numeric(frame, "points.txt", ["x", "y"])
    Traceback (most recent call last):
    ...
    dpclust.datasets.DataError: points.txt: row 1 has missing or unparsable values; the file looks truncated or corrupt
    """
    out = df[columns].apply(pd.to_numeric, errors="coerce")
    check_no_missing(out, path)
    return np.ascontiguousarray(out.to_numpy(dtype=float))  # row-major: the distance code reads rows


def codes(values, categories, name):
    """Code values by their position in ``categories``; unknown values are an error.

    Parameters
    ----------
    values : sequence
        The values of one attribute.
    categories : sequence
        Its categories, in the order of their codes ``0 .. k - 1``.
    name : str
        The attribute, named in the error.

    Returns
    -------
    ndarray of int64

    Examples
    --------
    >>> codes(["low", "high", "low"], ["low", "med", "high"], "safety").tolist()
    [0, 2, 0]
    >>> codes(["low", "none"], ["low", "med", "high"], "safety")
    Traceback (most recent call last):
    ...
    dpclust.datasets.DataError: attribute 'safety' has the value 'none', not among ['low', 'med', 'high']
    """
    lookup = {c: i for i, c in enumerate(categories)}
    try:
        return np.fromiter((lookup[v] for v in values), dtype=np.int64, count=len(values))
    except KeyError as exc:
        raise DataError(f"attribute {name!r} has the value {exc.args[0]!r}, not among {list(categories)}") from None


def minmax(X):
    """Each column scaled to [0, 1] by its own minimum and maximum (a constant column becomes 0).

    Parameters
    ----------
    X : ndarray of shape (n, d)

    Returns
    -------
    ndarray of shape (n, d)

    Examples
    --------
    >>> minmax(np.array([[0.0, 7.0], [5.0, 7.0], [20.0, 7.0]])).tolist()
    [[0.0, 0.0], [0.25, 0.0], [1.0, 0.0]]
    """
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return (X - lo) / span

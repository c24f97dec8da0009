"""Readers of the registered data files: a path in, a checked DataFrame out.

They know the files' formats (columns, separators, categories) and nothing of where a
file comes from (URLs, checksums, folders): that is the registry's part, in
:mod:`dpclust.datasets`. Every problem with a file's content is a :class:`DataError`
that names the file (and the row), never a record's values beyond the unknown category.
"""

from __future__ import annotations

import gzip
import io

import numpy as np
import pandas as pd

__all__ = [
    "DataError",
    "read_table",
    "check_no_missing",
    "check_categories",
    "numeric",
    "codes",
    "minmax",
    "read_auto",
    "read_car",
    "read_nursery",
    "read_covertype",
    "read_adult",
    "read_ipums",
    "AUTO_COLS",
    "CAR_CATS",
    "NURSERY_CATS",
    "ELU",
    "ADULT_COLS",
    "IPUMS_COLS",
    "MAGIC_COLS",
]


class DataError(Exception):
    """Base class of the data-loading errors (a file that cannot be parsed raises it directly)."""


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
    dpclust._parsers.DataError: ...points.txt has 2 columns per row, expected 3; is it the right file?
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
    dpclust._parsers.DataError: points.txt: row 1 has missing or unparsable values; the file looks truncated or corrupt
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
        Column -> the list of its allowed values (e.g. :data:`CAR_CATS`).

    Examples
    --------
    >>> frame = pd.DataFrame({"safety": ["low", "high", "none"]})
    >>> check_categories(frame.iloc[:2], "car.data", {"safety": CAR_CATS["safety"]})  # no error
    >>> check_categories(frame, "car.data", {"safety": CAR_CATS["safety"]})
    Traceback (most recent call last):
    ...
    dpclust._parsers.DataError: car.data: attribute 'safety' has the value 'none', not among ['low', 'med', 'high']
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
    dpclust._parsers.DataError: points.txt: row 1 has missing or unparsable values; the file looks truncated or corrupt
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
    >>> codes(["low", "high", "low"], CAR_CATS["safety"], "safety").tolist()
    [0, 2, 0]
    >>> codes(["low", "none"], CAR_CATS["safety"], "safety")
    Traceback (most recent call last):
    ...
    dpclust._parsers.DataError: attribute 'safety' has the value 'none', not among ['low', 'med', 'high']
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


# The files ------------------------------------------------------------------

AUTO_COLS = [
    "mpg",
    "cylinders",
    "displacement",
    "horsepower",
    "weight",
    "acceleration",
    "model_year",
    "origin",
    "car_name",
]


def read_auto(path):
    """UCI auto-mpg.data (horsepower may be missing, ``?``).

    Parameters
    ----------
    path : path-like
        The file: whitespace-separated, the car's name in double quotes.

    Returns
    -------
    DataFrame with the columns :data:`AUTO_COLS`

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "auto-mpg.data")
    ...     _ = path.write_text('18.0  8  307.0  130.0  3504.  12.0  70  1\\t"chevrolet chevelle malibu"\\n'
    ...                         '25.0  4  98.00  ?      2046.  19.0  71  1\\t"ford pinto"\\n')
    ...     cars = read_auto(path)
    >>> cars["car_name"].tolist(), cars["horsepower"].isna().tolist()
    (['chevrolet chevelle malibu', 'ford pinto'], [False, True])
    """
    df = read_table(path, 9, sep=r"\s+", quotechar='"', na_values="?", names=AUTO_COLS)
    check_no_missing(df, path, [c for c in AUTO_COLS if c != "horsepower"])
    return df


CAR_CATS = {
    "buying": ["vhigh", "high", "med", "low"],
    "maint": ["vhigh", "high", "med", "low"],
    "doors": ["2", "3", "4", "5more"],
    "persons": ["2", "4", "more"],
    "lug_boot": ["small", "med", "big"],
    "safety": ["low", "med", "high"],
}

NURSERY_CATS = {
    "parents": ["usual", "pretentious", "great_pret"],
    "has_nurs": ["proper", "less_proper", "improper", "critical", "very_crit"],
    "form": ["complete", "completed", "incomplete", "foster"],
    "children": ["1", "2", "3", "more"],
    "housing": ["convenient", "less_conv", "critical"],
    "finance": ["convenient", "inconv"],
    "social": ["nonprob", "slightly_prob", "problematic"],
    "health": ["recommended", "priority", "not_recom"],
}


def _read_categorical(path, categories):
    df = read_table(path, len(categories) + 1, names=list(categories) + ["class"], dtype=str, skip_blank_lines=True)
    check_no_missing(df, path)
    check_categories(df, path, categories)
    return df


def read_car(path):
    """UCI car.data: six categorical attributes and the class.

    Parameters
    ----------
    path : path-like
        The file: comma-separated, no header.

    Returns
    -------
    DataFrame of strings with the columns of :data:`CAR_CATS` and ``class``

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "car.data")
    ...     _ = path.write_text("vhigh,vhigh,2,2,small,low,unacc\\nlow,low,5more,more,big,high,vgood\\n")
    ...     cars = read_car(path)
    >>> cars.shape, cars["safety"].tolist(), cars["class"].tolist()
    ((2, 7), ['low', 'high'], ['unacc', 'vgood'])
    """
    return _read_categorical(path, CAR_CATS)


def read_nursery(path):
    """UCI nursery.data: eight categorical attributes and the class.

    Parameters
    ----------
    path : path-like
        The file: comma-separated, no header.

    Returns
    -------
    DataFrame of strings with the columns of :data:`NURSERY_CATS` and ``class``

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "nursery.data")
    ...     _ = path.write_text("usual,proper,complete,1,convenient,convenient,nonprob,recommended,recommend\\n")
    ...     nursery = read_nursery(path)
    >>> nursery.loc[0, ["parents", "health", "class"]].tolist()
    ['usual', 'recommended', 'recommend']
    """
    return _read_categorical(path, NURSERY_CATS)


# USFS ELU codes of the 40 soil types (covtype.info): the first digit is the
# climatic zone, the second the geologic zone.
ELU = [
    2702,
    2703,
    2704,
    2705,
    2706,
    2717,
    3501,
    3502,
    4201,
    4703,
    4704,
    4744,
    4758,
    5101,
    5151,
    6101,
    6102,
    6731,
    7101,
    7102,
    7103,
    7201,
    7202,
    7700,
    7701,
    7702,
    7709,
    7710,
    7745,
    7746,
    7755,
    7756,
    7757,
    7790,
    8703,
    8707,
    8708,
    8771,
    8772,
    8776,
]


def read_covertype(path):
    """UCI covtype.data(.gz): 54 columns and the cover type; the one-hot blocks are checked.

    Parameters
    ----------
    path : path-like
        The file: comma-separated integers, plain or gzipped; columns 10-13 one-hot code the
        wilderness area, columns 14-53 the soil type (:data:`ELU`), column 54 is the cover type.

    Returns
    -------
    DataFrame with the columns 0 .. 54

    Examples
    --------
    >>> import pathlib, tempfile
    >>> measures = [2596, 51, 3, 258, 0, 510, 221, 232, 148, 6279]
    >>> row = measures + [1, 0, 0, 0] + [0] * 28 + [1] + [0] * 11 + [5]  # area 1, soil type 29, cover type 5
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "covtype.data")
    ...     _ = path.write_text(",".join(map(str, row)) + "\\n")
    ...     cover = read_covertype(path)
    >>> cover.shape, int(cover.iloc[0, 14:54].to_numpy().argmax()) + 1, int(cover[54].iloc[0])
    ((1, 55), 29, 5)
    """
    df = read_table(path, 55)
    check_no_missing(df, path)
    one_hot = df.iloc[:, 10:54].to_numpy()
    if not np.all(one_hot[:, :4].sum(axis=1) == 1) or not np.all(one_hot[:, 4:].sum(axis=1) == 1):
        raise DataError(f"{path}: the wilderness-area or soil-type columns are not one-hot; is it the right file?")
    return df


ADULT_COLS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education_num",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital_gain",
    "capital_loss",
    "hours_per_week",
    "native_country",
    "income",
]


def read_adult(path):
    """UCI adult.data as strings (``?`` marks a missing value and is kept as such).

    Parameters
    ----------
    path : path-like
        The file: comma-and-space separated, no header.

    Returns
    -------
    DataFrame of strings with the columns :data:`ADULT_COLS`

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "adult.data")
    ...     _ = path.write_text("39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, "
    ...                         "White, Male, 2174, 0, 40, United-States, <=50K\\n"
    ...                         "54, ?, 180211, Some-college, 10, Married-civ-spouse, ?, Husband, "
    ...                         "Asian-Pac-Islander, Male, 0, 0, 60, South, >50K\\n")
    ...     adults = read_adult(path)
    >>> adults["workclass"].tolist(), adults["income"].tolist()
    (['State-gov', '?'], ['<=50K', '>50K'])
    """
    df = read_table(path, 15, names=ADULT_COLS, skipinitialspace=True, dtype=str, skip_blank_lines=True)
    check_no_missing(df, path)
    return df


IPUMS_COLS = ["FAMSIZE", "SEX", "RACE", "SCHOOL", "EMPSTAT"]


def read_ipums(path):
    """A user's IPUMS USA extract (CSV with a header, plain or .gz): the five columns the paper uses.

    Parameters
    ----------
    path : path-like
        The extract, with at least the columns :data:`IPUMS_COLS` (others are dropped).

    Returns
    -------
    DataFrame with the columns :data:`IPUMS_COLS`

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "ipums_usa.csv")
    ...     _ = path.write_text("YEAR,FAMSIZE,SEX,RACE,SCHOOL,EMPSTAT\\n2019,2,1,1,1,1\\n2019,4,2,3,2,0\\n")
    ...     people = read_ipums(path)
    >>> people.columns.tolist(), people["FAMSIZE"].tolist()
    (['FAMSIZE', 'SEX', 'RACE', 'SCHOOL', 'EMPSTAT'], [2, 4])
    """
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        df = pd.read_csv(f)
    missing = [c for c in IPUMS_COLS if c not in df.columns]
    if missing:
        raise DataError(f"{path} lacks the columns {missing}; the extract needs {IPUMS_COLS}")
    df = df[IPUMS_COLS]
    check_no_missing(df, path)
    return df


MAGIC_COLS = ["fLength", "fWidth", "fSize", "fConc", "fConc1", "fAsym", "fM3Long", "fM3Trans", "fAlpha", "fDist"]

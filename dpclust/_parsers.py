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
    """A headerless delimited file (plain or .gz) with exactly ``n_columns`` columns and at least one row."""
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
    """Raise DataError naming the first row with a missing or unparsable value."""
    cols = df.columns if columns is None else columns
    bad = df[cols].isna()
    if bad.to_numpy().any():
        i = int(np.argmax(bad.to_numpy().any(axis=1)))
        raise DataError(f"{path}: row {i} has missing or unparsable values; the file looks truncated or corrupt")


def check_categories(df, path, categories):
    """Raise DataError when a column holds a value outside its declared categories."""
    for col, values in categories.items():
        unknown = sorted(set(df[col]) - set(values))
        if unknown:
            raise DataError(f"{path}: attribute {col!r} has the value {unknown[0]!r}, not among {values}")


def numeric(df, path, columns):
    """The given columns as a C-contiguous float array; a value that is not a number is a DataError."""
    out = df[columns].apply(pd.to_numeric, errors="coerce")
    check_no_missing(out, path)
    return np.ascontiguousarray(out.to_numpy(dtype=float))  # row-major: the distance code reads rows


def codes(values, categories, name):
    """Code values by their position in ``categories``; unknown values are an error."""
    lookup = {c: i for i, c in enumerate(categories)}
    try:
        return np.fromiter((lookup[v] for v in values), dtype=np.int64, count=len(values))
    except KeyError as exc:
        raise DataError(f"attribute {name!r} has the value {exc.args[0]!r}, not among {list(categories)}") from None


def minmax(X):
    """Each column scaled to [0, 1] by its own minimum and maximum (a constant column becomes 0)."""
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
    """UCI auto-mpg.data (horsepower may be missing, ``?``)."""
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
    """UCI car.data: six categorical attributes and the class."""
    return _read_categorical(path, CAR_CATS)


def read_nursery(path):
    """UCI nursery.data: eight categorical attributes and the class."""
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
    """UCI covtype.data(.gz): 54 columns and the cover type; the one-hot blocks are checked."""
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
    """UCI adult.data as strings (``?`` marks a missing value and is kept as such)."""
    df = read_table(path, 15, names=ADULT_COLS, skipinitialspace=True, dtype=str, skip_blank_lines=True)
    check_no_missing(df, path)
    return df


IPUMS_COLS = ["FAMSIZE", "SEX", "RACE", "SCHOOL", "EMPSTAT"]


def read_ipums(path):
    """A user's IPUMS USA extract (CSV with a header, plain or .gz): the five columns the paper uses."""
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

"""Zhang et al. 2022 (LDP k-modes with attribute sampling), notebook 02: UCI Adult and a user-supplied IPUMS USA
extract.
"""

from __future__ import annotations

import gzip

import pandas as pd

from ._parsers import DataError, check_no_missing, read_table
from ._registry import (
    UCI,
    UCI_LICENSE,
    DataFile,
    DataNotFoundError,
    categorical_dataset,
    locate,
    provenance,
    read_registered,
    register,
)

__all__ = ["NOTEBOOK", "PAPER", "ADULT", "IPUMS", "IPUMS_GZ", "ADULT_COLS", "IPUMS_COLS", "read_adult", "read_ipums"]

NOTEBOOK = "02_ldp_kmodes_sampling"
PAPER = "Zhang et al. 2022 (sampling LDP k-modes)"


ADULT = DataFile(
    "adult/adult.data",
    f"{UCI}/adult/adult.data",
    "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    UCI_LICENSE,
)
IPUMS = DataFile(
    "ipums_usa/ipums_usa.csv",
    None,
    None,
    "IPUMS USA terms of use (no redistribution; citation required)",
    "IPUMS USA data may not be redistributed. Request an extract at https://usa.ipums.org/ with the variables "
    "FAMSIZE, SEX, RACE, SCHOOL and EMPSTAT, download it as CSV, and save it as ipums_usa/ipums_usa.csv "
    "(or ipums_usa.csv.gz) in data/raw/ or in a folder listed in $DPCLUST_DATA_DIR.",
)
IPUMS_GZ = DataFile("ipums_usa/ipums_usa.csv.gz", None, None, IPUMS.license, IPUMS.note)


# The files' formats ----------------------------------------------------------------------------------


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


# The variants ----------------------------------------------------------------------------------------


_ADULT_SAMPLING = ["workclass", "education", "marital_status", "relationship", "race", "sex"]


def _adult_sampling(raw_dir, **_):
    _, path, df = read_registered(ADULT, read_adult, raw_dir)
    complete = ~(df == "?").any(axis=1)
    dropped = int((~complete).sum())
    df = df[complete].reset_index(drop=True)
    cats = {c: sorted(df[c].unique()) for c in _ADULT_SAMPLING}
    return categorical_dataset(
        "adult",
        "ldp_kmodes_sampling",
        df,
        _ADULT_SAMPLING,
        cats,
        df["income"].to_numpy(),
        f"Zhang et al. (2022): adult.data without the {dropped} rows that contain '?' ({len(df)} records); "
        "attributes WORKCLASS, EDUCATION, MARITAL, RELATIONSHIP, RACE, SEX (categories sorted alphabetically); "
        "label: income (<=50K / >50K), our choice for AC and E.",
        [provenance(ADULT, path)],
        "income",
    )


def _ipums_sampling(raw_dir, label="EMPSTAT", **_):
    try:
        datafile, path = IPUMS, locate(IPUMS, raw_dir, download=False, allow_unverified=True)
    except DataNotFoundError as not_found:
        try:
            datafile, path = IPUMS_GZ, locate(IPUMS_GZ, raw_dir, download=False, allow_unverified=True)
        except DataNotFoundError:
            raise not_found from None
    df = read_ipums(path)
    cats = {c: sorted(df[c].unique().tolist()) for c in IPUMS_COLS}
    if label not in IPUMS_COLS:
        raise ValueError(f"label must be one of {IPUMS_COLS}, got label={label!r}")
    features = [c for c in IPUMS_COLS if c != label]
    return categorical_dataset(
        "ipums_usa",
        "ldp_kmodes_sampling",
        df,
        features,
        cats,
        df[label].to_numpy(),
        f"Zhang et al. (2022): a user-supplied IPUMS USA extract ({len(df)} records), attributes {features} "
        f"coded by their sorted IPUMS codes; label: {label} (our choice).",
        [provenance(datafile, path)],
        label,
    )


# The registry ----------------------------------------------------------------------------------------

register(
    "adult",
    "UCI Adult",
    (ADULT,),
    (PAPER, "overview"),
    "Becker & Kohavi, UCI ML Repository, 1996",
    {"ldp_kmodes_sampling": (_adult_sampling, "Zhang et al. 2022: 30,162 complete records, 6 attributes")},
    "ldp_kmodes_sampling",
)
register(
    "ipums_usa",
    "IPUMS USA extract (user-supplied)",
    (IPUMS,),
    (PAPER,),
    "Ruggles et al., IPUMS USA, Minneapolis, MN: IPUMS (cite the version you extract)",
    {"ldp_kmodes_sampling": (_ipums_sampling, "Zhang et al. 2022: FAMSIZE, SEX, RACE, SCHOOL, EMPSTAT")},
    "ldp_kmodes_sampling",
)

"""Peng et al. 2021 (LDPK-modes), notebook 01: UCI Auto MPG, Car Evaluation, Nursery and Covertype (D1-D4).

The files, their readers, and one variant per reading of the paper's preprocessing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._parsers import DataError, check_categories, check_no_missing, numeric, read_table
from ._registry import UCI, UCI_LICENSE, DataFile, Dataset, categorical_dataset, provenance, read_registered, register

__all__ = [
    "NOTEBOOK",
    "PAPER",
    "AUTO_MPG",
    "CAR",
    "NURSERY",
    "COVERTYPE",
    "AUTO_COLS",
    "CAR_CATS",
    "NURSERY_CATS",
    "ELU",
    "read_auto",
    "read_car",
    "read_nursery",
    "read_covertype",
]

NOTEBOOK = "01_ldpk_modes"
PAPER = "Peng et al. 2021 (LDPK-modes)"


AUTO_MPG = DataFile(
    "auto_mpg/auto-mpg.data",
    f"{UCI}/auto-mpg/auto-mpg.data",
    "48b830e11feee5572525f8f1691ddb9d38d3d7b7063edcd8fca672c2a5e17d8d",
    UCI_LICENSE,
)
CAR = DataFile(
    "car_evaluation/car.data",
    f"{UCI}/car/car.data",
    "b703a9ac69f11e64ce8c223c0a40de4d2e9d769f7fb20be5f8f2e8a619893d83",
    UCI_LICENSE,
)
NURSERY = DataFile(
    "nursery/nursery.data",
    f"{UCI}/nursery/nursery.data",
    "8e0389c3dd37590248a921c2726d869ee96b817761a35eb8416afa24f31f931d",
    UCI_LICENSE,
)
COVERTYPE = DataFile(
    "covertype/covtype.data.gz",
    f"{UCI}/covtype/covtype.data.gz",
    "614360d0257557dd1792834a85a1cdebfadc3c4f30b011d56afee7ffb5b15771",
    UCI_LICENSE,
    "The same bytes are served by figshare: https://ndownloader.figshare.com/files/5976039",
)


# The files' formats ----------------------------------------------------------------------------------


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


# The variants ----------------------------------------------------------------------------------------


def _auto_raw(raw_dir, **_):
    _, path, df = read_registered(AUTO_MPG, read_auto, raw_dir)
    cols = ["cylinders", "displacement", "weight", "acceleration", "model_year", "origin"]
    X = numeric(df, path, cols)
    return Dataset(
        "auto_mpg",
        "raw",
        X,
        df["mpg"].to_numpy(float),
        cols,
        "mpg",
        "All 398 cars; numeric attributes without horsepower (missing for 6 cars); label: mpg.",
        [provenance(AUTO_MPG, path)],
    )


def _auto_ldpk(raw_dir, **_):
    _, path, df = read_registered(AUTO_MPG, read_auto, raw_dir)
    cyl = np.select([df["cylinders"] <= 4, df["cylinders"] <= 6], ["<=4", "5-6"], "8")
    year = np.where(df["model_year"] <= 76, "1970-76", "1977-82")
    origin = df["origin"].map({1: "USA", 2: "Europe", 3: "Japan"})
    tertile = pd.qcut(df["mpg"], 3, labels=["low", "mid", "high"]).astype(str).to_numpy()
    frame = pd.DataFrame({"cylinders": cyl, "model_year": year, "origin": origin})
    cats = {
        "cylinders": ["<=4", "5-6", "8"],
        "model_year": ["1970-76", "1977-82"],
        "origin": ["USA", "Europe", "Japan"],
    }
    return categorical_dataset(
        "auto_mpg",
        "ldpk_modes",
        frame,
        list(cats),
        cats,
        tertile,
        "Peng et al. D1, domains {3,2,3} (our reading; the paper does not say which attributes): "
        "cylinders {<=4, 5-6, 8}, model year {1970-76, 1977-82}, origin {USA, Europe, Japan}; "
        "label: mpg tertile (low/mid/high). All 398 cars.",
        [provenance(AUTO_MPG, path)],
        "mpg_tertile",
    )


def _categorical_raw(name, datafile_name, reader, categories, what):
    """The ``raw`` variant of a categorical UCI file: every attribute with its original domain."""

    def build(raw_dir, **_):
        datafile, path, df = read_registered(globals()[datafile_name], reader, raw_dir)  # looked up when called
        sizes = ",".join(str(len(values)) for values in categories.values())
        return categorical_dataset(
            name,
            "raw",
            df,
            list(categories),
            categories,
            df["class"].to_numpy(),
            f"All {len(df)} records, {what} with their original domains {{{sizes}}}; label: class.",
            [provenance(datafile, path)],
            "class",
        )

    return build


_car_raw = _categorical_raw("car", "CAR", read_car, CAR_CATS, "the six attributes")
_nursery_raw = _categorical_raw("nursery", "NURSERY", read_nursery, NURSERY_CATS, "eight attributes")


_CAR_BINARY = {  # attribute -> the values of the first group
    "buying": {"vhigh", "high"},
    "maint": {"vhigh", "high"},
    "doors": {"2", "3"},
    "persons": {"2"},
    "lug_boot": {"small"},
    "safety": {"low"},
}


def _car_ldpk(raw_dir, **_):
    _, path, df = read_registered(CAR, read_car, raw_dir)
    frame, cats = {}, {}
    for col, first in _CAR_BINARY.items():
        a = "|".join(v for v in CAR_CATS[col] if v in first)
        b = "|".join(v for v in CAR_CATS[col] if v not in first)
        frame[col] = np.where(df[col].isin(first), a, b)
        cats[col] = [a, b]
    return categorical_dataset(
        "car",
        "ldpk_modes",
        pd.DataFrame(frame),
        list(cats),
        cats,
        df["class"].to_numpy(),
        "Peng et al. D2, six binary attributes (our reading): buying and maint {vhigh,high | med,low}, "
        "doors {2,3 | 4,5more}, persons {2 | 4,more}, lug_boot {small | med,big}, safety {low | med,high}; "
        "label: class. All 1728 records.",
        [provenance(CAR, path)],
        "class",
    )


def _nursery_ldpk(raw_dir, **_):
    _, path, df = read_registered(NURSERY, read_nursery, raw_dir)
    frame, cats = {}, {}
    for col, values in NURSERY_CATS.items():
        first = "not_recom" if col == "health" else values[0]
        rest = "|".join(v for v in values if v != first)
        frame[col] = np.where(df[col] == first, first, rest)
        cats[col] = [first, rest]
    return categorical_dataset(
        "nursery",
        "ldpk_modes",
        pd.DataFrame(frame),
        list(cats),
        cats,
        df["class"].to_numpy(),
        "Peng et al. D3, eight binary attributes (our reading): each attribute's first value vs the rest, "
        "health as not_recom vs the rest; label: class. All 12960 records.",
        [provenance(NURSERY, path)],
        "class",
    )


def _covertype_raw(raw_dir, **_):
    _, path, df = read_registered(COVERTYPE, read_covertype, raw_dir)
    X = df.iloc[:, :54].to_numpy(float)
    names = [
        "elevation",
        "aspect",
        "slope",
        "h_dist_hydrology",
        "v_dist_hydrology",
        "h_dist_roadways",
        "hillshade_9am",
        "hillshade_noon",
        "hillshade_3pm",
        "h_dist_fire_points",
    ]
    names += [f"wilderness_{i + 1}" for i in range(4)] + [f"soil_type_{i + 1}" for i in range(40)]
    return Dataset(
        "covertype",
        "raw",
        X,
        df[54].to_numpy(),
        names,
        "cover_type",
        "All 581012 records, 54 columns as published; label: cover type 1-7.",
        [provenance(COVERTYPE, path)],
    )


def _covertype_ldpk(raw_dir, geologic=False, **_):
    _, path, df = read_registered(COVERTYPE, read_covertype, raw_dir)
    wilderness = df.iloc[:, 10:14].to_numpy().argmax(axis=1)
    elu = np.asarray(ELU)[df.iloc[:, 14:54].to_numpy().argmax(axis=1)]
    climatic = elu // 1000
    climatic_values = [2, 3, 4, 5, 6, 7, 8]
    X2 = np.searchsorted(climatic_values, climatic)
    if geologic:
        geo_values = [1, 2, 5, 7]
        X1 = np.searchsorted(geo_values, (elu // 100) % 10)
        names, cats = (
            ["geologic_zone", "climatic_zone"],
            [[str(v) for v in geo_values], [str(v) for v in climatic_values]],
        )
        what = "geologic zone (4, second digit of the soil type's ELU code)"
        variant = "ldpk_modes_elu"
    else:
        X1 = wilderness
        names, cats = ["wilderness_area", "climatic_zone"], [["1", "2", "3", "4"], [str(v) for v in climatic_values]]
        what = "wilderness area (4)"
        variant = "ldpk_modes"
    X = np.column_stack([X1, X2]).astype(np.int64)
    return Dataset(
        "covertype",
        variant,
        X,
        df[54].to_numpy(),
        names,
        "cover_type",
        f"Peng et al. D4, domains {{4,7}} (our reading): {what} and climatic zone (7, first digit of the "
        "soil type's ELU code); label: cover type. All 581012 records.",
        [provenance(COVERTYPE, path)],
        domain_sizes=(4, 7),
        categories=cats,
    )


# The registry ----------------------------------------------------------------------------------------

register(
    "auto_mpg",
    "UCI Auto MPG",
    (AUTO_MPG,),
    (PAPER,),
    "Quinlan, UCI ML Repository, 1993",
    {"raw": (_auto_raw, "numeric attributes, label mpg"), "ldpk_modes": (_auto_ldpk, "Peng et al. D1 {3,2,3}")},
    "ldpk_modes",
)
register(
    "car",
    "UCI Car Evaluation",
    (CAR,),
    (PAPER, "overview"),
    "Bohanec & Rajkovic, UCI ML Repository, 1997",
    {
        "raw": (_car_raw, "original domains {4,4,4,3,3,3}"),
        "ldpk_modes": (_car_ldpk, "Peng et al. D2, six binary attributes"),
    },
    "ldpk_modes",
)
register(
    "nursery",
    "UCI Nursery",
    (NURSERY,),
    (PAPER, "overview"),
    "Rajkovic, UCI ML Repository, 1997",
    {
        "raw": (_nursery_raw, "original domains {3,5,4,4,3,2,3,3}"),
        "ldpk_modes": (_nursery_ldpk, "Peng et al. D3, eight binary attributes"),
    },
    "ldpk_modes",
)
register(
    "covertype",
    "UCI Covertype",
    (COVERTYPE,),
    (PAPER,),
    "Blackard, UCI ML Repository, 1998",
    {
        "raw": (_covertype_raw, "54 columns as published"),
        "ldpk_modes": (_covertype_ldpk, "Peng et al. D4 {4,7}: wilderness area, climatic zone"),
        "ldpk_modes_elu": (
            lambda raw_dir, **kw: _covertype_ldpk(raw_dir, geologic=True, **kw),
            "Peng et al. D4 {4,7}, alternative: geologic zone, climatic zone",
        ),
    },
    "ldpk_modes",
)

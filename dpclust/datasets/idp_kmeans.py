"""Li et al. 2013 (IDP k-means), notebook 04: the small UCI classics (Iris, Wine, Letter, Abalone), candidates
for its unnamed data sets.
"""

from __future__ import annotations

import numpy as np

from ._parsers import minmax, numeric, read_table
from ._registry import UCI, UCI_LICENSE, UNIT_BOX_NOTE, DataFile, Dataset, provenance, read_registered, register, scaled

__all__ = ["NOTEBOOK", "PAPER", "IRIS", "WINE", "LETTER", "ABALONE"]

NOTEBOOK = "04_idp_kmeans"
PAPER = "Li et al. 2013 (IDP k-means)"


IRIS = DataFile(
    "uci_small_classics/iris/iris.data",
    f"{UCI}/iris/iris.data",
    "6f608b71a7317216319b4d27b4d9bc84e6abd734eda7872b71a458569e2656c0",
    UCI_LICENSE,
)
WINE = DataFile(
    "uci_small_classics/wine/wine.data",
    f"{UCI}/wine/wine.data",
    "6be6b1203f3d51df0b553a70e57b8a723cd405683958204f96d23d7cd6aea659",
    UCI_LICENSE,
)
LETTER = DataFile(
    "uci_small_classics/letter_recognition/letter-recognition.data",
    f"{UCI}/letter-recognition/letter-recognition.data",
    "2b89f3602cf768d3c8355267d2f13f2417809e101fc2b5ceee10db19a60de6e2",
    UCI_LICENSE,
)
ABALONE = DataFile(
    "uci_small_classics/abalone/abalone.data",
    f"{UCI}/abalone/abalone.data",
    "de37cdcdcaaa50c309d514f248f7c2302a5f1f88c168905eba23fe2fbc78449f",
    UCI_LICENSE,
)


# The variants ----------------------------------------------------------------------------------------


def _classic(datafile_name, name, n_columns, label_col, feature_cols, names, read_kwargs=None):
    def build(raw_dir, scale=False, **_):
        def reader(path):
            return read_table(path, n_columns, skip_blank_lines=True, **(read_kwargs or {}))

        datafile, path, df = read_registered(globals()[datafile_name], reader, raw_dir)  # looked up when called
        X = numeric(df, path, feature_cols)
        y = df[label_col].to_numpy()
        if scale:
            X = minmax(X)
        desc = (
            f"UCI {name}: {len(X)} records, {X.shape[1]} numeric features"
            + (" min-max scaled to [0, 1]" if scale else "")
            + "; label: class."
        )
        unit = ((np.zeros(X.shape[1]), np.ones(X.shape[1])), UNIT_BOX_NOTE) if scale else (None, "")
        return Dataset(
            name,
            "minmax" if scale else "raw",
            X,
            y,
            names,
            "class",
            desc,
            [provenance(datafile, path)],
            bounds=unit[0],
            bounds_note=unit[1],
        )

    return build


_IRIS = _classic("IRIS", "iris", 5, 4, [0, 1, 2, 3], ["sepal_length", "sepal_width", "petal_length", "petal_width"])
_WINE = _classic("WINE", "wine", 14, 0, list(range(1, 14)), [f"f{i}" for i in range(1, 14)])
_LETTER = _classic("LETTER", "letter", 17, 0, list(range(1, 17)), [f"f{i}" for i in range(1, 17)])
_ABALONE = _classic("ABALONE", "abalone", 9, 8, list(range(1, 8)), [f"f{i}" for i in range(1, 8)])


# The registry ----------------------------------------------------------------------------------------

register(
    "iris",
    "UCI Iris",
    (IRIS,),
    (PAPER,),
    "Fisher, UCI ML Repository, 1936",
    {"raw": (_IRIS, "4 features"), "minmax": (scaled(_IRIS), "4 features in [0, 1]")},
)
register(
    "wine",
    "UCI Wine",
    (WINE,),
    (PAPER,),
    "Aeberhard & Forina, UCI ML Repository, 1991",
    {"raw": (_WINE, "13 features"), "minmax": (scaled(_WINE), "13 features in [0, 1]")},
)
register(
    "letter",
    "UCI Letter Recognition",
    (LETTER,),
    (PAPER,),
    "Slate, UCI ML Repository, 1991",
    {"raw": (_LETTER, "16 features"), "minmax": (scaled(_LETTER), "16 features in [0, 1]")},
)
register(
    "abalone",
    "UCI Abalone",
    (ABALONE,),
    (PAPER,),
    "Nash et al., UCI ML Repository, 1995",
    {
        "raw": (_ABALONE, "7 numeric features (sex left out); label: rings"),
        "minmax": (scaled(_ABALONE), "7 numeric features in [0, 1]"),
    },
)

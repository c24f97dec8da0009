"""Wang et al. (DPBIRCH), notebook 05: UCI MAGIC Gamma Telescope (also Li et al.'s DS2, our choice, and the
overview's).
"""

from __future__ import annotations

import numpy as np

from . import idp_kmeans
from ._parsers import minmax, numeric, read_table
from ._registry import UCI, UCI_LICENSE, UNIT_BOX_NOTE, DataFile, Dataset, locate, provenance, register, scaled

__all__ = ["NOTEBOOK", "PAPER", "MAGIC", "MAGIC_COLS"]

NOTEBOOK = "05_dp_birch"
PAPER = "Wang et al. (DPBIRCH)"


MAGIC = DataFile(
    "magic_gamma_telescope/magic04.data",
    f"{UCI}/magic/magic04.data",
    "e9314b7ebd4b4b59a3b3d65f7316663963777b16a46786877651dbbaa640b36a",
    UCI_LICENSE,
)


MAGIC_COLS = ["fLength", "fWidth", "fSize", "fConc", "fConc1", "fAsym", "fM3Long", "fM3Trans", "fAlpha", "fDist"]


# The variants ----------------------------------------------------------------------------------------


def _magic(raw_dir, scale=False, **_):
    path = locate(MAGIC, raw_dir)
    df = read_table(path, 11, names=MAGIC_COLS + ["class"])
    X = numeric(df, path, MAGIC_COLS)
    desc = f"All {len(X)} events, 10 numeric features; label: class (g = gamma, h = hadron)."
    if scale:
        X = minmax(X)
        desc = f"All {len(X)} events, 10 features min-max scaled to [0, 1] (Wang et al.); label: class (g/h)."
    unit = ((np.zeros(X.shape[1]), np.ones(X.shape[1])), UNIT_BOX_NOTE) if scale else (None, "")
    return Dataset(
        "magic",
        "minmax" if scale else "raw",
        X,
        df["class"].to_numpy(),
        MAGIC_COLS,
        "class",
        desc,
        [provenance(MAGIC, path)],
        bounds=unit[0],
        bounds_note=unit[1],
    )


# The registry ----------------------------------------------------------------------------------------

register(
    "magic",
    "UCI MAGIC Gamma Telescope",
    (MAGIC,),
    (PAPER, idp_kmeans.PAPER, "overview"),
    "Bock, UCI ML Repository, 2004",
    {"raw": (_magic, "10 numeric features"), "minmax": (scaled(_magic), "min-max scaled to [0, 1]")},
)

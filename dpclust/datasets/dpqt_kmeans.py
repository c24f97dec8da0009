"""Zhang & Cheng 2021 (DPQTk-means), notebook 03: a uniform square, Gowalla check-ins, SIPU unbalance and birch3
(D1-D4).
"""

from __future__ import annotations

import numpy as np

from dpclust_lib.validation import check_int, check_random_state

from ._parsers import DataError, numeric, read_table
from ._registry import ROUNDED_BOX_NOTE, DataFile, Dataset, locate, provenance, register

__all__ = [
    "NOTEBOOK",
    "PAPER",
    "UNBALANCE",
    "UNBALANCE_GT",
    "BIRCH3",
    "GOWALLA_SAMPLE",
    "GOWALLA_FULL",
    "make_uniform_square",
]

NOTEBOOK = "03_dpqt_kmeans"
PAPER = "Zhang & Cheng 2021 (DPQTk-means)"


SIPU_LICENSE = "no license stated upstream"
UNBALANCE = DataFile(
    "sipu_unbalance/unbalance.txt",
    "http://cs.joensuu.fi/sipu/datasets/unbalance.txt",
    "41263f3801181a68857a6361c29a6865c8b66c4c74fdee2320ebd8cce28ad438",
    SIPU_LICENSE,
    "SIPU publishes no checksum; the registered one is of a copy whose values match two "
    "independent copies (6500 rows, no final newline). Upstream bytes may differ in whitespace.",
)
UNBALANCE_GT = DataFile(
    "sipu_unbalance/derived_denmune/unbalance-gt.txt",
    "https://raw.githubusercontent.com/scikit-learn-contrib/denmune-clustering-algorithm/"
    "06928207c382b1f4a526e1fecaaaa56dc79ae35a/data/unbalance-gt.txt",
    "56000381e1c21fcf9d5a91524e4dfb23f95046c1a57d34d52fc3c0de36cceee7",
    "BSD-3-Clause (repository); data: none stated",
    "Per-point labels 1..8, most likely SIPU's unbalance-gt.pa with its header removed (a derived file).",
)
BIRCH3 = DataFile(
    "sipu_birch3/birch3.txt",
    "http://cs.joensuu.fi/sipu/datasets/birch3.txt",
    "ee8b8916d0a9a120be207f97a1c0f22bcc24d2b4d45d4e18790ddad7117e22d5",
    SIPU_LICENSE,
    "SIPU publishes no checksum; the registered one is of a copy whose values match two "
    "independent copies (100000 rows, no final newline). Upstream bytes may differ in whitespace.",
)
GOWALLA_SAMPLE = DataFile(
    "gowalla/loc-gowalla_totalCheckins.head10000.txt",
    "https://raw.githubusercontent.com/slvn-lefebvre/spark-isep-vm/"
    "37fcfde91211d0c7fbe5a149d34512de7f5cde56/datasets/loc-gowalla_totalCheckins.txt",
    "55fd6710d3eaf1065003bda7c31fd5ebc8c24fbf8de92d1994a3a4baa04ab86b",
    "SNAP: no formal license, for research use",
    "The first 10,000 lines (users 0-53) of SNAP's loc-gowalla_totalCheckins.txt, as published in a tutorial "
    "repository.",
)
GOWALLA_FULL = DataFile(
    "gowalla/loc-gowalla_totalCheckins.txt.gz",
    "https://snap.stanford.edu/data/loc-gowalla_totalCheckins.txt.gz",
    None,
    "SNAP: no formal license, for research use",
    "SNAP publishes no checksum for this file, and none has been pinned here yet.",
)


# The variants ----------------------------------------------------------------------------------------


def _unbalance(raw_dir, **_):
    path = locate(UNBALANCE, raw_dir)
    gt_path = locate(UNBALANCE_GT, raw_dir)
    X = numeric(read_table(path, 2, sep=r"\s+"), path, [0, 1])
    y = numeric(read_table(gt_path, 1, sep=r"\s+"), gt_path, [0])[:, 0].astype(np.int64)
    if y.shape[0] != X.shape[0]:
        raise DataError(f"{gt_path} has {y.shape[0]} labels but {path} has {X.shape[0]} points")
    return Dataset(
        "unbalance",
        "raw",
        X,
        y,
        ["x", "y"],
        "cluster",
        "SIPU unbalance: 6500 points in 2-D, 8 clusters (three of 2000, five of 100); label: ground-truth "
        "cluster 1-8 (derived file).",
        [provenance(UNBALANCE, path), provenance(UNBALANCE_GT, gt_path)],
        bounds=((100_000.0, 250_000.0), (600_000.0, 450_000.0)),
        bounds_note=ROUNDED_BOX_NOTE,
    )


def _birch3(raw_dir, **_):
    path = locate(BIRCH3, raw_dir)
    X = numeric(read_table(path, 2, sep=r"\s+"), path, [0, 1])
    return Dataset(
        "birch3",
        "raw",
        X,
        None,
        ["x", "y"],
        None,
        "SIPU birch3: 100000 points in 2-D, 100 clusters of random size and position; no published ground truth.",
        [provenance(BIRCH3, path)],
        bounds=((0.0, 0.0), (1_000_000.0, 1_000_000.0)),
        bounds_note=ROUNDED_BOX_NOTE,
    )


def _gowalla(raw_dir, full=False, allow_unverified=False, **_):
    datafile = GOWALLA_FULL if full else GOWALLA_SAMPLE
    path = locate(datafile, raw_dir, allow_unverified=allow_unverified)
    df = read_table(path, 5, sep="\t", names=["user", "time", "latitude", "longitude", "location"])
    X = numeric(df, path, ["longitude", "latitude"])
    what = (
        "the full SNAP file"
        if full
        else "a 10,000-line sample of the SNAP file (its first lines: users 0-53), not the full data set"
    )
    return Dataset(
        "gowalla" if full else "gowalla_sample10k",
        "lonlat",
        X,
        None,
        ["longitude", "latitude"],
        None,
        f"Gowalla check-ins, (longitude, latitude) of {len(X)} check-ins: {what}.",
        [provenance(datafile, path)],
        bounds=((-180.0, -90.0), (180.0, 90.0)),
        bounds_note="the whole globe (public)",
    )


def make_uniform_square(n_samples=10_000, low=-2.0, high=2.0, random_state=0):
    """Points uniform in (low, high)^2: the "Pytest" set of Zhang & Cheng (2021).

    Parameters
    ----------
    n_samples : int >= 1
    low, high : float, low < high
        The square's edges, declared as the data set's public bounds.
    random_state : int, Generator or None

    Returns
    -------
    Dataset

    Examples
    --------
    >>> data = make_uniform_square(1000, low=0.0, high=1.0, random_state=0)
    >>> data.X.shape, bool(((data.X >= 0) & (data.X < 1)).all()), data.bounds
    ((1000, 2), True, ((0.0, 0.0), (1.0, 1.0)))
    >>> data.description
    "Synthetic: 1000 points uniform in (0, 1)^2, seed 0 (the paper's size is not stated; ours is a choice)."
    """
    n = check_int(n_samples, "n_samples", minimum=1)
    if not float(high) > float(low):
        raise ValueError(f"high must exceed low, got low={low!r}, high={high!r}")
    rng = check_random_state(random_state)
    X = rng.uniform(low, high, size=(n, 2))
    return Dataset(
        "pytest_uniform",
        "uniform",
        X,
        None,
        ["x", "y"],
        None,
        f"Synthetic: {n} points uniform in ({low:g}, {high:g})^2, seed {random_state!r} "
        "(the paper's size is not stated; ours is a choice).",
        [
            {
                "file": None,
                "generator": "make_uniform_square",
                "n_samples": n,
                "low": low,
                "high": high,
                "random_state": random_state,
            }
        ],
        bounds=((float(low), float(low)), (float(high), float(high))),
        bounds_note="the generator's square (public)",
    )


# The registry ----------------------------------------------------------------------------------------

register(
    "unbalance",
    "SIPU unbalance",
    (UNBALANCE, UNBALANCE_GT),
    (PAPER, "overview"),
    "Rezaei & Franti, IEEE TKDE 28(8), 2016",
    {"raw": (_unbalance, "6500 x 2 with ground truth")},
)
register(
    "birch3",
    "SIPU birch3",
    (BIRCH3,),
    (PAPER, "overview"),
    "Zhang, Ramakrishnan & Livny, DMKD 1(2), 1997",
    {"raw": (_birch3, "100000 x 2, no ground truth")},
)
register(
    "gowalla_sample10k",
    "Gowalla check-ins, 10,000-line sample",
    (GOWALLA_SAMPLE,),
    (PAPER,),
    "Cho, Myers & Leskovec, KDD 2011",
    {"lonlat": (_gowalla, "(longitude, latitude)")},
    "lonlat",
)
register(
    "gowalla",
    "Gowalla check-ins, full SNAP file",
    (GOWALLA_FULL,),
    (PAPER,),
    "Cho, Myers & Leskovec, KDD 2011",
    {"lonlat": (lambda raw_dir, **kw: _gowalla(raw_dir, full=True, **kw), "(longitude, latitude)")},
    "lonlat",
)
register(
    "pytest_uniform",
    'Synthetic uniform square ("Pytest")',
    (),
    (PAPER,),
    "Zhang & Cheng 2021",
    {"uniform": (lambda raw_dir, **kw: make_uniform_square(**kw), "n points uniform in (-2, 2)^2")},
    "uniform",
)

"""The nearest-centre assignment (the step every Lloyd iteration and every ``predict`` repeats) against
scikit-learn's compiled one, ``KMeans.predict`` (Cython over BLAS), at the shapes the papers use.

Both run on one thread (threadpoolctl) and are timed by CPU time, so the comparison is of the work, not of the
cores or of the machine's other load. The centres are
records of the data set (k-means++'s start), so exact ties occur on integer data (birch3). Target: at most
scikit-learn's time.
"""

import time

import numpy as np
from run import best_of
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits

from dpclust_lib._distances import nearest

CPU = time.process_time

# (what, records, dimensions, K): every K the papers' numeric experiments use, at their data's sizes (DPBIRCH's
# K = 2..5 on MAGIC cut its own tree instead); the last two shapes are no paper's (no target), for the record.
SHAPES = [
    ("D1/D2 of Zhang & Cheng (uniform, Gowalla sample)", 10_000, 2, 5),
    ("Unbalance (Zhang & Cheng D3; the overview)", 6_500, 2, 8),
    ("birch3 (Zhang & Cheng D4; the overview)", 100_000, 2, 100),
    ("MAGIC (Li et al. DS2; the overview)", 19_020, 10, 2),
    ("Iris (Li et al. DS1)", 150, 4, 3),
    ("Wine (Li et al. DS1 candidate)", 178, 13, 3),
    ("Abalone (Li et al. DS1 candidate)", 4_177, 7, 3),
    ("no paper's: MAGIC at K = 5", 19_020, 10, 5),
    ("no paper's: 10^5 records in 2-D, K = 10", 100_000, 2, 10),
]
PAPERS = len(SHAPES) - 2  # the shapes with a target


def _sklearn_predictor(centres):
    """A fitted scikit-learn KMeans whose centres are ``centres`` (its predict is the compiled assignment)."""
    model = KMeans(n_clusters=len(centres), init=centres, n_init=1, max_iter=1).fit(centres)
    model.cluster_centers_ = centres
    return model


def bench_assignment_vs_sklearn(n=None):
    """Labels of every record for every shape; ``n`` caps the records."""
    rng = np.random.default_rng(0)
    rows = []
    for i, (what, size, d, k) in enumerate(SHAPES):
        size = size if n is None else min(size, n)
        k = min(k, size)
        X = np.floor(rng.random((size, d)) * 1e6)  # integer coordinates, as birch3's
        centres = X[rng.choice(size, k, replace=False)]
        with threadpool_limits(1):
            model = _sklearn_predictor(centres)  # fitted on one thread, so that its predict runs on one
            ours = best_of(lambda: nearest(X, centres, "sqeuclidean", return_distance=False), 15, 0.5, CPU)
            reference = best_of(lambda: model.predict(X), 15, 0.5, CPU)
        same = bool(np.array_equal(nearest(X, centres, "sqeuclidean")[0], model.predict(X)))
        rows.append(
            {
                "benchmark": "nearest centre",
                "case": f"{what}: n={size:,}, d={d}, K={k}",
                "seconds": ours,
                "target_seconds": reference if i < PAPERS else None,
                "reference_seconds": reference,
                "note": "reference: sklearn KMeans.predict on the same centres, one thread each; "
                + ("same labels" if same else "labels differ (ties broken by rounding)"),
            }
        )
    return rows

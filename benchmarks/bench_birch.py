"""BIRCH on MAGIC (19,020 x 10, min-max scaled): our CF tree against scikit-learn's, same parameters.

Both build the tree one record at a time in Python and then run the same global step, so the
target is parity: at most twice scikit-learn's time.
"""

import warnings

from run import best_of
from sklearn.cluster import Birch as SkBirch

from dpclust import datasets
from dpclust_lib import Birch

CASES = [(0.5, 50, 2), (0.2, 50, 2), (0.1, 50, 2), (0.3, 5, 2)]  # (threshold, branching factor, K)


def bench_birch_magic():
    X = datasets.load("magic", "minmax").X
    rows = []
    for threshold, branching_factor, k in CASES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = Birch(k, threshold=threshold, branching_factor=branching_factor)
            ours = best_of(lambda: est.fit(X), repeat=3)
            ref = best_of(
                lambda: SkBirch(threshold=threshold, branching_factor=branching_factor, n_clusters=k).fit(X), repeat=3
            )
        rows.append(
            {
                "benchmark": "Birch fit on MAGIC",
                "case": f"T={threshold}, B={branching_factor}, K={k}",
                "seconds": ours,
                "target_seconds": 2 * ref,
                "reference_seconds": ref,
                "note": f"{est.n_subclusters_} leaf subclusters; reference: sklearn.cluster.Birch, "
                "target: 2x reference",
            }
        )
    return rows

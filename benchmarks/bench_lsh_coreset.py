"""LSHCoresetKMeans (notebook 06) on its synthetic data (100,000 x 100) against one k-means++ fit of scikit-learn.

The paper's point is that a private coreset makes k-means cheap: the tree, its noisy counts and sums, then k-means
on a few hundred weighted points. The target is one non-private fit, ``KMeans(n_init=1)`` (k-means++ and Lloyd to
convergence), on the same records. CPU time, one thread each (the notebooks' kernels run on one).
"""

import time

import numpy as np
from run import best_of
from sklearn.cluster import KMeans as SkKMeans
from threadpoolctl import threadpool_limits

from dpclust import datasets
from dpclust_lib import LSHCoresetKMeans

N = 100_000  # the notebook's synthetic set at the paper's size


def bench_lsh_coreset_vs_kmeanspp(n=None):
    """One row per K; ``n`` sets the records (None: the paper's 100,000)."""
    X = datasets.load("lsh_synthetic", n_samples=N if n is None else n, random_state=0).X
    radius = float(np.linalg.norm(X, axis=1).max())
    rows = []
    with threadpool_limits(1):
        for k in (16, 64):
            est = LSHCoresetKMeans(k, epsilon=1.0, delta=1e-6, radius=radius, random_state=0)
            ours = best_of(lambda: est.fit(X), repeat=3, clock=time.process_time)
            ref = best_of(lambda: SkKMeans(k, n_init=1, random_state=0).fit(X), repeat=3, clock=time.process_time)
            rows.append(
                {
                    "benchmark": "LSHCoresetKMeans.fit",
                    "case": f"synthetic {len(X):,} x {X.shape[1]}, K={k}, eps=1, delta=1e-6",
                    "seconds": ours,
                    "target_seconds": ref,
                    "reference_seconds": ref,
                    "note": f"{len(est.coreset_)} coreset points; reference and target: sklearn KMeans(n_init=1), "
                    "one thread, CPU time",
                }
            )
    return rows

"""DP k-means on birch3 (100,000 x 2, K = 100): DPKMeans against scikit-learn's KMeans, and DPQTKMeans."""

from run import best_of, cap, not_run
from sklearn.cluster import KMeans as SkKMeans

from dpclust import datasets
from dpclust_lib import DPKMeans, DPQTKMeans

BOUNDS = ((0.0, 0.0), (1e6, 1e6))  # a declared domain around birch3 (its points lie in [0, 10^6]^2)
K = 100


def _birch3(n):
    try:
        return cap(datasets.load("birch3").X, n)
    except datasets.DataError:
        return None


def bench_dpkmeans_vs_sklearn(n=None):
    """DPKMeans against sklearn's Lloyd at 5 and 10 iterations; ``n`` caps the records (None: all of birch3)."""
    X = _birch3(n)
    if X is None:
        return not_run("DPKMeans.fit", "birch3", "birch3 not available")
    rows = []
    for T in (5, 10):
        dp = DPKMeans(K, epsilon=1.0, max_iter=T, schedule="fixed", bounds=BOUNDS, random_state=0)
        ours = best_of(lambda: dp.fit(X), repeat=3)
        start = dp.fit(X).initial_centers_
        # The same number of Lloyd iterations: tol=0 and max_iter=T (sklearn stops earlier only on convergence).
        sk = SkKMeans(K, init=start, n_init=1, max_iter=T, tol=0.0, algorithm="lloyd")
        ref = best_of(lambda: sk.fit(X), repeat=3)
        rows.append(
            {
                "benchmark": "DPKMeans.fit",
                "case": f"birch3 (n={len(X):,}), K={K}, {T} iterations",
                "seconds": ours,
                "target_seconds": 2 * ref,
                "reference_seconds": ref,
                "note": f"reference: sklearn KMeans(n_init=1, max_iter={T}, algorithm='lloyd') from the same "
                f"start ({sk.n_iter_} iterations run); target: 2x the reference",
            }
        )
    return rows


def bench_dpqt_birch3(n=None):
    """DPQTKMeans at eps = 0.1 and 1; ``n`` caps the records (None: all of birch3)."""
    X = _birch3(n)
    if X is None:
        return not_run("DPQTKMeans.fit", "birch3", "birch3 not available", target_seconds=0.5)
    rows = []
    for eps in (0.1, 1.0):
        est = DPQTKMeans(K, epsilon=eps, bounds=BOUNDS, n_public=X.shape[0], random_state=0)
        seconds = best_of(lambda: est.fit(X), repeat=3)
        rows.append(
            {
                "benchmark": "DPQTKMeans.fit",
                "case": f"birch3 (n={len(X):,}), K={K}, eps={eps:g}",
                "seconds": seconds,
                "target_seconds": 0.5,
                "reference_seconds": None,
                "note": f"{est.tree_.leaves.size} leaves, {est.n_iter_} Lloyd updates on the buckets",
            }
        )
    return rows

"""DPKMeans against diffprivlib's KMeans at the same epsilon and number of iterations, and what
diffprivlib's KMeans really spends.

diffprivlib (IBM) 0.6.6 imports two constants that recent scikit-learn no longer exports from
``sklearn.tree._tree``; its KMeans does not use them, so they are defined before the import.

Budget check: every noise mechanism diffprivlib's KMeans creates is recorded (its epsilon), and
the total is compared with the epsilon asked for. ``KMeans._split_epsilon`` returns
``(eps_i, eps_0)`` (per coordinate of the sum, for the count) while ``_update_centers`` unpacks
``epsilon_0, epsilon_i``: the count gets the per-coordinate share and every coordinate the count's.
One iteration then spends eps/T * (1 + d c) / (d + c) with c = (4 d rho^2)^(1/3), rho = 0.225:
less than eps/T for d <= 4, more from d = 5 on (c > 1 exactly when d > 1 / (4 rho^2) = 4.94).
"""

import time

import numpy as np
from run import best_of, cap, not_run

from dpclust import datasets
from dpclust_lib import DPKMeans

REQUIRES = ("diffprivlib",)
N_BUDGET = 2000  # records of the uniform data on which the budget is checked


def _import_diffprivlib():
    import sklearn.tree._tree as tree

    for name, value in (("DOUBLE", np.float64), ("DTYPE", np.float32)):
        if not hasattr(tree, name):
            setattr(tree, name, value)
    import diffprivlib.models.k_means as dp_kmeans

    return dp_kmeans


def _spent_by_diffprivlib(dp_kmeans, X, k, epsilon, bounds, seed=0):
    """Fit diffprivlib's KMeans recording the epsilon of every mechanism it creates.

    In one iteration every cluster gets one count mechanism and d sum mechanisms with the same
    epsilons; the clusters are disjoint (parallel composition), so an iteration spends
    eps_count + d * eps_sum, and the fit spends that times the iterations.
    """
    recorded = {"GeometricFolded": set(), "LaplaceBoundedDomain": set()}
    originals = {name: getattr(dp_kmeans, name) for name in recorded}

    def recording(name):
        def make(*args, **kwargs):
            recorded[name].add(round(kwargs["epsilon"], 15))
            return originals[name](*args, **kwargs)

        return make

    try:
        for name in recorded:
            setattr(dp_kmeans, name, recording(name))
        model = dp_kmeans.KMeans(n_clusters=k, epsilon=epsilon, bounds=bounds, random_state=seed).fit(X)
    finally:
        for name, cls in originals.items():
            setattr(dp_kmeans, name, cls)
    (eps_count,), (eps_sum,) = recorded["GeometricFolded"], recorded["LaplaceBoundedDomain"]
    return model.n_iter_, model.n_iter_ * (eps_count + X.shape[1] * eps_sum)


def bench_diffprivlib(n=None):
    """DPKMeans against diffprivlib on MAGIC, then diffprivlib's budget; ``n`` caps the records (None: all)."""
    try:
        dp_kmeans = _import_diffprivlib()
    except ImportError as exc:
        return not_run("diffprivlib KMeans", "-", f"diffprivlib not importable ({exc})")
    return _against_diffprivlib(dp_kmeans, n) + _budget_rows(dp_kmeans, N_BUDGET if n is None else min(n, N_BUDGET))


def _against_diffprivlib(dp_kmeans, n):
    try:
        X = cap(datasets.load("magic", "minmax").X, n)
    except datasets.DataError as exc:
        return not_run("DPKMeans vs diffprivlib KMeans", "MAGIC", exc)
    rows = []
    d = X.shape[1]
    for k, eps in ((2, 1.0), (5, 1.0)):
        model = dp_kmeans.KMeans(n_clusters=k, epsilon=eps, bounds=(np.zeros(d), np.ones(d)), random_state=0)
        ref = best_of(lambda: model.fit(X), repeat=3)
        iters = model.n_iter_
        ours = DPKMeans(
            k, epsilon=eps, max_iter=iters, schedule="fixed", bounds=(np.zeros(d), np.ones(d)), random_state=0
        )
        seconds = best_of(lambda: ours.fit(X), repeat=3)
        rows.append(
            {
                "benchmark": "DPKMeans vs diffprivlib KMeans",
                "case": f"MAGIC (n={len(X):,}, d={d}), K={k}, eps={eps:g}",
                "seconds": seconds,
                "target_seconds": None,
                "reference_seconds": ref,
                "note": f"same eps, {iters} iterations each (diffprivlib chooses {iters}); ours ran {ours.n_iter_}",
            }
        )
    return rows


def _budget_rows(dp_kmeans, n):
    # seconds: the one recorded fit of diffprivlib (the row is about its budget, not its speed).
    rows = []
    rng = np.random.default_rng(0)
    for dims in (2, 4, 5, 10):
        Xs = rng.random((n, dims))
        start = time.perf_counter()
        iters, total = _spent_by_diffprivlib(dp_kmeans, Xs, 3, 1.0, (np.zeros(dims), np.ones(dims)))
        seconds = time.perf_counter() - start
        c = np.cbrt(4 * dims * 0.225**2)
        rows.append(
            {
                "benchmark": "diffprivlib KMeans budget",
                "case": f"n={n:,}, d={dims}, eps=1",
                "seconds": seconds,
                "target_seconds": None,
                "reference_seconds": None,
                "note": f"mechanisms' epsilon add up to {total:.4f} over {iters} iterations "
                f"(formula (1+dc)/(d+c) = {(1 + dims * c) / (dims + c):.4f}); "
                + ("OVER budget" if total > 1 + 1e-9 else "within budget"),
            }
        )
    return rows

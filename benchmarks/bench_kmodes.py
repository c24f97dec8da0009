"""k-modes on LDPK-modes' synthetic data: weighted unique records against materialised rows.

Ours: ``KModes`` on the synthetic data as Alg. 3 leaves it in this library
(distinct records with their counts). Reference: ``kmodes.kmodes.KModes`` (the
``kmodes`` package) on the same synthetic data materialised into rows, as the
text's Alg. 3 builds it. Both start from the same initial centres (Alg. 4's
frequent-value centres) and make the same number of assignment passes: ours
T = 5 update steps; the package makes one initial assignment-and-update pass
and then ``max_iter`` passes, so it gets ``max_iter = 4``. The package moves
points one at a time (Huang's online update), so its centres can differ.
"""

import warnings

import numpy as np
from run import best_of, cap

from dpclust import datasets
from dpclust_lib import KModes, LDPKModes

REQUIRES = ("kmodes",)
T = 5
N_GENERATED = 100_000  # users of the Covertype-shaped generated case


def _synthetic(X, sizes, n_clusters, epsilon=1.0, seed=0):
    est = LDPKModes(
        n_clusters, epsilon=epsilon, budget="per_attribute", max_iter=T, domain_sizes=sizes, random_state=seed
    ).fit(X)
    syn = est.synthetic_data_
    records = syn.iloc[:, :-1].to_numpy()
    weights = syn.iloc[:, -1].to_numpy()
    return records, weights, est.initial_centers_


def _cases(n):
    for name, K in [("car", 4), ("nursery", 5)]:
        try:
            d = datasets.load(name, "ldpk_modes")
        except datasets.DataError:
            continue
        X = cap(d.X, n)
        yield f"{name} (D{2 if name == 'car' else 3}), n={len(X)}", X, d.domain_sizes, K
    # Covertype-shaped: its file is not always present; 100,000 users over the {4,7} domain of D4.
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.full(28, 0.5))
    users = N_GENERATED if n is None else min(n, N_GENERATED)
    cells = rng.choice(28, size=users, p=p)
    X = np.column_stack(np.unravel_index(cells, (4, 7)))
    yield f"D4-shaped {{4,7}}, generated, n={users:,}", X, (4, 7), 7


def bench_kmodes_on_synthetic_data(n=None):
    """One row per data set (Car, Nursery, a generated one); ``n`` caps the users of each (None: all)."""
    from kmodes.kmodes import KModes as PackageKModes

    rows_out = []
    for case, X, sizes, K in _cases(n):
        records, weights, init = _synthetic(X, sizes, K)
        rows = np.repeat(records, weights.astype(np.int64), axis=0)

        def ours():
            return KModes(K, init=init, max_iter=T, domain_sizes=sizes).fit(records, sample_weight=weights)

        def package():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return PackageKModes(K, init=init, n_init=1, max_iter=T - 1).fit(rows)

        seconds = best_of(ours, repeat=5)
        reference = best_of(package, repeat=1, min_seconds=0)
        same = np.array_equal(np.sort(ours().cluster_centers_, axis=0), np.sort(package().cluster_centroids_, axis=0))
        rows_out.append(
            {
                "benchmark": "k-modes on synthetic data",
                "case": case,
                "seconds": seconds,
                "target_seconds": None,
                "reference_seconds": reference,
                "note": f"ours: {len(records)} weighted records; reference: kmodes package on {len(rows):,} rows; "
                f"{T} assignment passes each; same centres: {same}",
            }
        )
    return rows_out

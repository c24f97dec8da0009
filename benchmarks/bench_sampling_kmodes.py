"""One round of the attribute-sampling LDP k-modes protocol (Zhang et al. 2022) over Adult's 30,162 users."""

import warnings

import numpy as np
from run import best_of, cap, not_run

from dpclust import datasets
from dpclust_lib.cluster.sampling_kmodes import server_update, user_reports

TARGET_SECONDS = 0.050


def bench_sampling_kmodes_round(n=None):
    """One round with the index in the clear and through GRR; ``n`` caps the users (None: all of Adult)."""
    try:
        adult = datasets.load("adult", "ldp_kmodes_sampling")
    except datasets.DataError as exc:
        return not_run("sampling LDP k-modes round", "Adult", exc)
    X, sizes = cap(adult.X, n), adult.domain_sizes
    centres = np.array([[2, 11, 2, 0, 4, 1], [2, 15, 4, 3, 4, 0], [2, 11, 0, 1, 4, 0]])  # three k-modes centres
    rng = np.random.default_rng(0)
    rows = []
    for case, index_eps in [("index in the clear", None), ("index through GRR", 0.5)]:

        def one_round():
            reports = user_reports(X, centres, sizes, 1.0, index_eps, rng)
            return server_update(reports, centres, sizes, 1.0, index_eps)

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            seconds = best_of(one_round, repeat=10)
        rows.append(
            {
                "benchmark": "sampling LDP k-modes round",
                "case": f"Adult, {len(X):,} users, K=3, {case}",
                "seconds": seconds,
                "target_seconds": TARGET_SECONDS,
                "reference_seconds": None,
                "note": "user side for every user (nearest centre, sampled attribute, OUE bits) + server "
                "side (bit sums, Eq. 9, argmax)",
            }
        )
    return rows

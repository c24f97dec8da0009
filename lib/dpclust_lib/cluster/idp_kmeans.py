"""IDP k-means: DP k-means with improved initial centres.

Li Y., Hao Z., Wen W., Xie G. *Research on differential privacy preserving
k-means clustering.* Computer Science (计算机科学), 2013, Sec. 4.2: the records
are split into K parts, the noisy centroid of each part is an initial centre,
then SuLQ DP k-means (:class:`~dpclust_lib.cluster.kmeans.DPKMeans`) iterates.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..mechanisms import laplace_scale
from ..validation import (
    PrivacyLeakWarning,
    check_choice,
    check_random_state,
)
from .kmeans import (
    DPLloyd,
    budget_shares,
    noisy_centres,
    sum_count_sensitivity,
)

__all__ = ["IDPKMeans"]


class IDPKMeans(DPLloyd):
    """IDP k-means (Li et al. 2013, Sec. 4.2): noisy centroids of K parts as initial centres.

    The records are split into K parts, and the noisy centroid of each part
    (noisy sum / noisy count, one SuLQ release with sensitivity d + 1, see
    :func:`noisy_centres`) is an initial centre. DP k-means iterations follow.

    Budget: the initial step is the first of the ``max_iter`` releases of the
    schedule (epsilon / N with "fixed", epsilon / 2 with "halving"), and
    ``max_iter - 1`` Lloyd iterations take the rest. So IDP k-means and
    :class:`DPKMeans` with the same ``max_iter`` add the same noise per release
    and spend the same epsilon, as the paper's argument has it ("the noise
    added and epsilon unchanged"); ``ledger_`` lists the initial release first.

    The split ("random", default): each record goes to one of the K parts
    independently and uniformly at random, so the parts are equal in
    expectation (n/K records each, give or take sqrt(n/K)), and adding or
    removing one record changes one part only: sensitivity d + 1, as in the
    paper. ("order"): K contiguous equal parts in the order of the rows, the
    literal reading of "split into K equal parts". Then inserting one record
    moves up to K - 1 boundary records between parts, so the initial release
    has sensitivity up to (2K - 1)(d + 1), not d + 1, and the result depends on
    how the file is sorted; it warns with PrivacyLeakWarning and
    ``epsilon_guaranteed_`` is inf.

    Parameters
    ----------
    n_clusters, epsilon, max_iter, schedule, random_state, bounds : as :class:`DPKMeans`;
        ``max_iter`` counts the initial release (>= 1; 1 = the initial step only)
    split : "random" (default) or "order"

    Attributes
    ----------
    as :class:`DPKMeans`; ``n_iter_`` = ``max_iter - 1`` Lloyd iterations after the
    initial step. The true part sizes are exact data: ``exact_diagnostics(X).part_sizes``
    (NOT private; replayed from an int ``random_state``, or with split="order").
    """

    def __init__(
        self, n_clusters=8, *, epsilon=1.0, max_iter=5, schedule="fixed", random_state=None, bounds=None, split="random"
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.schedule = schedule
        self.random_state = random_state
        self.bounds = bounds
        self.split = split

    def _start(self, X, k, lower, upper, eps, rng, ledger):
        check_choice(self.split, "split", {"random", "order"})
        n, d = X.shape
        shares = budget_shares(self.schedule, eps, self.max_iter)
        if self.split == "order":
            warnings.warn(
                "split='order' cuts the rows into K contiguous parts: one added record can move K - 1 "
                "others between parts (sensitivity up to (2K-1)(d+1), not d+1), so epsilon does not "
                "cover it (epsilon_guaranteed_ = inf), and the parts depend on how the file is sorted. "
                "split='random' is exact.",
                PrivacyLeakWarning,
                stacklevel=4,
            )
        parts = _split_parts(self.split, n, k, rng)
        fallback = rng.uniform(lower, upper, size=(k, d))  # for a part whose noisy count is below 1
        sensitivity = sum_count_sensitivity(X.shape[1])
        ledger.spend(
            shares[0],
            f"initial centres: noisy sum and count of each of {k} parts, L1 sensitivity "
            f"{sensitivity:g}, Laplace scale {laplace_scale(sensitivity, shares[0]):.4g}",
        )
        centres = noisy_centres(X, parts, k, lower, upper, shares[0], fallback, rng)
        self.initial_noise_scale_ = laplace_scale(sensitivity, shares[0])
        return centres, shares[1:], self.split == "order"

    def _exact_extra(self, X):
        # The parts are replayed: the split is the first draw of the fit's generator.
        k = self.cluster_centers_.shape[0]
        if self.split == "order" or isinstance(self.random_state, (int, np.integer)):
            rng = check_random_state(self.random_state)
            return {"part_sizes": np.bincount(_split_parts(self.split, X.shape[0], k, rng), minlength=k)}
        return {"part_sizes": None}  # a Generator or None cannot be replayed


def _split_parts(split, n, k, rng):
    """The part of each of n records: uniform at random ("random") or K contiguous blocks ("order")."""
    if split == "random":
        return rng.integers(0, k, size=n)
    return (np.arange(n) * k) // n

"""DPk-means++: k-means++ seeding on a noisy grid histogram, then DP Lloyd steps.

The baseline "DPk-means++" of Zhang & Cheng (2021), after Hu et al., whose
budget split and seeding details are not published; this is our reading.
"""

from __future__ import annotations

import numpy as np

from ..mechanisms import laplace_mechanism, laplace_scale
from ..validation import (
    check_fraction,
)
from ._numeric import (
    resolve_n,
)
from .eug_kmeans import eug_grid_size
from .kmeans import (
    DPLloyd,
    budget_shares,
    grid_histogram,
    kmeans_plusplus,
)

__all__ = ["DPKMeansPP"]


class DPKMeansPP(DPLloyd):
    """k-means++ seeding on a noisy grid histogram, then DP Lloyd iterations.

    Zhang & Cheng (2021) compare with "DPk-means++" (Hu et al.), whose budget
    split and seeding details are not published. Our reading: k-means++ needs
    records drawn with probability proportional to their squared distance to
    the centres so far, and drawing private records that way is not
    differentially private. So the seeding runs on a synopsis instead: a
    ``seeding_share`` of epsilon (default 1/2) buys an equal-width grid
    histogram with Laplace noise (sensitivity 1; the grid sized by
    :func:`eug_grid_size` for that budget), and k-means++ draws the K initial
    centres among the cell centres, weighted by the noisy counts (negatives
    as 0). That is post-processing of an epsilon_seed-DP release. The rest of
    epsilon goes to ``max_iter`` SuLQ iterations under ``schedule``.

    Parameters
    ----------
    n_clusters, epsilon, max_iter, schedule, random_state, bounds : as :class:`DPKMeans`
    seeding_share : float in (0, 1), the part of epsilon spent on the seeding histogram
    n_public : int or "data", required: the public record count that sizes the grid
        ("data": the true N, not private: PrivacyLeakWarning, epsilon_guaranteed_ = inf)

    Attributes
    ----------
    as :class:`DPKMeans`, plus ``grid_size_`` (cells per dimension).
    """

    def __init__(
        self,
        n_clusters=8,
        *,
        epsilon=1.0,
        max_iter=5,
        schedule="fixed",
        random_state=None,
        bounds=None,
        seeding_share=0.5,
        n_public=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.schedule = schedule
        self.random_state = random_state
        self.bounds = bounds
        self.seeding_share = seeding_share
        self.n_public = n_public

    def _start(self, X, k, lower, upper, eps, rng, ledger):
        share = check_fraction(self.seeding_share, "seeding_share")
        eps_seed = share * eps
        n, leaky = resolve_n(self.n_public, X)
        m = eug_grid_size(n, eps_seed, X.shape[1])
        cells, counts = grid_histogram(X, lower, upper, m)
        ledger.spend(
            eps_seed,
            f"seeding: grid histogram of {m}^{X.shape[1]} cells, L1 sensitivity 1, "
            f"Laplace scale {laplace_scale(1.0, eps_seed):.4g}",
        )
        noisy = laplace_mechanism(counts, 1.0, eps_seed, rng)
        self.grid_size_ = m
        centres = kmeans_plusplus(cells, k, rng, np.maximum(noisy, 0.0))
        return centres, budget_shares(self.schedule, eps - eps_seed, self.max_iter), leaky

"""EUGk-means: a noisy equal-width grid histogram, then weighted k-means on the cells.

Su D., Cao J., Li N., Bertino E., Jin H. *Differentially private k-means
clustering.* CODASPY 2016; and *Differentially private k-means clustering and
a hybrid approach to private optimization*, ACM TOPS 20(4), 2017. The grid
size is their Eq. (m = (N epsilon / theta)^(2 / (d + 2)), theta = 10).
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ..accounting import PrivacyLedger
from ..mechanisms import laplace_mechanism
from ..validation import (
    check_epsilon,
    check_int,
    check_n_clusters,
    check_random_state,
)
from ._numeric import (
    PrivateCentroidMixin,
    numeric_input,
    record_privacy,
    resolve_bounds,
    resolve_n,
)
from .kmeans import (
    fit_buckets,
    grid_histogram,
    kmeans_plusplus,
)

__all__ = ["EUGKMeans", "eug_grid_size"]


def eug_grid_size(n, epsilon, n_features, theta=10.0):
    """Cells per dimension of Su et al.'s grid: m = (N epsilon / theta)^(2 / (d + 2)), rounded, at least 1.

    The grid then has M = m^d ~ (N epsilon / theta)^(2d / (d + 2)) cells
    (theta = 10 in Su et al.). Rounding to the nearest integer is our choice.
    """
    n = check_int(n, "n", minimum=1)
    eps = check_epsilon(epsilon)
    d = check_int(n_features, "n_features", minimum=1)
    return max(1, int(math.floor((n * eps / theta) ** (2.0 / (d + 2)) + 0.5)))


class EUGKMeans(PrivateCentroidMixin, ClusterMixin, BaseEstimator):
    """EUGk-means (Su et al. 2016/2017): a noisy equal-width grid, then weighted k-means.

    The domain is cut into m cells per dimension with
    m = (N epsilon / 10)^(2 / (d + 2)) (:func:`eug_grid_size`). All of epsilon
    goes to the cell counts: count + Lap(1 / epsilon) for every cell (adding or
    removing a record changes one count by 1). Weighted k-means then runs on
    the cell centres with the noisy counts as weights (negatives as 0), seeded
    by k-means++; that is post-processing.

    N itself depends on the data. Su et al. treat it as public; here it is the
    required ``n_public`` ("data" uses the true N: PrivacyLeakWarning,
    ``epsilon_guaranteed_ = inf``). ``grid_size`` overrides the formula (then N
    is not needed).

    Parameters
    ----------
    n_clusters : int >= 1
    epsilon : float > 0
    max_iter : int >= 1, Lloyd updates on the grid (post-processing)
    random_state : None, int or Generator
    bounds : (lower, upper) or "data", required; as :class:`DPKMeans`
    n_public : int or "data"; required unless ``grid_size`` is given
    grid_size : int >= 1 or None, cells per dimension

    Attributes
    ----------
    cluster_centers_, n_iter_, ledger_, grid_size_, bucket_centers_,
    bucket_counts_ (noisy), bounds_, n_features_in_, epsilon_spent_,
    epsilon_guaranteed_, neighbouring_ (add/remove one record; replace-one
    costs up to 2 epsilon). No labels_: use predict, or exact_diagnostics(X) (NOT private).
    """

    def __init__(
        self, n_clusters=8, *, epsilon=1.0, max_iter=300, random_state=None, bounds=None, n_public=None, grid_size=None
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.random_state = random_state
        self.bounds = bounds
        self.n_public = n_public
        self.grid_size = grid_size

    def fit(self, X, y=None):
        eps = check_epsilon(self.epsilon)
        max_iter = check_int(self.max_iter, "max_iter", minimum=1)
        X = numeric_input(self, X)
        lower, upper, leaky = resolve_bounds(self.bounds, X)
        k = check_n_clusters(self.n_clusters, X.shape[0])
        if self.grid_size is not None:
            m = check_int(self.grid_size, "grid_size", minimum=1)
        else:
            n, leaky_n = resolve_n(self.n_public, X, "to size the grid; or give grid_size")
            leaky = leaky or leaky_n
            m = eug_grid_size(n, eps, X.shape[1])
        rng = check_random_state(self.random_state)
        ledger = PrivacyLedger(eps)
        cells, counts = grid_histogram(X, lower, upper, m)
        ledger.spend(eps, f"grid histogram of {m}^{X.shape[1]} cells, L1 sensitivity 1, Laplace scale {1 / eps:.4g}")
        noisy = laplace_mechanism(counts, 1.0, eps, rng)
        self.cluster_centers_, self.n_iter_ = fit_buckets(
            cells, noisy, kmeans_plusplus(cells, k, rng, np.maximum(noisy, 0.0)), max_iter
        )
        self.bucket_centers_, self.bucket_counts_ = cells, noisy
        self.grid_size_ = m
        self.ledger_ = ledger
        self.bounds_ = (lower, upper)
        record_privacy(self, ledger.spent, leaky)
        return self

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
from ..noise import NOISE_KINDS
from ..validation import (
    Choice,
    Epsilon,
    Int,
    NClusters,
    Optional,
    PublicInput,
    RandomState,
    check_epsilon,
    check_int,
    check_random_state,
    validate_params,
)
from ._base import ACCOUNTANT, charge_accountant, resolve_noise
from ._numeric import (
    BOUNDS_WHAT,
    PrivateCentroidMixin,
    check_n_clusters_public,
    n_public_what,
    private_records,
    record_privacy,
    resolve_n,
)
from .kmeans import (
    GRID_CELL_LIMIT,
    fit_buckets,
    grid_histogram,
    kmeans_plusplus,
)

__all__ = ["EUGKMeans", "eug_grid_size"]

NEEDED_FOR = "to size the grid; or give grid_size"


def eug_grid_size(n, epsilon, n_features, theta=10.0):
    """Cells per dimension of Su et al.'s grid: m = (N epsilon / theta)^(2 / (d + 2)), rounded, at least 1.

    The grid then has M = m^d ~ (N epsilon / theta)^(2d / (d + 2)) cells
    (theta = 10 in Su et al.). Rounding to the nearest integer is our choice.

    Parameters
    ----------
    n : int
        N, the (public) number of records (>= 1).
    epsilon : float
        The budget of the histogram (> 0).
    n_features : int
        d (>= 1).
    theta : float, default=10.0
        Su et al.'s constant.

    Returns
    -------
    int
        m, the cells per dimension (>= 1).

    Examples
    --------
    >>> eug_grid_size(10_000, 1.0, 2)
    32
    >>> eug_grid_size(100, 0.1, 5)
    1
    """
    n = check_int(n, "n", minimum=1)
    eps = check_epsilon(epsilon)
    d = check_int(n_features, "n_features", minimum=1)
    return max(1, int(math.floor((n * eps / theta) ** (2.0 / (d + 2)) + 0.5)))


def check_grid_cells(m, n_features, source):
    """Refuse a grid of m^d cells past GRID_CELL_LIMIT, naming the parameters it came from (``source``)."""
    if m**n_features > GRID_CELL_LIMIT:
        raise ValueError(
            f"{source} give {m} cells per dimension, {m**n_features:,} cells in {n_features} dimensions: more than "
            f"the {GRID_CELL_LIMIT:,} a dense noisy histogram is built for"
        )
    return m


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

    Privacy: epsilon-DP under add/remove-one neighbours (``neighbouring_``;
    replacing a record costs up to 2 epsilon). K is checked against the
    declared ``n_public`` only, never against the private number of records;
    an empty X, of shape (0, d), releases noise alone.

    Parameters
    ----------
    n_clusters : int, default=8
        K, the number of clusters (>= 1, at most ``n_public`` when that is an int). It is never
        compared with the true number of records, which is private under add/remove-one neighbours.
    epsilon : float, default=1.0
        The total privacy budget (> 0).
    max_iter : int, default=300
        The most Lloyd updates on the grid (>= 1; post-processing).
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None
        The randomness of the noise and of the draws; an int gives the same release every time.
    bounds : (lower, upper) or "data", required
        The public data domain (scalars or length-d arrays). "data" reads it
        off the records: not private (PrivacyLeakWarning, epsilon_guaranteed_ = inf).
    n_public : int or "data", default=None
        The public record count that sizes the grid; required unless ``grid_size`` is given.
    grid_size : int or None, default=None
        Cells per dimension (>= 1); None: :func:`eug_grid_size` of n_public.
    noise : {"exact", "float"}, default="exact"
        The Laplace noise drawn: exact discrete Laplace on a grid, or textbook
        floating-point Laplace (leaks through its low bits: PrivacyLeakWarning,
        epsilon_guaranteed_ = inf).

    accountant : BudgetAccountant or None, default=None
        A budget shared with other fits (:class:`~dpclust_lib.accounting.BudgetAccountant`): charged this fit's
        whole guarantee before any record is read; a fit that would pass its budget is refused.
    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The centres fitted to the noisy grid.
    n_iter_ : int
        Lloyd updates run on the grid.
    grid_size_ : int
        Cells per dimension.
    bucket_centers_ : ndarray of shape (grid_size_ ** n_features, n_features)
        The centre of every cell.
    bucket_counts_ : ndarray of shape (grid_size_ ** n_features,)
        The noisy count of every cell (the release).
    bounds_ : tuple of two ndarrays of shape (n_features,)
        The domain (lower, upper) used.
    ledger_ : PrivacyLedger
        One entry per release.
    epsilon_spent_ : float
        What this run's releases spent: the sum of ``ledger_``.
    epsilon_guaranteed_ : float
        The ex-ante guarantee of the configured mechanism, the same for every data set and every
        run: epsilon-DP under add/remove-one neighbours (inf with a leaky option). The figure to publish.
    neighbouring_ : str
        "add/remove one record" (replacing one record costs up to 2 epsilon).
    n_features_in_ : int
        The number of features seen in fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The column names, when X is a DataFrame with string column names.

    Notes
    -----
    No ``labels_``: labels of the private records are not a release. Use
    ``predict``, or ``exact_diagnostics(X)`` (NOT private).

    Examples
    --------
    >>> X = np.random.default_rng(0).random((200, 2))
    >>> est = EUGKMeans(2, epsilon=1.0, bounds=(0, 1), n_public=200, random_state=0).fit(X)
    >>> est.cluster_centers_.shape, est.grid_size_, est.bucket_counts_.shape
    ((2, 2), 4, (16,))
    >>> est.epsilon_guaranteed_
    1.0
    """

    # Checked by validate_params at the start of fit; with the data, fit then checks
    # n_clusters <= n_public (an int) and bounds against X, and reads N with n_public="data".
    _parameter_constraints = {
        "n_clusters": NClusters(),
        "epsilon": Epsilon(),
        "max_iter": Int(minimum=1),
        "random_state": RandomState(),
        "bounds": PublicInput(BOUNDS_WHAT),
        "n_public": PublicInput(n_public_what(NEEDED_FOR), Int(minimum=1), unless=("grid_size",)),
        "grid_size": Optional(Int(minimum=1)),
        "noise": Choice(*NOISE_KINDS),
        "accountant": ACCOUNTANT,
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        epsilon=1.0,
        max_iter=300,
        random_state=None,
        bounds=None,
        n_public=None,
        grid_size=None,
        noise="exact",
        accountant=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.random_state = random_state
        self.bounds = bounds
        self.n_public = n_public
        self.grid_size = grid_size
        self.noise = noise
        self.accountant = accountant

    def fit(self, X, y=None):
        """Fit to X (n, d); the release is the noisy grid and the centres fitted to it.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features), inside ``bounds``
        y : ignored

        Returns
        -------
        self
        """
        params = validate_params(self)
        charge_accountant(self, params["epsilon"])  # before any record is read
        eps, max_iter = params["epsilon"], params["max_iter"]
        X, lower, upper, leaky = private_records(self, X)
        noise, leaky_noise = resolve_noise(self.noise)
        k = check_n_clusters_public(self.n_clusters, self.n_public)
        if params["grid_size"] is not None:
            m = check_grid_cells(params["grid_size"], X.shape[1], "grid_size")
        else:
            n, leaky_n = resolve_n(self.n_public, X, NEEDED_FOR)
            leaky = leaky or leaky_n
            m = check_grid_cells(eug_grid_size(n, eps, X.shape[1]), X.shape[1], "n_public and epsilon")
        rng = check_random_state(self.random_state)
        ledger = PrivacyLedger(eps)
        cells, counts = grid_histogram(X, lower, upper, m)
        ledger.spend(eps, f"grid histogram of {m}^{X.shape[1]} cells, L1 sensitivity 1, Laplace scale {1 / eps:.4g}")
        noisy = laplace_mechanism(counts, 1.0, eps, rng, noise=noise)
        self.cluster_centers_, self.n_iter_ = fit_buckets(
            cells, noisy, kmeans_plusplus(cells, k, rng, np.maximum(noisy, 0.0)), max_iter
        )
        self.bucket_centers_, self.bucket_counts_ = cells, noisy
        self.grid_size_ = m
        self.ledger_ = ledger
        self.bounds_ = (lower, upper)
        record_privacy(self, ledger.spent, leaky or leaky_noise)
        return self

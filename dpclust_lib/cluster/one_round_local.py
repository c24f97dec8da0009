"""OneRoundLocalKMeans: one-round local-DP k-means on the heavy cells of a public hierarchical grid.

In the spirit of Chang, Ghazi, Kumar & Manurangsi, "Locally private k-means in one round", ICML 2021: every
user sends one message, made of a report of their cell at each level of a public hierarchy of cells (a net), each
through a local frequency oracle; the server estimates every cell's count, keeps the heavy cells (those whose
estimate clears the oracle's noise) as a weighted coreset, and runs k-means on it. Their net tree is built on a
low-dimensional random projection with a further one-round vector-summation step; here the net is the dyadic
grid of the public box itself (level l cuts each dimension into 2^l equal cells), which keeps the protocol to the
library's oracles and suits data of a few dimensions (a level has at most ``max_cells`` cells).

Protocol. The user's budget epsilon is split evenly over the L levels, each share rounded down
(:func:`~dpclust_lib.accounting.share_at_most`) and at most ``MAX_LEVEL_EPSILON``, so the shares sum to at most
epsilon exactly. At level l the user
reports the index of their cell among the 2^(l d) through OUE (default) or GRR at that share
(:mod:`dpclust_lib.frequency`). The reports of the levels are independent, so one user's message is
epsilon-LDP by sequential composition (neighbours: any two records of one user, ``neighbouring_``).

Server (post-processing of the reports). Level l's unbiased estimates are compared with z_l times the standard
deviation of an empty cell's estimate (:meth:`~dpclust_lib.frequency.GRR.variance`), z_l = sqrt(2 ln(cells at
level l)) by default (about the largest of that many standard normal draws): a cell is heavy when it clears that
and its parent cell was kept. The coreset is the kept cells with no kept child (and every kept cell of the last
level), at their cell centres, weighted by their estimates; a fit with no heavy cell keeps the box's centre.
Weighted k-means++ then Lloyd on the coreset gives the centres.

The estimates' noise has a standard deviation of order sqrt(n) / epsilon per cell, so the k-means cost carries an
additive error growing as sqrt(n), the order that Chang et al. prove and that Stemmer (SODA 2020) shows no
few-round protocol can beat.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ..accounting import PrivacyLedger, share_at_most
from ..frequency import GRR, OUE, UnaryEncoding, aggregate_stream
from ..validation import (
    Choice,
    Epsilon,
    Int,
    NClusters,
    Optional,
    Positive,
    PublicInput,
    RandomState,
    check_random_state,
    validate_params,
)
from ._base import ACCOUNTANT, LOCAL, charge_accountant
from ._numeric import BOUNDS_WHAT, PrivateCentroidMixin, check_n_clusters_public, private_records
from .lsh_coreset import coreset_kmeans

__all__ = ["OneRoundLocalKMeans", "grid_cells", "level_reports"]

ORACLES = {"oue": OUE, "grr": GRR}
MAX_LEVEL_EPSILON = 20.0
"""The most a level's report spends: beyond about 27.7 the oracles' flip probabilities fall below 2^-40, which
their exact coins cannot realise; at 20 a flip has probability about 2e-9 for OUE, no noise worth the name."""
# Users perturbed per block: a block's OUE reports hold at most 2^24 bits (16 MB), whatever the level's size.
_REPORT_BITS = 2**24


def grid_cells(X, lower, upper, level):
    """Each record's cell index at ``level`` of the dyadic grid of the box: 2^level cells a dimension, C order.

    Examples
    --------
    >>> grid_cells(np.array([[0.1, 0.9], [1.0, 0.0]]), np.zeros(2), np.ones(2), 1).tolist()
    [1, 2]
    """
    m = 2**level
    idx = np.floor((X - lower) / (upper - lower) * m).astype(np.int64)
    idx = np.clip(idx, 0, m - 1)  # the upper face belongs to the last cell
    return np.ravel_multi_index(tuple(idx.T), (m,) * X.shape[1]) if X.shape[0] else np.zeros(0, dtype=np.int64)


def _cell_centres(cells, lower, upper, level, d):
    m = 2**level
    coords = np.stack(np.unravel_index(cells, (m,) * d), axis=1) if cells.size else np.zeros((0, d))
    return lower + (coords + 0.5) * (upper - lower) / m


def level_reports(cells, oracle, rng):
    """The users' reports of their ``cells`` through ``oracle`` (user side), in blocks of at most 2^24 report bits.

    Examples
    --------
    >>> oracle = OUE(4, 1.0)
    >>> blocks = list(level_reports(np.array([0, 3, 3]), oracle, np.random.default_rng(0)))
    >>> [b.shape for b in blocks]
    [(3, 4)]
    """
    width = oracle.k if isinstance(oracle, UnaryEncoding) else 1
    block = max(1, _REPORT_BITS // width)
    return (oracle.perturb(cells[i : i + block], rng) for i in range(0, cells.size, block))


class OneRoundLocalKMeans(PrivateCentroidMixin, ClusterMixin, BaseEstimator):
    """One-round local-DP k-means: each user reports their cell at every level of a public grid (Chang et al. 2021).

    See the module docstring for the protocol, the server's coreset and the privacy argument.

    Parameters
    ----------
    n_clusters : int, default=8
        K (>= 1).
    epsilon : float, default=1.0
        Each user's total LDP budget (> 0), split over the levels.
    bounds : (lower, upper), required
        The public box of the grid (scalars or length-d arrays); a record outside is clamped into it.
    n_levels : int or None, default=None
        L, the levels reported (>= 1, each at most ``max_cells`` cells); None: the most that fit, at most 6.
    max_cells : int, default=1024
        The most cells of one level (>= 2): OUE reports one bit per cell.
    oracle : {"oue", "grr"}, default="oue"
        The frequency oracle of every level.
    threshold : float or None, default=None
        z, in standard deviations of an empty cell's estimate, that a heavy cell clears; None: sqrt(2 ln(cells)).
    n_init : int, default=4
        Runs of k-means++ then Lloyd on the coreset; the cheapest is kept (post-processing).
    max_iter : int, default=10
        The most Lloyd updates of each run.
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None
        The users' coins and k-means++'s draws.
    accountant : BudgetAccountant or None, default=None
        Charged each user's budget before any record is read.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    coreset_ : ndarray of shape (n_points, n_features)
        The kept cells' centres.
    coreset_weights_ : ndarray of shape (n_points,)
        Their estimated counts.
    level_estimates_ : list of ndarray
        The unbiased estimate of every cell's count, level by level (levels 1..L).
    n_levels_ : int
    level_epsilon_ : float
        Each level's share of epsilon.
    n_iter_ : int
    ledger_ : PrivacyLedger
        One entry per level (the per-user budget).
    epsilon_spent_, epsilon_guaranteed_ : float
        Each user's epsilon-LDP guarantee.
    neighbouring_ : str
        "any two records of one user".
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0.25, 0.03, (3000, 2)), rng.normal(0.75, 0.03, (3000, 2))])
    >>> est = OneRoundLocalKMeans(2, epsilon=4.0, bounds=(0, 1), random_state=0).fit(X)
    >>> bool(np.abs(np.sort(est.cluster_centers_[:, 0]) - [0.25, 0.75]).max() < 0.05), est.n_levels_
    (True, 5)
    >>> est.neighbouring_, est.epsilon_guaranteed_ <= 4.0
    ('any two records of one user', True)
    """

    _parameter_constraints = {
        "n_clusters": NClusters(),
        "epsilon": Epsilon(),
        "bounds": PublicInput(BOUNDS_WHAT),
        "n_levels": Optional(Int(minimum=1, maximum=30)),
        "max_cells": Int(minimum=2, maximum=2**22),
        "oracle": Choice(*ORACLES),
        "threshold": Optional(Positive()),
        "n_init": Int(minimum=1),
        "max_iter": Int(minimum=1),
        "random_state": RandomState(),
        "accountant": ACCOUNTANT,
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        epsilon=1.0,
        bounds=None,
        n_levels=None,
        max_cells=1024,
        oracle="oue",
        threshold=None,
        n_init=4,
        max_iter=10,
        random_state=None,
        accountant=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.n_levels = n_levels
        self.max_cells = max_cells
        self.oracle = oracle
        self.threshold = threshold
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state
        self.accountant = accountant

    def fit(self, X, y=None):
        """Simulate the protocol on X (n users, d features): every user's reports, then the server's centres.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        params = validate_params(self)
        eps = params["epsilon"]
        charge_accountant(self, eps)  # before any record is read (each user's budget)
        X, lower, upper, leaky = private_records(self, X)
        n, d = X.shape
        k = check_n_clusters_public(params["n_clusters"], None)
        deepest = int(math.floor(math.log2(params["max_cells"]) / d))
        if params["n_levels"] is None:
            if deepest < 1:
                raise ValueError(
                    f"max_cells={params['max_cells']} holds no level of the grid in {d} dimensions (2^{d} cells): "
                    "raise max_cells or reduce the dimension publicly"
                )
            levels = min(deepest, 6)
        else:
            levels = params["n_levels"]
            if levels > deepest:
                raise ValueError(
                    f"n_levels={levels} gives 2^{levels * d} cells at the last level in {d} dimensions, more than "
                    f"max_cells={params['max_cells']}"
                )
        # A share past MAX_LEVEL_EPSILON is cut to it: less than the user's budget (still epsilon-LDP), and the
        # oracle's flip probabilities stay where its coins are exact.
        share = min(share_at_most(eps, Fraction(1, levels)), MAX_LEVEL_EPSILON)
        rng = check_random_state(params["random_state"])
        ledger = PrivacyLedger(eps)
        coreset, weight, estimates = _protocol(X, lower, upper, levels, share, params, ledger, rng)
        self.cluster_centers_, self.n_iter_ = coreset_kmeans(
            coreset, weight, k, params["n_init"], params["max_iter"], rng
        )
        self.coreset_, self.coreset_weights_ = coreset, weight
        self.level_estimates_ = estimates
        self.n_levels_, self.level_epsilon_ = levels, share
        self.bounds_ = (lower, upper)
        self.ledger_ = ledger
        self.epsilon_spent_ = float(ledger.spent)
        # The shares sum to at most epsilon exactly (share_at_most rounds down), so epsilon, as charged, is each
        # user's guarantee; the ledger holds the shares.
        self.epsilon_guaranteed_ = math.inf if leaky else eps
        self.neighbouring_ = LOCAL
        return self


def _protocol(X, lower, upper, levels, share, params, ledger, rng):
    """Every user's reports, level by level, and the server's coreset: (points, weights, each level's estimates)."""
    n, d = X.shape
    make = ORACLES[params["oracle"]]
    estimates = []
    kept = np.zeros(1, dtype=np.int64)  # level 0: the whole box
    kept_weight = np.array([float(n)])
    points, weights = [], []
    for level in range(1, levels + 1):
        cells = 2 ** (level * d)
        oracle = make(cells, share)
        ledger.spend(share, f"level {level}: each user's cell among {cells} through {params['oracle'].upper()}")
        if n:
            reports = level_reports(grid_cells(X, lower, upper, level), oracle, rng)
            estimate = oracle.estimate(aggregate_stream(oracle, reports))
            sd = math.sqrt(oracle.variance(n))
        else:
            estimate, sd = np.zeros(cells), math.inf  # no user: no report, nothing heavy
        estimates.append(estimate)
        z = params["threshold"] if params["threshold"] is not None else math.sqrt(2.0 * math.log(cells))
        heavy = np.flatnonzero(estimate >= z * sd)
        heavy = heavy[np.isin(_parent(heavy, d, level), kept)]
        # A kept cell with no heavy child is a coreset point (its estimate is the weight of its whole cell).
        leaf = ~np.isin(kept, _parent(heavy, d, level))
        points.append(_cell_centres(kept[leaf], lower, upper, level - 1, d))
        weights.append(kept_weight[leaf])
        kept, kept_weight = heavy, estimate[heavy]
    points.append(_cell_centres(kept, lower, upper, levels, d))
    weights.append(kept_weight)
    return np.vstack(points), np.concatenate(weights), estimates


def _parent(cells, d, level):
    """The index of each level-``level`` cell's parent at level - 1 (C order; every coordinate halved)."""
    m = 2**level
    coords = np.unravel_index(cells, (m,) * d)
    return np.ravel_multi_index(tuple(c // 2 for c in coords), (m // 2,) * d)

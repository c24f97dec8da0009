"""LSHCoresetKMeans: k-means on a private coreset built from a SimHash prefix tree.

The central method of Google's differential-privacy library (``learning/clustering``; Chang & Kamath,
"Practical differentially private clustering", Google Research blog, 2021), built on Chang, Ghazi, Kumar &
Manurangsi, "Locally private k-means in one round", ICML 2021. Written here from the published description.

The algorithm, on records in a public ball B(center, radius):

1. A SimHash of ``max_depth`` bits: bit l of a record x is [h_l . (x - center) >= 0] for public random
   Gaussian directions h_1, ..., h_L (drawn from ``random_state``, never from the data). Level l of the prefix
   tree holds the cells of the first l bits.
2. Level 0 (the root) releases a noisy count of all records. At each level l >= 1, every child of every node
   that branched (its noisy count >= ``3 min_points``) releases a noisy count; a child whose noisy count is below
   ``min_points`` is dropped. Both children of a branching node are released whether they hold records or not:
   which nodes are released depends only on earlier releases.
3. The leaves (kept nodes that do not branch, and every kept node of the last level) release noisy sums of
   their records' offsets x - center. A coreset point is center + noisy sum / noisy count, projected onto the
   ball, weighted by the leaf's noisy count.
4. Weighted k-means++ then Lloyd on the coreset (post-processing).

``min_points`` defaults to the reference's heuristic, min(10 sqrt(d) sigma_sum / radius, noisy N / (2 K)) with
sigma_sum the standard deviation of the sum noise, and here at least the count noise's scale (or sigma) times
ln(1000): an empty node is then kept with probability below 1/2000 and branches with probability below 10^-9, so a
tree grown from noise stays small; at most ``MAX_LEVEL_NODES`` nodes are kept per level
(the largest noisy counts; post-processing).

Privacy (neighbours: one record added or removed, ``neighbouring_``). The cells of one level are disjoint, so one
record changes one count of a level by 1; the leaves are disjoint too (no leaf is the prefix of another), so one
record changes one leaf's sum by its offset, of L2 norm <= radius and L1 norm <= radius sqrt(d).

* Pure epsilon (``delta=0``, the default): each of the max_depth + 1 levels gets
  count_share epsilon / (max_depth + 1), Laplace counts of sensitivity 1; the leaf sums get
  (1 - count_share) epsilon, Laplace of L1 sensitivity radius sqrt(d). Exact noise
  (:func:`dpclust_lib.mechanisms.laplace_mechanism`); the shares are rounded down
  (:func:`~dpclust_lib.accounting.share_at_most`), so the total is at most epsilon exactly.
* (epsilon, delta) (``delta > 0``, the reference's published mode): the budget becomes
  rho = :func:`~dpclust_lib.accounting.dp_to_zcdp` (epsilon, delta), split the same way in rho; the counts and
  the sums get exact discrete Gaussian noise (:func:`dpclust_lib.noise.gaussian_release`, CKS20), the sums
  with L2 sensitivity radius. zCDP composes by addition, and rho-zCDP gives (epsilon, delta)-DP (CKS20
  Corollary 13). The reference uses discrete Laplace counts and a Gaussian sum calibrated by its PLD accountant;
  this is the same mechanism family accounted more simply.

``epsilon_guaranteed_`` (and ``delta_guaranteed_``) is the guarantee of the configured mechanism whatever the tree
does; ``epsilon_spent_`` counts the levels this run released (a tree that stops early spends less).

Where this departs from the reference, and why: the reference releases noisy counts only for children that hold
records, which tells an empty cell from a non-empty one through the mere presence of its count; here both children
are released. The reference reads the radius as given and clips the records to it; here too (``radius``), and a
NaN coordinate goes to the center's.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ..accounting import PrivacyLedger, dp_to_zcdp, share_at_most, zcdp_to_dp
from ..mechanisms import laplace_mechanism
from ..noise import double_at_least, gaussian_release
from ..validation import (
    Constraint,
    Epsilon,
    Int,
    NClusters,
    Optional,
    Positive,
    PrivacyLeakWarning,
    PublicInput,
    RandomState,
    check_array,
    check_random_state,
    validate_params,
)
from ..validation import (
    Fraction as FractionConstraint,
)
from ._base import ACCOUNTANT, CENTRAL, charge_accountant, is_from_data
from ._numeric import PrivateCentroidMixin, check_n_clusters_public, numeric_input
from .kmeans import kmeans_plusplus, lloyd

__all__ = ["LSHCoresetKMeans", "project_to_ball", "coreset_kmeans"]

MAX_LEVEL_NODES = 4096
"""At most this many nodes are kept per level of the tree (those of the largest noisy counts)."""

RADIUS_WHAT = "radius=<r>, the public radius of a ball around center that holds the data"


class Delta(Constraint):
    """A delta in [0, 1): 0 asks for pure epsilon-DP."""

    def check(self, value, name):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
            raise TypeError(f"{name} must be a number in [0, 1), got a {type(value).__name__}")
        value = float(value)
        if not (math.isfinite(value) and 0.0 <= value < 1.0):
            raise ValueError(f"{name} must be in [0, 1) (0: pure epsilon-DP), got {name}={value!r}")
        return value


class Center(Constraint):
    """A public point: a finite number (every coordinate) or a 1-D array of finite numbers."""

    def check(self, value, name):
        arr = check_array(np.atleast_1d(np.asarray(value)) if np.ndim(value) == 0 else value, name, ndim=1)
        return arr.astype(float)


def check_radius_value(value, name="radius"):
    """A radius: a finite number > 0 (message names the parameter)."""
    return Positive().check(value, name)


def project_to_ball(X, center, radius):
    """Records mapped into the closed ball B(center, radius): the declared treatment of a record outside it.

    A NaN coordinate becomes the center's and an infinite one is clamped to [center - radius, center + radius] (its
    direction has no other meaning); a record then still outside the ball is moved along the ray from the center
    onto a sphere a hair inside it (radius (1 - 2^-40), so that rounding never puts it outside). A record inside is
    kept as is. Each record is mapped alone: neighbours stay neighbours, and nothing is refused or reported.

    Examples
    --------
    >>> project_to_ball(np.array([[3.0, 4.0], [0.1, np.nan], [np.inf, 0.0]]), np.zeros(2), 1.0).round(6).tolist()
    [[0.6, 0.8], [0.1, 0.0], [1.0, 0.0]]
    """
    X = np.asarray(X, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):  # huge, infinite and NaN records go to the treatment below
        offset = X - center
        norm = np.sqrt(np.einsum("nd,nd->n", offset, offset))
    # Rounding moves a norm by far less than 1e-9 of it: a record below this is inside, and kept as is. Only the
    # others (near the sphere or beyond it, huge, infinite or NaN) take the treatment, record by record.
    other = ~(norm < radius * (1.0 - 1e-9))
    out = X.copy()
    if other.any():
        out[other] = _project_rows(X[other], center, radius)
    return out


def _project_rows(X, center, radius):
    """:func:`project_to_ball` on every record (NaN and infinite coordinates, then the ray onto the sphere)."""
    X = np.where(np.isnan(X), center, X)
    X = np.where(np.isinf(X), np.clip(X, center - radius, center + radius), X)
    with np.errstate(over="ignore"):  # a huge record: its offset may be inf, handled below
        offset = X - center
        biggest = np.max(np.abs(offset), axis=1, initial=0.0)
    huge = ~np.isfinite(biggest)  # the difference of two huge doubles: clamp coordinates first, as for inf
    if huge.any():
        X[huge] = np.clip(X[huge], center - radius, center + radius)
        offset[huge] = X[huge] - center
        biggest[huge] = np.max(np.abs(offset[huge]), axis=1)
    scaled = offset / np.where(biggest > 0, biggest, 1.0)[:, None]  # norms without overflow
    relative = np.sqrt(np.einsum("nd,nd->n", scaled, scaled))  # the norm / biggest, in [1, sqrt(d)]
    with np.errstate(over="ignore"):  # a norm above the largest double is inf: outside
        norm = biggest * relative
    outside = norm > radius
    if outside.any():
        X = X.copy()
        far, big = norm[outside], biggest[outside]
        shrink = np.where(np.isfinite(far), far / big, relative[outside])
        X[outside] = center + scaled[outside] * (radius * (1.0 - 2.0**-40) / shrink)[:, None]
    return X


def _l1_of_ball(radius, d):
    """radius sqrt(d), rounded up a hair: the L1 norm of an offset in the ball is at most this."""
    return double_at_least(Fraction(radius * math.sqrt(d)) * (1 + Fraction(1, 2**40)))


class LSHCoresetKMeans(PrivateCentroidMixin, ClusterMixin, BaseEstimator):
    """k-means on a private coreset from a SimHash prefix tree (Google's DP library's clustering; Chang et al. 2021).

    See the module docstring for the algorithm, its budget and why it is private.

    Parameters
    ----------
    n_clusters : int, default=8
        K (>= 1). Never compared with the private number of records.
    epsilon : float, default=1.0
        The total privacy budget of one fit (> 0).
    delta : float, default=0.0
        0: pure epsilon-DP (exact Laplace noise). In (0, 1): (epsilon, delta)-DP through rho-zCDP and exact discrete
        Gaussian noise, the reference's published mode (e.g. ``delta=1e-6``).
    radius : float or "data", required
        The public radius of a ball around ``center`` that holds the data; a record outside is projected onto it.
        "data" reads the largest distance off the records: not private (PrivacyLeakWarning,
        epsilon_guaranteed_ = inf).
    center : float or array_like of shape (n_features,), default=0.0
        The public center of the ball (a number: every coordinate).
    max_depth : int, default=20
        L, the SimHash bits, the deepest level of the tree (>= 0; the reference's default).
    count_share : float in (0, 1), default=0.5
        The share of the budget (of rho with delta > 0) for the tree's counts; the rest goes to the leaf sums.
    min_points : float or None, default=None
        A node is kept when its noisy count is >= min_points and branches when it is >= 3 min_points; None: the
        heuristic of the module docstring (from the released root count).
    n_init : int, default=4
        Runs of k-means++ then Lloyd on the coreset; the one of the lowest weighted coreset cost is kept
        (post-processing, as the reference's scikit-learn KMeans keeps its best run).
    max_iter : int, default=10
        The most Lloyd updates of each run (>= 1; post-processing).
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None
        The hash directions, the noise and k-means++'s draws.
    accountant : BudgetAccountant or None, default=None
        Charged this fit's whole guarantee (and its delta) before any record is read.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    coreset_ : ndarray of shape (n_leaves, n_features)
        The released coreset points.
    coreset_weights_ : ndarray of shape (n_leaves,)
        Their weights (the leaves' noisy counts).
    level_counts_ : list of ndarray
        The noisy counts released at each level (level 0: the root).
    hyperplanes_ : ndarray of shape (max_depth, n_features)
        The public SimHash directions.
    min_points_ : float
        The threshold used.
    n_iter_ : int
        Lloyd updates run on the coreset.
    rho_ : float or None
        The zCDP budget of the fit (delta > 0), else None.
    ledger_ : PrivacyLedger
        Pure epsilon: one entry per release. delta > 0: one entry for the zCDP composition of all releases.
    epsilon_spent_, epsilon_guaranteed_ : float
    delta_guaranteed_ : float
        0 for pure epsilon.
    neighbouring_ : str
        "add/remove one record".
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(400, 2)) * 0.1 + np.array([[0.5, 0.0]])
    >>> est = LSHCoresetKMeans(2, epsilon=1.0, radius=1.0, random_state=0).fit(X)
    >>> est.cluster_centers_.shape, est.epsilon_guaranteed_, est.delta_guaranteed_
    ((2, 2), 1.0, 0.0)
    >>> est = LSHCoresetKMeans(2, epsilon=1.0, delta=1e-6, radius=1.0, random_state=0).fit(X)
    >>> est.epsilon_guaranteed_ <= 1.0, est.delta_guaranteed_
    (True, 1e-06)
    """

    _parameter_constraints = {
        "n_clusters": NClusters(),
        "epsilon": Epsilon(),
        "delta": Delta(),
        "radius": PublicInput(RADIUS_WHAT, Positive()),
        "center": Center(),
        "max_depth": Int(minimum=0, maximum=62),
        "count_share": FractionConstraint(0.0, 1.0),
        "min_points": Optional(Positive()),
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
        delta=0.0,
        radius=None,
        center=0.0,
        max_depth=20,
        count_share=0.5,
        min_points=None,
        n_init=4,
        max_iter=10,
        random_state=None,
        accountant=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.radius = radius
        self.center = center
        self.max_depth = max_depth
        self.count_share = count_share
        self.min_points = min_points
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state
        self.accountant = accountant

    # ------------------------------------------------------------------ the budget, from public parameters only

    def _budget(self, params):
        """(per-level count budget, sum budget, guaranteed epsilon, rho or None): epsilon shares or rho shares."""
        eps, delta, share, levels = params["epsilon"], params["delta"], params["count_share"], params["max_depth"] + 1
        if share in (0.0, 1.0):
            raise ValueError("count_share must be strictly between 0 and 1: the counts and the sums both need budget")
        total = eps if delta == 0.0 else dp_to_zcdp(eps, delta)
        level = share_at_most(total, Fraction(share) / levels)
        sums = share_at_most(total, 1 - Fraction(share))
        spent = double_at_least(levels * Fraction(level) + Fraction(sums))  # <= total exactly: shares round down
        if delta == 0.0:  # the shares sum to at most epsilon exactly: epsilon is the guarantee, as charged
            return level, sums, eps, None
        return level, sums, min(eps, zcdp_to_dp(spent, delta)), total

    def fit(self, X, y=None):
        """Fit to X (n, d); the release is the tree's counts, the coreset and the centres fitted to it.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        params = validate_params(self)
        level_budget, sum_budget, guaranteed, rho = self._budget(params)
        delta = params["delta"]
        charge_accountant(self, guaranteed, delta)  # before any record is read
        X = numeric_input(self, X, allow_no_records=True, finite=False)
        n, d = X.shape
        k = check_n_clusters_public(params["n_clusters"], None)
        center = self._center(params["center"], d)
        radius, leaky = self._resolve_radius(X, center)
        X = project_to_ball(X, center, radius)
        rng = check_random_state(params["random_state"])
        L = params["max_depth"]
        planes = rng.standard_normal((L, d))  # public: drawn before any noise, never from the data
        offsets = X - center
        bits = offsets @ planes.T >= 0 if L else np.zeros((n, 0), dtype=bool)
        out = _Releases(PrivacyLedger(params["epsilon"], delta=delta), rng, delta > 0.0, level_budget)

        root = out.counts(np.array([float(n)]), "level 0 (the root) count")
        min_points = params["min_points"]
        if min_points is None:  # the reference's heuristic, and a floor above the count noise (module docstring)
            low_noise = 10.0 * math.sqrt(d) * self._sum_noise(radius, d, sum_budget, out.gaussian) / radius
            split = math.floor(float(root[0])) // (2 * k)
            min_points = max(1.0, min(low_noise, split), out.count_noise * math.log(1000))
        leaves, counts_by_level = _grow_tree(bits, root, min_points, out)
        noisy_sums = out.sums(_leaf_sums(offsets, _prefixes(bits), leaves), radius, sum_budget)
        weights = np.array([max(c, 1.0) for _, _, c in leaves])
        coreset = project_to_ball(center + noisy_sums / weights[:, None], center, radius)
        self.cluster_centers_, self.n_iter_ = coreset_kmeans(
            coreset, weights, k, params["n_init"], params["max_iter"], rng
        )
        out.close(guaranteed, delta)
        self.coreset_, self.coreset_weights_ = coreset, weights
        self.level_counts_ = counts_by_level
        self.hyperplanes_ = planes
        self.min_points_ = float(min_points)
        self.radius_, self.center_ = radius, center
        self.rho_ = rho
        self.ledger_ = out.ledger
        self.epsilon_spent_ = float(out.ledger.spent)
        self.epsilon_guaranteed_ = math.inf if leaky else float(guaranteed)
        self.delta_guaranteed_ = float(delta)
        self.neighbouring_ = CENTRAL
        return self

    @staticmethod
    def _center(center, d):
        if center.size == 1:
            return np.full(d, float(center[0]))
        if center.size != d:
            raise ValueError(f"center must be a number or have one value per feature ({d}), got {center.size} values")
        return center

    def _resolve_radius(self, X, center):
        if is_from_data(self.radius):
            if X.shape[0] == 0:  # as bounds="data": nothing to read the ball off
                raise ValueError("radius='data' needs at least one record to measure: X is empty; pass radius=<r>")
            warnings.warn(
                "radius='data': the ball is read off the records, which is not covered by the privacy guarantee "
                "(epsilon_guaranteed_ = inf). Pass radius=<r> to declare it.",
                PrivacyLeakWarning,
                stacklevel=3,
            )
            finite = np.where(np.isfinite(X), X, center)
            far = float(np.sqrt(((finite - center) ** 2).sum(axis=1)).max(initial=0.0))
            return (far if far > 0 else 1.0), True
        return float(self.radius), False

    @staticmethod
    def _sum_noise(radius, d, budget, gaussian):
        """The standard deviation of one coordinate of the sum noise (for the min_points heuristic)."""
        if gaussian:
            return radius / math.sqrt(2.0 * budget)
        return math.sqrt(2.0) * _l1_of_ball(radius, d) / budget


def coreset_kmeans(points, weights, n_clusters, n_init, max_iter, rng):
    """(centres, n_iter): the best of ``n_init`` weighted k-means++ + Lloyd runs on a coreset (post-processing).

    Weights <= 0 count as 0 in the seeding and in Lloyd; the run of the lowest weighted cost wins (the first on a tie).

    Examples
    --------
    >>> points = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> centres, _ = coreset_kmeans(points, [1.0, 1.0, 2.0, -3.0], 2, 2, 10, np.random.default_rng(0))
    >>> sorted(centres.round(2).tolist())
    [[0.05, 0.0], [5.0, 5.0]]
    """
    weights = np.maximum(np.asarray(weights, dtype=float), 0.0)
    if not np.any(weights > 0):
        weights = np.ones_like(weights)  # nothing weighs anything: every point alike
    best = None
    for _ in range(n_init):
        start = kmeans_plusplus(points, n_clusters, rng, weights)
        centres, _, cost, n_iter = lloyd(points, start, weights, max_iter)
        if best is None or cost < best[0]:
            best = (cost, centres, n_iter)
    return best[1], best[2]


class _Releases:
    """The fit's releases: Laplace counts and sums on the ledger (pure epsilon), or discrete Gaussian ones whose rho
    adds up (delta > 0), entered on the ledger at the end as one (epsilon, delta) spend (:meth:`close`)."""

    def __init__(self, ledger, rng, gaussian, level_budget):
        self.ledger, self.rng, self.gaussian, self.level_budget = ledger, rng, gaussian, level_budget
        self.rho_spent = []
        # the count noise's scale (Laplace) or sigma (discrete Gaussian, sensitivity 1)
        self.count_noise = 1.0 / math.sqrt(2.0 * level_budget) if gaussian else 1.0 / level_budget

    def counts(self, counts, what):
        """One level's counts (L1 and L2 sensitivity 1: the level's cells are disjoint)."""
        if self.gaussian:
            self.rho_spent.append(self.level_budget)
            return gaussian_release(counts, 1.0, self.level_budget, self.rng)[0]
        self.ledger.spend(self.level_budget, f"{what}: L1 sensitivity 1, Laplace scale {1 / self.level_budget:.4g}")
        return np.asarray(laplace_mechanism(counts, 1.0, self.level_budget, self.rng), dtype=float).reshape(-1)

    def sums(self, sums, radius, budget):
        """The leaves' sums of offsets (L2 sensitivity radius, L1 radius sqrt(d): the leaves are disjoint)."""
        if self.gaussian:
            self.rho_spent.append(budget)
            return gaussian_release(sums, radius, budget, self.rng)[0]
        l1 = _l1_of_ball(radius, sums.shape[1])
        self.ledger.spend(budget, f"sums of {sums.shape[0]} leaves: L1 sensitivity {l1:.4g}")
        return np.asarray(laplace_mechanism(sums, l1, budget, self.rng), dtype=float).reshape(sums.shape)

    def close(self, guaranteed, delta):
        """delta > 0: the zCDP composition of the releases made, converted to (epsilon, delta), on the ledger."""
        if self.gaussian:
            rho = double_at_least(sum((Fraction(r) for r in self.rho_spent), Fraction(0)))
            eps = min(guaranteed, zcdp_to_dp(rho, delta))
            what = f"{len(self.rho_spent)} discrete Gaussian releases, rho = {rho:.6g} zCDP in all (CKS20 Cor. 13)"
            self.ledger.spend(eps, what, delta=delta)


def _grow_tree(bits, root, min_points, out):
    """The prefix tree, level by level from the released root count: (leaves as (level, prefix, noisy count), the
    noisy counts of every level). Which nodes are released depends only on earlier releases."""
    n, L = bits.shape
    prefix = np.zeros(n, dtype=np.int64)
    nodes, noisy = np.zeros(1, dtype=np.int64), root  # the kept nodes of the current level, as integer prefixes
    counts_by_level, leaves = [root], []
    for level in range(1, L + 1):
        branching = noisy >= 3 * min_points
        leaves += [(level - 1, int(p), float(c)) for p, c in zip(nodes[~branching], noisy[~branching])]
        parents, parent_counts = nodes[branching], noisy[branching]
        if parents.size == 0:
            return leaves, counts_by_level
        children = np.sort(np.concatenate([2 * parents, 2 * parents + 1]))  # both children, empty or not
        prefix = 2 * prefix + bits[:, level - 1]
        child_counts = out.counts(_counts_at(prefix, children), f"level {level} counts of {children.size} nodes")
        counts_by_level.append(child_counts)
        kept = child_counts >= min_points
        if kept.sum() > MAX_LEVEL_NODES:
            kept = np.zeros_like(kept)
            kept[np.argsort(-child_counts, kind="stable")[:MAX_LEVEL_NODES]] = True
        # A branching node whose children were all dropped becomes a leaf (its records then reach no other leaf).
        orphan = ~np.isin(parents, children[kept] // 2)
        leaves += [(level - 1, int(p), float(c)) for p, c in zip(parents[orphan], parent_counts[orphan])]
        nodes, noisy = children[kept], child_counts[kept]
    return leaves + [(L, int(p), float(c)) for p, c in zip(nodes, noisy)], counts_by_level


def _counts_at(prefix, nodes):
    """How many records have each of the (sorted) ``nodes`` as their prefix."""
    if nodes.size == 0:
        return np.zeros(0)
    pos = np.searchsorted(nodes, prefix)
    pos = np.minimum(pos, nodes.size - 1)
    hit = nodes[pos] == prefix
    return np.bincount(pos[hit], minlength=nodes.size).astype(float)


def _leaf_sums(offsets, prefixes, leaves):
    """The sum of the offsets of the records in each leaf (level, prefix, count); a record is in at most one."""
    sums = np.zeros((len(leaves), offsets.shape[1]))
    by_level = {}
    for i, (level, p, _) in enumerate(leaves):
        by_level.setdefault(level, []).append((p, i))
    for level, items in by_level.items():
        nodes = np.array([p for p, _ in items], dtype=np.int64)
        order = np.argsort(nodes)
        nodes, rows = nodes[order], np.array([i for _, i in items])[order]
        pos = np.minimum(np.searchsorted(nodes, prefixes[:, level]), nodes.size - 1)
        hit = nodes[pos] == prefixes[:, level]
        leaf_of, columns = pos[hit], np.ascontiguousarray(offsets[hit].T)  # a feature's offsets read in one run
        for j, column in enumerate(columns):
            sums[rows, j] += np.bincount(leaf_of, weights=column, minlength=nodes.size)
    return sums


def _prefixes(bits):
    """(n, L + 1) int64: column l is each record's first l bits as an integer (column 0 is 0)."""
    n, L = bits.shape
    out = np.zeros((n, L + 1), dtype=np.int64)
    for level in range(1, L + 1):
        out[:, level] = 2 * out[:, level - 1] + bits[:, level - 1]
    return out

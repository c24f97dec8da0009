"""DPBIRCH: Wang H., Zhang S., Dong Y., Li S. *Differential privacy BIRCH algorithm* (面向差分隐私的BIRCH算法).

North China University of Science and Technology. Notebook 05 reproduces it.

:class:`DPBirch` -- the paper's Algorithm 1, steps 1-2: at every insertion, Laplace noise
Lap(Delta q / epsilon) is added to LS (lines 8 and 13 of the listing) and to SS (lines 9 and 14) of
every CF the record updates: the library's one CF tree (:class:`~dpclust_lib.cluster.birch.CFTree`)
with ``placement="all"``. The paper accounts epsilon for LS plus epsilon for SS, 2 epsilon in total
(Sec. 3); that is what ``epsilon_spent_`` reports. The released tree carries no such guarantee (N is
exact, and the tree's shape and the assignments depend on the exact records); ``epsilon_guaranteed_``
says so (``inf``). It is never DP.

:class:`DPBirchPublicTree` -- an honestly accounted variant (ours, not the paper's): the tree's
skeleton is built from points drawn uniformly from the declared domain (so it does not depend on the
data), every record is routed to a leaf subcluster through that skeleton, and noise is added once to
each leaf's (N, LS, SS) with the L1 sensitivities of the domain. Parents follow by the additivity
theorem, as post-processing; ``epsilon_spent_`` is the whole budget.

Every draw goes through :func:`~dpclust_lib.mechanisms.laplace_mechanism` (``noise="exact"`` by
default; ``noise="float"``, the papers' textbook sampler, warns and makes ``epsilon_guaranteed_`` inf).
DPBirch's per-insertion noise comes in blocks of zero-valued releases (:class:`~dpclust_lib.cluster.birch.LaplaceRows`):
each row of a block is used once.

Neighbours differ by one added or removed record (``neighbouring_``); replacing a record costs up to
2 epsilon. The private estimators keep their release only (no labels_ of the records, no exact N):
``predict`` gives labels and ``exact_diagnostics(X)`` the exact-data evaluation, which is NOT private.
"""

from __future__ import annotations

import fractions
import math
import warnings

import numpy as np
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted

from ..accounting import PrivacyLedger, share_at_most
from ..mechanisms import laplace_mechanism, laplace_scale
from ..noise import NOISE_KINDS
from ..validation import (
    Choice,
    ChoiceOrArray,
    Custom,
    Epsilon,
    Int,
    NClusters,
    Optional,
    Positive,
    PrivacyLeakWarning,
    PublicInput,
    RandomState,
    check_array,
    check_epsilon,
    check_int,
    check_positive,
    check_random_state,
)
from ._base import ACCOUNTANT, charge_accountant, resolve_noise
from ._numeric import BOUNDS_WHAT, numeric_input, private_records, record_privacy
from .birch import MAX_BRANCHING, BirchBase, LaplaceRows, NegativeRadiusWarning, cf_sensitivities, grow_tree, sum_cfs

__all__ = ["DPBirch", "DPBirchPublicTree"]

MAX_SKELETON = 10_000_000
"""The most public points a skeleton is grown from (a CF tree of that many points is already slow)."""


class _PrivateBirch(BirchBase):
    """fit_predict and exact_diagnostics of the private BIRCH estimators (which keep no labels_)."""

    _private = True

    def fit_predict(self, X, y=None):
        """fit(X), then predict(X). The labels are computed from the private records: not a private output."""
        return self.fit(X).predict(X)

    def exact_diagnostics(self, X):
        """Exact-data evaluation on X: NOT private (reads every record outside the budget).

        Returns
        -------
        sklearn.utils.Bunch with ``labels`` (as predict), ``nearest_subcluster``
        (index of each record's nearest leaf centroid) and ``subcluster_n``
        (the exact number of records of each leaf subcluster: the tree's own
        exact N for :class:`DPBirch`, the records routed to each skeleton leaf
        for :class:`DPBirchPublicTree`).
        """
        nearest = self._nearest(X)
        return Bunch(
            labels=self.subcluster_labels_[nearest],
            nearest_subcluster=nearest,
            subcluster_n=self._exact_subcluster_n(numeric_input(self, X, reset=False)),
        )


class DPBirch(_PrivateBirch):
    """DPBIRCH as the paper specifies it (steps 1-2 of Algorithm 1).

    At every insertion, each CF the record updates (the leaf subcluster that
    absorbs it, or the new one it starts, and every CF on the path above it)
    gets Laplace noise of scale Delta / epsilon added to each coordinate of LS
    and to SS. Delta is the paper's sensitivity: 1 on data scaled to [0, 1]
    (in general the largest absolute value the bounds allow). The threshold
    tests, routing and splits then work on the noisy CFs; N stays exact.

    Privacy: none (``epsilon_guaranteed_ = inf``; the neighbouring relation it
    is stated for is add/remove one record, ``neighbouring_``). The paper
    accounts epsilon for LS plus epsilon for SS, so
    ``epsilon_spent_ = 2 * epsilon`` (the paper's claim; it exceeds the
    ``epsilon`` parameter, which is the paper's per-part epsilon). The
    released tree guarantees no finite epsilon: N is released exactly, and the
    shape of the tree and which subcluster absorbs which record depend on the
    exact records. ``epsilon_guaranteed_ = inf`` says so. Even if N and the
    shape were public, a record moves LS by up to sum_j max|x_j| in L1 (d on
    [0, 1]^d, not 1) and SS by up to sum_j max x_j^2 (d again), in one CF per
    level of the tree; ``epsilon_if_shape_public_`` is what the noisy LS and SS
    would then cost: height * (sum_j max|x_j| + sum_j max x_j^2) / scale,
    that is 2 * height * d * epsilon on [0, 1]^d.
    Noisy SS can make the squared radius of the merge test negative; the test
    then treats the radius as 0 and merges. ``n_negative_sq_radius_`` counts
    these among ``n_threshold_tests_``.

    Parameters
    ----------
    n_clusters : int >= 1 or None, default=3
        K of the global step, as in :class:`~dpclust_lib.cluster.birch.Birch`.
    epsilon : float > 0, default=1.0
        The paper's epsilon (for LS, and again for SS).
    threshold : float > 0, default=0.5
        T, as in :class:`~dpclust_lib.cluster.birch.Birch`.
    branching_factor : int >= 2, default=50
        B, as in :class:`~dpclust_lib.cluster.birch.Birch`.
    bounds : (lower, upper) or "data", required (default None raises)
        The declared data domain ((0, 1) on data scaled as the paper's); records
        outside it are an error. "data" reads it off the records (PrivacyLeakWarning).
    random_state : None, int or Generator, default=None
    noise : {"exact", "float"}, default="exact"
        The Laplace sampler (:func:`~dpclust_lib.mechanisms.laplace_mechanism`);
        "float" warns (PrivacyLeakWarning). The release is never DP either way.

    accountant : BudgetAccountant or None, default=None
        A budget shared with other fits (:class:`~dpclust_lib.accounting.BudgetAccountant`): charged this fit's
        whole guarantee before any record is read; a fit that would pass its budget is refused.
    Attributes
    ----------
    as :class:`~dpclust_lib.cluster.birch.Birch` without labels_, nearest_subcluster_ and subcluster_n_;
    tree_ is the paper's release (noisy LS and SS, exact N: why it is not DP).
    Plus epsilon_spent_ (2 epsilon, the paper's accounting), epsilon_guaranteed_
    (always inf: no guarantee under add/remove-one neighbours, ``neighbouring_``),
    neighbouring_, epsilon_if_shape_public_, ledger_,
    noise_scale_, n_noise_draws_ (rows of d + 1 draws used). Labels come from predict;
    exact_diagnostics(X) (NOT private) gives the exact N of each leaf.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> X = np.random.default_rng(0).random((300, 2))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     est = DPBirch(n_clusters=2, epsilon=1.0, threshold=0.3, bounds=(0.0, 1.0), random_state=0).fit(X)
    >>> est.epsilon_spent_, est.epsilon_guaranteed_, est.predict(X).shape
    (2.0, inf, (300,))
    """

    _guarantees_nothing = True  # an accountant refuses it (declared_leaky)

    _parameter_constraints = {
        "n_clusters": Optional(NClusters()),
        "epsilon": Epsilon(),
        "threshold": Positive(),
        "branching_factor": Int(minimum=2, maximum=MAX_BRANCHING),
        "bounds": PublicInput(BOUNDS_WHAT),  # checked against X's features in fit (resolve_bounds)
        "random_state": RandomState(),
        "noise": Choice(*NOISE_KINDS),
        "accountant": ACCOUNTANT,
    }

    def __init__(
        self,
        n_clusters=3,
        *,
        epsilon=1.0,
        threshold=0.5,
        branching_factor=50,
        bounds=None,
        random_state=None,
        noise="exact",
        accountant=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.threshold = threshold
        self.branching_factor = branching_factor
        self.bounds = bounds
        self.random_state = random_state
        self.noise = noise
        self.accountant = accountant

    def fit(self, X, y=None):
        """Build the noisy CF tree of X (n, d) (the paper's steps 1-2) and cluster its leaves."""
        eps = check_epsilon(self.epsilon)
        charge_accountant(self, eps)  # inf: every budget refuses it, before any record is read
        threshold, branching_factor = self._check_tree_params()
        noise_kind, _ = resolve_noise(self.noise)
        warnings.warn(  # every fit, before any record is read: it depends on the class alone
            "DPBirch is the paper's algorithm: the tree's shape and its number of records are released without "
            "noise, so no epsilon covers it (epsilon_guaranteed_ = inf; epsilon_spent_ is the paper's 2 epsilon). "
            "DPBirchPublicTree is the private variant.",
            PrivacyLeakWarning,
            stacklevel=2,
        )
        X, lower, upper, _ = private_records(self, X)
        rng = check_random_state(self.random_state)
        delta = float(np.maximum(np.abs(lower), np.abs(upper)).max())  # the paper's Delta q: 1 on [0, 1]
        scale = laplace_scale(delta, eps)
        # Fresh Lap(Delta q / eps) rows for LS (lines 8, 13) and SS (lines 9, 14) of every CF updated.
        noise = LaplaceRows(delta, eps, X.shape[1] + 1, rng, noise=noise_kind)
        tree = grow_tree(X, threshold, branching_factor, placement="all", noise=noise)
        centers, n = self._keep_tree(tree)
        ledger = PrivacyLedger(2 * eps)
        ledger.spend(eps, f"Laplace noise of scale {scale:.4g} on LS at every CF update (the paper's accounting)")
        ledger.spend(eps, f"Laplace noise of scale {scale:.4g} on SS at every CF update (the paper's accounting)")
        self.n_noise_draws_ = noise.count
        self.noise_scale_ = scale
        self.ledger_ = ledger
        record_privacy(self, ledger.spent, leaky=True)  # the paper's algorithm is never DP (see above)
        # LS and SS of one CF per level move by their L1 sensitivities; each gets noise of this scale.
        _, delta_ls, delta_ss = cf_sensitivities(lower, upper)
        self.epsilon_if_shape_public_ = self.height_ * (delta_ls + delta_ss) / scale
        if tree.n_negative_sq_radius:
            warnings.warn(
                f"{tree.n_negative_sq_radius} of {tree.n_threshold_tests} threshold tests had a negative "
                "noisy squared radius; each was taken as radius 0 and merged (n_negative_sq_radius_)",
                NegativeRadiusWarning,
                stacklevel=2,
            )
        self._finish(X, centers, n)
        return self

    def _exact_subcluster_n(self, X):
        return self.tree_.leaf_cfs()[0]


def _budget_shares(split, name):
    """Three positive shares (N, LS, SS) of the budget, normalised to sum to one."""
    if not isinstance(split, (tuple, list, np.ndarray)) or len(split) != 3:
        raise ValueError(f"{name} must be three shares (N, LS, SS), got {name}={split!r}")
    shares = np.array([check_positive(s, name) for s in split])
    return shares / shares.sum()


class DPBirchPublicTree(_PrivateBirch):
    """An honestly accounted DP BIRCH: a public tree skeleton, noise once on the leaf CFs.

    1. Skeleton: the CF tree (threshold T, branching factor B) built from
       ``n_skeleton`` points drawn uniformly from the declared bounds. It does
       not depend on the data, so it costs no budget.
    2. Every record descends the skeleton to one leaf subcluster (closest
       centroid at each level): a partition of the domain fixed before the
       data is read. Adding or removing one record x changes the CF of one
       leaf only, by (1, x, ||x||^2).
    3. Each leaf's N, LS and SS get Laplace noise once, with the L1
       sensitivities of the bounds: 1 for N, sum_j max|x_j| for LS,
       sum_j max x_j^2 for SS (d and d on [0, 1]^d), and the budget shares
       ``budget_split``. The leaves are disjoint (parallel composition), so
       the release is epsilon-DP. Parents are sums of their noisy children
       (the additivity theorem), which is post-processing: noising every level
       separately would cost epsilon per level instead.
    4. Global step: the leaves whose noisy N reaches ``min_count`` keep their
       centroid LS/N (clipped to the bounds); Ward clustering to K.

    Privacy: epsilon-DP under add/remove-one neighbours (``neighbouring_``;
    replacing a record costs up to 2 epsilon). Nothing observable depends on the
    private number of records but the noisy leaves: an empty X, of shape (0, d),
    releases noise alone, and the warning when fewer leaves are kept than K
    depends on the released noisy counts only (post-processing).

    ``skeleton="data"`` builds the skeleton from the private records instead
    (what a non-private BIRCH would do): the tree's shape then depends on the
    data and the release has no DP guarantee; a PrivacyLeakWarning says so and
    ``epsilon_guaranteed_`` is inf. An array gives public points of one's own.

    Parameters
    ----------
    n_clusters : int >= 1 or None, default=3
        K of the global step, as in :class:`~dpclust_lib.cluster.birch.Birch`.
    epsilon : float > 0, default=1.0
        The total budget.
    threshold : float > 0, default=0.5
        T of the skeleton.
    branching_factor : int >= 2, default=50
        B of the skeleton.
    skeleton : "uniform", "data" or an (m, d) array of public points, default="uniform"
    n_skeleton : int >= 1, default=2000
        Points drawn for the uniform skeleton.
    budget_split : three positive shares (N, LS, SS), default=(0.25, 0.5, 0.25)
        Normalised to sum to 1.
    min_count : float or None, default=None
        None = sqrt(2) * (LS noise scale) / T, the noisy N from which the
        centroid's noise s.d. per coordinate is at most T.
    bounds : (lower, upper) or "data", required (default None raises)
        The declared domain; "data" reads it off the records (PrivacyLeakWarning,
        epsilon_guaranteed_ = inf).
    random_state : None, int or Generator, default=None
    noise : {"exact", "float"}, default="exact"
        The Laplace sampler (:func:`~dpclust_lib.mechanisms.laplace_mechanism`);
        "float" warns (PrivacyLeakWarning) and makes epsilon_guaranteed_ inf.

    accountant : BudgetAccountant or None, default=None
        A budget shared with other fits (:class:`~dpclust_lib.accounting.BudgetAccountant`): charged this fit's
        whole guarantee before any record is read; a fit that would pass its budget is refused.
    Attributes
    ----------
    subcluster_centers_, subcluster_labels_, cluster_centers_, n_subclusters_,
    height_ for the kept leaves, plus leaf_n_, leaf_ls_, leaf_ss_ (noisy CFs
    of every skeleton leaf; :meth:`level_cfs` gives the whole released
    tree), kept_ (mask), min_count_ (the noisy N a leaf needs to be kept),
    epsilon_spent_, epsilon_guaranteed_ (the ex-ante guarantee, epsilon-DP under
    add/remove-one neighbours, the same for every run: the figure to publish),
    neighbouring_ (add/remove one record; replace-one costs up to 2 epsilon), ledger_, noise_scales_ (N,
    LS, SS), skeleton_tree_ (the public tree). No labels_: use predict, or
    exact_diagnostics(X) (NOT private) for the exact count of each leaf.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).random((500, 2))
    >>> est = DPBirchPublicTree(n_clusters=2, epsilon=1.0, threshold=0.2, bounds=(0.0, 1.0), random_state=0).fit(X)
    >>> est.epsilon_spent_, est.epsilon_guaranteed_, est.predict(X).shape
    (1.0, 1.0, (500,))
    """

    _parameter_constraints = {
        "n_clusters": Optional(NClusters()),
        "epsilon": Epsilon(),
        "threshold": Positive(),
        "branching_factor": Int(minimum=2, maximum=MAX_BRANCHING),
        "skeleton": ChoiceOrArray("uniform", "data"),  # an array's width is checked against X in fit
        "n_skeleton": Int(minimum=1, maximum=MAX_SKELETON),
        "budget_split": Custom(_budget_shares),
        "min_count": Optional(Positive()),
        "bounds": PublicInput(BOUNDS_WHAT),  # checked against X's features in fit (resolve_bounds)
        "random_state": RandomState(),
        "noise": Choice(*NOISE_KINDS),
        "accountant": ACCOUNTANT,
    }

    def __init__(
        self,
        n_clusters=3,
        *,
        epsilon=1.0,
        threshold=0.5,
        branching_factor=50,
        skeleton="uniform",
        n_skeleton=2000,
        budget_split=(0.25, 0.5, 0.25),
        min_count=None,
        bounds=None,
        random_state=None,
        noise="exact",
        accountant=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.threshold = threshold
        self.branching_factor = branching_factor
        self.noise = noise
        self.skeleton = skeleton
        self.n_skeleton = n_skeleton
        self.budget_split = budget_split
        self.min_count = min_count
        self.bounds = bounds
        self.random_state = random_state
        self.accountant = accountant

    def _skeleton_points(self, X, lower, upper, rng):
        if isinstance(self.skeleton, str):
            if self.skeleton == "uniform":
                m = check_int(self.n_skeleton, "n_skeleton", minimum=1)
                return lower + (upper - lower) * rng.random((m, X.shape[1])), True
            if self.skeleton == "data":
                warnings.warn(
                    "skeleton='data' builds the tree from the private records: its shape is not covered "
                    "by epsilon, and the release has no DP guarantee.",
                    PrivacyLeakWarning,
                    stacklevel=3,
                )
                return X, False
            raise ValueError(
                f"skeleton must be 'uniform', 'data' or an array of public points, got skeleton={self.skeleton!r}"
            )
        P = check_array(self.skeleton, "skeleton").astype(float, copy=False)
        if P.shape[1] != X.shape[1]:
            raise ValueError(f"skeleton has {P.shape[1]} features but X has {X.shape[1]}")
        return P, True

    def _shares(self):
        return _budget_shares(self.budget_split, "budget_split")

    def fit(self, X, y=None):
        """Route X (n, d) through the skeleton, release the noisy leaf CFs, cluster the kept leaves."""
        eps = check_epsilon(self.epsilon)
        charge_accountant(self, eps)  # before any record is read
        threshold, branching_factor = self._check_tree_params()
        self._shares()  # budget_split checked before any record is read
        if self.min_count is not None:
            check_positive(self.min_count, "min_count")
        noise_kind, leaky_noise = resolve_noise(self.noise)
        X, lower, upper, leaky = private_records(self, X)
        rng = check_random_state(self.random_state)
        points, public = self._skeleton_points(X, lower, upper, rng)
        tree = grow_tree(points, threshold, branching_factor)
        if public:
            # Route every record down the public skeleton: its leaf depends on the record alone.
            leaf = tree.route(X)
            cfs = sum_cfs(leaf, np.ones(len(X)), X, np.einsum("ij,ij->i", X, X), tree.n_leaf_subclusters())
        else:
            cfs = tree.leaf_cfs()[:3]  # the exact tree's own leaf CFs
        ledger = PrivacyLedger(eps)
        scales, noisy = [], []
        # Each part rounded down from the exact share of the split given: the three sum to at most eps exactly.
        given = [fractions.Fraction(float(v)) for v in self.budget_split]
        parts = [share_at_most(eps, v / sum(given)) for v in given]
        for what, part, delta, exact in zip(("N", "LS", "SS"), parts, cf_sensitivities(lower, upper), cfs):
            scales.append(laplace_scale(delta, part))
            ledger.spend(
                part, f"Laplace noise on {what} of every leaf (L1 sensitivity {delta:g}, scale {scales[-1]:.4g})"
            )
            noisy.append(laplace_mechanism(exact, delta, part, rng, noise=noise_kind))
        n_noisy, ls_noisy, ss_noisy = noisy
        # Post-processing from here on: which leaves to trust, their centroids, the global step.
        min_count = math.sqrt(2.0) * scales[1] / threshold if self.min_count is None else float(self.min_count)
        kept = n_noisy >= min_count
        if not kept.any():
            kept[np.argmax(n_noisy)] = True
        centers = np.clip(ls_noisy[kept] / np.maximum(n_noisy[kept], 1.0)[:, None], lower, upper)
        self.skeleton_tree_ = tree
        self.leaf_n_, self.leaf_ls_, self.leaf_ss_ = n_noisy, ls_noisy, ss_noisy
        self.kept_ = kept
        self.min_count_ = min_count
        self.height_ = tree.height()
        self.noise_scales_ = tuple(scales)
        self.ledger_ = ledger
        record_privacy(self, ledger.spent, leaky or not public or leaky_noise)
        self._finish(X, centers, n_noisy[kept])
        return self

    def _exact_subcluster_n(self, X):
        """Exact records per skeleton leaf (all leaves, kept or not, in leaf order)."""
        tree = self.skeleton_tree_
        if isinstance(self.skeleton, str) and self.skeleton == "data":
            return tree.leaf_cfs()[0]
        return np.bincount(tree.route(X), minlength=tree.n_leaf_subclusters()).astype(float)

    def level_cfs(self):
        """The released tree, level by level from the root: (n, ls, ss) of every entry.

        Only the leaves carry noise; each parent is the sum of the noisy CFs
        below it (the additivity theorem), which is post-processing and costs
        no budget. The last item is the leaves themselves.
        """
        check_is_fitted(self)
        out = [
            sum_cfs(parents, self.leaf_n_, self.leaf_ls_, self.leaf_ss_, int(parents.max()) + 1)
            for parents in self.skeleton_tree_.ancestry()
        ]
        out.append((self.leaf_n_, self.leaf_ls_, self.leaf_ss_))
        return out

"""DPQTk-means (Zhang & Cheng, Computer Engineering and Applications 57(2), 2021).

A differentially private quadtree cuts the domain into cells, small where the
data is dense and large where it is sparse (Alg. 2-3); its leaves become
buckets at their cell centres, weighted by noisy counts, and weighted k-means
runs on the buckets (Alg. 1).

Where the listings' lines are (the numbering of the listing cells of notebook 03):

* Alg. 1 line 1, the budget split epsilon_1 = gamma epsilon, epsilon_2 = (1 - gamma) epsilon:
  :meth:`DPQTKMeans.fit`. Line 2 reads the domain from the data: here ``bounds`` is a
  required public input. Lines 3-4, the tree: :func:`build_dp_quadtree`. Lines 7-9, a bucket
  at every leaf centre, and line 11, the leaves' noisy counts: ``_release``. Line 13, the
  k-means on the buckets, seeded by k-means on the data in the paper: ``init``.
* Alg. 2 line 1 (missing from our copy; the prose gives epsilon_1 / maxH per level), lines
  2-4 (the noisy count) and line 5 (stop at maxH or when the noisy count is <= T):
  ``_decide_level``, one level at a time. Line 11 (computePivot, the cell's midpoint) and
  lines 12-16 (each record to its child), with Alg. 3's child codes: ``_split_level``.

Budget. epsilon_1 = gamma epsilon builds the tree: each of the maxH levels
at which a split is decided gets epsilon_1 / maxH, and every node of the
level releases count + Lap(maxH / epsilon_1). epsilon_2 = (1 - gamma) epsilon
goes to the leaf counts, count + Lap(1 / epsilon_2).

Why this is epsilon-DP (neighbours: one record added or removed). The nodes
of one level are disjoint cells, so one record changes one count of the
level by 1: the level's count vector has L1 sensitivity 1, and Lap(maxH /
epsilon_1) makes its release epsilon_1 / maxH-DP (parallel composition
within the level). Which nodes exist at level h depends only on earlier
released noisy counts, so the levels compose adaptively: maxH x epsilon_1 /
maxH = epsilon_1. A node at depth maxH stops whatever its count is, so its
count is not released by the tree. The leaves (of every depth) partition the
domain, so their counts again have sensitivity 1: epsilon_2. The bucket
positions (cell centres) depend only on the tree. Total epsilon_1 + epsilon_2
= epsilon. Two conditions the text leaves implicit: maxH must be an integer
(with the text's maxH = ln(N)/d = 5.76 the splits are decided at depths
0..5, six levels at epsilon_1 / 5.76 each, more than epsilon_1), and the
domain must be public (Alg. 1 line 2 reads it from the data).

Alg. 2 line 17 passes "epsilon_1 - budget" to the children: read literally
(``level_budget="remaining"``), each level spends 1/maxH of the budget left
by the levels above, (epsilon_1 / maxH)(1 - 1/maxH)^h at depth h, within
epsilon_1 too but with more noise on the deep levels (:func:`level_budgets`).

Neighbours differ by one added or removed record (``neighbouring_``); replacing
a record costs up to 2 epsilon. The number of records is private: K is checked
against the declared ``n_public`` only, and an empty X releases noise alone.
``epsilon_guaranteed_`` is epsilon_1 + epsilon_2 whatever depth the tree
reaches; ``epsilon_spent_`` counts only the levels this run released.
"""

from __future__ import annotations

import fractions
import math
import warnings
from dataclasses import dataclass, replace

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ..accounting import PrivacyLedger, compose, share_at_most
from ..mechanisms import laplace_mechanism, laplace_scale
from ..noise import NOISE_KINDS, double_at_most
from ..validation import (
    Choice,
    ChoiceOrArray,
    Epsilon,
    Fraction,
    Int,
    NClusters,
    NonNegative,
    Optional,
    PrivacyLeakWarning,
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
    check_init_shape,
    check_n_clusters_public,
    n_public_what,
    private_records,
    record_privacy,
    resolve_n,
)
from .kmeans import KMeans, fit_buckets, kmeans_plusplus

__all__ = [
    "DPQTKMeans",
    "QuadTree",
    "build_dp_quadtree",
    "level_budgets",
    "default_max_height",
    "default_threshold",
    "MAX_HEIGHT",
    "MAX_NODES",
    "MAX_TREE_BYTES",
    "node_bytes",
    "check_split_fits",
]

MAX_HEIGHT = 40
"""The largest max_height accepted: 40 halvings of a side (cells 2^-40 of the domain) is far below any data's
resolution, and a deeper tree would cost more noise per level than its cells could ever hold."""

MAX_NODES = 10_000_000
"""The most nodes a tree may have; a level that would exceed it is refused before it is allocated."""

MAX_TREE_BYTES = 2**30
"""The most memory (1 GiB) a tree may take while it is built (:func:`node_bytes` per node). The node
count alone let a 12-dimensional tree allocate about 2 GB before MAX_NODES refused it: a node's
size grows with the dimension."""


@dataclass
class QuadTree:
    """A DP quadtree (2^d-ary tree in d dimensions), nodes in breadth-first order.

    Attributes
    ----------
    lower, upper : (n_nodes, d) cell bounds
    depth, parent : (n_nodes,) int (the root's parent is -1)
    noisy_count : (n_nodes,) the released count that decided the split (NaN at depth max_height,
        where nothing is decided or released)
    is_leaf : (n_nodes,) bool
    point_node : (n,) the leaf node of each record (exact data: None on a fitted
        DPQTKMeans' ``tree_``; :meth:`locate` finds the leaves of given records)
    levels_released : the number of levels whose counts were released (<= max_height)

    Examples
    --------
    >>> X = np.random.default_rng(0).random((100, 2))
    >>> tree = build_dp_quadtree(X, np.zeros(2), np.ones(2), 1.0, 2, 10.0, random_state=0)
    >>> bool(np.array_equal(tree.locate(X), tree.point_node))
    True
    >>> int(tree.leaf_counts().sum())
    100
    """

    lower: np.ndarray
    upper: np.ndarray
    depth: np.ndarray
    parent: np.ndarray
    noisy_count: np.ndarray
    is_leaf: np.ndarray
    point_node: np.ndarray
    levels_released: int

    @property
    def leaves(self):
        """Node ids of the leaves, in breadth-first order."""
        return np.flatnonzero(self.is_leaf)

    def locate(self, X):
        """The leaf node of each row of X, found by descending the tree (the rule that built it)."""
        X = np.asarray(X, dtype=float)
        d = X.shape[1]
        first_child = np.full(self.depth.size, -1)
        ids = np.flatnonzero(self.parent >= 0)
        # The 2^d children of a node are stored together, in the order of their bit codes (Alg. 3).
        parents, first = np.unique(self.parent[ids], return_index=True)
        first_child[parents] = ids[first]
        powers = 1 << np.arange(d)
        node = np.zeros(X.shape[0], dtype=np.int64)
        inner = ~self.is_leaf[node]
        while inner.any():
            rows = np.flatnonzero(inner)
            at = node[rows]
            mid = (self.lower[at] + self.upper[at]) / 2.0
            node[rows] = first_child[at] + (X[rows] >= mid) @ powers
            inner = ~self.is_leaf[node]
        return node

    def leaf_counts(self, X=None):
        """True number of records in each leaf (in the order of :attr:`leaves`): exact data, NOT private.

        X : the records, located by :meth:`locate`; None uses ``point_node``.
        """
        where = self.point_node if X is None else self.locate(X)
        if where is None:
            raise ValueError("this tree keeps no records (a fitted estimator's tree): pass X to count")
        rank = np.cumsum(self.is_leaf) - 1
        return np.bincount(rank[where], minlength=int(self.is_leaf.sum())).astype(float)


def default_max_height(n, n_features):
    """maxH = ln(N) / d of the paper, rounded down to an integer, at least 1.

    Parameters
    ----------
    n : int
        N, the public number of records.
    n_features : int
        d.

    Returns
    -------
    int
        floor(ln(N) / d), at least 1.

    Examples
    --------
    >>> default_max_height(100_000, 2)
    5
    >>> default_max_height(10, 5)
    1
    """
    return max(1, int(math.floor(math.log(n) / n_features)))


def default_threshold(n):
    """T = N / 1000 of the paper.

    Parameters
    ----------
    n : int
        N, the public number of records.

    Returns
    -------
    float
        N / 1000.

    Examples
    --------
    >>> default_threshold(50_000)
    50.0
    """
    return n / 1000.0


LEVEL_BUDGETS = ("uniform", "remaining")
"""How the tree's budget epsilon_1 is shared among its levels (:func:`level_budgets`)."""


def level_budgets(epsilon_tree, max_height, level_budget="uniform"):
    """The budget of each depth h = 0, ..., maxH - 1 at which the tree releases counts.

    "uniform": epsilon_1 / maxH at every depth, as the text's prose has it ("εi = ε1/maxH").
    "remaining": Alg. 2 line 17 read literally: a node spends 1/maxH of the budget it is given
    and passes the rest, "ε1 - budget", to its children, so depth h gets
    (epsilon_1 / maxH)(1 - 1/maxH)^h and the levels spend epsilon_1 (1 - (1 - 1/maxH)^maxH) < epsilon_1.

    Parameters
    ----------
    epsilon_tree : float > 0
        epsilon_1, the budget of all the levels together.
    max_height : int >= 1
        maxH.
    level_budget : {"uniform", "remaining"}, default "uniform"

    Returns
    -------
    ndarray of shape (max_height,)

    Examples
    --------
    >>> level_budgets(1.0, 4).tolist()
    [0.25, 0.25, 0.25, 0.25]
    >>> level_budgets(1.0, 4, "remaining").tolist()  # 1/4 of what is left: 1, 3/4, 9/16, 27/64 of 1/4
    [0.25, 0.1875, 0.140625, 0.10546875]
    """
    eps_tree = check_epsilon(epsilon_tree, "epsilon_tree")
    max_height = check_int(max_height, "max_height", minimum=1, maximum=MAX_HEIGHT)
    if level_budget not in LEVEL_BUDGETS:
        raise ValueError(f"level_budget must be one of {LEVEL_BUDGETS}, got level_budget={level_budget!r}")
    if level_budget == "uniform":  # epsilon_tree / H rounded down: the H levels sum to at most epsilon_tree exactly
        return np.full(max_height, share_at_most(eps_tree, fractions.Fraction(1, max_height)))
    shrink = 1.0 - 1.0 / max_height  # a geometric sum of 1 - shrink^H < 1 of epsilon_tree: far from the budget
    return eps_tree / max_height * shrink ** np.arange(max_height)


def build_dp_quadtree(
    X, lower, upper, epsilon_tree, max_height, threshold, random_state=None, noise="exact", level_budget="uniform"
):
    """Alg. 2-3 of Zhang & Cheng, built level by level on arrays.

    At each depth h < ``max_height`` every node of the level releases
    count + Lap(1 / epsilon_h) in one vector, epsilon_h = epsilon_tree / max_height with the
    default ``level_budget`` (:func:`level_budgets`); a node splits into
    2^d children at its cell's midpoint when that noisy count exceeds
    ``threshold`` (the text: stop if NoisyCount <= T). Nodes at depth
    ``max_height`` are leaves. Child j of a node takes the upper half of
    dimension i when bit i of j is set (Alg. 3); a record on a midpoint goes
    to the upper half.

    The tree's memory is capped (:data:`MAX_TREE_BYTES`, :data:`MAX_NODES`): a dimension too high for
    one split is refused before anything is built, and a level that would pass the cap is refused
    before it is allocated.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), inside [lower, upper]
    lower, upper : ndarray of shape (n_features,), the public domain (the root cell)
    epsilon_tree : float > 0, the budget of all the levels' counts together (epsilon_1)
    max_height : int in [1, MAX_HEIGHT], maxH: the number of levels whose counts decide a split
    threshold : float, T: a node splits when its noisy count exceeds it
    random_state : None, int or Generator, default None
    noise : {"exact", "float"}, default "exact", the Laplace noise drawn (see :mod:`dpclust_lib.noise`)
    level_budget : {"uniform", "remaining"}, default "uniform", the levels' shares of epsilon_tree

    Returns
    -------
    QuadTree
        The tree, with ``point_node`` the leaf of each record of ``X`` (exact data).

    Examples
    --------
    >>> X = np.random.default_rng(0).random((200, 2))
    >>> tree = build_dp_quadtree(X, np.zeros(2), np.ones(2), 1.0, 3, 20.0, random_state=0)
    >>> bool(tree.depth.max() <= 3), tree.levels_released <= 3
    (True, True)
    >>> int(tree.leaf_counts().sum())
    200
    """
    X = np.asarray(X, dtype=float)
    rng = check_random_state(random_state)
    eps_levels = level_budgets(epsilon_tree, max_height, level_budget)
    max_height = eps_levels.size
    check_split_fits(X.shape[1], max_height)  # before the (2^d, d) table of child codes is allocated
    parts, point_node, levels = _grow(X, lower, upper, eps_levels, threshold, rng, noise)
    split = np.concatenate(parts["split"])
    return QuadTree(
        *(np.concatenate(parts[key]) for key in ("lower", "upper", "depth", "parent", "noisy")),
        ~split,
        point_node,
        levels,
    )


def _grow(X, lower, upper, eps_levels, threshold, rng, noise):
    """(the levels' arrays, each record's leaf, levels released): the tree grown level by level from the root."""
    n, d = X.shape
    max_height = eps_levels.size
    bits = ((np.arange(2**d)[:, None] >> np.arange(d)) & 1).astype(bool)  # (2^d, d): child j's upper halves
    front = _Frontier(
        np.asarray(lower, float)[None].copy(),
        np.asarray(upper, float)[None].copy(),
        np.array([-1]),
        np.arange(n),
        np.zeros(n, dtype=np.int64),
    )
    point_node = np.empty(n, dtype=np.int64)
    parts = {k: [] for k in ("lower", "upper", "depth", "parent", "noisy", "split")}
    next_id = levels = 0
    for h in range(max_height + 1):
        ids = next_id + np.arange(front.parent.size)
        next_id += front.parent.size
        eps_level = eps_levels[h] if h < max_height else None  # depth max_height releases nothing
        noisy, split = _decide_level(front, eps_level, threshold, rng, noise)
        levels += int(h < max_height)
        for key, value in zip(parts, (front.lower, front.upper, np.full(ids.size, h), front.parent, noisy, split)):
            parts[key].append(value)
        stays = split[front.point_front]
        point_node[front.point_idx[~stays]] = ids[front.point_front[~stays]]
        if not split.any():
            break
        _check_next_level(next_id, int(split.sum()), d, h)  # refuse before allocating the next level
        front = _split_level(X, front, ids, split, stays, bits)
    return parts, point_node, levels


@dataclass
class _Frontier:
    """The nodes of the level being decided (cells and parents), and the records still inside them."""

    lower: np.ndarray  # (F, d)
    upper: np.ndarray  # (F, d)
    parent: np.ndarray  # (F,)
    point_idx: np.ndarray  # the records still in the frontier ...
    point_front: np.ndarray  # ... and their frontier node


def _decide_level(front, eps_level, threshold, rng, noise):
    """(noisy counts, split flags) of a level: Alg. 2's noisy count and test, or none at depth max_height."""
    F = front.parent.size
    if eps_level is None:
        return np.full(F, np.nan), np.zeros(F, dtype=bool)
    counts = np.bincount(front.point_front, minlength=F).astype(float)
    noisy = laplace_mechanism(counts, 1.0, eps_level, rng, noise=noise)
    return noisy, noisy > threshold


def _split_level(X, front, ids, split, stays, bits):
    """The next level: 2^d children per splitting node (Alg. 3), and each remaining record's child."""
    n_children, d = bits.shape
    splitting = np.flatnonzero(split)
    rank = np.full(split.size, -1)
    rank[splitting] = np.arange(splitting.size)
    lo, hi = front.lower[splitting], front.upper[splitting]
    mid = (lo + hi) / 2.0
    point_idx, at = front.point_idx[stays], rank[front.point_front[stays]]
    code = (np.take(X, point_idx, axis=0) >= np.take(mid, at, axis=0)) @ (1 << np.arange(d))  # take: faster
    return _Frontier(
        np.where(bits[None], mid[:, None], lo[:, None]).reshape(-1, d),
        np.where(bits[None], hi[:, None], mid[:, None]).reshape(-1, d),
        np.repeat(ids[splitting], n_children),
        point_idx,
        at * n_children + code,
    )


def node_bytes(n_features):
    """Bytes one node of a tree in ``n_features`` dimensions takes at the peak of :func:`build_dp_quadtree`.

    A node holds two d-vectors of float cell bounds and its depth, parent, noisy count (8 bytes each)
    and split flag (1 byte); at the end every level's arrays and the joined ones coexist: twice that.

    Parameters
    ----------
    n_features : int
        d.

    Returns
    -------
    int
        Bytes per node.

    Examples
    --------
    >>> node_bytes(2), node_bytes(12)
    (114, 434)
    """
    return 2 * (2 * 8 * n_features + 3 * 8 + 1)


def check_split_fits(n_features, max_height):
    """Refuse, from public quantities alone, a dimension in which one split already passes the tree's cap.

    One split makes 2^d children: in 30 dimensions that is 10^9 nodes, however few records there are.

    Parameters
    ----------
    n_features : int
        d: one split makes 2^d children.
    max_height : int
        maxH, named in the message.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        When one split's 2^d children alone pass MAX_NODES or MAX_TREE_BYTES.

    Examples
    --------
    >>> check_split_fits(2, 5)
    >>> check_split_fits(30, 5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: the quadtree cannot split even once in 30 dimensions: 2^30 children of about 1010 bytes ...
    """
    n_nodes = 1 + 2**n_features
    if n_nodes > MAX_NODES or n_nodes * node_bytes(n_features) > MAX_TREE_BYTES:
        raise ValueError(
            f"the quadtree cannot split even once in {n_features} dimensions: 2^{n_features} children of about "
            f"{node_bytes(n_features)} bytes each pass its cap of MAX_TREE_BYTES={MAX_TREE_BYTES:,} bytes "
            f"(MAX_NODES={MAX_NODES:,} nodes) whatever max_height and threshold are (max_height={max_height}); "
            "DPQTKMeans is for low-dimensional data"
        )


def _check_next_level(n_nodes, n_splitting, d, h):
    """Refuse a next level that would take the tree past its cap, before it is allocated.

    The number of splitting nodes is a function of the released noisy counts (post-processing), and
    the bytes per node of the public dimension: the refusal reveals nothing more than the release.
    """
    total = n_nodes + n_splitting * 2**d
    need = total * node_bytes(d)
    if total > MAX_NODES or need > MAX_TREE_BYTES:
        raise ValueError(
            f"the quadtree would exceed its cap at depth {h + 1}: {n_splitting:,} nodes split into 2^{d} "
            f"children each make {total:,} nodes, about {need:,} bytes, more than MAX_TREE_BYTES="
            f"{MAX_TREE_BYTES:,} bytes or MAX_NODES={MAX_NODES:,} nodes; raise threshold or lower max_height"
        )


def _release(X, lower, upper, eps_tree, eps_leaves, max_height, threshold, rng, noise, ledger, level_budget):
    """(tree without records, bucket centres, noisy leaf counts): Alg. 2-3's tree, then the leaf counts."""
    tree = build_dp_quadtree(X, lower, upper, eps_tree, max_height, threshold, rng, noise, level_budget)
    eps_levels = level_budgets(eps_tree, max_height, level_budget)
    for h in range(tree.levels_released):
        ledger.spend(
            eps_levels[h],
            f"tree depth {h}: noisy counts of its {int(np.sum(tree.depth == h))} "
            f"nodes (disjoint cells), Laplace scale {laplace_scale(1.0, eps_levels[h]):.4g}",
        )
    leaves = tree.leaves
    buckets = (tree.lower[leaves] + tree.upper[leaves]) / 2.0
    ledger.spend(
        eps_leaves,
        f"leaf counts: {leaves.size} leaves partition the domain, Laplace scale {laplace_scale(1.0, eps_leaves):.4g}",
    )
    noisy = laplace_mechanism(tree.leaf_counts(), 1.0, eps_leaves, rng, noise=noise)
    return replace(tree, point_node=None), buckets, noisy  # the records' leaves are exact data: not kept


NEEDED_FOR = "for the default max_height and threshold; or give both"


class DPQTKMeans(PrivateCentroidMixin, ClusterMixin, BaseEstimator):
    """DPQTk-means (Zhang & Cheng 2021, Alg. 1-3).

    Privacy: epsilon-DP under add/remove-one neighbours (``neighbouring_``;
    replacing a record costs up to 2 epsilon), as the module docstring derives.
    The guarantee covers every level the tree may release, so it is epsilon
    whether or not a run's tree stops early (``epsilon_spent_`` is then less).

    Parameters
    ----------
    n_clusters : int, default=8
        K, the number of clusters (>= 1, at most ``n_public`` when that is an int). It is never
        compared with the true number of records, which is private under add/remove-one neighbours.
    epsilon : float, default=1.0
        The total privacy budget (> 0).
    gamma : float, default=0.3
        The share of epsilon spent on the tree, in (0, 1) (the paper: 0.3).
    max_height : int or None, default=None
        maxH, in [1, MAX_HEIGHT]; None: floor(ln(N) / d) (the paper's ln(N)/d, made an integer).
    threshold : float or None, default=None
        T >= 0, the split threshold; None: N / 1000.
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None
        The randomness of the noise and of the draws; an int gives the same release every time.
    bounds : (lower, upper) or "data", required
        The public domain. "data" reads it off the records, as Alg. 1 line 2
        does: not private (PrivacyLeakWarning, epsilon_guaranteed_ = inf).
    n_public : int or "data", default=None
        The N of the two defaults; required unless max_height and threshold are
        given ("data": the true N, not private).
    init : {"k-means++", "kmeans-on-data"} or array_like of shape (n_clusters, n_features), default="k-means++"
        The initial centres of the k-means on the buckets. "k-means++": drawn
        among the buckets weighted by their noisy counts (post-processing, no
        budget). "kmeans-on-data": the paper's "initial centres from k-means
        run on the data set", which reads the private data outside the
        budget (PrivacyLeakWarning, epsilon_guaranteed_ = inf). An array must
        not depend on the data for the guarantee to hold.
    max_iter : int, default=300
        The most Lloyd updates on the buckets (>= 1; post-processing).
    noise : {"exact", "float"}, default="exact"
        The Laplace noise drawn: exact discrete Laplace on a grid, or textbook
        floating-point Laplace (leaks through its low bits: PrivacyLeakWarning,
        epsilon_guaranteed_ = inf).
    level_budget : {"uniform", "remaining"}, default="uniform"
        How epsilon_1 is shared among the levels (:func:`level_budgets`):
        epsilon_1 / maxH each, as the text's prose says, or Alg. 2 line 17 read
        literally, 1/maxH of what the levels above left (spends less than epsilon_1).

    accountant : BudgetAccountant or None, default=None
        A budget shared with other fits (:class:`~dpclust_lib.accounting.BudgetAccountant`): charged this fit's
        whole guarantee before any record is read; a fit that would pass its budget is refused.
    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The centres fitted to the buckets.
    n_iter_ : int
        Lloyd updates run on the buckets.
    tree_ : QuadTree
        The released tree: cells and noisy counts, no records (``point_node`` is None).
    bucket_centers_ : ndarray of shape (n_leaves, n_features)
        The centre of every leaf.
    bucket_counts_ : ndarray of shape (n_leaves,)
        The noisy count of every leaf.
    max_height_ : int
        The maxH used.
    threshold_ : float
        The T used.
    bounds_ : tuple of two ndarrays of shape (n_features,)
        The domain (lower, upper) used.
    ledger_ : PrivacyLedger
        One entry per release.
    epsilon_spent_ : float
        What this run's releases spent: the sum of ``ledger_``, less than ``epsilon_guaranteed_``
        when the tree stops before max_height. It bounds the loss of this outcome only.
    epsilon_guaranteed_ : float
        The ex-ante guarantee of the configured mechanism (epsilon), the same for every data set
        and every run: epsilon-DP under add/remove-one neighbours (inf with a leaky option). The
        figure to publish.
    neighbouring_ : str
        "add/remove one record" (replacing one record costs up to 2 epsilon).
    n_features_in_ : int
        The number of features seen in fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The column names, when X is a DataFrame with string column names.

    Notes
    -----
    No ``labels_`` and no exact leaf counts: use ``predict``, or
    ``exact_diagnostics(X)`` (NOT private), whose ``leaf_counts`` are the true
    counts of the leaves.

    Examples
    --------
    >>> X = np.random.default_rng(0).random((500, 2))
    >>> est = DPQTKMeans(3, epsilon=1.0, bounds=(0, 1), n_public=500, random_state=0).fit(X)
    >>> est.cluster_centers_.shape, est.max_height_, est.threshold_
    ((3, 2), 3, 0.5)
    >>> est.tree_.point_node is None, round(est.epsilon_guaranteed_, 12)
    (True, 1.0)
    """

    # Checked by validate_params at the start of fit; with the data, fit then checks
    # n_clusters <= n_public (an int), bounds against X and the shape of an init array, and reads N with
    # n_public="data". The tree's size cap is checked as the tree grows (build_dp_quadtree).
    _parameter_constraints = {
        "n_clusters": NClusters(),
        "epsilon": Epsilon(),
        "gamma": Fraction(),
        "max_height": Optional(Int(minimum=1, maximum=MAX_HEIGHT)),
        "threshold": Optional(NonNegative()),
        "random_state": RandomState(),
        "bounds": PublicInput(BOUNDS_WHAT),
        "n_public": PublicInput(n_public_what(NEEDED_FOR), Int(minimum=1), unless=("max_height", "threshold")),
        "init": ChoiceOrArray("k-means++", "kmeans-on-data", or_array=True),
        "max_iter": Int(minimum=1),
        "noise": Choice(*NOISE_KINDS),
        "level_budget": Choice(*LEVEL_BUDGETS),
        "accountant": ACCOUNTANT,
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        epsilon=1.0,
        gamma=0.3,
        max_height=None,
        threshold=None,
        random_state=None,
        bounds=None,
        n_public=None,
        init="k-means++",
        max_iter=300,
        noise="exact",
        level_budget="uniform",
        accountant=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.gamma = gamma
        self.max_height = max_height
        self.threshold = threshold
        self.random_state = random_state
        self.bounds = bounds
        self.n_public = n_public
        self.init = init
        self.max_iter = max_iter
        self.noise = noise
        self.level_budget = level_budget
        self.accountant = accountant

    def fit(self, X, y=None):
        """Fit to X (n, d): build the noisy tree, release its leaf counts, fit k-means to the buckets.

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
        X, lower, upper, leaky = private_records(self, X)
        noise, leaky_noise = resolve_noise(self.noise)
        k = check_n_clusters_public(params["n_clusters"], self.n_public)
        given_init = None if isinstance(params["init"], str) else check_init_shape(params["init"], k, X.shape[1])
        max_height, threshold, leaky_n = self._tree_parameters(params, X)
        rng = check_random_state(self.random_state)
        eps = params["epsilon"]
        ledger = PrivacyLedger(eps)
        eps_tree = share_at_most(eps, fractions.Fraction(params["gamma"]))  # the parts sum to at most eps exactly
        eps_leaves = double_at_most(fractions.Fraction(eps) - fractions.Fraction(eps_tree))
        tree, buckets, noisy = _release(
            X, lower, upper, eps_tree, eps_leaves, max_height, threshold, rng, noise, ledger, params["level_budget"]
        )
        start, leaky_init = self._start(X, k, buckets, noisy, given_init, params["max_iter"], rng)
        self.cluster_centers_, self.n_iter_ = fit_buckets(buckets, noisy, start, params["max_iter"])
        self.bucket_centers_, self.bucket_counts_ = buckets, noisy
        self.tree_ = tree
        self.max_height_ = max_height
        self.threshold_ = threshold
        self.ledger_ = ledger
        self.bounds_ = (lower, upper)
        # The guarantee is the budget of every level the tree may release and of the leaves, whether or
        # not this run's tree stopped early: a function of the configuration alone.
        guaranteed = compose([*level_budgets(eps_tree, max_height, params["level_budget"]), eps_leaves])
        leaky_any = leaky or leaky_noise or leaky_n or leaky_init
        record_privacy(self, ledger.spent, leaky_any, epsilon_guaranteed=guaranteed)
        return self

    def _tree_parameters(self, params, X):
        """(max_height, threshold, leaky): as given, or the paper's defaults from N (read off X with "data")."""
        max_height, threshold = params["max_height"], params["threshold"]
        if max_height is not None and threshold is not None:
            return max_height, threshold, False
        n, leaky = resolve_n(self.n_public, X, NEEDED_FOR)
        max_height = min(MAX_HEIGHT, default_max_height(n, X.shape[1])) if max_height is None else max_height
        threshold = default_threshold(n) if threshold is None else threshold
        return max_height, threshold, leaky

    def _start(self, X, k, buckets, noisy, given_init, max_iter, rng):
        """(initial centres of the bucket k-means, leaky): the init array, k-means++ on the buckets, or k-means on X."""
        if given_init is not None:
            return given_init, False
        if self.init == "kmeans-on-data":
            warnings.warn(
                "init='kmeans-on-data' seeds the bucket k-means with k-means run on the private data "
                "(as the paper does); that is not covered by epsilon. init='k-means++' seeds it from "
                "the noisy buckets instead.",
                PrivacyLeakWarning,
                stacklevel=3,  # the caller of fit
            )
            return KMeans(k, max_iter=max_iter, random_state=rng).fit(X).cluster_centers_, True
        return kmeans_plusplus(buckets, k, rng, np.maximum(noisy, 0.0)), False

    def _exact_extra(self, X):
        return {"leaf_counts": self.tree_.leaf_counts(X)}

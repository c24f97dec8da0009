"""DPQTk-means (Zhang & Cheng, Computer Engineering and Applications 57(2), 2021).

A differentially private quadtree cuts the domain into cells, small where the
data is dense and large where it is sparse (Alg. 2-3); its leaves become
buckets at their cell centres, weighted by noisy counts, and weighted k-means
runs on the buckets (Alg. 1).

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

Neighbours differ by one added or removed record (``neighbouring_``); replacing
a record costs up to 2 epsilon.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass, replace

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ..accounting import PrivacyLedger
from ..mechanisms import laplace_mechanism, laplace_scale
from ..validation import (
    PrivacyLeakWarning,
    check_array,
    check_epsilon,
    check_fraction,
    check_int,
    check_n_clusters,
    check_random_state,
)
from ._numeric import PrivateCentroidMixin, numeric_input, record_privacy, resolve_bounds, resolve_n
from .kmeans import KMeans, fit_buckets, kmeans_plusplus

__all__ = [
    "DPQTKMeans",
    "QuadTree",
    "build_dp_quadtree",
    "default_max_height",
    "default_threshold",
    "MAX_HEIGHT",
    "MAX_NODES",
]

MAX_HEIGHT = 40
"""The largest max_height accepted: 40 halvings of a side (cells 2^-40 of the domain) is far below any data's
resolution, and a deeper tree would cost more noise per level than its cells could ever hold."""

MAX_NODES = 10_000_000
"""The most nodes a tree may have; a level that would exceed it is refused before it is allocated."""


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
    """maxH = ln(N) / d of the paper, rounded down to an integer, at least 1."""
    return max(1, int(math.floor(math.log(n) / n_features)))


def default_threshold(n):
    """T = N / 1000 of the paper."""
    return n / 1000.0


def _check_threshold(value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"threshold must be a real number, got {value!r} of type {type(value).__name__}")
    if not math.isfinite(float(value)) or float(value) < 0:
        raise ValueError(f"threshold must be a finite number >= 0, got threshold={value!r}")
    return float(value)


def build_dp_quadtree(X, lower, upper, epsilon_tree, max_height, threshold, random_state=None):
    """Alg. 2-3 of Zhang & Cheng, built level by level on arrays.

    At each depth h < ``max_height`` every node of the level releases
    count + Lap(max_height / epsilon_tree) in one vector; a node splits into
    2^d children at its cell's midpoint when that noisy count exceeds
    ``threshold`` (the text: stop if NoisyCount <= T). Nodes at depth
    ``max_height`` are leaves. Child j of a node takes the upper half of
    dimension i when bit i of j is set (Alg. 3); a record on a midpoint goes
    to the upper half.

    Returns
    -------
    QuadTree
    """
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    rng = check_random_state(random_state)
    eps_level = check_epsilon(epsilon_tree, "epsilon_tree") / check_int(
        max_height, "max_height", minimum=1, maximum=MAX_HEIGHT
    )
    n_children = 2**d
    bits = ((np.arange(n_children)[:, None] >> np.arange(d)) & 1).astype(bool)  # (2^d, d)
    powers = 1 << np.arange(d)
    f_lower, f_upper = np.asarray(lower, float)[None].copy(), np.asarray(upper, float)[None].copy()
    f_parent = np.array([-1])
    point_idx = np.arange(n)  # records still in the frontier ...
    point_front = np.zeros(n, dtype=np.int64)  # ... and their frontier node
    point_node = np.empty(n, dtype=np.int64)
    parts = {k: [] for k in ("lower", "upper", "depth", "parent", "noisy", "split")}
    next_id = 0
    levels = 0
    for h in range(max_height + 1):
        F = f_lower.shape[0]
        ids = next_id + np.arange(F)
        next_id += F
        if h < max_height:
            counts = np.bincount(point_front, minlength=F).astype(float)
            noisy = laplace_mechanism(counts, 1.0, eps_level, rng)
            split = noisy > threshold
            levels += 1
        else:
            noisy, split = np.full(F, np.nan), np.zeros(F, dtype=bool)
        for key, value in (
            ("lower", f_lower),
            ("upper", f_upper),
            ("depth", np.full(F, h)),
            ("parent", f_parent),
            ("noisy", noisy),
            ("split", split),
        ):
            parts[key].append(value)
        stays = split[point_front]
        point_node[point_idx[~stays]] = ids[point_front[~stays]]
        if not split.any():
            break
        splitting = np.flatnonzero(split)
        if next_id + splitting.size * n_children > MAX_NODES:  # refuse before allocating the next level
            raise ValueError(
                f"the quadtree would exceed {MAX_NODES:,} nodes at depth {h + 1} "
                f"({splitting.size:,} nodes split into 2^{d} children each); raise threshold or "
                "lower max_height"
            )
        rank = np.full(F, -1)
        rank[splitting] = np.arange(splitting.size)
        lo, hi = f_lower[splitting], f_upper[splitting]
        mid = (lo + hi) / 2.0
        f_lower = np.where(bits[None], mid[:, None], lo[:, None]).reshape(-1, d)
        f_upper = np.where(bits[None], hi[:, None], mid[:, None]).reshape(-1, d)
        f_parent = np.repeat(ids[splitting], n_children)
        point_idx, front = point_idx[stays], rank[point_front[stays]]
        code = (
            np.take(X, point_idx, axis=0) >= np.take(mid, front, axis=0)
        ) @ powers  # take: faster than fancy indexing
        point_front = front * n_children + code
    split = np.concatenate(parts["split"])
    return QuadTree(
        np.concatenate(parts["lower"]),
        np.concatenate(parts["upper"]),
        np.concatenate(parts["depth"]),
        np.concatenate(parts["parent"]),
        np.concatenate(parts["noisy"]),
        ~split,
        point_node,
        levels,
    )


class DPQTKMeans(PrivateCentroidMixin, ClusterMixin, BaseEstimator):
    """DPQTk-means (Zhang & Cheng 2021, Alg. 1-3).

    Parameters
    ----------
    n_clusters : int >= 1
    epsilon : float > 0, the total budget
    gamma : float in (0, 1), the share of epsilon for the tree (paper: 0.3)
    max_height : int in [1, MAX_HEIGHT] or None; None: floor(ln(N) / d) (the paper's ln(N)/d, made an integer)
    threshold : float >= 0 or None, the split threshold T; None: N / 1000
    random_state : None, int or Generator
    bounds : (lower, upper) or "data", required: the public domain. "data" reads it
        off the records, as Alg. 1 line 2 does: not private (PrivacyLeakWarning,
        epsilon_guaranteed_ = inf)
    n_public : int or "data", the N of the two defaults; required unless
        max_height and threshold are given ("data": the true N, not private)
    init : "k-means++" (default), "kmeans-on-data" or an array (n_clusters, d)
        The initial centres of the k-means on the buckets. "k-means++": drawn
        among the buckets weighted by their noisy counts (post-processing, no
        budget). "kmeans-on-data": the paper's "initial centres from k-means
        run on the data set", which reads the private data outside the
        budget (PrivacyLeakWarning, epsilon_guaranteed_ = inf). An array must
        not depend on the data for the guarantee to hold.
    max_iter : int >= 1, Lloyd updates on the buckets (post-processing)

    Attributes
    ----------
    cluster_centers_, n_iter_, ledger_, tree_ (:class:`QuadTree`, the released
    tree: cells and noisy counts, no records), bucket_centers_, bucket_counts_
    (noisy), max_height_, threshold_, bounds_, n_features_in_, epsilon_spent_,
    epsilon_guaranteed_, neighbouring_ (add/remove one record; replace-one
    costs up to 2 epsilon). No labels_ and no exact leaf counts: use predict,
    or exact_diagnostics(X) (NOT private), whose ``leaf_counts`` are the true
    counts of the leaves.
    """

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

    def fit(self, X, y=None):
        eps = check_epsilon(self.epsilon)
        gamma = check_fraction(self.gamma, "gamma")
        max_iter = check_int(self.max_iter, "max_iter", minimum=1)
        given_init = None
        if isinstance(self.init, str):
            if self.init not in ("k-means++", "kmeans-on-data"):
                raise ValueError(
                    f"init must be one of ['k-means++', 'kmeans-on-data'] or an array, got init={self.init!r}"
                )
        else:
            given_init = check_array(self.init, "init").astype(float)
        max_height = (
            None if self.max_height is None else check_int(self.max_height, "max_height", minimum=1, maximum=MAX_HEIGHT)
        )
        threshold = None if self.threshold is None else _check_threshold(self.threshold)
        X = numeric_input(self, X)
        lower, upper, leaky = resolve_bounds(self.bounds, X)
        k = check_n_clusters(self.n_clusters, X.shape[0])
        if given_init is not None and given_init.shape != (k, X.shape[1]):
            raise ValueError(f"init array must have shape ({k}, {X.shape[1]}), got {given_init.shape}")
        if max_height is None or threshold is None:
            n, leaky_n = resolve_n(self.n_public, X, "for the default max_height and threshold; or give both")
            leaky = leaky or leaky_n
            max_height = min(MAX_HEIGHT, default_max_height(n, X.shape[1])) if max_height is None else max_height
            threshold = default_threshold(n) if threshold is None else threshold
        rng = check_random_state(self.random_state)
        eps_tree, eps_leaves = gamma * eps, (1.0 - gamma) * eps
        ledger = PrivacyLedger(eps)

        tree = build_dp_quadtree(X, lower, upper, eps_tree, max_height, threshold, rng)
        scale = laplace_scale(1.0, eps_tree / max_height)
        for h in range(tree.levels_released):
            ledger.spend(
                eps_tree / max_height,
                f"tree depth {h}: noisy counts of its {int(np.sum(tree.depth == h))} "
                f"nodes (disjoint cells), Laplace scale {scale:.4g}",
            )
        leaves = tree.leaves
        buckets = (tree.lower[leaves] + tree.upper[leaves]) / 2.0
        ledger.spend(
            eps_leaves,
            f"leaf counts: {leaves.size} leaves partition the domain, "
            f"Laplace scale {laplace_scale(1.0, eps_leaves):.4g}",
        )
        noisy = laplace_mechanism(tree.leaf_counts(), 1.0, eps_leaves, rng)
        tree = replace(tree, point_node=None)  # the records' leaves are exact data: not kept

        if given_init is not None:
            start = given_init
        elif self.init == "kmeans-on-data":
            warnings.warn(
                "init='kmeans-on-data' seeds the bucket k-means with k-means run on the private data "
                "(as the paper does); that is not covered by epsilon. init='k-means++' seeds it from "
                "the noisy buckets instead.",
                PrivacyLeakWarning,
                stacklevel=2,
            )
            start = KMeans(k, max_iter=max_iter, random_state=rng).fit(X).cluster_centers_
            leaky = True
        else:
            start = kmeans_plusplus(buckets, k, rng, np.maximum(noisy, 0.0))
        self.cluster_centers_, self.n_iter_ = fit_buckets(buckets, noisy, start, max_iter)
        self.bucket_centers_, self.bucket_counts_ = buckets, noisy
        self.tree_ = tree
        self.max_height_ = max_height
        self.threshold_ = threshold
        self.ledger_ = ledger
        self.bounds_ = (lower, upper)
        record_privacy(self, ledger.spent, leaky)
        return self

    def _exact_extra(self, X):
        return {"leaf_counts": self.tree_.leaf_counts(X)}

"""BIRCH and the differentially private BIRCH of Wang, Zhang, Dong and Li.

:class:`Birch` -- BIRCH (Zhang, Ramakrishnan & Livny, SIGMOD 1996) as
scikit-learn implements it: a CF tree of clustering features (N, LS, SS),
insertion with the threshold test on the radius of the merged subcluster,
node splits around the farthest pair, then a global step that clusters the
leaf subcluster centroids with Ward agglomerative clustering. It reproduces
``sklearn.cluster.Birch`` operation for operation (same floating-point
arithmetic), so both build the same tree, and its global step is scipy's
``ward`` as in scikit-learn, so both make the same merges, ties included (up
to ``WARD_EXACT_LIMIT`` leaf subclusters; see :func:`ward_linkage`).

:class:`DPBirch` -- the paper's steps 1-2: at every insertion, Laplace noise
is added to LS and to SS of every CF the record updates. The paper accounts
epsilon for LS plus epsilon for SS, 2 epsilon in total; that is what
``epsilon_spent_`` reports. The released tree carries no such guarantee (N is
exact, and the tree's shape and the assignments depend on the exact
records); ``epsilon_guaranteed_`` says so (``inf``). It is never DP.

:class:`DPBirchPublicTree` -- an honestly accounted variant: the tree's
skeleton is built from points drawn uniformly from the declared domain (so
it does not depend on the data), every record is routed to a leaf subcluster
through that skeleton, and noise is added once to each leaf's (N, LS, SS)
with the L1 sensitivities of the domain. Parents follow by the additivity
theorem, as post-processing; ``epsilon_spent_`` is the whole budget.

Neighbours differ by one added or removed record (``neighbouring_``); replacing
a record costs up to 2 epsilon. The private estimators keep their release
only (no labels_ of the records, no exact N): ``predict`` gives labels and
``exact_diagnostics(X)`` the exact-data evaluation, which is NOT private.
"""

from __future__ import annotations

import heapq
import math
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted

from ..accounting import PrivacyLedger
from ..mechanisms import laplace_mechanism, laplace_scale
from ..validation import (
    PrivacyLeakWarning,
    check_array,
    check_epsilon,
    check_int,
    check_n_clusters,
    check_positive,
    check_random_state,
)
from ._numeric import (
    nearest_centre,
    numeric_input,
    predict_input,
    record_privacy,
    resolve_bounds,
    weighted_means,
)

__all__ = [
    "ClusteringFeature",
    "Birch",
    "DPBirch",
    "DPBirchPublicTree",
    "BirchWarning",
    "NegativeRadiusWarning",
    "global_clustering",
    "ward_linkage",
    "WARD_EXACT_LIMIT",
]

WARD_EXACT_LIMIT = 6000
"""Up to this many leaf subclusters the global step is scipy's ``ward`` (scikit-learn's, ties included);
its condensed distance matrix then takes at most 144 MB. Beyond, fastcluster's vector algorithm."""


class BirchWarning(UserWarning):
    """The tree has fewer leaf subclusters than the requested number of clusters."""


class NegativeRadiusWarning(UserWarning):
    """Noisy CFs made the squared radius of some threshold tests negative (they merged)."""


class ClusteringFeature:
    """A clustering feature CF = (N, LS, SS) of a set of points.

    N is the number of points, LS their sum (a vector) and SS the sum of their
    squared norms (a number). ``cf1 + cf2`` is the CF of the union of two
    disjoint sets (the additivity theorem).
    """

    __slots__ = ("n", "ls", "ss")

    def __init__(self, n, ls, ss):
        self.n = float(n)
        self.ls = np.asarray(ls, dtype=float)
        self.ss = float(ss)

    @classmethod
    def of(cls, X):
        """The CF of the rows of ``X``."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        return cls(X.shape[0], X.sum(axis=0), float(np.einsum("ij,ij->", X, X)))

    def __add__(self, other):
        return ClusteringFeature(self.n + other.n, self.ls + other.ls, self.ss + other.ss)

    @property
    def centroid(self):
        return self.ls / self.n

    @property
    def sq_radius(self):
        """Mean squared distance to the centroid: SS/N - ||LS/N||^2 (may be < 0 with noisy CFs)."""
        c = self.centroid
        return self.ss / self.n - float(c @ c)

    @property
    def radius(self):
        return math.sqrt(max(self.sq_radius, 0.0))

    def __repr__(self):
        return f"ClusteringFeature(n={self.n:g}, ls={np.array2string(self.ls, precision=4)}, ss={self.ss:.6g})"


# ---------------------------------------------------------------------------
# The CF tree
# ---------------------------------------------------------------------------


class _Node:
    """A CF node: up to branching_factor + 1 entries (one too many means: split me).

    Each entry is a subcluster: its CF (n, ls, ss), its centroid and squared
    centroid norm (kept for the distance computations) and, outside the
    leaves, its child node.
    """

    __slots__ = (
        "is_leaf",
        "size",
        "n",
        "ls",
        "ss",
        "centroids",
        "sq_norms",
        "children",
        "prev_leaf",
        "next_leaf",
        "live_centroids",
        "live_sq_norms",
    )

    def __init__(self, is_leaf, capacity, n_features):
        self.is_leaf = is_leaf
        self.size = 0
        self.n = np.zeros(capacity)
        self.ls = np.zeros((capacity, n_features))
        self.ss = np.zeros(capacity)
        self.centroids = np.zeros((capacity, n_features))
        self.sq_norms = np.zeros(capacity)
        self.children = []
        self.prev_leaf = None
        self.next_leaf = None
        self.live_centroids = self.centroids[:0]  # views of the used rows, kept for the distance computation
        self.live_sq_norms = self.sq_norms[:0]

    def append(self, n, ls, ss, centroid, sq_norm, child=None):
        i = self.size
        self.n[i], self.ls[i], self.ss[i] = n, ls, ss
        self.centroids[i], self.sq_norms[i] = centroid, sq_norm
        self.children.append(child)
        self.size = i + 1
        self.live_centroids = self.centroids[: i + 1]
        self.live_sq_norms = self.sq_norms[: i + 1]


class _CFTree:
    """The CF tree with scikit-learn's insertion, threshold test and split.

    ``noise`` (optional) is a callable returning a row of d + 1 Laplace draws
    (LS then SS) that is added to every CF a record updates (the paper's
    DPBIRCH steps 1-2). The arithmetic of the noise-free path is scikit-learn's,
    operation for operation, so the same data gives the same tree.
    """

    def __init__(self, threshold, branching_factor, n_features, noise=None):
        self.sq_threshold = threshold**2
        self.branching_factor = branching_factor
        self.n_features = n_features
        self.noise = noise
        self.root = _Node(True, branching_factor + 1, n_features)
        self.first_leaf = self.root
        self.n_threshold_tests = 0
        self.n_negative_sq_radius = 0
        self.n_splits = 0

    # -- insertion -----------------------------------------------------------
    def insert(self, x):
        xx = np.dot(x, x)
        path = []
        node = self.root
        while not node.is_leaf and node.size:
            i = self._closest(node, x)
            path.append((node, i))
            node = node.children[i]
        overflow = self._insert_in_leaf(node, x, xx)
        # Walk back up: split overflowing children, update the CFs on the path with x.
        for parent, i in reversed(path):
            if overflow:
                self._split_child(parent, i)
                overflow = parent.size > self.branching_factor
            else:
                self._absorb(parent, i, x, xx)
        if overflow:
            self._split_root()

    @staticmethod
    def _closest(node, x):
        dist = np.dot(node.live_centroids, x)
        dist *= -2.0
        dist += node.live_sq_norms
        return int(dist.argmin())

    def _absorb(self, node, i, x, xx):
        """Add one point to entry i of a non-leaf node (scikit-learn's _CFSubcluster.update)."""
        node.n[i] += 1
        if self.noise is None:
            node.ls[i] += x
            node.ss[i] += xx
        else:
            eta = self.noise()
            node.ls[i] += x + eta[:-1]
            node.ss[i] += xx + eta[-1]
        c = node.ls[i] / node.n[i]
        node.centroids[i] = c
        node.sq_norms[i] = np.dot(c, c)

    def _insert_in_leaf(self, leaf, x, xx):
        """Merge x into the closest subcluster if the merged radius is <= T, else start a new one.

        Returns True when the leaf now holds branching_factor + 1 subclusters.
        """
        if leaf.size:
            i = self._closest(leaf, x)
            new_n = leaf.n[i] + 1
            new_ls = leaf.ls[i] + x
            new_ss = leaf.ss[i] + xx
            new_centroid = (1 / new_n) * new_ls
            new_sq_norm = np.dot(new_centroid, new_centroid)
            sq_radius = new_ss / new_n - new_sq_norm
            self.n_threshold_tests += 1
            if sq_radius < 0:
                # Only noise (or rounding at the last bit) makes it negative: the test then
                # treats the radius as 0, i.e. merges, as scikit-learn's comparison does.
                self.n_negative_sq_radius += 1
            if sq_radius <= self.sq_threshold:
                if self.noise is not None:
                    eta = self.noise()
                    new_ls = new_ls + eta[:-1]
                    new_ss = new_ss + eta[-1]
                    new_centroid = (1 / new_n) * new_ls
                    new_sq_norm = np.dot(new_centroid, new_centroid)
                leaf.n[i], leaf.ls[i], leaf.ss[i] = new_n, new_ls, new_ss
                leaf.centroids[i], leaf.sq_norms[i] = new_centroid, new_sq_norm
                return False
        if self.noise is None:
            leaf.append(1, x, xx, x, xx)
        else:
            eta = self.noise()
            ls = x + eta[:-1]
            leaf.append(1, ls, xx + eta[-1], ls, np.dot(ls, ls))
        return leaf.size > self.branching_factor

    # -- splits --------------------------------------------------------------
    def _split(self, node):
        """Split an overflowing node in two around its farthest pair of entries.

        Returns the two new nodes and their CFs (n, ls, ss, centroid, sq_norm).
        """
        self.n_splits += 1
        m = node.size
        C = node.centroids[:m]
        norms = np.einsum("ij,ij->i", C, C)[:, None]
        dist = -2 * (C @ C.T)
        dist += norms
        dist += norms.T
        np.maximum(dist, 0, out=dist)
        np.fill_diagonal(dist, 0)
        far = np.unravel_index(dist.argmax(), (m, m))
        to_first = dist[far[0]] < dist[far[1]]
        to_first[far[0]] = True  # all-equal distances (duplicate centroids): keep the pair apart
        halves = []
        for side in (True, False):
            new = _Node(node.is_leaf, self.branching_factor + 1, self.n_features)
            n, ls, ss = 0, 0, 0.0
            for j in np.flatnonzero(to_first == side):
                new.append(node.n[j], node.ls[j], node.ss[j], node.centroids[j], node.sq_norms[j], node.children[j])
                n += node.n[j]
                ls = ls + node.ls[j]  # sequential sums, in entry order, as scikit-learn adds them
                ss += node.ss[j]
            centroid = ls / n
            halves.append((new, (n, ls, ss, centroid, np.dot(centroid, centroid))))
        (a, _), (b, _) = halves
        if node.is_leaf:  # keep the leaves chained in scikit-learn's order
            a.prev_leaf, a.next_leaf, b.prev_leaf, b.next_leaf = node.prev_leaf, b, a, node.next_leaf
            if node.prev_leaf is not None:
                node.prev_leaf.next_leaf = a
            else:
                self.first_leaf = a
            if node.next_leaf is not None:
                node.next_leaf.prev_leaf = b
        return halves

    def _split_child(self, parent, i):
        (a, cf_a), (b, cf_b) = self._split(parent.children[i])
        n, ls, ss, centroid, sq_norm = cf_a
        parent.n[i], parent.ls[i], parent.ss[i] = n, ls, ss
        parent.centroids[i], parent.sq_norms[i] = centroid, sq_norm
        parent.children[i] = a
        parent.append(*cf_b, child=b)

    def _split_root(self):
        (a, cf_a), (b, cf_b) = self._split(self.root)
        root = _Node(False, self.branching_factor + 1, self.n_features)
        root.append(*cf_a, child=a)
        root.append(*cf_b, child=b)
        self.root = root

    # -- reading the tree ----------------------------------------------------
    def leaves(self):
        out, leaf = [], self.first_leaf
        while leaf is not None:
            out.append(leaf)
            leaf = leaf.next_leaf
        return out

    def height(self):
        h, node = 1, self.root
        while not node.is_leaf:
            h, node = h + 1, node.children[0]
        return h

    def additivity_residuals(self):
        """Largest |parent CF - sum of its child node's CFs| over all non-leaf entries: (N, LS, SS).

        Zero up to rounding for an exact tree (the additivity theorem); noise
        drawn independently for each CF on a path breaks it.
        """
        gaps = np.zeros(3)
        stack = [self.root]
        while stack:
            node = stack.pop()
            if node.is_leaf:
                continue
            for i, child in enumerate(node.children[: node.size]):
                m = child.size
                gaps = np.maximum(
                    gaps,
                    [
                        abs(node.n[i] - child.n[:m].sum()),
                        np.abs(node.ls[i] - child.ls[:m].sum(axis=0)).max(),
                        abs(node.ss[i] - child.ss[:m].sum()),
                    ],
                )
                stack.append(child)
        return tuple(float(g) for g in gaps)

    def leaf_cfs(self):
        """(n, ls, ss, centroids) of every leaf subcluster, in leaf-chain order."""
        leaves = self.leaves()
        cat = lambda name: np.concatenate([getattr(leaf, name)[: leaf.size] for leaf in leaves])  # noqa: E731
        return cat("n"), cat("ls"), cat("ss"), cat("centroids")

    def _leaf_offsets(self):
        """({id(leaf): index of its first subcluster in :meth:`leaf_cfs` order}, number of leaf subclusters)."""
        offsets, start = {}, 0
        for leaf in self.leaves():
            offsets[id(leaf)] = start
            start += leaf.size
        return offsets, start

    def n_leaf_subclusters(self):
        """The number of leaf subclusters."""
        return self._leaf_offsets()[1]

    def ancestry(self):
        """(levels - 1, leaf subclusters) array: the entry above each leaf subcluster at every level.

        Entries of a level are numbered from 0 in depth-first order; row 0 is
        the root's level. Leaf subclusters are in :meth:`leaf_cfs` order.
        """
        offsets, total = self._leaf_offsets()
        out = np.zeros((self.height() - 1, total), dtype=np.int64)
        counters = [0] * (self.height() - 1)
        stack = [(self.root, 0, ())]
        while stack:
            node, depth, path = stack.pop()
            if node.is_leaf:
                out[:, offsets[id(node)] : offsets[id(node)] + node.size] = np.array(path, dtype=np.int64)[:, None]
                continue
            for child in node.children[: node.size]:
                stack.append((child, depth + 1, path + (counters[depth],)))
                counters[depth] += 1
        return out

    def route(self, X):
        """The leaf subcluster (index in :meth:`leaf_cfs` order) each row reaches by descending the tree."""
        offsets, _ = self._leaf_offsets()
        out = np.empty(X.shape[0], dtype=np.int64)
        self._route(self.root, X, np.arange(X.shape[0]), offsets, out)
        return out

    def _route(self, node, X, rows, offsets, out):
        m = node.size
        closest = nearest_centre(X[rows], node.centroids[:m], node.sq_norms[:m])
        if node.is_leaf:
            out[rows] = offsets[id(node)] + closest
            return
        for i in np.unique(closest):
            self._route(node.children[i], X, rows[closest == i], offsets, out)


# ---------------------------------------------------------------------------
# The global step and nearest-centroid labels
# ---------------------------------------------------------------------------


def ward_linkage(centers):
    """Ward linkage of the leaf centroids, as a scipy linkage matrix.

    Up to :data:`WARD_EXACT_LIMIT` centroids: ``scipy.cluster.hierarchy.ward``,
    the call scikit-learn's global step makes, so the merges are scikit-learn's,
    ties included (equal Ward distances are common on integer or gridded data).
    Beyond: fastcluster's algorithm on the vectors, which needs no m x m
    distance matrix (a noisy tree can have ~18,000 leaves, where that matrix
    takes 1.3 GB and scipy 5x the time); it gives the same merge heights, but
    breaks ties between equal Ward distances its own way, so with ties the
    partition can differ from scikit-learn's.
    """
    centers = np.ascontiguousarray(centers, dtype=float)
    if centers.shape[0] <= WARD_EXACT_LIMIT:
        from scipy.cluster.hierarchy import ward

        return ward(centers)
    import fastcluster

    return fastcluster.linkage_vector(centers, method="ward")


def global_clustering(centers, n_clusters, linkage=None, _stacklevel=2):
    """Labels of the leaf subclusters after the global step (scikit-learn's, for an int K).

    Ward agglomerative clustering of the centroids to ``n_clusters`` groups.
    With fewer centroids than ``n_clusters`` every subcluster is its own
    cluster and a :class:`BirchWarning` says so; ``n_clusters=None`` skips the
    global step. ``linkage``: a function returning the Ward linkage of
    ``centers`` (e.g. a cached one), called only when the cut needs it.
    """
    m = centers.shape[0]
    if n_clusters is None:
        return np.arange(m)
    if m < n_clusters:
        warnings.warn(
            f"the tree has {m} leaf subclusters, fewer than n_clusters={n_clusters}: each subcluster "
            "is its own cluster (decrease the threshold)",
            BirchWarning,
            stacklevel=_stacklevel,
        )
        return np.arange(m)
    if m == 1:
        return np.zeros(1, dtype=np.int64)
    return _ward_cut(ward_linkage(centers) if linkage is None else linkage(), n_clusters)


def _ward_cut(Z, n_clusters):
    """Cluster of each leaf when the last n_clusters - 1 merges of linkage Z are undone.

    The cut scikit-learn's AgglomerativeClustering makes on the same Ward
    linkage, numbering included: the latest merge is undone first, kept in a
    heap of negated node ids, and the clusters are numbered in heap order.
    """
    n = Z.shape[0] + 1
    children = Z[:, :2].astype(np.int64)
    nodes = [-(2 * n - 2)]  # the root
    for _ in range(n_clusters - 1):
        a, b = children[-nodes[0] - n]
        heapq.heappush(nodes, -int(a))
        heapq.heappushpop(nodes, -int(b))  # pops the node just split, the smallest negated id
    labels = np.empty(n, dtype=np.int64)
    for label, node in enumerate(nodes):
        stack = [-node]
        while stack:
            v = stack.pop()
            if v < n:
                labels[v] = label
            else:
                stack.extend(children[v - n])
    return labels


# ---------------------------------------------------------------------------
# Estimators
# ---------------------------------------------------------------------------


def _cluster_centres(centers, n, labels):
    """Centroid of each global cluster from its subclusters' CFs: sum of LS over sum of N.

    (The additivity theorem; N-weighted means of the subcluster centroids. A
    noisy N below 0 counts as 0, and a cluster whose N all vanish takes the
    plain mean of its centroids.)
    """
    weights = np.clip(np.asarray(n, dtype=float), 0.0, None)
    k = int(labels.max()) + 1
    mass = np.bincount(labels, weights=weights, minlength=k)
    weights = np.where(mass[labels] > 0, weights, 1.0)  # no weight left: each centroid counts once
    return weighted_means(centers, labels, weights, k, previous=np.zeros((k, centers.shape[1])))


def _sum_cfs(index, n, ls, ss, m):
    """The CFs of m groups, each the sum of the CFs (n, ls, ss) whose ``index`` points to it (additivity)."""
    sums = np.column_stack([np.bincount(index, weights=column, minlength=m) for column in ls.T])
    return np.bincount(index, weights=n, minlength=m), sums, np.bincount(index, weights=ss, minlength=m)


def cf_sensitivities(lower, upper):
    """L1 sensitivities (N, LS, SS) of one CF when one record of the box [lower, upper] is added or removed.

    1 for N; sum_j max|x_j| for LS; sum_j max x_j^2 for SS (d and d on [0, 1]^d).
    """
    largest = np.maximum(np.abs(np.asarray(lower, dtype=float)), np.abs(np.asarray(upper, dtype=float)))
    return 1.0, float(largest.sum()), float((largest**2).sum())


def _grow_tree(points, threshold, branching_factor, noise=None):
    """The CF tree of ``points``, inserted one by one in row order."""
    tree = _CFTree(threshold, branching_factor, points.shape[1], noise=noise)
    for x in points:
        tree.insert(x)
    return tree


class _BirchBase(ClusterMixin, BaseEstimator):
    """Shared parameter checks, global step and predict."""

    _private = False

    def _check_tree_params(self):
        threshold = check_positive(self.threshold, "threshold")
        branching_factor = check_int(self.branching_factor, "branching_factor", minimum=2)
        if self.n_clusters is not None:
            check_n_clusters(self.n_clusters)
        return threshold, branching_factor

    def _keep_tree(self, tree):
        """Record the fitted tree, its leaf CFs and its counters; return (leaf centroids, leaf N)."""
        n, ls, ss, centers = tree.leaf_cfs()
        self.tree_ = tree
        if not self._private:  # DPBirch's N are exact: exact_diagnostics(X) gives them
            self.subcluster_n_ = n
        self.subcluster_ls_, self.subcluster_ss_ = ls, ss
        self.height_, self.n_splits_ = tree.height(), tree.n_splits
        self.n_threshold_tests_, self.n_negative_sq_radius_ = tree.n_threshold_tests, tree.n_negative_sq_radius
        return centers, n

    def _finish(self, X, centers, weights):
        """The global step on the leaf centroids; labels_ of the records for the non-private Birch only."""
        self._ward_linkage = None
        self.subcluster_centers_ = centers
        self.n_subclusters_ = centers.shape[0]
        self._sq_norms = np.einsum("ij,ij->i", centers, centers)
        self.subcluster_labels_ = self._subcluster_labels(self.n_clusters, _stacklevel=4)
        self.cluster_centers_ = _cluster_centres(centers, weights, self.subcluster_labels_)
        if not self._private:
            self.nearest_subcluster_ = nearest_centre(X, centers, self._sq_norms)
            self.labels_ = self.subcluster_labels_[self.nearest_subcluster_]

    def predict(self, X):
        """The global cluster of the nearest leaf subcluster centroid of each row of X.

        Parameters
        ----------
        X : array_like (n, d)

        Returns
        -------
        labels : ndarray of int (n,)
        """
        nearest = self._nearest(X)  # checks the fit first
        return self.subcluster_labels_[nearest]

    def _nearest(self, X):
        return nearest_centre(predict_input(self, X), self.subcluster_centers_, self._sq_norms)

    def relabel(self, n_clusters, X=None):
        """Labels under the global step with another K, on the same tree.

        The tree does not depend on K, so a sweep over K can build it once.
        The Ward linkage of the leaf centroids is computed once per tree and
        cut at each K, which is the cut scikit-learn makes: the partition
        is the one ``fit`` with that K gives; the cluster numbers may differ.

        Parameters
        ----------
        n_clusters : int >= 1 or None (None: the nearest leaf subcluster of each record)
        X : array_like (n, d) or None
            The records to label. None: the fitted records, which only the
            non-private :class:`Birch` keeps (a private estimator needs X).
        """
        if X is None:
            if self._private:
                raise ValueError(
                    f"X is required: a fitted {type(self).__name__} keeps no labels of its records "
                    "(they are not private); pass the records to label"
                )
            check_is_fitted(self)
            nearest = self.nearest_subcluster_
        else:
            nearest = self._nearest(X)
        if n_clusters is None:
            return nearest.copy()
        k = check_n_clusters(n_clusters)
        if (nearest == nearest[0]).all():
            # Every record has the same nearest leaf, so one cluster whatever the global step: Ward is skipped
            # (an exploded noisy tree can have ~18,000 leaves).
            return np.zeros_like(nearest)
        return self._subcluster_labels(k, _stacklevel=3)[nearest]

    def _subcluster_labels(self, n_clusters, _stacklevel):
        return global_clustering(self.subcluster_centers_, n_clusters, self._cached_linkage, _stacklevel + 1)

    def _cached_linkage(self):
        # Built once per tree and cut at each K (fit, then relabel in a sweep over K).
        if self._ward_linkage is None:
            self._ward_linkage = ward_linkage(self.subcluster_centers_)
        return self._ward_linkage


class _PrivateBirch(_BirchBase):
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


class Birch(_BirchBase):
    """BIRCH: a CF tree, then Ward clustering of its leaf subclusters (scikit-learn's algorithm).

    Parameters
    ----------
    n_clusters : int >= 1 or None
        K of the global step; None keeps every leaf subcluster as a cluster.
    threshold : float > 0
        T: a record joins its closest leaf subcluster only if the radius of the
        merged subcluster is <= T (scikit-learn tests the radius; the BIRCH
        paper and Wang et al. speak of a diameter).
    branching_factor : int >= 2
        B: the most entries of any node, leaf or not (L = B, as in scikit-learn).
    random_state : None, int or Generator
        Unused (BIRCH is deterministic); kept for a uniform interface.

    Attributes
    ----------
    subcluster_centers_ : (m, d) centroids of the leaf subclusters, in leaf order
    subcluster_n_ : (m,) their N
    subcluster_labels_ : (m,) their global cluster
    cluster_centers_ : centroid of each global cluster from its subclusters' CFs (sum LS / sum N)
    labels_ : global cluster of each fitted record (via its nearest leaf centroid)
    nearest_subcluster_ : the nearest leaf subcluster of each fitted record
    n_subclusters_, height_ (levels of the tree), n_splits_,
    n_threshold_tests_, n_negative_sq_radius_ (tests whose squared radius
    came out < 0 by rounding; such a test merges), n_features_in_

    The global step is scipy's ``ward``, as scikit-learn's, so the labels are
    scikit-learn's, ties between equal Ward distances included, for up to
    ``WARD_EXACT_LIMIT`` leaf subclusters (see :func:`ward_linkage`).
    """

    def __init__(self, n_clusters=3, *, threshold=0.5, branching_factor=50, random_state=None):
        self.n_clusters = n_clusters
        self.threshold = threshold
        self.branching_factor = branching_factor
        self.random_state = random_state

    def fit(self, X, y=None):
        """Build the CF tree of X (n, d) and cluster its leaf subclusters."""
        threshold, branching_factor = self._check_tree_params()
        X = numeric_input(self, X)
        check_random_state(self.random_state)
        centers, n = self._keep_tree(_grow_tree(X, threshold, branching_factor))
        self._finish(X, centers, n)
        return self

    def fit_predict(self, X, y=None):
        """fit(X), then the labels of the fitted records (``labels_``)."""
        return self.fit(X).labels_


class _NoiseStream:
    """Rows of d + 1 Laplace draws, drawn in blocks (fewer calls into numpy)."""

    def __init__(self, rng, scale, width, block=4096):
        self.rng, self.scale, self.width, self.block = rng, scale, width, block
        self.buffer, self.pos, self.count = None, block, 0

    def __call__(self):
        self.count += 1
        if self.pos == self.block:
            self.buffer = self.rng.laplace(0.0, self.scale, size=(self.block, self.width))
            self.pos = 0
        self.pos += 1
        return self.buffer[self.pos - 1]


class DPBirch(_PrivateBirch):
    """DPBIRCH as the paper specifies it (steps 1-2 of Algorithm 1).

    At every insertion, each CF the record updates (the leaf subcluster that
    absorbs it, or the new one it starts, and every CF on the path above it)
    gets Laplace noise of scale Delta / epsilon added to each coordinate of LS
    and to SS. Delta is the paper's sensitivity: 1 on data scaled to [0, 1]
    (in general the largest absolute value the bounds allow). The threshold
    tests, routing and splits then work on the noisy CFs; N stays exact.

    Privacy: the paper accounts epsilon for LS plus epsilon for SS, so
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
    n_clusters, threshold, branching_factor : as in :class:`Birch`
    epsilon : float > 0, the paper's epsilon (for LS, and again for SS)
    bounds : (lower, upper) or "data", required: the declared data domain
        ((0, 1) on data scaled as the paper's); records outside it are an
        error. "data" reads it off the records (PrivacyLeakWarning).
    random_state : None, int or Generator

    Attributes
    ----------
    as :class:`Birch` without labels_, nearest_subcluster_ and subcluster_n_;
    tree_ is the paper's release (noisy LS and SS, exact N: why it is not DP).
    Plus epsilon_spent_ (2 epsilon, the paper's accounting), epsilon_guaranteed_
    (always inf), neighbouring_, epsilon_if_shape_public_, ledger_,
    noise_scale_, n_noise_draws_. Labels come from predict;
    exact_diagnostics(X) (NOT private) gives the exact N of each leaf.
    """

    def __init__(
        self, n_clusters=3, *, epsilon=1.0, threshold=0.5, branching_factor=50, bounds=None, random_state=None
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.threshold = threshold
        self.branching_factor = branching_factor
        self.bounds = bounds
        self.random_state = random_state

    def fit(self, X, y=None):
        """Build the noisy CF tree of X (n, d) (the paper's steps 1-2) and cluster its leaves."""
        eps = check_epsilon(self.epsilon)
        threshold, branching_factor = self._check_tree_params()
        X = numeric_input(self, X)
        lower, upper, _ = resolve_bounds(self.bounds, X)
        rng = check_random_state(self.random_state)
        delta = float(np.maximum(np.abs(lower), np.abs(upper)).max())  # the paper's Delta q: 1 on [0, 1]
        scale = laplace_scale(delta, eps)
        noise = _NoiseStream(rng, scale, X.shape[1] + 1)
        tree = _grow_tree(X, threshold, branching_factor, noise=noise)
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

    ``skeleton="data"`` builds the skeleton from the private records instead
    (what a non-private BIRCH would do): the tree's shape then depends on the
    data and the release has no DP guarantee; a PrivacyLeakWarning says so and
    ``epsilon_guaranteed_`` is inf. An array gives public points of one's own.

    Parameters
    ----------
    n_clusters, threshold, branching_factor : as in :class:`Birch`
    epsilon : float > 0, the total budget
    skeleton : "uniform" (default), "data" or an (m, d) array of public points
    n_skeleton : int >= 1, points drawn for the uniform skeleton
    budget_split : three positive shares (N, LS, SS), normalised to sum to 1
    min_count : float or None; None = sqrt(2) * (LS noise scale) / T, the noisy
        N from which the centroid's noise s.d. per coordinate is at most T
    bounds : (lower, upper) or "data", required: the declared domain; "data"
        reads it off the records (PrivacyLeakWarning, epsilon_guaranteed_ = inf)
    random_state : None, int or Generator

    Attributes
    ----------
    subcluster_centers_, subcluster_labels_, cluster_centers_, n_subclusters_,
    height_ for the kept leaves, plus leaf_n_, leaf_ls_, leaf_ss_ (noisy CFs
    of every skeleton leaf; :meth:`level_cfs` gives the whole released
    tree), kept_ (mask), min_count_ (the noisy N a leaf needs to be kept),
    epsilon_spent_, epsilon_guaranteed_, neighbouring_ (add/remove one
    record; replace-one costs up to 2 epsilon), ledger_, noise_scales_ (N,
    LS, SS), skeleton_tree_ (the public tree). No labels_: use predict, or
    exact_diagnostics(X) (NOT private) for the exact count of each leaf.
    """

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
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.threshold = threshold
        self.branching_factor = branching_factor
        self.skeleton = skeleton
        self.n_skeleton = n_skeleton
        self.budget_split = budget_split
        self.min_count = min_count
        self.bounds = bounds
        self.random_state = random_state

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
        split = self.budget_split
        if not isinstance(split, (tuple, list, np.ndarray)) or len(split) != 3:
            raise ValueError(f"budget_split must be three shares (N, LS, SS), got budget_split={split!r}")
        shares = np.array([check_positive(s, "budget_split") for s in split])
        return shares / shares.sum()

    def fit(self, X, y=None):
        """Route X (n, d) through the skeleton, release the noisy leaf CFs, cluster the kept leaves."""
        eps = check_epsilon(self.epsilon)
        threshold, branching_factor = self._check_tree_params()
        shares = self._shares()
        if self.min_count is not None:
            check_positive(self.min_count, "min_count")
        X = numeric_input(self, X)
        lower, upper, leaky = resolve_bounds(self.bounds, X)
        rng = check_random_state(self.random_state)
        points, public = self._skeleton_points(X, lower, upper, rng)
        tree = _grow_tree(points, threshold, branching_factor)
        if public:
            # Route every record down the public skeleton: its leaf depends on the record alone.
            leaf = tree.route(X)
            cfs = _sum_cfs(leaf, np.ones(len(X)), X, np.einsum("ij,ij->i", X, X), tree.n_leaf_subclusters())
        else:
            cfs = tree.leaf_cfs()[:3]  # the exact tree's own leaf CFs
        ledger = PrivacyLedger(eps)
        scales, noisy = [], []
        for what, share, delta, exact in zip(("N", "LS", "SS"), shares, cf_sensitivities(lower, upper), cfs):
            part = eps * share
            scales.append(laplace_scale(delta, part))
            ledger.spend(
                part, f"Laplace noise on {what} of every leaf (L1 sensitivity {delta:g}, scale {scales[-1]:.4g})"
            )
            noisy.append(laplace_mechanism(exact, delta, part, rng))
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
        record_privacy(self, ledger.spent, leaky or not public)
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
            _sum_cfs(parents, self.leaf_n_, self.leaf_ls_, self.leaf_ss_, int(parents.max()) + 1)
            for parents in self.skeleton_tree_.ancestry()
        ]
        out.append((self.leaf_n_, self.leaf_ls_, self.leaf_ss_))
        return out

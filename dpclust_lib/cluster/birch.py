"""BIRCH (Zhang, Ramakrishnan & Livny, SIGMOD 1996): the CF tree, its noise-placement hook, the Ward step.

:class:`CFTree` -- the one CF tree of the library: clustering features
(N, LS, SS), insertion with the threshold test on the radius of the merged
subcluster, node splits around the farthest pair. Without noise it reproduces
``sklearn.cluster.Birch`` operation for operation (same floating-point
arithmetic), so both build the same tree.

The noise-placement hook: ``CFTree(..., placement=..., noise=...)`` says where
Laplace noise enters the tree, ``noise`` being a :class:`LaplaceRows` source of
fresh rows of d + 1 draws (LS then SS), every row used once:

========================  ==========================================================================
``placement``             where a fresh row of noise goes
========================  ==========================================================================
``None``                  nowhere: BIRCH (scikit-learn's tree)
``"all"``                 LS and SS of every CF a record updates, at every insertion (DPBIRCH's
                          literal reading, :class:`~dpclust_lib.cluster.dp_birch.DPBirch`)
``"test"``                only the threshold test: the merged CF plus noise is tested, the stored
                          CFs stay exact
``"nonleaf"``             only the non-leaf CFs a record updates; the leaf CFs stay exact
``"leaves"``              the exact tree, then one row per leaf subcluster, once, at the end
``"leaves_accumulated"``  the exact tree, then N rows summed on each leaf subcluster of N records
                          (the per-insertion noise of the leaf, kept on the released leaf)
========================  ==========================================================================

The threshold bounds the radius of the merged subcluster, as in scikit-learn; ``threshold_on="diameter"``
bounds its diameter instead, the other test of BIRCH (Zhang, Ramakrishnan & Livny 1996).

The global step clusters the leaf centroids with Ward's method (:func:`ward_linkage`,
:func:`global_clustering`); :func:`cut_labels` labels records at several K on one tree. scikit-learn's
Ward treats every centroid alike; ``weights`` (each leaf's N) gives BIRCH's phase 3 instead, an
agglomerative clustering of the leaf CFs whose merge cost is the increase in variance (the paper's D4).
:class:`Birch` is the estimator: its global step is scipy's ``ward`` as in scikit-learn, so
both make the same merges, ties included (up to ``WARD_EXACT_LIMIT`` leaf subclusters).

The private estimators built on this tree, ``DPBirch`` and ``DPBirchPublicTree``, are in
:mod:`dpclust_lib.cluster.dp_birch`.
"""

from __future__ import annotations

import heapq
import math
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import check_is_fitted

from ..mechanisms import laplace_mechanism, laplace_scale
from ..noise import NOISE_KINDS
from ..validation import (
    Int,
    NClusters,
    Optional,
    Positive,
    RandomState,
    check_choice,
    check_int,
    check_n_clusters,
    check_random_state,
    column_min_max,
    validate_params,
)
from ._numeric import nearest_centre, numeric_input, predict_input, weighted_means

__all__ = [
    "ClusteringFeature",
    "CFTree",
    "LaplaceRows",
    "PLACEMENTS",
    "THRESHOLD_ON",
    "Birch",
    "BirchWarning",
    "NegativeRadiusWarning",
    "grow_tree",
    "leaf_noise",
    "cut_labels",
    "cut_labels_by_step",
    "global_clustering",
    "ward_linkage",
    "WARD_EXACT_LIMIT",
]

WARD_EXACT_LIMIT = 6000
"""Up to this many leaf subclusters the global step is scipy's ``ward`` (scikit-learn's, ties included);
its condensed distance matrix then takes at most 144 MB. Beyond, fastcluster's vector algorithm."""

PLACEMENTS = (None, "all", "test", "nonleaf", "leaves", "leaves_accumulated")
"""Where :class:`CFTree` puts Laplace noise (see the module docstring)."""

MAX_BRANCHING = 1_000_000
"""The largest branching factor B accepted: a node holds arrays of B entries."""

THRESHOLD_ON = ("radius", "diameter")
"""What :class:`CFTree`'s threshold bounds: the merged subcluster's radius (scikit-learn's test) or its diameter."""


class BirchWarning(UserWarning):
    """The tree has fewer leaf subclusters than the requested number of clusters.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = Birch(n_clusters=3).fit(np.zeros((4, 2)))
    >>> caught[0].category.__name__
    'BirchWarning'
    """


class NegativeRadiusWarning(UserWarning):
    """Noisy CFs made the squared radius of some threshold tests negative (they merged).

    Raised by :class:`~dpclust_lib.cluster.dp_birch.DPBirch`, which counts these tests in
    ``n_negative_sq_radius_``.

    Examples
    --------
    >>> issubclass(NegativeRadiusWarning, UserWarning)
    True
    """


class ClusteringFeature:
    """A clustering feature CF = (N, LS, SS) of a set of points.

    N is the number of points, LS their sum (a vector) and SS the sum of their
    squared norms (a number). ``cf1 + cf2`` is the CF of the union of two
    disjoint sets (the additivity theorem).

    Parameters
    ----------
    n : float
        N, the number of points.
    ls : array_like (d,)
        LS, their sum.
    ss : float
        SS, the sum of their squared norms.

    Attributes
    ----------
    n, ls, ss : the CF; ``centroid``, ``sq_radius`` and ``radius`` follow from it.

    Examples
    --------
    >>> import numpy as np
    >>> cf = ClusteringFeature.of(np.array([[0.0, 0.0], [2.0, 0.0]])) + ClusteringFeature.of([[1.0, 3.0]])
    >>> cf.n, cf.centroid.tolist(), round(cf.sq_radius, 6)
    (3.0, [1.0, 1.0], 2.666667)
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
        """LS / N."""
        return self.ls / self.n

    @property
    def sq_radius(self):
        """Mean squared distance to the centroid: SS/N - ||LS/N||^2 (may be < 0 with noisy CFs)."""
        c = self.centroid
        return self.ss / self.n - float(c @ c)

    @property
    def radius(self):
        """The radius, sqrt(max(sq_radius, 0))."""
        return math.sqrt(max(self.sq_radius, 0.0))

    def __repr__(self):
        return f"ClusteringFeature(n={self.n:g}, ls={np.array2string(self.ls, precision=4)}, ss={self.ss:.6g})"


# ---------------------------------------------------------------------------
# The noise source of the placement hook
# ---------------------------------------------------------------------------


class LaplaceRows:
    """Fresh rows of Laplace noise for the CF tree, drawn through :func:`~dpclust_lib.mechanisms.laplace_mechanism`.

    Each row holds ``width`` independent draws of scale ``sensitivity / epsilon``
    (LS's d coordinates, then SS). Rows are drawn in blocks of ``block`` rows, each
    block one release of the zero array by the Laplace mechanism: zero is on every
    noise grid, so a block is pure noise of the right distribution, and the coupling
    audit observes every block. Every row is handed out once (noise is never reused).
    The calls' epsilon is the noise scale's, not an accounting: an estimator states
    its own budget (DPBirch: the paper's claim).

    Parameters
    ----------
    sensitivity : float > 0
        The Laplace scale's numerator (DPBIRCH's Delta q).
    epsilon : float > 0
        The Laplace scale's denominator.
    width : int >= 1
        Draws per row (d + 1 for a CF's LS and SS).
    random_state : None, int or Generator, default=None
    noise : {"exact", "float"}, default="exact"
        As in :func:`~dpclust_lib.mechanisms.laplace_mechanism`.
    block : int >= 1, default=4096
        Rows per call of the Laplace mechanism.

    Attributes
    ----------
    scale : float, the Laplace scale sensitivity / epsilon (with ``noise="exact"`` the draws' scale is
        larger by a relative 2^-20 at most: the grid's rounding, see :func:`dpclust_lib.noise.laplace_release`)
    count : int, rows handed out so far
    n_releases : int, calls of the Laplace mechanism so far

    Examples
    --------
    >>> rows = LaplaceRows(1.0, 2.0, width=3, random_state=0)
    >>> rows().shape, rows.take(5).shape, rows.count, rows.scale
    ((3,), (5, 3), 6, 0.5)
    """

    def __init__(self, sensitivity, epsilon, width, random_state=None, *, noise="exact", block=4096):
        self.scale = laplace_scale(sensitivity, epsilon)
        self.sensitivity, self.epsilon = float(sensitivity), float(epsilon)
        self.width = check_int(width, "width", minimum=1)
        self.block = check_int(block, "block", minimum=1)
        self.noise = check_choice(noise, "noise", set(NOISE_KINDS))
        self.rng = check_random_state(random_state)
        self.buffer, self.pos, self.count, self.n_releases = None, self.block, 0, 0

    def _refill(self):
        zeros = np.zeros((self.block, self.width))
        self.buffer = laplace_mechanism(zeros, self.sensitivity, self.epsilon, self.rng, noise=self.noise)
        self.pos = 0
        self.n_releases += 1

    def __call__(self):
        """One fresh row of ``width`` draws."""
        if self.pos == self.block:
            self._refill()
        self.pos += 1
        self.count += 1
        return self.buffer[self.pos - 1]

    def take(self, m):
        """``m`` fresh rows, an (m, width) array."""
        out = np.empty((m, self.width))
        filled = 0
        while filled < m:
            if self.pos == self.block:
                self._refill()
            step = min(m - filled, self.block - self.pos)
            out[filled : filled + step] = self.buffer[self.pos : self.pos + step]
            self.pos += step
            filled += step
        self.count += m
        return out


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
        self.n = np.zeros(capacity)
        self.ls = np.zeros((capacity, n_features))
        self.ss = np.zeros(capacity)
        self.centroids = np.zeros((capacity, n_features))
        self.sq_norms = np.zeros(capacity)
        self.children = []
        self.prev_leaf = None
        self.next_leaf = None
        self._set_size(0)

    def _set_size(self, m):
        self.size = m
        self.live_centroids = self.centroids[:m]  # views of the used rows, kept for the distance computation
        self.live_sq_norms = self.sq_norms[:m]

    def fill(self, other, picked):
        """Take entries ``picked`` (increasing indices) of node ``other``, in that order (a split's half)."""
        m = picked.size
        self.n[:m], self.ls[:m], self.ss[:m] = other.n[picked], other.ls[picked], other.ss[picked]
        self.centroids[:m], self.sq_norms[:m] = other.centroids[picked], other.sq_norms[picked]
        self.children = [other.children[j] for j in picked]
        self._set_size(m)

    def append(self, n, ls, ss, centroid, sq_norm, child=None):
        i = self.size
        self.n[i], self.ls[i], self.ss[i] = n, ls, ss
        self.centroids[i], self.sq_norms[i] = centroid, sq_norm
        self.children.append(child)
        self._set_size(i + 1)


class CFTree:
    """The CF tree with scikit-learn's insertion, threshold test and split, and a noise-placement hook.

    Without noise the arithmetic is scikit-learn's, operation for operation, so
    the same data gives the same tree. ``placement`` says where fresh rows of
    ``noise`` go (see the module docstring and :data:`PLACEMENTS`); the leaf
    placements (``"leaves"``, ``"leaves_accumulated"``) act in :meth:`noise_leaves`,
    once the tree is built. :func:`grow_tree` inserts a data set and does both.

    Parameters
    ----------
    threshold : float > 0
        T, the largest radius (or diameter) of a merged leaf subcluster.
    branching_factor : int >= 2
        B, the most entries of a node (leaf or not).
    n_features : int
        d.
    placement : one of :data:`PLACEMENTS`, default=None
    noise : LaplaceRows or None, default=None
        The source of noise rows (width d + 1); required unless placement is None.
    threshold_on : {"radius", "diameter"}, default="radius"
        What T bounds. "radius": R^2 = SS/N - ||LS/N||^2, scikit-learn's test. "diameter": the root mean
        squared distance between two distinct points, D^2 = 2N R^2 / (N - 1), BIRCH's other test.

    Attributes
    ----------
    root, first_leaf : the root node and the first leaf of the leaf chain
    placement, noise : as given; leaves_noised : whether :meth:`noise_leaves` has run
    n_threshold_tests, n_negative_sq_radius (tests whose squared radius was < 0: they
    merge, as scikit-learn's comparison does), n_splits : counters

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).random((200, 2))
    >>> tree = grow_tree(X, threshold=0.1, branching_factor=5)
    >>> n, ls, ss, centroids = tree.leaf_cfs()
    >>> int(n.sum()), tree.additivity_residuals()[0]
    (200, 0.0)
    >>> noisy = grow_tree(X, 0.1, 5, placement="test", noise=LaplaceRows(1.0, 1.0, 3, random_state=0))
    >>> int(noisy.leaf_cfs()[0].sum())
    200
    """

    def __init__(self, threshold, branching_factor, n_features, *, placement=None, noise=None, threshold_on="radius"):
        self._on_diameter = check_choice(threshold_on, "threshold_on", set(THRESHOLD_ON)) == "diameter"
        if placement not in PLACEMENTS:
            raise ValueError(f"placement must be one of {PLACEMENTS}, got placement={placement!r}")
        if placement is not None and not isinstance(noise, LaplaceRows):
            raise TypeError(f"noise must be a LaplaceRows source when placement={placement!r}")
        if noise is not None and noise.width != n_features + 1:
            raise ValueError(f"noise must give rows of n_features + 1 = {n_features + 1} draws")
        self.sq_threshold = threshold**2
        self.branching_factor = branching_factor
        self.n_features = n_features
        self.placement, self.noise = placement, noise
        self._noise_leaf = placement == "all"
        self._noise_nonleaf = placement in ("all", "nonleaf")
        self._noise_test = placement == "test"
        self.leaves_noised = False
        self.root = _Node(True, branching_factor + 1, n_features)
        self.first_leaf = self.root
        self.n_threshold_tests = 0
        self.n_negative_sq_radius = 0
        self.n_splits = 0

    # -- insertion -----------------------------------------------------------
    def insert(self, x):
        """Insert one point x (d,): descend to the closest leaf, merge or start a subcluster, split upwards."""
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
        if self._noise_nonleaf:
            eta = self.noise()
            node.ls[i] += x + eta[:-1]
            node.ss[i] += xx + eta[-1]
        else:
            node.ls[i] += x
            node.ss[i] += xx
        c = node.ls[i] / node.n[i]
        node.centroids[i] = c
        node.sq_norms[i] = np.dot(c, c)

    def _sq_radius_tested(self, new_n, new_ls, new_ss, new_sq_norm):
        """The squared radius the threshold test sees: the merged CF's, plus fresh noise under "test"."""
        if not self._noise_test:
            return new_ss / new_n - new_sq_norm
        eta = self.noise()
        centroid = (1 / new_n) * (new_ls + eta[:-1])
        return (new_ss + eta[-1]) / new_n - np.dot(centroid, centroid)

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
            sq_radius = self._sq_radius_tested(new_n, new_ls, new_ss, new_sq_norm)
            self.n_threshold_tests += 1
            if sq_radius < 0:
                # Only noise (or rounding at the last bit) makes it negative: the test then
                # treats the radius as 0, i.e. merges, as scikit-learn's comparison does.
                self.n_negative_sq_radius += 1
            if self._on_diameter:  # D^2 = 2N R^2 / (N - 1); N >= 2 at a merge
                sq_radius = sq_radius * (2.0 * new_n / (new_n - 1.0))
            if sq_radius <= self.sq_threshold:
                if self._noise_leaf:
                    eta = self.noise()
                    new_ls = new_ls + eta[:-1]
                    new_ss = new_ss + eta[-1]
                    new_centroid = (1 / new_n) * new_ls
                    new_sq_norm = np.dot(new_centroid, new_centroid)
                leaf.n[i], leaf.ls[i], leaf.ss[i] = new_n, new_ls, new_ss
                leaf.centroids[i], leaf.sq_norms[i] = new_centroid, new_sq_norm
                return False
        if self._noise_leaf:
            eta = self.noise()
            ls = x + eta[:-1]
            leaf.append(1, ls, xx + eta[-1], ls, np.dot(ls, ls))
        else:
            leaf.append(1, x, xx, x, xx)
        return leaf.size > self.branching_factor

    def noise_leaves(self):
        """Add the leaf placements' noise to every leaf subcluster (once; nothing for the other placements).

        The draws are :func:`leaf_noise`'s for the leaf N in leaf-chain order. N stays
        exact; the CFs above the leaves keep their exact values (they only routed the records).
        """
        if self.placement not in ("leaves", "leaves_accumulated") or self.leaves_noised:
            return
        leaves = self.leaves()
        eta = leaf_noise(np.concatenate([leaf.n[: leaf.size] for leaf in leaves]), self.placement, self.noise)
        start = 0
        for leaf in leaves:
            m = leaf.size
            leaf.ls[:m] += eta[start : start + m, :-1]
            leaf.ss[:m] += eta[start : start + m, -1]
            leaf.centroids[:m] = leaf.ls[:m] / leaf.n[:m, None]
            leaf.sq_norms[:m] = np.einsum("ij,ij->i", leaf.centroids[:m], leaf.centroids[:m])
            start += m
        self.leaves_noised = True  # a second call adds nothing

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
            picked = np.flatnonzero(to_first == side)
            new = _Node(node.is_leaf, self.branching_factor + 1, self.n_features)
            new.fill(node, picked)
            k = picked.size
            n = new.n[:k].sum()  # whole numbers: exact in any order
            # Sequential sums in entry order, as scikit-learn adds them from 0 (the + 0.0 turns a sum of -0.0s
            # into 0.0, as starting from 0 does).
            ls = new.ls[:k].cumsum(axis=0)[-1] + 0.0
            ss = new.ss[:k].cumsum()[-1] + 0.0
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


def leaf_noise(leaf_n, placement, noise):
    """The noise the leaf placements add to leaf subclusters of exact counts ``leaf_n``: (m, d + 1) rows.

    ``"leaves"``: one fresh row per subcluster. ``"leaves_accumulated"``: the sum of
    N fresh rows on a subcluster of N records (N draws of Lap(b): variance 2 b^2 N).

    Parameters
    ----------
    leaf_n : array_like (m,) of whole numbers
    placement : {"leaves", "leaves_accumulated"}
    noise : LaplaceRows

    Returns
    -------
    ndarray (m, noise.width): LS's noise, then SS's in the last column.

    Examples
    --------
    >>> rows = LaplaceRows(1.0, 1.0, width=3, random_state=0)
    >>> leaf_noise([4, 1], "leaves_accumulated", rows).shape, rows.count
    ((2, 3), 5)
    """
    counts = np.asarray(leaf_n, dtype=float).astype(np.int64)
    if placement == "leaves":
        return noise.take(len(counts))
    if placement != "leaves_accumulated":
        raise ValueError(f"placement must be 'leaves' or 'leaves_accumulated', got placement={placement!r}")
    if len(counts) == 0:
        return np.zeros((0, noise.width))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return np.add.reduceat(noise.take(int(counts.sum())), starts, axis=0)


def grow_tree(points, threshold, branching_factor, *, placement=None, noise=None, threshold_on="radius"):
    """The CF tree of ``points``, inserted one by one in row order, with noise where ``placement`` says.

    Parameters
    ----------
    points : ndarray (n, d) of float
    threshold : float > 0
        T.
    branching_factor : int >= 2
        B.
    placement : one of :data:`PLACEMENTS`, default=None
    noise : LaplaceRows or None, default=None
        Required unless placement is None.
    threshold_on : {"radius", "diameter"}, default="radius"
        What T bounds (:class:`CFTree`).

    Returns
    -------
    CFTree, with the leaf placements' noise already added.

    Examples
    --------
    >>> import numpy as np
    >>> tree = grow_tree(np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0]]), threshold=0.5, branching_factor=3)
    >>> tree.leaf_cfs()[0].tolist()
    [2.0, 1.0]
    >>> X = np.array([[0.0, 0.0], [0.6, 0.0]])  # radius 0.3, diameter 0.6
    >>> [len(grow_tree(X, 0.5, 3, threshold_on=on).leaf_cfs()[0]) for on in ("radius", "diameter")]
    [1, 2]
    """
    tree = CFTree(
        threshold, branching_factor, points.shape[1], placement=placement, noise=noise, threshold_on=threshold_on
    )
    for x in points:
        tree.insert(x)
    tree.noise_leaves()
    return tree


def cf_sensitivities(lower, upper):
    """L1 sensitivities (N, LS, SS) of one CF when one record of the box [lower, upper] is added or removed.

    1 for N; sum_j max|x_j| for LS; sum_j max x_j^2 for SS (d and d on [0, 1]^d).

    Parameters
    ----------
    lower, upper : array_like (d,) or float
        The box.

    Returns
    -------
    (float, float, float)

    Examples
    --------
    >>> cf_sensitivities([0.0, -2.0], [1.0, 1.0])
    (1.0, 3.0, 5.0)
    """
    largest = np.maximum(np.abs(np.asarray(lower, dtype=float)), np.abs(np.asarray(upper, dtype=float)))
    return 1.0, float(largest.sum()), float((largest**2).sum())


def sum_cfs(index, n, ls, ss, m):
    """The CFs of m groups, each the sum of the CFs (n, ls, ss) whose ``index`` points to it (additivity).

    Parameters
    ----------
    index : ndarray (k,) of int in [0, m)
    n, ls, ss : ndarrays (k,), (k, d), (k,)
    m : int

    Returns
    -------
    (n, ls, ss) of the m groups.

    Examples
    --------
    >>> import numpy as np
    >>> n, ls, ss = sum_cfs(np.array([0, 1, 0]), np.ones(3), np.eye(3), np.arange(3.0), 2)
    >>> n.tolist(), ls.tolist(), ss.tolist()
    ([2.0, 1.0], [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]], [2.0, 1.0])
    """
    sums = np.column_stack([np.bincount(index, weights=column, minlength=m) for column in ls.T])
    return np.bincount(index, weights=n, minlength=m), sums, np.bincount(index, weights=ss, minlength=m)


# ---------------------------------------------------------------------------
# The global step and nearest-centroid labels
# ---------------------------------------------------------------------------


def ward_linkage(centers, weights=None):
    """Ward linkage of the leaf centroids, as a scipy linkage matrix.

    Up to :data:`WARD_EXACT_LIMIT` centroids: ``scipy.cluster.hierarchy.ward``,
    the call scikit-learn's global step makes, so the merges are scikit-learn's,
    ties included (equal Ward distances are common on integer or gridded data).
    Beyond: fastcluster's algorithm on the vectors, which needs no m x m
    distance matrix (a noisy tree can have ~18,000 leaves, where that matrix
    takes 1.3 GB and scipy 5x the time); it gives the same merge heights, but
    breaks ties between equal Ward distances its own way, so with ties the
    partition can differ from scikit-learn's.

    With ``weights`` (each leaf's N), every centroid starts as a cluster of that
    weight: BIRCH's phase 3 on the leaf CFs, where merging clusters a and b costs
    the increase in their sum of squares, w_a w_b / (w_a + w_b) ||c_a - c_b||^2.
    It is Ward on the records with each leaf's records moved to its centroid; the
    heights are scipy's, sqrt(2 x cost). Whole weights summing to at most 4m (a tree
    of mostly single-record leaves) run as fastcluster's Ward on that many copies of
    the centroids; others by the nearest-neighbour chain on the m weighted centroids.

    Parameters
    ----------
    centers : array_like (m, d), m >= 2
    weights : array_like (m,) of floats > 0, or None, default=None
        None: every centroid weighs 1 (scikit-learn's global step).

    Returns
    -------
    ndarray (m - 1, 4), a scipy linkage matrix.

    Examples
    --------
    >>> import numpy as np
    >>> ward_linkage(np.array([[0.0], [1.0], [10.0]]))[:, :2].tolist()
    [[0.0, 1.0], [2.0, 3.0]]
    >>> ward_linkage(np.array([[0.0], [1.0], [10.0]]), weights=[1, 1, 100])[:, :2].tolist()  # 10 is heavy
    [[0.0, 1.0], [2.0, 3.0]]
    >>> ward_linkage(np.array([[0.0], [4.0], [6.0]]), weights=[50, 1, 1])[:, :2].tolist()
    [[1.0, 2.0], [0.0, 3.0]]
    """
    centers = np.ascontiguousarray(centers, dtype=float)
    if weights is not None:
        weights = np.asarray(weights, dtype=float)
        if weights.shape != (centers.shape[0],) or not (np.isfinite(weights).all() and (weights > 0).all()):
            raise ValueError(f"weights must hold one finite number > 0 per centroid ({centers.shape[0]})")
        by_copies = None
        if (weights == np.round(weights)).all() and weights.sum() <= 4 * len(weights):
            by_copies = _weighted_ward_by_copies(centers, weights.astype(np.int64))  # mostly single records
        return by_copies if by_copies is not None else _linkage_from_merges(*_weighted_ward_merges(centers, weights))
    if centers.shape[0] <= WARD_EXACT_LIMIT:
        from scipy.cluster.hierarchy import ward

        return ward(centers)
    import fastcluster

    return fastcluster.linkage_vector(centers, method="ward")


def _weighted_ward_merges(centers, weights):
    """Ward's merges of weighted points by the nearest-neighbour chain: ([(slot a, slot b, height)], m).

    Ward's cost is reducible, so following nearest neighbours until two are each other's
    nearest and merging them gives Ward's hierarchy. The merged cluster keeps slot b. The
    live clusters are packed into the first rows whenever half of the rows are dead.
    """
    C, w, slot = centers.copy(), weights.copy(), np.arange(centers.shape[0])
    m = C.shape[0]
    alive = np.ones(m, dtype=bool)
    merges, chain = [], []  # chain: rows of C
    while len(merges) < m - 1:
        if 2 * (m - len(merges)) < len(C) and len(C) > 64:
            keep = np.flatnonzero(alive)
            row_of = {int(r): i for i, r in enumerate(keep)}
            C, w, slot, alive, chain = C[keep], w[keep], slot[keep], alive[keep], [row_of[r] for r in chain]
        if not chain:
            chain.append(int(np.flatnonzero(alive)[0]))
        a = chain[-1]
        diff = C - C[a]
        cost = w[a] * w / (w[a] + w) * np.einsum("ij,ij->i", diff, diff)
        cost[~alive] = np.inf
        cost[a] = np.inf
        b = int(cost.argmin())
        if len(chain) > 1 and cost[chain[-2]] <= cost[b]:
            b = chain[-2]  # ties go back down the chain, so it cannot cycle
        if len(chain) > 1 and b == chain[-2]:
            del chain[-2:]
            merges.append((int(slot[a]), int(slot[b]), math.sqrt(2.0 * cost[b])))
            C[b] = (w[a] * C[a] + w[b] * C[b]) / (w[a] + w[b])
            w[b] += w[a]
            alive[a] = False
        else:
            chain.append(b)
    return merges, m


def _weighted_ward_by_copies(centers, counts):
    """Ward on ``counts[i]`` copies of each centroid (fastcluster), as the centroids' linkage, or None.

    The copies of a centroid merge first, at height 0 up to rounding; the other m - 1 merges are the
    weighted ones. None (the caller then runs the chain) when one of the first n - m merges joins
    copies of two centroids, which only coinciding centroids can do.
    """
    import fastcluster

    m, n = len(counts), int(counts.sum())
    Z = fastcluster.linkage_vector(np.repeat(centers, counts, axis=0), method="ward")
    owner = np.concatenate([np.repeat(np.arange(m), counts), np.full(n - 1, -1)])  # the centroid of each node
    node = np.full(2 * n - 1, -1, dtype=np.int64)  # expanded node -> the centroids' linkage's node
    node[np.concatenate([[0], np.cumsum(counts)[:-1]])[counts == 1]] = np.flatnonzero(counts == 1)
    for k in range(n - m):  # the copies' own merges; the last one of a centroid holds all its copies
        a, b = int(Z[k, 0]), int(Z[k, 1])
        if owner[a] != owner[b]:
            return None
        owner[n + k] = owner[a]
        node[n + k] = owner[a]  # a later merge of the same centroid's copies takes over
    node[n + (n - m) :] = np.arange(m, 2 * m - 1)
    out = Z[n - m :].copy()
    out[:, :2] = np.sort(node[out[:, :2].astype(np.int64)], axis=1)
    size = np.concatenate([np.ones(m), np.zeros(m - 1)])
    for k, (a, b) in enumerate(out[:, :2].astype(np.int64)):
        size[m + k] = size[a] + size[b]
    out[:, 3] = size[m:]
    return out


def _linkage_from_merges(merges, m):
    """A scipy linkage matrix from merges of slots in any order: sorted by height, clusters numbered as scipy's."""
    order = sorted(range(len(merges)), key=lambda k: merges[k][2])  # stable: a child before its parent
    root = list(range(m))  # union-find over the slots
    node, size = list(range(m)), [1] * m  # each root's cluster id and number of leaves

    def find(v):
        while root[v] != v:
            root[v] = root[root[v]]
            v = root[v]
        return v

    Z = np.empty((len(merges), 4))
    for k, i in enumerate(order):
        a, b, height = merges[i]
        ra, rb = find(a), find(b)
        Z[k] = [min(node[ra], node[rb]), max(node[ra], node[rb]), height, size[ra] + size[rb]]
        root[ra], node[rb], size[rb] = rb, m + k, size[ra] + size[rb]
    return Z


def global_clustering(centers, n_clusters, linkage=None, _stacklevel=2):
    """Labels of the leaf subclusters after the global step (scikit-learn's, for an int K).

    Ward agglomerative clustering of the centroids to ``n_clusters`` groups.
    With fewer centroids than ``n_clusters`` every subcluster is its own
    cluster and a :class:`BirchWarning` says so; ``n_clusters=None`` skips the
    global step.

    Parameters
    ----------
    centers : ndarray (m, d)
    n_clusters : int >= 1 or None
    linkage : callable or None, default=None
        Returns the Ward linkage of ``centers`` (e.g. a cached one); called only when the cut needs it.

    Returns
    -------
    ndarray (m,) of int, the cluster of each subcluster.

    Examples
    --------
    >>> import numpy as np
    >>> global_clustering(np.array([[0.0], [0.1], [5.0], [5.2]]), 2).tolist()
    [1, 1, 0, 0]
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


def labels_from_nearest(nearest, centers, n_clusters, linkage=None):
    """Global cluster of each record from its nearest leaf subcluster, under the global step with K = n_clusters.

    When every record has the same nearest subcluster the labelling is one cluster
    whatever the global step, so Ward is not run (an exploded noisy tree can have
    ~18,000 leaves) and the labels are all 0; otherwise they are
    ``global_clustering(centers, n_clusters, linkage)[nearest]``.

    Parameters
    ----------
    nearest : ndarray (n,) of int
        Index of each record's nearest leaf centroid.
    centers : ndarray (m, d)
        The leaf centroids.
    n_clusters : int >= 1
        K.
    linkage : callable or None, default=None
        As in :func:`global_clustering`.

    Returns
    -------
    ndarray (n,) of int

    Examples
    --------
    >>> import numpy as np
    >>> labels_from_nearest(np.array([3, 3]), np.zeros((5, 2)), 2).tolist()
    [0, 0]
    """
    if len(nearest) == 0 or (nearest == nearest[0]).all():
        return np.zeros(len(nearest), dtype=np.int64)
    return global_clustering(centers, n_clusters, linkage, _stacklevel=3)[nearest]


def _nearest_among_reachable(X, centers, n_candidates=256):
    """``nearest_centre(X, centers, ...)`` without scoring the centroids no row can reach.

    A row's nearest centroid is at most as far as its nearest among the ``n_candidates`` centroids
    closest to the rows' bounding box; the largest such distance over the rows, R, bounds every
    row's nearest distance, and a centroid farther than R from the box is nobody's nearest. A noisy
    tree's thousands of far-flung single-record leaves drop out before the n x m scores. The margin
    on R^2 is far above the scores' rounding (relative 1e-15), so every row gets a nearest centroid;
    only between centroids whose scores tie to the last bits can the choice differ from scoring all
    of them (BLAS may round a column's score differently in another block).
    """
    sq_norms = np.einsum("ij,ij->i", centers, centers)
    if centers.shape[0] <= 2 * n_candidates or X.shape[0] == 0:
        return nearest_centre(X, centers, sq_norms)
    lower, upper = column_min_max(X)
    outside = np.maximum(lower - centers, 0.0) + np.maximum(centers - upper, 0.0)
    sq_to_box = np.einsum("ij,ij->i", outside, outside)
    candidates = np.sort(np.argpartition(sq_to_box, n_candidates)[:n_candidates])
    sq_x = np.einsum("ij,ij->i", X, X)
    scores = np.min(X @ (-2.0 * centers[candidates].T) + sq_norms[candidates], axis=1)
    sq_reach = float(np.max(scores + sq_x))
    reachable = np.flatnonzero(sq_to_box <= sq_reach + 1e-8 * (1.0 + sq_reach + sq_x.max()))
    return reachable[nearest_centre(X, centers[reachable], sq_norms[reachable])]


def cut_labels(X, centers, ks, weights=None):
    """The global step at every K of ``ks`` on one set of leaf centroids: {K: labels of X}.

    Each record takes the global cluster of its nearest centroid; the Ward linkage
    of the centroids is computed at most once and cut at each K
    (:func:`labels_from_nearest`: not at all when every record has the same
    nearest centroid). With fewer centroids than K each is its own cluster
    (:class:`BirchWarning`).

    Parameters
    ----------
    X : array_like (n, d)
    centers : array_like (m, d)
    ks : iterable of int >= 1
    weights : array_like (m,) of floats > 0, or None, default=None
        Each centroid's weight in Ward's step (:func:`ward_linkage`): None for scikit-learn's
        step, each leaf's N for BIRCH's phase 3.

    Returns
    -------
    dict K -> ndarray (n,) of int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.2], [5.0], [5.1]])
    >>> {k: v.tolist() for k, v in cut_labels(X, X, [1, 2]).items()}
    {1: [0, 0, 0, 0], 2: [0, 0, 1, 1]}
    >>> cut_labels(X, np.array([[0.0], [4.0], [6.0]]), [2], weights=[50, 1, 1])[2].tolist()
    [1, 1, 0, 0]
    """
    return cut_labels_by_step(X, centers, ks, {"step": weights})["step"]


def cut_labels_by_step(X, centers, ks, weights_by_step):
    """:func:`cut_labels` under several global steps on one set of leaf centroids: {step: {K: labels of X}}.

    The records' nearest centroids do not depend on the step, so they are found once for all of them
    (on a noisy tree of ~18,000 leaves that search costs about as much as a Ward cut); each step's
    Ward linkage is computed at most once and cut at each K.

    Parameters
    ----------
    X : array_like (n, d)
    centers : array_like (m, d)
    ks : iterable of int >= 1
    weights_by_step : dict
        Step name -> the centroids' weights in that step's Ward linkage (``weights`` of :func:`cut_labels`:
        None for scikit-learn's step, each leaf's N for BIRCH's phase 3).

    Returns
    -------
    dict step -> dict K -> ndarray (n,) of int

    Examples
    --------
    >>> import numpy as np
    >>> X, centers = np.array([[0.0], [0.2], [5.0], [5.1]]), np.array([[0.0], [4.0], [6.0]])
    >>> cuts = cut_labels_by_step(X, centers, [2], {"Ward": None, "weighted": [1, 100, 100]})
    >>> {step: labels[2].tolist() for step, labels in cuts.items()}  # two heavy leaves are costly to merge
    {'Ward': [1, 1, 0, 0], 'weighted': [0, 0, 0, 1]}
    """
    X = np.ascontiguousarray(X, dtype=float)
    centers = np.ascontiguousarray(centers, dtype=float)
    ks = [check_n_clusters(k) for k in ks]
    nearest = _nearest_among_reachable(X, centers)

    def cuts(weights):
        cache = []

        def linkage():
            if not cache:
                cache.append(ward_linkage(centers, weights))
            return cache[0]

        return {k: labels_from_nearest(nearest, centers, k, linkage) for k in ks}

    return {step: cuts(weights) for step, weights in weights_by_step.items()}


def cluster_centres_from_cfs(centers, n, labels):
    """Centroid of each global cluster from its subclusters' CFs: sum of LS over sum of N.

    The additivity theorem: N-weighted means of the subcluster centroids. A noisy
    N below 0 counts as 0, and a cluster whose N all vanish takes the plain mean
    of its centroids.

    Parameters
    ----------
    centers : ndarray (m, d), n : ndarray (m,), labels : ndarray (m,) of int

    Returns
    -------
    ndarray (K, d)

    Examples
    --------
    >>> import numpy as np
    >>> cluster_centres_from_cfs(np.array([[0.0], [3.0], [9.0]]), np.array([2.0, 1.0, 5.0]), np.array([0, 0, 1]))
    array([[1.],
           [9.]])
    """
    weights = np.clip(np.asarray(n, dtype=float), 0.0, None)
    k = int(labels.max()) + 1
    mass = np.bincount(labels, weights=weights, minlength=k)
    weights = np.where(mass[labels] > 0, weights, 1.0)  # no weight left: each centroid counts once
    return weighted_means(centers, labels, weights, k, previous=np.zeros((k, centers.shape[1])))


# ---------------------------------------------------------------------------
# Estimators
# ---------------------------------------------------------------------------


class BirchBase(ClusterMixin, BaseEstimator):
    """What the BIRCH estimators share: parameter checks, the global step, predict and relabel.

    The global step is lazy: ``subcluster_labels_`` and ``cluster_centers_`` are
    computed on first use (then kept), so a fit whose Ward cut nobody reads (a
    sweep that calls :meth:`relabel`, which skips Ward when every record has the
    same nearest leaf) never runs it. The values do not depend on when they are
    computed. Subclasses set ``_private`` and call :meth:`_keep_tree` and
    :meth:`_finish`.

    Examples
    --------
    >>> import numpy as np
    >>> est = Birch(n_clusters=2, threshold=0.5).fit(np.array([[0.0], [0.1], [5.0]]))
    >>> isinstance(est, BirchBase), est.relabel(1).tolist()
    (True, [0, 0, 0])
    """

    _private = False

    def _check_tree_params(self):
        """Check the constructor parameters against the class's table; (threshold, branching_factor)."""
        params = validate_params(self)
        return params["threshold"], params["branching_factor"]

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
        """Keep the leaf centroids; the global step now if it needs no Ward, else on first use."""
        # Filled on first use (one dict, so that predict leaves the estimator's __dict__ as it was).
        self._cache = {"linkage": None, "global_step": None}
        self._weights = weights
        self.subcluster_centers_ = centers
        self.n_subclusters_ = centers.shape[0]
        self._sq_norms = np.einsum("ij,ij->i", centers, centers)
        k = self.n_clusters
        if k is None or self.n_subclusters_ <= max(k, 1):  # no Ward needed; warns now if m < K
            self._set_global_step(self._subcluster_labels(k, _stacklevel=4))
        if not self._private:
            self.nearest_subcluster_ = nearest_centre(X, centers, self._sq_norms)
            self.labels_ = self.subcluster_labels_[self.nearest_subcluster_]

    def _set_global_step(self, labels):
        self._cache["global_step"] = (labels, cluster_centres_from_cfs(self.subcluster_centers_, self._weights, labels))

    def _global(self):
        if "_cache" not in vars(self):
            raise AttributeError("the estimator is not fitted: no global step yet")
        if self._cache["global_step"] is None:
            self._set_global_step(self._subcluster_labels(self.n_clusters, _stacklevel=4))
        return self._cache["global_step"]

    @property
    def subcluster_labels_(self):
        """(m,) the global cluster of each leaf subcluster (Ward's cut, computed on first use)."""
        return self._global()[0]

    @property
    def cluster_centers_(self):
        """(K, d) the centroid of each global cluster from its subclusters' CFs (computed on first use)."""
        return self._global()[1]

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
        When every record has the same nearest leaf, Ward is skipped (one cluster).

        Parameters
        ----------
        n_clusters : int >= 1 or None
            None: the nearest leaf subcluster of each record.
        X : array_like (n, d) or None, default=None
            The records to label. None: the fitted records, which only the
            non-private :class:`Birch` keeps (a private estimator needs X).

        Returns
        -------
        ndarray (n,) of int
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
        return labels_from_nearest(nearest, self.subcluster_centers_, k, self._cached_linkage)

    def _subcluster_labels(self, n_clusters, _stacklevel):
        return global_clustering(self.subcluster_centers_, n_clusters, self._cached_linkage, _stacklevel + 1)

    def _cached_linkage(self):
        # Built once per tree and cut at each K (fit, then relabel in a sweep over K).
        if self._cache["linkage"] is None:
            self._cache["linkage"] = ward_linkage(self.subcluster_centers_)
        return self._cache["linkage"]


class Birch(BirchBase):
    """BIRCH: a CF tree, then Ward clustering of its leaf subclusters (scikit-learn's algorithm).

    Parameters
    ----------
    n_clusters : int >= 1 or None, default=3
        K of the global step; None keeps every leaf subcluster as a cluster.
    threshold : float > 0, default=0.5
        T: a record joins its closest leaf subcluster only if the radius of the
        merged subcluster is <= T (scikit-learn tests the radius; the BIRCH
        paper and Wang et al. speak of a diameter).
    branching_factor : int >= 2, default=50
        B: the most entries of any node, leaf or not (L = B, as in scikit-learn).
    random_state : None, int or Generator, default=None
        Unused (BIRCH is deterministic); kept for a uniform interface.

    Attributes
    ----------
    tree_ : the fitted :class:`CFTree`
    subcluster_centers_ : (m, d) centroids of the leaf subclusters, in leaf order
    subcluster_n_, subcluster_ls_, subcluster_ss_ : (m,), (m, d), (m,) their CFs
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

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [4.0, 4.0], [4.1, 4.0]])
    >>> Birch(n_clusters=2, threshold=0.5).fit(X).labels_.tolist()
    [1, 1, 0, 0]
    """

    _parameter_constraints = {
        "n_clusters": Optional(NClusters()),
        "threshold": Positive(),
        "branching_factor": Int(minimum=2, maximum=MAX_BRANCHING),
        "random_state": RandomState(),
    }

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
        centers, n = self._keep_tree(grow_tree(X, threshold, branching_factor))
        self._finish(X, centers, n)
        return self

    def fit_predict(self, X, y=None):
        """fit(X), then the labels of the fitted records (``labels_``)."""
        return self.fit(X).labels_

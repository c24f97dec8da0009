"""Readings of DPBIRCH (Wang et al.) that the paper's text leaves open.

The paper says that Laplace noise goes on LS and SS "of the CFs on the path" at
every insertion, and reports RI and ARI against BIRCH. It does not say which
CFs the noise reaches (every CF, the leaves only, the threshold test only),
whether the released tree is the noisy one or the exact one, nor how the data
were scaled beyond "normalised". This module builds the CF tree under each
reading, so that a published number can be graded under the reading that comes
closest to it:

* ``noise_on="all"``: the literal reading (what :class:`~dpclust_lib.DPBirch` does);
* ``noise_on="test"``: the stored CFs stay exact, the noise enters only the
  threshold test of each insertion;
* ``noise_on="nonleaf"``: the leaf CFs stay exact, the CFs above them get the
  noise (it steers the routing of later records);
* ``noise_on=None``: BIRCH itself (scikit-learn's tree, checked in the notebook).

:func:`noisy_leaf_centroids` gives the two readings that keep the exact tree and
noise its leaves: the noise of every insertion accumulated on the leaf
(``"accumulated"``), or drawn once per leaf (``"once"``). :func:`cut_labels`
is the global step (Ward to K, each record to its nearest leaf centroid) for
several K on one tree. :func:`pair_share` and :func:`split_from_ri_ari` are
the pair-counting identity RI = 1 - (A + B - 2AB)(1 - ARI).

None of these readings is a DP mechanism with a finite guarantee: the tree's
shape and N follow the exact records. They exist to find what the paper's
numbers can have measured, not to be used for privacy.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import Bunch

from dpclust_lib.validation import check_random_state

from .experiments import fit_seed

__all__ = [
    "NOISE_READINGS",
    "READINGS",
    "reading_runs",
    "cf_tree",
    "noisy_leaf_centroids",
    "cut_labels",
    "pair_share",
    "split_from_ri_ari",
]

NOISE_READINGS = ("all", "test", "nonleaf", None)


class _Node:
    def __init__(self, is_leaf):
        self.is_leaf = is_leaf
        self.n, self.ls, self.ss, self.children = [], [], [], []

    def centroids(self):
        return np.array(self.ls) / np.array(self.n, dtype=float)[:, None]


def _closest(node, x):
    c = node.centroids()
    return int(np.argmin(np.einsum("ij,ij->i", c, c) - 2.0 * (c @ x)))


def _split(node):
    """BIRCH's split: the farthest pair of entries seeds two nodes; parents are sums of children."""
    c = node.centroids()
    sq = np.einsum("ij,ij->i", c, c)
    dist = np.maximum(sq[:, None] + sq[None, :] - 2.0 * (c @ c.T), 0.0)
    np.fill_diagonal(dist, 0.0)
    i, j = np.unravel_index(dist.argmax(), dist.shape)
    to_i = dist[i] < dist[j]
    to_i[i], to_i[j] = True, False
    halves = []
    for side in (True, False):
        child = _Node(node.is_leaf)
        for k in np.flatnonzero(to_i == side):
            child.n.append(node.n[k]), child.ls.append(node.ls[k]), child.ss.append(node.ss[k])
            child.children.append(node.children[k] if not node.is_leaf else None)
        halves.append((sum(child.n), np.sum(child.ls, axis=0), float(np.sum(child.ss)), child))
    return halves


def cf_tree(X, *, threshold, branching_factor, noise_on=None, scale=None, random_state=None):
    """The leaves of a CF tree built by BIRCH's insertion, with noise under one reading.

    Parameters
    ----------
    X : (n, d) array, inserted in row order
    threshold : float > 0, T (the radius of the merged subcluster is tested, as in scikit-learn)
    branching_factor : int >= 2, B (= L, as in scikit-learn)
    noise_on : "all", "test", "nonleaf" or None
        Where Laplace noise of scale ``scale`` goes on (every coordinate of) LS
        and on SS at each insertion; see the module docstring.
    scale : float > 0, the Laplace scale (Delta q / epsilon); needed unless noise_on is None
    random_state : None, int or Generator

    Returns
    -------
    Bunch with leaf_n (m,), leaf_ls (m, d), leaf_ss (m,), height, n_threshold_tests
    and n_negative_sq_radius (tests whose squared radius came out negative; such a
    test merges, as scikit-learn's comparison does).
    """
    if noise_on not in NOISE_READINGS:
        raise ValueError(f"noise_on must be one of {NOISE_READINGS}, got noise_on={noise_on!r}")
    if noise_on is not None and not (scale is not None and scale > 0):
        raise ValueError(f"scale must be > 0 when noise_on={noise_on!r}, got scale={scale!r}")
    if threshold <= 0 or int(branching_factor) < 2:
        raise ValueError("threshold must be > 0 and branching_factor an int >= 2")
    X = np.asarray(X, dtype=float)
    rng = check_random_state(random_state)
    d, B, sq_t = X.shape[1], int(branching_factor), threshold**2
    draws = rng.laplace(0.0, scale, size=(4 * len(X) + 4, d + 1)) if noise_on is not None else None
    state = {"draw": 0, "tests": 0, "negative": 0}

    def eta(on):
        if noise_on is None or not on:
            return 0.0, 0.0
        row = draws[state["draw"] % len(draws)]
        state["draw"] += 1
        return row[:-1], row[-1]

    def insert(node, x, xx):
        # True when node now holds B + 1 entries
        if not node.n:
            e_ls, e_ss = eta(noise_on == "all")
            node.n.append(1), node.ls.append(x + e_ls), node.ss.append(xx + e_ss), node.children.append(None)
            return False
        i = _closest(node, x)
        if not node.is_leaf:
            if insert(node.children[i], x, xx):
                (na, la, sa, a), (nb, lb, sb, b) = _split(node.children[i])
                node.n[i], node.ls[i], node.ss[i], node.children[i] = na, la, sa, a
                node.n.append(nb), node.ls.append(lb), node.ss.append(sb), node.children.append(b)
                return len(node.n) > B
            e_ls, e_ss = eta(noise_on in ("all", "nonleaf"))
            node.n[i] += 1
            node.ls[i] = node.ls[i] + x + e_ls
            node.ss[i] = node.ss[i] + xx + e_ss
            return False
        n, ls, ss = node.n[i] + 1, node.ls[i] + x, node.ss[i] + xx
        t_ls, t_ss = eta(noise_on == "test")  # the threshold-test-only reading: noise seen by the test alone
        c = (ls + t_ls) / n
        sq_radius = (ss + t_ss) / n - c @ c
        state["tests"] += 1
        state["negative"] += int(sq_radius < 0)
        if sq_radius <= sq_t:
            e_ls, e_ss = eta(noise_on == "all")
            node.n[i], node.ls[i], node.ss[i] = n, ls + e_ls, ss + e_ss
            return False
        e_ls, e_ss = eta(noise_on == "all")
        node.n.append(1), node.ls.append(x + e_ls), node.ss.append(xx + e_ss), node.children.append(None)
        return len(node.n) > B

    root = _Node(True)
    for x in X:
        if insert(root, x, float(x @ x)):
            (na, la, sa, a), (nb, lb, sb, b) = _split(root)
            root = _Node(False)
            root.n, root.ls, root.ss, root.children = [na, nb], [la, lb], [sa, sb], [a, b]
    leaves, height, level = [], 1, [root]
    while not level[0].is_leaf:
        level = [c for node in level for c in node.children]
        height += 1
    leaves = level
    return Bunch(
        leaf_n=np.array([v for node in leaves for v in node.n], dtype=float),
        leaf_ls=np.array([v for node in leaves for v in node.ls]).reshape(-1, d),
        leaf_ss=np.array([v for node in leaves for v in node.ss], dtype=float),
        height=height,
        n_threshold_tests=state["tests"],
        n_negative_sq_radius=state["negative"],
    )


def noisy_leaf_centroids(leaf_n, leaf_ls, *, scale, noise, random_state=None):
    """Centroids of exact leaf CFs after Laplace noise on LS: the exact-tree readings.

    ``noise="accumulated"``: each of the N insertions into a leaf added its own
    Lap(scale) draw to every coordinate of LS (the paper's per-insertion noise,
    kept on the released leaf), so LS carries the sum of N draws.
    ``noise="once"``: one Lap(scale) draw per coordinate of each leaf's LS.
    N stays exact in both (as in the paper). Returns the (m, d) noisy centroids.
    """
    if noise not in ("accumulated", "once"):
        raise ValueError(f"noise must be 'accumulated' or 'once', got noise={noise!r}")
    rng = check_random_state(random_state)
    n = np.asarray(leaf_n, dtype=float)
    ls = np.asarray(leaf_ls, dtype=float)
    if noise == "once":
        return (ls + rng.laplace(0.0, scale, size=ls.shape)) / n[:, None]
    counts = n.astype(np.int64)
    draws = rng.laplace(0.0, scale, size=(int(counts.sum()), ls.shape[1]))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return (ls + np.add.reduceat(draws, starts, axis=0)) / n[:, None]


def cut_labels(X, centers, ks):
    """The global step for every K of ``ks`` on one set of leaf centroids: {K: labels of X}.

    Ward agglomerative clustering of the centroids to K groups (the merges of
    scipy's Ward, via fastcluster without the m x m matrix), then each record
    takes the group of its nearest centroid. With m <= K centroids each is its
    own cluster; when every record has the same nearest centroid, one cluster.
    """
    import fastcluster

    X = np.asarray(X, dtype=float)
    centers = np.asarray(centers, dtype=float)
    sq = np.einsum("ij,ij->i", centers, centers)
    nearest = np.empty(len(X), dtype=np.int64)
    chunk = max(8, 2**20 // max(1, len(centers)))
    for start in range(0, len(X), chunk):
        nearest[start : start + chunk] = (sq - 2.0 * X[start : start + chunk] @ centers.T).argmin(axis=1)
    used = np.unique(nearest)
    out = {}
    if len(used) == 1 or len(centers) <= 1:
        return {k: np.zeros(len(X), dtype=np.int64) for k in ks}
    big = [k for k in ks if k < len(centers)]
    cuts = {}
    if big:
        Z = fastcluster.linkage_vector(np.ascontiguousarray(centers), method="ward")
        cuts = {k: _cut(Z, len(centers), k) for k in set(big)}
    for k in ks:
        group = cuts[k] if k in cuts else np.arange(len(centers))
        out[k] = np.asarray(group, dtype=np.int64)[nearest]
    return out


def _cut(Z, m, k):
    """Group of each of the m leaves after the first m - k merges of linkage Z (k groups, numbered 0..k-1).

    The partition scipy's ``cut_tree`` gives, without its quadratic cost on ~18,000 leaves.
    """
    up = np.arange(2 * m - 1)
    merges = Z[: m - k, :2].astype(np.int64)
    up[merges[:, 0]] = up[merges[:, 1]] = m + np.arange(m - k)
    top = up.copy()
    for node in range(2 * m - 2, -1, -1):  # a parent's id is larger than its children's: resolve from the top
        top[node] = top[up[node]]
    return np.unique(top[:m], return_inverse=True)[1].ravel()


def pair_share(labels):
    """The share of record pairs that a clustering puts together: sum_i C(n_i, 2) / C(n, 2).

    For large n it is the sum of the squared cluster shares (A or B of the identity
    RI = 1 - (A + B - 2AB)(1 - ARI), which holds exactly with these pair shares).
    """
    counts = np.bincount(np.unique(np.asarray(labels), return_inverse=True)[1].ravel()).astype(float)
    n = counts.sum()
    return float((counts * (counts - 1)).sum() / (n * (n - 1)))


def split_from_ri_ari(ri, ari):
    """The two-cluster split that a published (RI, ARI) pair implies.

    By the identity, (1 - RI) / (1 - ARI) = A + B - 2AB. If both clusterings
    have the same pair share A = B (a private clustering that keeps the
    reference's split), A = (1 + sqrt(1 - 2c)) / 2 with c that ratio, and a
    two-cluster split with A = s^2 + (1 - s)^2 has its smaller share
    s = (1 - sqrt(2A - 1)) / 2. Returns (c, A, s); NaN where c > 1/2.
    """
    c = (1.0 - np.asarray(ri, dtype=float)) / (1.0 - np.asarray(ari, dtype=float))
    with np.errstate(invalid="ignore"):
        a = (1.0 + np.sqrt(1.0 - 2.0 * c)) / 2.0
        s = (1.0 - np.sqrt(2.0 * a - 1.0)) / 2.0
    return c, a, s


READINGS = {
    "literal": "noise on LS and SS of every CF on the path, at every insertion (DPBirch)",
    "exact tree + accumulated leaf noise": "BIRCH's exact tree; each leaf's LS carries the draws of all its insertions",
    "exact tree + noise once per leaf": "BIRCH's exact tree; one draw per coordinate of each leaf's LS",
    "noise only in the threshold test": "exact CFs; each threshold test sees the merged CF plus fresh noise",
    "noise only on non-leaf CFs": "exact leaf CFs; the CFs above them get the per-insertion noise",
}
"""The readings of where the paper's noise goes, as :func:`reading_runs` names them."""


def reading_runs(
    X, references, *, reading, threshold, branching_factor, epsilons, n_runs, seed=0, scale_of=None, n_jobs=1
):
    """RI and ARI against BIRCH under one reading, for every epsilon, run and K of ``references``.

    Parameters
    ----------
    X : (n, d) array, the data (inserted in row order)
    references : dict K -> labels of BIRCH (same T and B) on X
    reading : a key of :data:`READINGS`
    threshold, branching_factor : T and B
    epsilons : sequence of floats; n_runs : int >= 1; seed : the root seed
        (the fit at (epsilon, run) uses ``experiments.fit_seed(seed, epsilon, run)``)
    scale_of : callable epsilon -> Laplace scale; default 1 / epsilon (the paper's Delta q = 1)
    n_jobs : joblib's n_jobs over the (epsilon, run) fits; the result does not depend on it

    Returns
    -------
    DataFrame, one row per (epsilon, run, K): reading, epsilon, run, K, RI, ARI,
    leaves (leaf subclusters of the tree), seconds (tree and global step, shared by the K of a run).
    One tree per (epsilon, run), cut at every K.
    """
    import joblib
    import pandas as pd

    if reading not in READINGS:
        raise ValueError(f"reading must be one of {tuple(READINGS)}, got reading={reading!r}")
    scale_of = scale_of if scale_of is not None else (lambda eps: 1.0 / eps)
    exact_tree = reading.startswith("exact tree")
    exact = cf_tree(X, threshold=threshold, branching_factor=branching_factor) if exact_tree else None
    tasks = [(eps, run, fit_seed(seed, eps, run), scale_of(eps)) for eps in epsilons for run in range(n_runs)]
    call = joblib.delayed(_one_reading)
    parts = joblib.Parallel(n_jobs=n_jobs)(
        call(X, references, reading, threshold, branching_factor, exact, *task) for task in tasks
    )
    return pd.DataFrame([row for part in parts for row in part])


def _one_reading(X, references, reading, threshold, branching_factor, exact, eps, run, random_state, scale):
    """The rows of one (epsilon, run) of :func:`reading_runs`: one tree, cut at every K."""
    import time

    from dpclust_lib import metrics

    start = time.perf_counter()
    if exact is not None:
        noise = "accumulated" if "accumulated" in reading else "once"
        centers = noisy_leaf_centroids(exact.leaf_n, exact.leaf_ls, scale=scale, noise=noise, random_state=random_state)
    else:
        mode = {"literal": "all", "noise only in the threshold test": "test", "noise only on non-leaf CFs": "nonleaf"}
        tree = cf_tree(
            X,
            threshold=threshold,
            branching_factor=branching_factor,
            noise_on=mode[reading],
            scale=scale,
            random_state=random_state,
        )
        centers = tree.leaf_ls / tree.leaf_n[:, None]
    labels = cut_labels(X, centers, sorted(references))
    seconds = time.perf_counter() - start
    return [
        {
            "reading": reading,
            "epsilon": eps,
            "run": run,
            "K": k,
            "RI": metrics.rand_index(references[k], labels[k]),
            "ARI": metrics.adjusted_rand_index(references[k], labels[k]),
            "leaves": len(centers),
            "seconds": seconds,
        }
        for k in sorted(references)
    ]

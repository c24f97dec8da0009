"""k-modes without privacy, and DP-modes-Lloyd (central DP k-modes).

:class:`KModes` -- weighted Hamming k-modes (Huang 1998), with random,
frequent-value (Peng et al. 2021, Alg. 4 lines 1-15) or given initial centres.

:class:`DPKModes` -- DP-modes-Lloyd (Nguyen, Computers & Security 78:60-75,
2018), the central-DP baseline of Peng et al. (2021) and, as "DPK", of Zhang
et al. (2022): per-cluster per-attribute value counts with Laplace noise, and
the noisy argmax as the new mode.

Records are integer codes, ``X[:, j]`` in ``0 .. k_j - 1``.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .._distances import nearest
from .._validation import (
    PrivacyLeakWarning,
    check_choice,
    check_epsilon,
    check_int,
    check_n_clusters,
    check_random_state,
    check_sample_weight,
)
from ..privacy import PrivacyLedger, laplace_scale
from ._common import CategoricalClusterMixin, categorical_input, modes_from_counts, unique_rows, value_counts

__all__ = ["KModes", "DPKModes", "frequent_value_centres"]


def _distinct_weighted_rows(X, weights, n_clusters, rng):
    """``n_clusters`` distinct records drawn one by one with probability proportional to weight."""
    uniq, inverse, _ = unique_rows(X)
    w = np.bincount(inverse, weights=weights, minlength=len(uniq))
    available = int(np.count_nonzero(w > 0))
    if n_clusters > available:
        raise ValueError(f"n_clusters={n_clusters} is larger than the number of distinct records ({available})")
    chosen = rng.choice(len(uniq), size=n_clusters, replace=False, p=w / w.sum())
    return uniq[chosen].astype(np.int64)


def frequent_value_centres(X, n_clusters, random_state=None, sample_weight=None, domain_sizes=None,
                           max_draws=100_000):
    """Initial centres of Peng et al. (2021), Alg. 4 lines 1-15, with the errata fixed.

    For every attribute take its f most frequent values (weighted), with
    f = ceil(K^(1/m)) (the text's floor makes D1 and D4 loop forever); then draw
    candidates whose j-th value is one of attribute j's f values, uniformly,
    and keep each new one until there are K (the text's ``|C0| <= K`` would
    produce K + 1). Ties go to the smaller code.

    Without ``domain_sizes`` only values that occur in ``X`` are ranked; with
    it, every value of the declared domain is (one that does not occur has
    frequency 0), which the text leaves open.

    Raises ValueError when fewer than K distinct candidates exist.
    """
    X = np.asarray(X)
    k = check_n_clusters(n_clusters)
    w = check_sample_weight(sample_weight, X.shape[0])
    return _frequent_value_centres(X, k, check_random_state(random_state), w, domain_sizes, max_draws)


def _frequent_value_centres(X, k, rng, w, domain_sizes=None, max_draws=100_000):
    """:func:`frequent_value_centres` without the input checks; ``w`` may be signed (an
    unbiased estimate): without a domain, a value counts as observed when its total weight is > 0."""
    m = X.shape[1]
    f = math.ceil(k ** (1.0 / m) - 1e-12)  # 1e-12: K^(1/m) = 2.0000000000000004 for K = 8, m = 3
    tops = []
    for j in range(m):
        counts = np.bincount(X[:, j], weights=w, minlength=0 if domain_sizes is None else domain_sizes[j])
        order = np.argsort(-counts, kind="stable")  # ties: the smaller code first
        eligible = len(counts) if domain_sizes is not None else int(np.count_nonzero(counts > 0))
        tops.append(order[: min(f, eligible)])
    n_candidates = math.prod(len(t) for t in tops)
    if n_candidates < k:
        where = "some attribute has fewer than f values" if domain_sizes is not None else \
            "some attribute has fewer than f observed values"
        raise ValueError(
            f"n_clusters={k} is larger than the number of frequent-value candidates ({n_candidates}): "
            f"with f={f} {where}"
        )
    centres, seen = [], set()
    for _ in range(max_draws):
        candidate = tuple(int(t[rng.integers(len(t))]) for t in tops)
        if candidate not in seen:
            seen.add(candidate)
            centres.append(candidate)
            if len(centres) == k:
                return np.array(centres, dtype=np.int64)
    raise RuntimeError(f"no {k} distinct candidates after {max_draws} draws")  # pragma: no cover


def _lloyd(X, w, centres, max_iter, sizes):
    """At most ``max_iter`` k-modes update steps from ``centres``; stops when the centres repeat.

    ``w`` may be signed (an unbiased estimate of counts): the per-cluster value
    counts are linear in the weights. A cluster without a record of non-zero
    weight keeps its centre. Returns (centres, n_iter).
    """
    k = centres.shape[0]
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        labels, _ = nearest(X, centres, "hamming")
        counts = value_counts(X, labels, w, k, sizes)
        new = modes_from_counts(counts)
        empty = np.bincount(labels, weights=np.abs(w), minlength=k) == 0
        new[empty] = centres[empty]  # an empty cluster keeps its centre
        if np.array_equal(new, centres):
            break
        centres = new
    return centres, n_iter


class KModes(CategoricalClusterMixin):
    """Weighted k-modes with Hamming distance.

    Parameters
    ----------
    n_clusters : int >= 1
    init : "random", "frequent" or array (n_clusters, m)
        "random": distinct records drawn with probability proportional to weight;
        "frequent": :func:`frequent_value_centres` (Peng et al. Alg. 4).
    max_iter : int >= 1, the most update steps (T in Peng et al.)
    n_init : int >= 1, runs from different initial centres; the lowest cost wins
    domain_sizes : sequence of m ints, or None to take them from the data
    random_state : None, int or Generator

    Attributes
    ----------
    cluster_centers_ : (n_clusters, m) int64
    labels_ : nearest centre of each record of the fitted data (ties: lowest index)
    cost_ : weighted sum of Hamming distances to the nearest centre
    n_iter_ : update steps of the best run (stops early when the centres repeat)
    """

    def __init__(self, n_clusters=8, init="random", max_iter=100, n_init=1, domain_sizes=None, random_state=None):
        self.n_clusters = n_clusters
        self.init = init
        self.max_iter = max_iter
        self.n_init = n_init
        self.domain_sizes = domain_sizes
        self.random_state = random_state

    def _initial_centres(self, X, w, sizes, rng):
        if isinstance(self.init, str):
            check_choice(self.init, "init", {"random", "frequent"})
            if self.init == "random":
                return _distinct_weighted_rows(X, w, self.n_clusters, rng)
            return _frequent_value_centres(X, self.n_clusters, rng, w)
        centres = np.asarray(self.init)
        if centres.shape != (self.n_clusters, len(sizes)):
            raise ValueError(f"init array must have shape ({self.n_clusters}, {len(sizes)}), got {centres.shape}")
        return categorical_input(centres, sizes, private=False, name="init")[0]

    def fit(self, X, y=None, sample_weight=None):
        X, sizes = categorical_input(X, self.domain_sizes, private=False)
        check_n_clusters(self.n_clusters, X.shape[0])
        max_iter = check_int(self.max_iter, "max_iter", minimum=1)
        n_init = check_int(self.n_init, "n_init", minimum=1)
        w = check_sample_weight(sample_weight, X.shape[0])
        rng = check_random_state(self.random_state)
        best = None
        for _ in range(n_init):
            centres, n_iter = _lloyd(X, w, self._initial_centres(X, w, sizes, rng), max_iter, sizes)
            labels, dist = nearest(X, centres, "hamming")
            cost = float(np.dot(w, dist))
            if best is None or cost < best[0]:
                best = (cost, centres, labels, n_iter)
        self.cost_, self.cluster_centers_, self.labels_, self.n_iter_ = best
        self.domain_sizes_ = sizes
        return self

    def fit_predict(self, X, y=None, sample_weight=None):
        return self.fit(X, sample_weight=sample_weight).labels_


def _domain_centres(sizes, k, rng):
    """K distinct points drawn uniformly from the declared domain (no budget: it does not read the data)."""
    cells = math.prod(sizes)
    if k > cells:
        raise ValueError(f"n_clusters={k} is larger than the number of points in the domain ({cells})")
    centres, seen = [], set()
    while len(centres) < k:  # distinct points; cells >= k, so this ends
        point = tuple(int(v) for v in rng.integers(0, sizes))
        if point not in seen:
            seen.add(point)
            centres.append(point)
    return np.array(centres, dtype=np.int64)


class DPKModes(CategoricalClusterMixin):
    """DP-modes-Lloyd: k-modes whose every update is epsilon-DP (Nguyen 2018).

    Each of at most T = ``max_iter`` iterations assigns records to the nearest
    centre and releases, per cluster g, attribute j and value v, the count
    n_gj(v) + Lap(m T / epsilon); the new mode is the noisy argmax. Adding or
    removing one record changes one count in each of the m attributes, so the
    L1 sensitivity of an iteration's counts is m, and with epsilon / T per
    iteration (sequential composition) the scale is m T / epsilon. Stopping
    early (centres unchanged) is decided on released values only; the budget
    of the iterations not run is not spent.

    Parameters
    ----------
    n_clusters : int >= 1
    epsilon : float > 0, the total budget
    max_iter : int >= 1, T
    init : "domain" (default) or "records"
        "domain": K distinct points drawn uniformly from the declared domain,
        independent of the data (costs no budget). "records": K distinct records
        of the data, as Peng et al. describe the baseline; that choice is not
        covered by epsilon and warns with :class:`PrivacyLeakWarning`.
    domain_sizes : the public schema (m ints); None takes it from the data and warns
    random_state : None, int or Generator

    Attributes
    ----------
    cluster_centers_, initial_centers_, n_iter_, epsilon_spent_, ledger_ (a :class:`PrivacyLedger`),
    noise_scale_ (m T / epsilon), labels_ (nearest centre of each fitted record:
    computed from the private data, for evaluation only, not a private output).
    """

    def __init__(self, n_clusters=8, epsilon=1.0, max_iter=5, init="domain", domain_sizes=None, random_state=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.init = init
        self.domain_sizes = domain_sizes
        self.random_state = random_state

    def _initial_centres(self, rows, multiplicity, sizes, k, rng):
        if self.init == "records":
            warnings.warn("init='records' picks initial centres from the private data; that choice is not covered "
                          "by epsilon. init='domain' draws them from the public domain instead.",
                          PrivacyLeakWarning, stacklevel=3)
            return _distinct_weighted_rows(rows, multiplicity, k, rng)
        return _domain_centres(sizes, k, rng)

    def fit(self, X, y=None):
        eps = check_epsilon(self.epsilon)
        check_choice(self.init, "init", {"domain", "records"})
        X, sizes = categorical_input(X, self.domain_sizes, private=True)
        k = check_n_clusters(self.n_clusters, X.shape[0])
        T = check_int(self.max_iter, "max_iter", minimum=1)
        rng = check_random_state(self.random_state)
        m = len(sizes)
        eps_iter = eps / T
        scale = laplace_scale(m, eps_iter)
        ledger = PrivacyLedger(eps)
        # The value counts only depend on how many records are equal: work on the
        # distinct records with their multiplicities (same counts, far fewer distances).
        rows, inverse, multiplicity = unique_rows(X)
        centres = self._initial_centres(rows, multiplicity, sizes, k, rng)
        self.initial_centers_ = centres
        n_iter = 0
        for n_iter in range(1, T + 1):
            labels, _ = nearest(rows, centres, "hamming")
            counts = value_counts(rows, labels, multiplicity, k, sizes)
            ledger.spend(eps_iter, f"iteration {n_iter}: value counts per cluster and attribute, "
                                   f"L1 sensitivity {m}, Laplace scale {scale:.4g}")
            noisy = [c + rng.laplace(0.0, scale, size=c.shape) for c in counts]
            new = modes_from_counts(noisy)
            if np.array_equal(new, centres):
                break
            centres = new
        self.cluster_centers_ = centres
        self.labels_ = nearest(rows, centres, "hamming")[0][inverse]
        self.n_iter_ = n_iter
        self.ledger_ = ledger
        self.epsilon_spent_ = ledger.spent
        self.noise_scale_ = scale
        self.domain_sizes_ = sizes
        return self

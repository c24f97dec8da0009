"""k-means without privacy, and SuLQ DPk-means (the shared baselines of the k-means papers).

:class:`KMeans` -- weighted Lloyd with k-means++ seeding, no privacy. It is the
core the synopsis methods run on their noisy histograms, and the non-private
reference of the notebooks.

:class:`DPKMeans` -- SuLQ k-means (Blum, Dwork, McSherry, Nissim, PODS 2005),
as Li et al. (2013, Sec. 4.1) and Zhang & Cheng (2021) describe it: every
iteration releases each cluster's sum and count with Laplace noise. Its
building blocks (budget schedules, the (sum, count) query and its
sensitivity, the noisy centres) are shared with :mod:`.idp_kmeans` and
:mod:`.dpkmeans_pp`; the grid histogram and the weighted Lloyd on buckets are
shared with :mod:`.eug_kmeans`, :mod:`.dpkmeans_pp` and :mod:`.dpqt_kmeans`.

Privacy model: neighbouring data sets differ by adding or removing one record
(``neighbouring_``; replacing one record costs up to 2 epsilon). The data
domain ``bounds`` is a required public input; ``bounds="data"`` reads it off
the records, which leaks (PrivacyLeakWarning, ``epsilon_guaranteed_ = inf``).
A fitted private estimator holds its release only (centres, noise scales,
ledger); labels of the records come from ``predict`` and exact-data
evaluation from ``exact_diagnostics(X)``, which is not private.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ..accounting import PrivacyLedger
from ..mechanisms import laplace_mechanism, laplace_scale
from ..validation import (
    PrivacyLeakWarning,
    check_array,
    check_choice,
    check_epsilon,
    check_int,
    check_n_clusters,
    check_random_state,
    check_sample_weight,
)
from ._numeric import (
    NearestCentrePredict,
    PrivateCentroidMixin,
    assign,
    numeric_input,
    record_privacy,
    resolve_bounds,
    weighted_means,
)

__all__ = [
    "KMeans",
    "DPKMeans",
    "lloyd",
    "kmeans_plusplus",
    "budget_shares",
    "sum_count_sensitivity",
    "cluster_sums_counts",
    "noisy_centres",
    "grid_histogram",
    "fit_buckets",
]

SCHEDULES = ("fixed", "halving")
MIN_SHARE = 1e-150  # the smallest budget of one release a schedule may give
GRID_CELL_LIMIT = 10_000_000  # a noisy histogram must hold every cell, empty ones included


# ---------------------------------------------------------------------------
# The weighted Lloyd core (no privacy)
# ---------------------------------------------------------------------------


def lloyd(X, centres, weights=None, max_iter=300):
    """Weighted Lloyd iterations from ``centres`` until the assignment repeats.

    Returns
    -------
    centres : (K, d) the final centres
    labels : (n,) the nearest final centre of each record
    inertia : sum of weight * squared distance to the nearest centre
    n_iter : number of centre updates made
    """
    X = np.asarray(X, dtype=float)
    w = np.ones(X.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    centres = np.array(centres, dtype=float)
    labels = assign(X, centres)
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        centres = weighted_means(X, labels, w, centres.shape[0], centres)
        new = assign(X, centres)
        if np.array_equal(new, labels):
            break
        labels = new
    diff = X - np.take(centres, labels, axis=0)
    return centres, labels, float(np.dot(w, np.einsum("nd,nd->n", diff, diff))), n_iter


def kmeans_plusplus(X, n_clusters, random_state=None, weights=None):
    """k-means++ seeding (Arthur & Vassilvitskii 2007) with record weights.

    The first centre is a record drawn with probability proportional to its
    weight, every further one with probability proportional to weight times
    the squared distance to the nearest centre chosen so far. When that is
    zero everywhere (fewer weighted distinct records than K), the rest are
    drawn uniformly from all records.
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    rng = check_random_state(random_state)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)

    def draw(score):
        cumulative = np.cumsum(score)
        if not cumulative[-1] > 0:
            return int(rng.integers(n))
        # side="right" never lands on a zero-weight record: its cumulative value equals its predecessor's
        return int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))

    chosen = [draw(w)]
    d2 = np.einsum("nd,nd->n", X - X[chosen[0]], X - X[chosen[0]])
    for _ in range(1, n_clusters):
        chosen.append(draw(w * d2))
        diff = X - X[chosen[-1]]
        np.minimum(d2, np.einsum("nd,nd->n", diff, diff), out=d2)
    return X[chosen].copy()


class KMeans(NearestCentrePredict, ClusterMixin, BaseEstimator):
    """Weighted k-means (Lloyd) with k-means++ seeding; no privacy.

    Parameters
    ----------
    n_clusters : int >= 1
    init : "k-means++" or an array (n_clusters, d) of initial centres
    n_init : int >= 1, runs from different seedings; the lowest inertia wins
    max_iter : int >= 1, the most centre updates per run (stops when the assignment repeats)
    random_state : None, int or Generator

    Attributes
    ----------
    cluster_centers_, labels_, inertia_ (weighted sum of squared distances), n_iter_,
    n_features_in_, feature_names_in_ (DataFrames with string columns)
    """

    def __init__(self, n_clusters=8, *, init="k-means++", n_init=1, max_iter=300, random_state=None):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y=None, sample_weight=None):
        """Fit to X (n, d), with optional record weights (n,)."""
        X = numeric_input(self, X)
        k = check_n_clusters(self.n_clusters, X.shape[0])
        n_init = check_int(self.n_init, "n_init", minimum=1)
        max_iter = check_int(self.max_iter, "max_iter", minimum=1)
        w = check_sample_weight(sample_weight, X.shape[0])
        rng = check_random_state(self.random_state)
        given = None
        if isinstance(self.init, str):
            check_choice(self.init, "init", {"k-means++"})
        else:
            given = check_array(self.init, "init").astype(float)
            if given.shape != (k, X.shape[1]):
                raise ValueError(f"init array must have shape ({k}, {X.shape[1]}), got {given.shape}")
        best = None
        for _ in range(n_init if given is None else 1):
            start = kmeans_plusplus(X, k, rng, w) if given is None else given
            result = lloyd(X, start, w, max_iter)
            if best is None or result[2] < best[2]:
                best = result
        self.cluster_centers_, self.labels_, self.inertia_, self.n_iter_ = best
        return self

    def fit_predict(self, X, y=None, sample_weight=None):
        """fit(X), then the labels of the fitted records (``labels_``)."""
        return self.fit(X, sample_weight=sample_weight).labels_


# ---------------------------------------------------------------------------
# SuLQ building blocks: budget schedules, the (sum, count) query, its sensitivity
# ---------------------------------------------------------------------------


def budget_shares(schedule, epsilon, n_releases):
    """The budget of each of ``n_releases`` noisy releases.

    ``"fixed"``: epsilon / N each (N releases known in advance; Li et al.'s
    Lap((d + 1) N / epsilon)), total epsilon. ``"halving"``: epsilon/2,
    epsilon/4, ... (each release spends half of what is left; for an unknown
    number of iterations), total epsilon (1 - 2^-N) < epsilon.
    """
    check_choice(schedule, "schedule", set(SCHEDULES))
    eps = check_epsilon(epsilon)
    n = check_int(n_releases, "n_releases", minimum=0)
    if schedule == "fixed":
        return [eps / n] * n if n else []
    # Refuse before running: a share this small gives a Laplace scale of 1e150 and more (pure noise), and
    # further halvings underflow to 0, an infinite scale. ldexp halves without overflow.
    if n and math.ldexp(eps, -n) < MIN_SHARE:
        raise ValueError(
            f"schedule='halving' with {n} releases gives a last share epsilon / 2^{n} that underflows "
            f"(epsilon={eps:g}); use fewer iterations (max_iter) or schedule='fixed'"
        )
    return [math.ldexp(eps, -t) for t in range(1, n + 1)]


def sum_count_sensitivity(n_features):
    """L1 sensitivity d + 1 of the per-cluster (sum, count) of records scaled to [0, 1]^d.

    The records are scaled by the public domain, u = (x - lower) / (upper - lower),
    as Li et al. scale their data to [0, 1]^d. Adding or removing one record
    changes one cluster's count by 1 and its sum by u, whose L1 norm is at
    most d: d + 1 in all (Li et al., Sec. 4.2). Releasing sums of raw x with
    one Laplace scale for the whole vector would need
    1 + sum_j max(|lower_j|, |upper_j|) (1 + 2 * 10^6 on birch3), and the
    counts would then get noise of the size of the coordinates.
    """
    return float(check_int(n_features, "n_features", minimum=1) + 1)


def cluster_sums_counts(X, labels, n_clusters, lower, upper):
    """Per cluster: the sum of u = (x - lower) / (upper - lower), shape (K, d), and the count, shape (K,)."""
    X = np.asarray(X, dtype=float)
    counts = np.bincount(labels, minlength=n_clusters).astype(float)
    raw = np.column_stack([np.bincount(labels, weights=X[:, j], minlength=n_clusters) for j in range(X.shape[1])])
    return (raw - counts[:, None] * lower) / (upper - lower), counts  # = sum of u, without an n x d temporary


def noisy_centres(X, labels, n_clusters, lower, upper, epsilon, previous, random_state=None):
    """One SuLQ release: noisy sums and counts per cluster, and the centres they give.

    The vector (sums, counts) of :func:`cluster_sums_counts` gets Laplace
    noise of scale (d + 1) / epsilon in every entry (one draw of shape
    (K, d + 1); row g = the d sums of cluster g, then its count). A cluster
    whose noisy count is below 1 keeps its ``previous`` centre; the others
    move to lower + (upper - lower) * noisy sum / noisy count, projected onto
    the domain. Both are post-processing of the released values.
    """
    sums, counts = cluster_sums_counts(X, labels, n_clusters, lower, upper)
    released = laplace_mechanism(
        np.column_stack([sums, counts]), sum_count_sensitivity(sums.shape[1]), epsilon, random_state
    )
    noisy_sums, noisy_counts = released[:, :-1], released[:, -1]
    centres = np.array(previous, dtype=float)
    ok = noisy_counts >= 1.0
    centres[ok] = lower + (upper - lower) * (noisy_sums[ok] / noisy_counts[ok, None])
    return np.clip(centres, lower, upper)


# ---------------------------------------------------------------------------
# Interactive methods: DPKMeans, IDPKMeans, DPKMeansPP
# ---------------------------------------------------------------------------


class DPLloyd(PrivateCentroidMixin, ClusterMixin, BaseEstimator):
    """Shared fit of the interactive methods: initial centres, then noisy Lloyd releases.

    A subclass defines ``_start(X, k, lower, upper, eps, rng, ledger)``, which
    returns the initial centres, the budgets of the Lloyd iterations and
    whether the start read the data outside the budget (leaky).
    """

    def fit(self, X, y=None):
        """Fit to X (n, d); the release is ``cluster_centers_`` (see the class docstring)."""
        eps = check_epsilon(self.epsilon)
        check_int(self.max_iter, "max_iter", minimum=1)
        check_choice(self.schedule, "schedule", set(SCHEDULES))
        X = numeric_input(self, X)
        lower, upper, leaky = resolve_bounds(self.bounds, X)
        k = check_n_clusters(self.n_clusters, X.shape[0])
        rng = check_random_state(self.random_state)
        ledger = PrivacyLedger(eps)
        sensitivity = sum_count_sensitivity(X.shape[1])
        centres, shares, leaky_start = self._start(X, k, lower, upper, eps, rng, ledger)
        self.initial_centers_ = centres
        scales = []
        by_column = np.asfortranarray(X)  # the per-cluster sums read one column at a time
        for t, share in enumerate(shares, start=1):
            labels = assign(X, centres)
            scales.append(laplace_scale(sensitivity, share))
            ledger.spend(
                share,
                f"iteration {t}: noisy sum and count per cluster, L1 sensitivity "
                f"{sensitivity:g}, Laplace scale {scales[-1]:.4g}",
            )
            centres = noisy_centres(by_column, labels, k, lower, upper, share, centres, rng)
        self.cluster_centers_ = centres
        self.n_iter_ = len(shares)
        self.noise_scales_ = scales
        self.sensitivity_ = sensitivity
        self.bounds_ = (lower, upper)
        self.ledger_ = ledger
        record_privacy(self, ledger.spent, leaky or leaky_start)
        return self


class DPKMeans(DPLloyd):
    """SuLQ k-means (Blum et al. 2005) as described by Li et al. (2013, Sec. 4.1).

    Each of ``max_iter`` iterations assigns every record to its nearest centre
    and releases, per cluster, the sum of the records scaled to [0, 1]^d by
    the public bounds and the count, with Laplace noise of scale
    (d + 1) / epsilon_t (:func:`sum_count_sensitivity`); the new centre is
    noisy sum / noisy count, scaled back (:func:`noisy_centres`). The budgets epsilon_t follow
    ``schedule`` (:func:`budget_shares`); sequential composition gives the total.

    The text stops when the partition no longer changes, which reads the
    private data; here exactly ``max_iter`` iterations are run.

    Parameters
    ----------
    n_clusters : int >= 1
    epsilon : float > 0, the total budget
    max_iter : int >= 1, the number of iterations (N of Lap((d + 1) N / epsilon))
    schedule : "fixed" (epsilon / N each, total epsilon) or "halving"
        (epsilon/2, epsilon/4, ..., total epsilon (1 - 2^-N))
    random_state : None, int or Generator
    bounds : (lower, upper) or "data", required
        The public data domain (scalars or length-d arrays). "data" reads it
        off the records: not private (PrivacyLeakWarning, epsilon_guaranteed_ = inf).
    init : "domain" (default), "records" or an array (n_clusters, d)
        "domain": K points uniform in the domain, independent of the data (no
        budget). "records": K distinct records, as one reading of the text; not
        covered by epsilon (PrivacyLeakWarning, epsilon_guaranteed_ = inf). An
        array must not depend on the data for the guarantee to hold.

    Attributes
    ----------
    cluster_centers_, initial_centers_, n_iter_, ledger_, noise_scales_ (per
    iteration), sensitivity_, bounds_, n_features_in_;
    epsilon_spent_ (the budget arithmetic), epsilon_guaranteed_ (inf with a
    leaky option), neighbouring_ (add/remove one record; replace-one costs up
    to 2 epsilon). No labels_: use predict, or exact_diagnostics(X) (NOT private).
    """

    def __init__(
        self, n_clusters=8, *, epsilon=1.0, max_iter=5, schedule="fixed", random_state=None, bounds=None, init="domain"
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.schedule = schedule
        self.random_state = random_state
        self.bounds = bounds
        self.init = init

    def _start(self, X, k, lower, upper, eps, rng, ledger):
        centres, leaky = _initial_centres(self.init, X, k, lower, upper, rng)
        return centres, budget_shares(self.schedule, eps, self.max_iter), leaky


def _initial_centres(init, X, k, lower, upper, rng):
    if isinstance(init, str):
        check_choice(init, "init", {"domain", "records"})
        if init == "domain":
            return rng.uniform(lower, upper, size=(k, X.shape[1])), False
        warnings.warn(
            "init='records' picks initial centres among the private records; that choice is not "
            "covered by epsilon (epsilon_guaranteed_ = inf). init='domain' draws them from the public "
            "domain instead.",
            PrivacyLeakWarning,
            stacklevel=4,
        )
        uniq = np.unique(X, axis=0)
        if k > uniq.shape[0]:
            raise ValueError(f"n_clusters={k} is larger than the number of distinct records ({uniq.shape[0]})")
        return uniq[rng.choice(uniq.shape[0], size=k, replace=False)].copy(), True
    centres = check_array(init, "init").astype(float)
    if centres.shape != (k, X.shape[1]):
        raise ValueError(f"init array must have shape ({k}, {X.shape[1]}), got {centres.shape}")
    return centres, False


def grid_histogram(X, lower, upper, cells_per_dim):
    """Equal-width grid over [lower, upper]: the centre of every cell and its count.

    Cell j of a dimension is [lower + j w, lower + (j + 1) w), the last one
    closed at ``upper``. Every one of the m^d cells is returned, empty ones
    included (a DP histogram must add noise to all of them).

    Returns
    -------
    centres : (m^d, d), in C order of the cell indices
    counts : (m^d,) float
    """
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    m = check_int(cells_per_dim, "cells_per_dim", minimum=1)
    total = m**d
    if total > GRID_CELL_LIMIT:
        raise ValueError(
            f"cells_per_dim={m} in {d} dimensions gives {total:,} cells, more than the "
            f"{GRID_CELL_LIMIT:,} a dense noisy histogram is built for"
        )
    width = (upper - lower) / m
    index = np.minimum(((X - lower) / width).astype(np.int64), m - 1)
    flat = np.ravel_multi_index(tuple(index.T), (m,) * d)
    counts = np.bincount(flat, minlength=total).astype(float)
    grid = np.indices((m,) * d).reshape(d, -1).T
    return lower + (grid + 0.5) * width, counts


def fit_buckets(bucket_centres, noisy_counts, start, max_iter):
    """Weighted Lloyd on the buckets (weights: noisy counts, negatives as 0): (centres, n_iter).

    Post-processing of the noisy counts. Buckets of weight 0 move no centre,
    so Lloyd runs on the others only (same centres, less work).
    """
    positive = noisy_counts > 0
    centres, n_iter = np.array(start, dtype=float), 0
    if positive.any():
        centres, _, _, n_iter = lloyd(bucket_centres[positive], start, noisy_counts[positive], max_iter)
    return centres, n_iter

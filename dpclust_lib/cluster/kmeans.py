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

import fractions
import math
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from .._distances import sq_distances_to
from ..accounting import PrivacyLedger, share_at_most
from ..mechanisms import laplace_mechanism, laplace_scale
from ..noise import NOISE_KINDS
from ..validation import (
    MAX_RELEASES,
    Choice,
    ChoiceOrArray,
    Epsilon,
    Int,
    NClusters,
    PrivacyLeakWarning,
    PublicInput,
    RandomState,
    check_choice,
    check_epsilon,
    check_int,
    check_n_clusters,
    check_random_state,
    check_sample_weight,
    validate_params,
)
from ._base import ACCOUNTANT, charge_accountant, resolve_noise
from ._numeric import (
    BOUNDS_WHAT,
    NearestCentrePredict,
    PrivateCentroidMixin,
    assign,
    check_init_shape,
    check_n_clusters_public,
    numeric_input,
    private_records,
    record_privacy,
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
    "distinct_records",
]

SCHEDULES = ("fixed", "halving")
MIN_SHARE = 1e-150  # the smallest budget of one release a schedule may give
GRID_CELL_LIMIT = 10_000_000  # a noisy histogram must hold every cell, empty ones included


# ---------------------------------------------------------------------------
# The weighted Lloyd core (no privacy)
# ---------------------------------------------------------------------------


def lloyd(X, centres, weights=None, max_iter=300):
    """Weighted Lloyd iterations from ``centres`` until the assignment repeats.

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
    centres : array_like of shape (K, n_features)
        The initial centres.
    weights : None or array_like of shape (n_samples,), default=None
        Record weights (None: all ones).
    max_iter : int, default=300
        The most centre updates.

    Returns
    -------
    centres : (K, d) the final centres
    labels : (n,) the nearest final centre of each record
    inertia : sum of weight * squared distance to the nearest centre
    n_iter : number of centre updates made

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [10.0, 0.0], [10.0, 1.0]])
    >>> centres, labels, inertia, n_iter = lloyd(X, X[[0, 2]])
    >>> centres.tolist(), labels.tolist(), inertia
    ([[0.0, 0.5], [10.0, 0.5]], [0, 0, 1, 1], 1.0)
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

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
    n_clusters : int
        K, the number of centres to draw.
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None
    weights : None or array_like of shape (n_samples,), default=None
        Record weights (None: all ones).

    Returns
    -------
    ndarray of shape (n_clusters, n_features)
        K records of X, the initial centres.

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> kmeans_plusplus(X, 2, random_state=0).shape
    (2, 2)
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
    d2, latest, score = np.empty(n), np.empty(n), np.empty(n)
    sq_distances_to(X, X[chosen[0]], d2)
    for _ in range(1, n_clusters):
        chosen.append(draw(np.multiply(w, d2, out=score)))
        np.minimum(d2, sq_distances_to(X, X[chosen[-1]], latest), out=d2)
    return X[chosen].copy()


class KMeans(NearestCentrePredict, ClusterMixin, BaseEstimator):
    """Weighted k-means (Lloyd) with k-means++ seeding; no privacy.

    Parameters
    ----------
    n_clusters : int, default=8
        K, the number of clusters (>= 1, at most the number of records).
    init : {"k-means++"} or array_like of shape (n_clusters, n_features), default="k-means++"
        The initial centres: k-means++ seeding (:func:`kmeans_plusplus`), or given.
    n_init : int, default=1
        Runs from different seedings (>= 1); the lowest inertia wins. An init array runs once.
    max_iter : int, default=300
        The most centre updates per run (>= 1); a run stops when the assignment repeats.
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None
        The seeding's randomness; an int gives the same run every time.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The centres of the best run.
    labels_ : ndarray of shape (n_samples,)
        The nearest centre of each fitted record.
    inertia_ : float
        The weighted sum of squared distances to the nearest centre.
    n_iter_ : int
        Centre updates of the best run.
    n_features_in_ : int
        The number of features seen in fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The column names, when X is a DataFrame with string column names.

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [10.0, 0.0], [10.0, 1.0]])
    >>> km = KMeans(2, random_state=0).fit(X)
    >>> sorted(km.cluster_centers_.tolist())
    [[0.0, 0.5], [10.0, 0.5]]
    >>> km.inertia_
    1.0
    """

    def __init__(self, n_clusters=8, *, init="k-means++", n_init=1, max_iter=300, random_state=None):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    # Checked by validate_params at the start of fit; with the data, fit then checks
    # n_clusters <= n_samples and the shape (n_clusters, n_features) of an init array.
    _parameter_constraints = {
        "n_clusters": NClusters(),
        "init": ChoiceOrArray("k-means++"),
        "n_init": Int(minimum=1),
        "max_iter": Int(minimum=1),
        "random_state": RandomState(),
    }

    def fit(self, X, y=None, sample_weight=None):
        """Fit to X (n, d), with optional record weights (n,).

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : ignored
        sample_weight : None or array_like of shape (n_samples,), non-negative

        Returns
        -------
        self
        """
        params = validate_params(self)
        X = numeric_input(self, X)
        k = check_n_clusters(params["n_clusters"], X.shape[0])
        n_init, max_iter = params["n_init"], params["max_iter"]
        w = check_sample_weight(sample_weight, X.shape[0])
        rng = check_random_state(self.random_state)
        given = None if isinstance(params["init"], str) else check_init_shape(params["init"], k, X.shape[1])
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

    Parameters
    ----------
    schedule : {"fixed", "halving"}
    epsilon : float
        The total budget (> 0).
    n_releases : int
        N, the number of releases (>= 0).

    Returns
    -------
    list of float
        The budget of each release, in order.

    Examples
    --------
    >>> budget_shares("fixed", 1.0, 4)
    [0.25, 0.25, 0.25, 0.25]
    >>> budget_shares("fixed", 1.0, 5)  # 0.2 is a little above 1/5; its neighbour below is not
    [0.19999999999999998, 0.19999999999999998, 0.19999999999999998, 0.19999999999999998, 0.19999999999999998]
    >>> budget_shares("halving", 1.0, 3)
    [0.5, 0.25, 0.125]
    """
    check_choice(schedule, "schedule", set(SCHEDULES))
    eps = check_epsilon(epsilon)
    n = check_int(n_releases, "n_releases", minimum=0)
    if schedule == "fixed":  # epsilon / N rounded down: the N shares sum to at most epsilon exactly
        return [share_at_most(eps, fractions.Fraction(1, n))] * n if n else []
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

    Parameters
    ----------
    n_features : int
        d (>= 1).

    Returns
    -------
    float
        d + 1.

    Examples
    --------
    >>> sum_count_sensitivity(2)
    3.0
    """
    return float(check_int(n_features, "n_features", minimum=1) + 1)


def cluster_sums_counts(X, labels, n_clusters, lower, upper):
    """Per cluster: the sum of u = (x - lower) / (upper - lower), shape (K, d), and the count, shape (K,).

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
    labels : ndarray of shape (n_samples,)
        The cluster of each record, in 0 .. n_clusters - 1.
    n_clusters : int
    lower, upper : ndarray of shape (n_features,)
        The public domain.

    Returns
    -------
    sums : ndarray of shape (n_clusters, n_features)
        The sum of the scaled records u of each cluster.
    counts : ndarray of shape (n_clusters,)
        The number of records of each cluster.

    Examples
    --------
    >>> X = np.array([[0.0, 2.0], [1.0, 4.0], [1.0, 0.0]])
    >>> sums, counts = cluster_sums_counts(X, np.array([0, 0, 1]), 2, np.zeros(2), np.array([1.0, 4.0]))
    >>> sums.tolist(), counts.tolist()
    ([[1.0, 1.5], [1.0, 0.0]], [2.0, 1.0])
    """
    X = np.asarray(X, dtype=float)
    counts = np.bincount(labels, minlength=n_clusters).astype(float)
    raw = np.column_stack([np.bincount(labels, weights=X[:, j], minlength=n_clusters) for j in range(X.shape[1])])
    return (raw - counts[:, None] * lower) / (upper - lower), counts  # = sum of u, without an n x d temporary


def noisy_centres(X, labels, n_clusters, lower, upper, epsilon, previous, random_state=None, noise="exact"):
    """One SuLQ release: noisy sums and counts per cluster, and the centres they give.

    The vector (sums, counts) of :func:`cluster_sums_counts` gets Laplace
    noise of scale (d + 1) / epsilon in every entry (one draw of shape
    (K, d + 1); row g = the d sums of cluster g, then its count). A cluster
    whose noisy count is below 1 keeps its ``previous`` centre; the others
    move to lower + (upper - lower) * noisy sum / noisy count, projected onto
    the domain. Both are post-processing of the released values.

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
    labels : ndarray of shape (n_samples,)
        The cluster of each record.
    n_clusters : int
    lower, upper : ndarray of shape (n_features,)
        The public domain.
    epsilon : float
        The budget of this release (> 0).
    previous : array_like of shape (n_clusters, n_features)
        The centres kept by clusters whose noisy count is below 1.
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None
    noise : {"exact", "float"}, default="exact"
        The Laplace noise drawn (see :mod:`dpclust_lib.noise`).

    Returns
    -------
    ndarray of shape (n_clusters, n_features)
        The new centres, inside the domain.

    Examples
    --------
    >>> X = np.random.default_rng(0).random((100, 2))
    >>> labels = (X[:, 0] > 0.5).astype(int)
    >>> centres = noisy_centres(X, labels, 2, np.zeros(2), np.ones(2), 1.0, np.full((2, 2), 0.5), random_state=0)
    >>> centres.shape, bool(np.all((centres >= 0) & (centres <= 1)))
    ((2, 2), True)
    """
    sums, counts = cluster_sums_counts(X, labels, n_clusters, lower, upper)
    released = laplace_mechanism(
        np.column_stack([sums, counts]), sum_count_sensitivity(sums.shape[1]), epsilon, random_state, noise=noise
    )
    noisy_sums, noisy_counts = released[:, :-1], released[:, -1]
    centres = np.array(previous, dtype=float)
    ok = noisy_counts >= 1.0
    centres[ok] = lower + (upper - lower) * (noisy_sums[ok] / noisy_counts[ok, None])
    return np.clip(centres, lower, upper)


# ---------------------------------------------------------------------------
# Interactive methods: DPKMeans, IDPKMeans, DPKMeansPP
# ---------------------------------------------------------------------------


LLOYD_CONSTRAINTS = {
    "n_clusters": NClusters(),
    "epsilon": Epsilon(),
    "max_iter": Int(minimum=1, maximum=MAX_RELEASES),
    "schedule": Choice(*SCHEDULES),
    "random_state": RandomState(),
    "bounds": PublicInput(BOUNDS_WHAT),
    "noise": Choice(*NOISE_KINDS),
    "accountant": ACCOUNTANT,
}
"""The parameters every interactive method shares (:class:`DPLloyd` subclasses add theirs)."""


class DPLloyd(PrivateCentroidMixin, ClusterMixin, BaseEstimator):
    """Shared fit of the interactive methods: initial centres, then noisy Lloyd releases.

    A subclass defines ``_start(X, k, lower, upper, eps, rng, ledger, noise)``, which
    returns the initial centres, the budgets of the Lloyd iterations and
    whether the start read the data outside the budget (leaky), and its
    ``_parameter_constraints``: :data:`LLOYD_CONSTRAINTS` plus its own parameters.
    """

    def fit(self, X, y=None):
        """Fit to X (n, d); the release is ``cluster_centers_`` (see the class docstring).

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features), inside ``bounds``
        y : ignored

        Returns
        -------
        self
        """
        eps = validate_params(self)["epsilon"]
        charge_accountant(self, eps)  # before any record is read
        X, lower, upper, leaky = private_records(self, X)
        noise, leaky_noise = resolve_noise(self.noise)
        k = check_n_clusters_public(self.n_clusters, getattr(self, "n_public", None))
        rng = check_random_state(self.random_state)
        ledger = PrivacyLedger(eps)
        sensitivity = sum_count_sensitivity(X.shape[1])
        centres, shares, leaky_start = self._start(X, k, lower, upper, eps, rng, ledger, noise)
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
            centres = noisy_centres(by_column, labels, k, lower, upper, share, centres, rng, noise)
        self.cluster_centers_ = centres
        self.n_iter_ = len(shares)
        self.noise_scales_ = scales
        self.sensitivity_ = sensitivity
        self.bounds_ = (lower, upper)
        self.ledger_ = ledger
        record_privacy(self, ledger.spent, leaky or leaky_start or leaky_noise)
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

    Privacy: epsilon-DP under add/remove-one neighbours (``neighbouring_``;
    replacing a record costs up to 2 epsilon). The number of records is private
    too: nothing observable depends on it but the noisy release (no refusal of
    K above it; an empty X, of shape (0, d), releases noise alone).

    Parameters
    ----------
    n_clusters : int, default=8
        K, the number of clusters (>= 1). It is not compared with the number of records, which
        is private under add/remove-one neighbours: a cluster without records releases noisy zeros.
    epsilon : float, default=1.0
        The total privacy budget (> 0).
    max_iter : int, default=5
        The number of iterations, N of Lap((d + 1) N / epsilon) (>= 1).
    schedule : {"fixed", "halving"}, default="fixed"
        "fixed": epsilon / N per iteration, total epsilon. "halving": epsilon/2,
        epsilon/4, ..., total epsilon (1 - 2^-N).
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None
        The noise's and the initial centres' randomness.
    bounds : (lower, upper) or "data", required
        The public data domain (scalars or length-d arrays). "data" reads it
        off the records: not private (PrivacyLeakWarning, epsilon_guaranteed_ = inf).
    init : {"domain", "records"} or array_like of shape (n_clusters, n_features), default="domain"
        "domain": K points uniform in the domain, independent of the data (no
        budget). "records": K distinct records drawn as Weka's SimpleKMeans draws
        them (:func:`distinct_records`), as one reading of the text; not covered
        by epsilon (PrivacyLeakWarning, epsilon_guaranteed_ = inf). An array
        must not depend on the data for the guarantee to hold.
    noise : {"exact", "float"}, default="exact"
        The Laplace noise drawn: exact discrete Laplace on a grid, or textbook
        floating-point Laplace (leaks through its low bits: PrivacyLeakWarning,
        epsilon_guaranteed_ = inf).

    accountant : BudgetAccountant or None, default=None
        A budget shared with other fits (:class:`~dpclust_lib.accounting.BudgetAccountant`): charged this fit's
        whole guarantee before any record is read; a fit that would pass its budget is refused.
    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The released centres.
    initial_centers_ : ndarray of shape (n_clusters, n_features)
        The centres the iterations started from.
    n_iter_ : int
        The number of noisy iterations run (= max_iter).
    noise_scales_ : list of float
        The Laplace scale of each iteration's release.
    sensitivity_ : float
        The L1 sensitivity d + 1 of one release (:func:`sum_count_sensitivity`).
    bounds_ : tuple of two ndarrays of shape (n_features,)
        The domain (lower, upper) used.
    ledger_ : PrivacyLedger
        One entry per release.
    epsilon_spent_ : float
        What this run's releases spent: the sum of ``ledger_``.
    epsilon_guaranteed_ : float
        The ex-ante guarantee of the configured mechanism, the same for every data set and every
        run: epsilon-DP under add/remove-one neighbours (inf with a leaky option). The figure to publish.
    neighbouring_ : str
        "add/remove one record" (replacing one record costs up to 2 epsilon).
    n_features_in_ : int
        The number of features seen in fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The column names, when X is a DataFrame with string column names.

    Notes
    -----
    No ``labels_``: labels of the private records are not a release. Use
    ``predict``, or ``exact_diagnostics(X)`` (NOT private).

    Examples
    --------
    >>> X = np.random.default_rng(0).random((200, 2))
    >>> dpk = DPKMeans(2, epsilon=1.0, bounds=(0, 1), random_state=0).fit(X)
    >>> dpk.cluster_centers_.shape, dpk.epsilon_spent_, dpk.epsilon_guaranteed_
    ((2, 2), 1.0, 1.0)
    >>> dpk.predict(X[:4]).shape
    (4,)
    """

    # Checked by validate_params at the start of fit; with the data, fit then checks
    # bounds against X and the shape of an init array (never n_clusters against the private n).
    _parameter_constraints = {
        **LLOYD_CONSTRAINTS,
        "init": ChoiceOrArray("domain", "records"),
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        epsilon=1.0,
        max_iter=5,
        schedule="fixed",
        random_state=None,
        bounds=None,
        init="domain",
        noise="exact",
        accountant=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.schedule = schedule
        self.random_state = random_state
        self.bounds = bounds
        self.init = init
        self.noise = noise
        self.accountant = accountant

    def _start(self, X, k, lower, upper, eps, rng, ledger, noise):
        centres, leaky = _initial_centres(self.init, X, k, lower, upper, rng)
        return centres, budget_shares(self.schedule, eps, self.max_iter), leaky


def _initial_centres(init, X, k, lower, upper, rng):
    """(centres, leaky) from an init already checked by the table: "domain", "records" or an array."""
    if isinstance(init, str):
        if init == "domain":
            return rng.uniform(lower, upper, size=(k, X.shape[1])), False
        warnings.warn(
            "init='records' picks initial centres among the private records; that choice is not "
            "covered by epsilon (epsilon_guaranteed_ = inf). init='domain' draws them from the public "
            "domain instead.",
            PrivacyLeakWarning,
            stacklevel=4,
        )
        return distinct_records(X, k, rng), True
    return check_init_shape(np.asarray(init, dtype=float), k, X.shape[1]), False


def distinct_records(X, k, rng):
    """K distinct records drawn as Weka's SimpleKMeans draws its start: in a random order, skipping repeats.

    The records are visited in a uniformly random order and each is taken unless it equals one already
    taken, until K are taken (a value held by several records is therefore the likelier). Reads the
    records: not private.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    k : int
        K, at most the number of distinct records.
    rng : numpy Generator
        Advanced by one permutation of the n records.

    Returns
    -------
    ndarray of shape (k, n_features)
        The records taken, in the order drawn.

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    >>> distinct_records(X, 2, np.random.default_rng(0)).tolist()
    [[1.0, 1.0], [0.0, 0.0]]
    >>> distinct_records(X, 3, np.random.default_rng(0))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: n_clusters=3 is larger than the number of distinct records (2)
    """
    taken = []
    for i in rng.permutation(X.shape[0]):
        if not any(np.array_equal(X[i], X[j]) for j in taken):
            taken.append(i)
            if len(taken) == k:
                return X[taken].copy()
    raise ValueError(f"n_clusters={k} is larger than the number of distinct records ({len(taken)})")


def grid_histogram(X, lower, upper, cells_per_dim):
    """Equal-width grid over [lower, upper]: the centre of every cell and its count.

    Cell j of a dimension is [lower + j w, lower + (j + 1) w), the last one
    closed at ``upper``. Every one of the m^d cells is returned, empty ones
    included (a DP histogram must add noise to all of them).

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features), inside [lower, upper]
    lower, upper : ndarray of shape (n_features,)
        The public domain.
    cells_per_dim : int
        m, cells per dimension (>= 1; m^d at most GRID_CELL_LIMIT).

    Returns
    -------
    centres : (m^d, d), in C order of the cell indices
    counts : (m^d,) float

    Examples
    --------
    >>> X = np.array([[0.1, 0.1], [0.2, 0.3], [0.9, 0.9]])
    >>> cells, counts = grid_histogram(X, np.zeros(2), np.ones(2), 2)
    >>> cells.tolist()
    [[0.25, 0.25], [0.25, 0.75], [0.75, 0.25], [0.75, 0.75]]
    >>> counts.tolist()
    [2.0, 0.0, 0.0, 1.0]
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
    # Cell (i_1, ..., i_d)'s centre is lower + (i + 0.5) * width, written one coordinate at a time from its m
    # values: the same arithmetic as on the whole (m^d, d) index grid, without that grid and its temporaries.
    centres = np.empty((m,) * d + (d,))
    for j in range(d):
        along = [1] * d
        along[j] = m
        centres[..., j] = (lower[j] + (np.arange(m) + 0.5) * width[j]).reshape(along)
    return centres.reshape(total, d), counts


def fit_buckets(bucket_centres, noisy_counts, start, max_iter):
    """Weighted Lloyd on the buckets (weights: noisy counts, negatives as 0): (centres, n_iter).

    Post-processing of the noisy counts. Buckets of weight 0 move no centre,
    so Lloyd runs on the others only (same centres, less work).

    Parameters
    ----------
    bucket_centers : ndarray of shape (n_buckets, n_features)
    noisy_counts : ndarray of shape (n_buckets,)
        The released counts, used as weights.
    start : ndarray of shape (K, n_features)
        The initial centres.
    max_iter : int
        The most Lloyd updates.

    Returns
    -------
    centres : ndarray of shape (K, n_features)
    n_iter : int
        Lloyd updates made (0 when every weight is <= 0).

    Examples
    --------
    >>> buckets = np.array([[0.0], [1.0], [9.0], [10.0]])
    >>> centres, n_iter = fit_buckets(buckets, np.array([3.0, 1.0, -0.5, 2.0]), np.array([[0.0], [10.0]]), 10)
    >>> centres.ravel().tolist()
    [0.25, 10.0]
    """
    positive = noisy_counts > 0
    centres, n_iter = np.array(start, dtype=float), 0
    if positive.any():
        centres, _, _, n_iter = lloyd(bucket_centres[positive], start, noisy_counts[positive], max_iter)
    return centres, n_iter
